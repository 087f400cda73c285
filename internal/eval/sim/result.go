package sim

import (
	"fmt"

	"github.com/orrery/orrery/internal/eval/metrics"
)

// Result is one replay: a record per finished job and the paper's metrics.
type Result struct {
	Policy    string
	GPUs      int
	TraceJobs int // jobs in the trace (N_trace of the FTF contention factor)
	// Complete reports that every job finished; a canceled or failed run
	// returns the jobs finished so far.
	Complete bool
	// Summary holds makespan, average JCT, worst ρ, the unfair fractions
	// (ρ > 1.05 and > 1.1), worst Themis ρ and utilization (package
	// metrics), over the finished jobs.
	Summary metrics.Summary
	Jobs    []JobResult // finished jobs, in trace order
	Rounds  int         // rounds scheduled
	// Lease extensions (a job kept its GPUs from one round to the next) and
	// their opportunities (jobs that ran in the previous round and are
	// still active), as the authors count them.
	LeaseExtensions, LeaseOpportunities int
	Restarts                            int // leases that paid the restart penalty
	Forced                              int // jobs completed by the force-complete hack
	Dropped                             int // jobs dropped after 5 failed leases
	BatchChanges                        int // batch-size changes applied
	Stats                               []Stat
	// Schedule[r] lists the jobs run in round r, in placement order
	// (Options.RecordSchedule).
	Schedule [][]int
}

// JobResult is one finished job.
type JobResult struct {
	ID, Line   int
	GPUs       int
	Model      string
	Mode       string
	Arrival    float64 // trace arrival, s
	Admitted   float64 // round boundary at which it entered, s
	Completion float64 // s
	JCT        float64 // Completion − Arrival
	Isolated   float64 // T_iso: Σ of the profile's epoch durations, s
	FTF        float64 // ρ = JCT / (T_iso · max(1, N_trace/M))
	FTFThemis  float64 // ρ with the mean number of active jobs over its life
	GPUSeconds float64 // booked GPU time (restart penalties excluded)
	Leases     int     // rounds it ran in
	Restarts   int     // leases that paid the restart penalty
	// BatchChanges and FinalBatchSize record dynamic adaptation.
	BatchChanges   int
	FinalBatchSize int
	// Forced: completed by the force-complete hack with steps left;
	// Dropped: removed after 5 failed leases.
	Forced, Dropped bool
}

// finish fills the Result from the jobs finished so far.
func (s *sim) finish() error {
	r := s.res
	r.Rounds = len(s.counts)
	r.Complete = s.finished == len(s.jobs)
	if sr, ok := s.p.(StatsReporter); ok {
		r.Stats = append(r.Stats, sr.Stats()...)
	}
	var mj []metrics.Job
	for i := range s.jobs {
		j := &s.jobs[i]
		if j.state != done {
			continue
		}
		ma, err := metrics.MeanActive(s.counts, j.admitRound, j.endRound)
		if err != nil {
			return fmt.Errorf("%w: job %d: %w", ErrInvalid, j.tj.ID, err)
		}
		mj = append(mj, metrics.Job{ID: j.tj.ID, Arrival: j.tj.Arrival, Completion: j.completion,
			Isolated: j.prof.Isolated(), GPUSeconds: j.busy, MeanActive: ma})
		r.Jobs = append(r.Jobs, JobResult{ID: j.tj.ID, Line: j.tj.Line, GPUs: j.tj.GPUs,
			Model: j.tj.Model.String(), Mode: j.tj.Mode.String(), Arrival: j.tj.Arrival,
			Admitted: j.admitted, Completion: j.completion, JCT: j.completion - j.tj.Arrival,
			Isolated: j.prof.Isolated(), GPUSeconds: j.busy, Leases: j.leases, Restarts: j.restarts,
			BatchChanges: j.changes, FinalBatchSize: j.bs, Forced: j.forced, Dropped: j.dropped})
		r.BatchChanges += j.changes
		if j.forced {
			r.Forced++
		}
		if j.dropped {
			r.Dropped++
		}
	}
	if len(mj) == 0 {
		return nil
	}
	var err error
	cluster := metrics.Cluster{GPUs: s.o.gpus, TraceJobs: len(s.jobs)}
	if r.Summary, err = metrics.Summarize(mj, cluster); err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalid, err)
	}
	rhos, err := metrics.FTFs(nil, mj, cluster)
	if err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalid, err)
	}
	for i := range mj {
		r.Jobs[i].FTF = rhos[i]
		if r.Jobs[i].FTFThemis, err = metrics.FTFThemis(mj[i], s.o.gpus); err != nil {
			return fmt.Errorf("%w: metrics: %w", ErrInvalid, err)
		}
	}
	return nil
}
