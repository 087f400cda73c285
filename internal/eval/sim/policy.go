package sim

import (
	"context"

	"github.com/orrery/orrery/internal/eval/trace"
)

// Policy decides which jobs run in each round. The simulator calls, at
// every round boundary and in this order:
//
//  1. EndRound with the leases of the round that just ended (not before the
//     first round), after their progress, completions and batch-size
//     changes have been applied;
//  2. Admit for every job that arrived since the previous boundary, in
//     trace order;
//  3. Schedule, for the jobs of the round about to start.
//
// The views passed in are valid only during the call: a policy copies what
// it keeps. A Policy serves one simulation run.
type Policy interface {
	// Name identifies the policy in results.
	Name() string
	// Admit is called when a job enters the cluster.
	Admit(j *Job) error
	// EndRound reports the round that just ended.
	EndRound(r *Report) error
	// Schedule returns the IDs of the jobs to run in the round about to
	// start. Their GPUs must fit the cluster; the simulator places them
	// (see the package doc). An empty answer leaves the cluster idle.
	Schedule(ctx context.Context, s *State) ([]int, error)
}

// StatsReporter is implemented by policies that report counters of their
// own (such as re-plans); the simulator copies them into [Result.Stats].
type StatsReporter interface {
	Stats() []Stat
}

// Stat is one named counter of a policy.
type Stat struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Job is the simulator's view of one active job.
type Job struct {
	ID      int            // the trace's job ID (0-based line index)
	Trace   *trace.Job     // the trace line
	Profile *trace.Profile // per-epoch batch sizes and durations (generate_pickle_file)
	GPUs    int            // GPUs the job runs on (scale_factor)
	Weight  float64        // priority_weight from the trace
	Arrival float64        // trace arrival time, s
	// Admitted is the round boundary at which the job entered the cluster
	// (upstream's timestamp_submit for Shockwave's metadata).
	Admitted float64
	// BatchSize and Throughput (iterations/s on the job's GPUs) are the
	// current ones; they change with dynamic adaptation.
	BatchSize  int
	Throughput float64
	// TotalSteps and StepsRun are in iterations at the current batch size
	// (a batch-size change rescales both so that the epoch count is kept).
	TotalSteps, StepsRun int64
	// Progress is the completed epochs as Shockwave counts them,
	// ⌊StepsRun/⌈D/BatchSize⌉⌋, at most the profile's epoch count.
	Progress int
}

// Remaining returns the steps still to run (TotalSteps − StepsRun).
func (j *Job) Remaining() int64 { return j.TotalSteps - j.StepsRun }

// State is the cluster at a round boundary, as a policy sees it.
type State struct {
	Round        int     // index of the round about to start (0-based)
	Now          float64 // simulated time, s
	GPUs         int     // M
	RoundSeconds float64 // Δ
	Jobs         []Job   // active jobs, in admission (trace) order
}

// Lease is one job's run in the round that just ended.
type Lease struct {
	ID int
	// Steps credited (after the restart penalty) and the execution time the
	// authors' simulator books for the lease (the penalty deducted).
	Steps int64
	Exec  float64
	// BatchSize the lease ran at, and the measured throughput Steps/Exec
	// (0 when Exec ≤ 0), the authors' throughput timeline entry.
	BatchSize  int
	Throughput float64
	// Progress is the job's completed epochs after the lease, and after any
	// batch-size change applied at its end (Shockwave's schedule_progress).
	Progress int
	// Finished: the job completed (or was dropped) at the end of the lease.
	Finished bool
	// Failed: the lease made no progress (no steps and no time); the
	// authors count it as a failed micro-task.
	Failed bool
}

// Report is the round that just ended.
type Report struct {
	// Round is the number of rounds completed so far (the index of the
	// round that just ended plus one), the authors' _num_completed_rounds
	// and the key of their throughput timeline.
	Round  int
	Now    float64
	Leases []Lease // in the order the authors process completions
}
