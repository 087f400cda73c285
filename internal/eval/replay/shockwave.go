package replay

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/orrery/orrery/engine/shockwave/round"
	"github.com/orrery/orrery/internal/eval/policy"
	"github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// Shockwave is a replay of a trace in the Shockwave authors' format,
// round by round, under round-scheduling policies: their simulator
// (scheduler.py's simulate), with Shockwave planned by orrery's planner
// and the baselines solved exactly. [RunShockwave] reads the files from
// Data; [AuthorsSetup] names them for the authors' own setups.
type Shockwave struct {
	// Data is the file system the files are read from; nil means the
	// operating system's, the paths as given.
	Data        fs.FS  `json:"-"`
	Trace       string `json:"trace"`            // the trace file (required)
	Throughputs string `json:"throughputs"`      // the throughput table, JSON (required)
	Config      string `json:"config,omitempty"` // the authors' hyper-parameters, JSON; "" means orrery's planner defaults
	GPUs        int    `json:"gpus"`             // cluster size, single-GPU servers (required)
	Jobs        int    `json:"jobs"`             // replay only the first Jobs jobs of the trace; 0 means all
	PerJob      bool   `json:"-"`                // keep every finished job's record in the results

	// Policies names the policies to replay, in order: "shockwave",
	// "max_min_fairness" (Gavel), "finish_time_fairness" (Themis),
	// "min_total_duration" (OSSP), "max_sum_throughput_perf" (MST), or the
	// short names gavel, themis, ossp, mst. nil means all, in that order.
	Policies []string `json:"policies,omitempty"`

	RoundSeconds float64 `json:"round_s,omitempty"` // round length; 0 means 120 s
	// NoForceComplete disables the authors' hack that completes a job once
	// it ran 1.5x its isolated time; NoRestartPenalty their 20 s restart
	// penalty.
	NoForceComplete  bool `json:"no_force_complete,omitempty"`
	NoRestartPenalty bool `json:"no_restart_penalty,omitempty"`
	// AuthorsRescaleDrop keeps the authors' flaw for comparisons with their
	// result files: a job whose batch-size change inside its last epoch
	// leaves it with more steps done than its new total never finishes and
	// is dropped after five failed leases (job 35 of their 120-job trace).
	// false (the default) completes it at the end of that lease.
	AuthorsRescaleDrop bool `json:"authors_rescale_drop,omitempty"`
	// AuthorsOptima makes the baselines return the optimum the authors'
	// solvers return where a program has several, for comparisons with
	// their result files: for MST the interior point ECOS returns (left-out
	// jobs keep tiny fractions that order them in the round mechanism); for
	// Themis and OSSP an interior point of the optimal face (its analytic
	// centre) in place of Gurobi's and ECOS's, and for OSSP the authors' 5%
	// bisection for the makespan. false (the default) returns orrery's
	// canonical optima.
	AuthorsOptima bool `json:"authors_optima,omitempty"`
	// ResetInterval is the baselines' minimum time between allocation
	// recomputations: 0 means Gavel's 1000 s, negative whenever needed.
	ResetInterval float64 `json:"reset_interval_s,omitempty"`
	// MaxNodes bounds Shockwave's branch and bound per plan; 0 means the
	// solver's default.
	MaxNodes int `json:"max_nodes,omitempty"`

	// Progress, if not nil, is called after each round of a replay with the
	// policy, the jobs finished so far and the trace's size.
	Progress func(policy string, finished, jobs int) `json:"-"`
}

// ShockwaveReport is the result of [RunShockwave]: the setup it ran and
// one result per policy, in the order asked.
type ShockwaveReport struct {
	Shockwave
	TraceJobs int                     `json:"trace_jobs"` // jobs in the trace, N of the contention factor
	Results   []ShockwavePolicyResult `json:"results"`
}

