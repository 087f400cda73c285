package market

import (
	"math"
	"strconv"
)

// Defaults of [Config], from the authors' configurations (tacc_32gpus.json
// and the driver's --time_per_iteration) and scheduler/shockwave.py.
const (
	DefaultRounds       = 20    // future_rounds
	DefaultRoundSeconds = 120.0 // time_per_iteration
	DefaultK            = 1e-3  // k, per second of residual runtime
	DefaultLambda       = 12.0  // lambda, the priority power
	DefaultRhoMax       = 1.0   // rhomax
	DefaultLogZero      = 1e-6  // logapx_origin[0.0]: ln(0) is taken as ln(1e-6)
	DefaultUrgentPower  = 100.0 // priority_M: power for jobs about to finish
	DefaultMaxNodes     = 20000 // packing branch-and-bound nodes per solve
)

// Limits on a [Problem]'s size; larger problems fail with [ErrLimit].
const (
	MaxRounds   = 1024    // T
	MaxCapacity = 1 << 22 // GPU-rounds M·T
	MaxJobs     = 1 << 20 // N
	MaxCells    = 1 << 22 // N·(T+1), the size of the value tables
	MaxRound    = 1 << 40 // r, the absolute round index (about 4e6 years of 120 s rounds)
)

// MaxPriority caps a relaxed-path priority ρ̂^λ. The authors' Python raises
// OverflowError past about 1.8e308; the cap keeps every sum of weighted
// utilities finite. The makespan term's k·R_j is held to the same bound
// (a larger one is an invalid config.k).
const MaxPriority = 1e300

// DefaultBreakpoints returns the authors' log_approximation_bases.
func DefaultBreakpoints() []float64 { return []float64{0, 0.2, 0.4, 0.6, 0.8, 1} }

// LogMode selects the utility curve f in the welfare term Σ_j p_j·f(u_j).
type LogMode uint8

const (
	// PiecewiseLog is the authors' curve: the chords of ln through
	// [Config.Breakpoints], with ln(0) taken as ln([Config.LogZero]).
	PiecewiseLog LogMode = iota
	// ExactLog is ln(u) for u ≥ LogZero and its tangent below
	// (ln ε + u/ε − 1), which keeps the curve concave and finite at 0.
	ExactLog
)

// String returns "piecewise" or "exact".
func (m LogMode) String() string {
	switch m {
	case PiecewiseLog:
		return "piecewise"
	case ExactLog:
		return "exact"
	}
	return "LogMode(" + strconv.Itoa(int(m)) + ")"
}

// Status says how far a [Solution] is from the program's optimum.
type Status uint8

const (
	// Optimal: the plan attains the optimum of the program solved (the
	// finish-time-fair program, or the relaxed one when that is infeasible).
	Optimal Status = iota + 1
	// Feasible: the plan is feasible; the optimum is at most [Solution.Bound].
	// This happens when the context ends, the node limit is hit, or the round
	// packing could not be decided exactly (see the package doc).
	Feasible
	// Infeasible: the finish-time-fair program has no solution and
	// [Config.NoRelax] forbade the relaxed path. The plan is empty.
	Infeasible
)

// String returns "optimal", "feasible" or "infeasible", as in the wire schema.
func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Feasible:
		return "feasible"
	case Infeasible:
		return "infeasible"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Job is one buyer of the round market, reduced to the numbers the program
// uses. Times are seconds; epochs are whole epochs.
type Job struct {
	ID         int     // caller's identifier, unique; the last tie-breaker
	GPUs       int     // w_j, GPUs the job runs on, in [1, cluster GPUs]
	Epochs     int     // E_j, total epochs, ≥ 1
	Progress   int     // F_j, epochs done, in [0, Epochs]
	MeanEpoch  float64 // D̄_j, mean epoch duration so far, > 0
	Remaining  float64 // R_j, predicted remaining runtime, ≥ 0
	FairFinish float64 // FT*_j, the fair finish-time target (absolute), > 0
}

// Config holds the planner's knobs. The zero value of every field means the
// documented default (the authors' tacc_32gpus configuration).
type Config struct {
	Rounds       int     // T, rounds in the planning window; 0 means 20
	RoundSeconds float64 // Δ, round length; 0 means 120 s
	K            float64 // makespan regulariser per second; 0 means 1e-3
	Lambda       float64 // priority power λ on the relaxed path; 0 means 12
	RhoMax       float64 // ρ_max of the finish-time-fairness constraints; 0 means 1
	// Breakpoints of the piecewise log, strictly increasing from 0 to 1;
	// nil means {0, .2, .4, .6, .8, 1}.
	Breakpoints []float64
	LogZero     float64 // value standing in for 0 inside ln; 0 means 1e-6
	UrgentPower float64 // priority power for jobs with R_j < Δ; 0 means 100
	Log         LogMode // utility curve; the zero value is PiecewiseLog
	// NoRelax reports Infeasible instead of taking the relaxed path when the
	// finish-time-fairness constraints cannot all hold.
	NoRelax bool
	// Gap stops the search once the plan is within Gap·|objective| of the
	// bound; 0 means prove optimality.
	Gap float64
	// MaxNodes bounds the packing branch-and-bound; 0 means 20000.
	MaxNodes int
}