// ShockwavePolicyResult is one policy's replay: the paper's metrics
// (finish-time fairness ρ_j = JCT_j / (T_iso,j · max(1, N/M))).
type ShockwavePolicyResult struct {
	Policy             string             `json:"policy"`
	Legend             string             `json:"legend"` // the paper's name: Shockwave, Gavel, Themis, OSSP, MST
	MakespanS          float64            `json:"makespan_s"`
	AvgJCTS            float64            `json:"avg_jct_s"`
	WorstFTF           float64            `json:"worst_ftf"`
	UnfairFraction     float64            `json:"unfair_fraction"`     // share of jobs with ρ > 1.05
	UnfairFraction110  float64            `json:"unfair_fraction_1_1"` // ρ > 1.1
	WorstFTFThemis     float64            `json:"worst_ftf_themis"`    // ρ with the Themis contention factor
	Utilization        float64            `json:"utilization"`
	Rounds             int                `json:"rounds"`
	LeaseExtensions    int                `json:"lease_extensions"`
	LeaseOpportunities int                `json:"lease_opportunities"`
	Restarts           int                `json:"restarts"`
	Forced             int                `json:"forced_completions"` // completed by the 1.5x hack
	Dropped            int                `json:"dropped"`            // dropped after five failed leases
	BatchChanges       int                `json:"batch_changes"`
	Stats              []sim.Stat         `json:"stats,omitempty"`
	WallS              float64            `json:"wall_s,omitempty"` // the replay's wall-clock time
	PerJob             []ShockwaveJobTrip `json:"per_job,omitempty"`
}

// ShockwaveJobTrip is one finished job of a replay.
type ShockwaveJobTrip struct {
	ID          int     `json:"id"`
	GPUs        int     `json:"gpus"`
	Model       string  `json:"model"`
	Mode        string  `json:"mode"` // static, accordion or gns
	ArrivalS    float64 `json:"arrival_s"`
	CompletionS float64 `json:"completion_s"`
	JCTS        float64 `json:"jct_s"`
	IsolatedS   float64 `json:"isolated_s"`
	FTF         float64 `json:"ftf"`
	FTFThemis   float64 `json:"ftf_themis"`
	Forced      bool    `json:"forced,omitempty"`
	Dropped     bool    `json:"dropped,omitempty"`
}

// AuthorsSetup returns the authors' setup for a cluster of gpus GPUs (32,
// 64, 128 or 256), its paths relative to the root of their data folder
// (this repository's internal/eval/data/shockwave), which the caller gives as Data
// or joins to the paths: the 120-job trace with the tacc table and the
// tacc_32gpus configuration at 32 GPUs, and 220, 460 and 900 jobs with the
// wisr table at 64, 128 and 256. ok is false for other sizes.
func AuthorsSetup(gpus int) (s Shockwave, ok bool) {
	preset, ok := trace.SetupFor(gpus)
	if !ok {
		return Shockwave{GPUs: gpus}, false
	}
	return Shockwave{
		Trace:       "traces/" + preset.Trace,
		Throughputs: preset.Table,
		Config:      "configurations/" + preset.Config,
		GPUs:        gpus,
	}, true
}

// ShockwavePolicies returns the policies a replay can run, in the default
// order.
func ShockwavePolicies() []string { return policy.Names() }

// ShockwaveLegend returns the paper's name of a policy ("max_min_fairness"
// is Gavel).
func ShockwaveLegend(name string) string { return policy.Legend(name) }