// Problem is one re-plan: the cluster, the absolute round index and the
// active jobs.
type Problem struct {
	GPUs   int // M, GPUs in the cluster
	Round  int // r, absolute index of the first round of the window
	Jobs   []Job
	Config Config
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// config is a Config with defaults applied and breakpoint logs computed.
type config struct {
	T          int
	delta      float64
	k          float64
	lambda     float64
	rhoMax     float64
	logZero    float64
	urgent     float64
	log        LogMode
	noRelax    bool
	gap        float64
	maxNodes   int
	bp, bpLogs []float64 // owned by the workspace
}

// resolve validates c and fills d with defaults applied; bp/bpLogs reuse d's
// buffers.
func (c *Config) resolve(d *config) error {
	if err := c.check(d); err != nil {
		return err
	}
	return c.resolveBreakpoints(d)
}

// check validates c and fills d but for its breakpoints, which it only
// checks; it does not allocate.
func (c *Config) check(d *config) error {
	d.T = c.Rounds
	if d.T == 0 {
		d.T = DefaultRounds
	}
	if d.T < 0 {
		return invalid("Config.Rounds", "%d rounds (want ≥ 1)", c.Rounds)
	}
	if d.T > MaxRounds {
		return tooLarge("Config.Rounds", "%d rounds, above %d", c.Rounds, MaxRounds)
	}
	var err error
	if d.delta, err = orDefault("Config.RoundSeconds", c.RoundSeconds, DefaultRoundSeconds); err != nil {
		return err
	}
	if d.k, err = orDefault("Config.K", c.K, DefaultK); err != nil {
		return err
	}
	if d.lambda, err = orDefault("Config.Lambda", c.Lambda, DefaultLambda); err != nil {
		return err
	}
	if d.rhoMax, err = orDefault("Config.RhoMax", c.RhoMax, DefaultRhoMax); err != nil {
		return err
	}
	if d.urgent, err = orDefault("Config.UrgentPower", c.UrgentPower, DefaultUrgentPower); err != nil {
		return err
	}
	if d.logZero, err = orDefault("Config.LogZero", c.LogZero, DefaultLogZero); err != nil {
		return err
	}
	if d.logZero >= 1 {
		return invalid("Config.LogZero", "%v (want a value in (0, 1))", c.LogZero)
	}
	if !finite(c.Gap) || c.Gap < 0 || c.Gap >= 1 {
		return invalid("Config.Gap", "%v (want a value in [0, 1))", c.Gap)
	}
	d.gap = c.Gap
	if c.MaxNodes < 0 {
		return invalid("Config.MaxNodes", "%d (want ≥ 0)", c.MaxNodes)
	}
	d.maxNodes = c.MaxNodes
	if d.maxNodes == 0 {
		d.maxNodes = DefaultMaxNodes
	}
	if c.Log != PiecewiseLog && c.Log != ExactLog {
		return invalid("Config.Log", "unknown mode %d", c.Log)
	}
	d.log = c.Log
	d.noRelax = c.NoRelax
	return c.checkBreakpoints()
}

// orDefault checks a knob that must be a finite number ≥ 0 and applies its
// default to 0.
func orDefault(field string, v, def float64) (float64, error) {
	if !finite(v) || v < 0 {
		return 0, invalid(field, "%v (want a finite number ≥ 0)", v)
	}
	if v == 0 {
		return def, nil
	}
	return v, nil
}

// resolveBreakpoints checks c.Breakpoints and fills d.bp and their logs.
func (c *Config) resolveBreakpoints(d *config) error {
	bp := c.Breakpoints
	d.bp, d.bpLogs = d.bp[:0], d.bpLogs[:0]
	if bp == nil {
		d.bp = append(d.bp, 0, 0.2, 0.4, 0.6, 0.8, 1)
	} else {
		d.bp = append(d.bp, bp...)
	}
	for i, b := range d.bp {
		if i == 0 {
			d.bpLogs = append(d.bpLogs, detLog(d.logZero))
		} else {
			d.bpLogs = append(d.bpLogs, detLog(b))
		}
	}
	return nil
}

// checkBreakpoints checks c.Breakpoints: nil, or strictly increasing
// from 0 to 1.
func (c *Config) checkBreakpoints() error {
	bp := c.Breakpoints
	if bp == nil {
		return nil
	}
	if len(bp) < 2 {
		return invalid("Config.Breakpoints", "%d breakpoints (want at least 0 and 1)", len(bp))
	}
	for i, b := range bp {
		switch {
		case !finite(b):
			return invalidAt("Config.Breakpoints[]", i, "%v is not finite", b)
		case i == 0 && b != 0:
			return invalidAt("Config.Breakpoints[]", i, "%v (the first breakpoint must be 0)", b)
		case i == len(bp)-1 && b != 1:
			return invalidAt("Config.Breakpoints[]", i, "%v (the last breakpoint must be 1)", b)
		case i > 0 && b <= bp[i-1]:
			return invalidAt("Config.Breakpoints[]", i, "%v is not above the previous breakpoint %v", b, bp[i-1])
		}
	}
	return nil
}

// CheckConfig reports the error Solve gives for c whatever the problem:
// the configuration's own checks, which [Workspace.Check] runs first.
func CheckConfig(c *Config) error {
	var d config
	return c.check(&d)
}

// CheckSize reports a problem of the given GPUs and jobs over a window of
// rounds rounds (already resolved: 0 is not the default here) that passes
// the size limits, before anything is built for it: MaxCapacity GPU-rounds,
// MaxJobs jobs and MaxCells value cells, jobs × (rounds + 1) (the value
// tables hold a job's utility after 0 to rounds rounds). Values below 1 are
// left to the validation of their field.
func CheckSize(gpus, jobs, rounds int) error {
	if rounds > MaxRounds {
		return tooLarge("Config.Rounds", "%d rounds, above %d", rounds, MaxRounds)
	}
	if int64(gpus)*int64(rounds) > MaxCapacity {
		return tooLarge("GPUs", "%d GPUs × %d rounds is above %d GPU-rounds", gpus, rounds, MaxCapacity)
	}
	if jobs > MaxJobs {
		return tooLarge("Jobs", "%d jobs, above %d", jobs, MaxJobs)
	}
	if int64(jobs)*(int64(rounds)+1) > MaxCells {
		return tooLarge("Jobs", "%d jobs × (%d rounds + 1) is %d value cells, above %d", jobs, rounds, int64(jobs)*(int64(rounds)+1), MaxCells)
	}
	return nil
}

// validate checks p and fills cfg. It does not allocate.
func (p *Problem) validate(cfg *config) error {
	if err := p.Config.resolve(cfg); err != nil {
		return err
	}
	if p.GPUs < 1 {
		return invalid("GPUs", "%d GPUs (want ≥ 1)", p.GPUs)
	}
	if err := CheckSize(p.GPUs, len(p.Jobs), cfg.T); err != nil {
		return err
	}
	if p.Round < 0 || p.Round > MaxRound {
		return invalid("Round", "%d (want 0..%d)", p.Round, MaxRound)
	}
	for i := range p.Jobs {
		j := &p.Jobs[i]
		switch {
		case j.GPUs < 1 || j.GPUs > p.GPUs:
			return p.jobInvalid(i, "GPUs", "%d GPUs on a %d-GPU cluster", j.GPUs, p.GPUs)
		case j.Epochs < 1:
			return p.jobInvalid(i, "Epochs", "%d (want ≥ 1)", j.Epochs)
		case j.Progress < 0 || j.Progress > j.Epochs:
			return p.jobInvalid(i, "Progress", "%d epochs done of %d", j.Progress, j.Epochs)
		case !finite(j.MeanEpoch) || j.MeanEpoch <= 0:
			return p.jobInvalid(i, "MeanEpoch", "%v (want a finite duration > 0)", j.MeanEpoch)
		case !finite(j.Remaining) || j.Remaining < 0:
			return p.jobInvalid(i, "Remaining", "%v (want a finite duration ≥ 0)", j.Remaining)
		case !finite(j.FairFinish) || j.FairFinish <= 0:
			return p.jobInvalid(i, "FairFinish", "%v (want a finite time > 0)", j.FairFinish)
		case cfg.k*j.Remaining > MaxPriority:
			// The exact arithmetic sums k·τ with the welfare; both must
			// stay far inside float64's range.
			return invalid("Config.K", "%v: k × job %d's remaining runtime is above %g", cfg.k, j.ID, float64(MaxPriority))
		}
	}
	return nil
}