// RunShockwave replays the trace under each policy, in order. A context
// that ends stops the replay with its error.
func RunShockwave(ctx context.Context, s Shockwave) (ShockwaveReport, error) {
	rep := ShockwaveReport{Shockwave: s}
	opts, pcfg, names, err := s.options()
	if err != nil {
		return rep, err
	}
	rep.Policies = names
	w, err := s.workload()
	if err != nil {
		return rep, err
	}
	for _, name := range names {
		p, err := policy.New(name, pcfg)
		if err != nil {
			return rep, err
		}
		t0 := time.Now()
		if s.Progress != nil {
			opts.Progress = func(finished, jobs int) { s.Progress(name, finished, jobs) }
		}
		res, err := sim.Run(ctx, w, p, opts)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", name, err)
		}
		r := policyResult(res, s.PerJob)
		r.WallS = time.Since(t0).Seconds()
		rep.TraceJobs = res.TraceJobs
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// open opens one of s's files.
func (s Shockwave) open(name string) (io.ReadCloser, error) {
	if s.Data == nil {
		return os.Open(name)
	}
	return s.Data.Open(name)
}

// read parses one of s's files with parse, naming the file in its error.
func read[T any](s Shockwave, name string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := s.open(name)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// workload reads the trace (its first Jobs jobs) and the throughput table.
func (s Shockwave) workload() (*sim.Workload, error) {
	jobs, err := read(s, s.Trace, trace.Parse)
	if err != nil {
		return nil, err
	}
	tab, err := read(s, s.Throughputs, throughput.Load)
	if err != nil {
		return nil, err
	}
	if s.Jobs > 0 && s.Jobs < len(jobs) {
		jobs = jobs[:s.Jobs]
	}
	w, err := sim.NewWorkload(jobs, tab, sim.WorkloadOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Trace, err)
	}
	return w, nil
}

// options checks s and builds the simulator's and the policies' settings.
func (s Shockwave) options() (sim.Options, policy.Config, []string, error) {
	bad := func(format string, a ...any) (sim.Options, policy.Config, []string, error) {
		return sim.Options{}, policy.Config{}, nil, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
	}
	switch {
	case s.Trace == "" || s.Throughputs == "":
		return bad("a trace and a throughput table are required (AuthorsSetup gives the authors')")
	case s.GPUs < 1:
		return bad("GPUs %d", s.GPUs)
	case s.Jobs < 0:
		return bad("Jobs %d", s.Jobs)
	case s.MaxNodes < 0:
		return bad("MaxNodes %d", s.MaxNodes)
	case s.RoundSeconds != 0 && (!(s.RoundSeconds > 5) || math.IsInf(s.RoundSeconds, 0)):
		return bad("RoundSeconds %v (want more than 5 s)", s.RoundSeconds)
	case math.IsNaN(s.ResetInterval) || math.IsInf(s.ResetInterval, 0):
		return bad("ResetInterval %v", s.ResetInterval)
	}
	names := s.Policies
	if names == nil {
		names = policy.Names()
	}
	canon := make([]string, len(names))
	for i, n := range names {
		c, err := policy.Canonical(n)
		if err != nil {
			return bad("Policies[%d]: %v", i, err)
		}
		canon[i] = c
	}
	opts := sim.Options{GPUs: s.GPUs, RoundSeconds: s.RoundSeconds, AuthorsRescaleDrop: s.AuthorsRescaleDrop}
	if s.NoForceComplete {
		opts.ForceComplete = -1
	}
	if s.NoRestartPenalty {
		opts.RestartPenalty = -1
	}
	var rc round.Config
	if s.Config != "" {
		tc, err := read(s, s.Config, trace.LoadConfig)
		if err != nil {
			return sim.Options{}, policy.Config{}, nil, err
		}
		rc = policy.ShockwaveConfig(tc, s.RoundSeconds)
	} else {
		rc.Market.RoundSeconds = s.RoundSeconds
	}
	rc.Market.MaxNodes = s.MaxNodes
	pcfg := policy.Config{GPUs: s.GPUs, Shockwave: rc, Gavel: policy.GavelOptions{ResetInterval: s.ResetInterval},
		AuthorsOptima: s.AuthorsOptima}
	return opts, pcfg, canon, nil
}

func policyResult(r *sim.Result, perJob bool) ShockwavePolicyResult {
	sm := r.Summary
	out := ShockwavePolicyResult{Policy: r.Policy, Legend: policy.Legend(r.Policy), MakespanS: sm.Makespan, AvgJCTS: sm.AvgJCT,
		WorstFTF: sm.WorstFTF, UnfairFraction: sm.Unfair105, UnfairFraction110: sm.Unfair110,
		WorstFTFThemis: sm.WorstFTFThemis, Utilization: sm.Utilization, Rounds: r.Rounds,
		LeaseExtensions: r.LeaseExtensions, LeaseOpportunities: r.LeaseOpportunities, Restarts: r.Restarts,
		Forced: r.Forced, Dropped: r.Dropped, BatchChanges: r.BatchChanges, Stats: r.Stats}
	if perJob {
		for _, jr := range r.Jobs {
			out.PerJob = append(out.PerJob, ShockwaveJobTrip{ID: jr.ID, GPUs: jr.GPUs, Model: jr.Model, Mode: jr.Mode,
				ArrivalS: jr.Arrival, CompletionS: jr.Completion, JCTS: jr.JCT, IsolatedS: jr.Isolated,
				FTF: jr.FTF, FTFThemis: jr.FTFThemis, Forced: jr.Forced, Dropped: jr.Dropped})
		}
	}
	return out
}
