package round

import (
	"context"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
)

// Result is a plan for the window's T rounds, starting at Round.
//
// Slices point into the [Workspace] that produced the Result and are
// overwritten by its next Plan.
type Result struct {
	Round     int           // absolute index of the window's first round
	Status    market.Status // Optimal, Feasible (with Bound) or Infeasible
	Relaxed   bool          // the finish-time-fair program was infeasible
	Objective float64       // of the program solved
	Bound     float64       // on its optimum
	Welfare   float64       // the Nash-welfare term
	Makespan  float64       // max residual runtime after the window, s
	Nodes     int           // branch-and-bound nodes
	// Rounds[t] lists the IDs of the jobs to run in round Round+t: the
	// planned ones (ascending input position), then the backfilled ones.
	Rounds [][]int
	// Backfill[t] is the tail of Rounds[t] added by the work-conserving
	// backfill.
	Backfill [][]int
	Jobs     []JobResult // input order
}

// JobResult is one job's share of the plan and the predictions behind it.
type JobResult struct {
	ID           int
	Rounds       int     // n_j, rounds planned in the window
	Epochs       float64 // y_j, epochs planned
	Priority     float64 // p_j (1 on the finish-time-fair path)
	Remaining    float64 // R_j, s
	RemainingStd float64 // posterior standard deviation of R_j, s (0 with Known)
	MeanEpoch    float64 // D̄_j, s
	FairFinish   float64 // FT*_j, s
	// Estimate is the finish-time estimate recorded in this round (when
	// State.Reestimate or the job had no history), or 0. A caller keeping
	// the history appends {Round, Estimate} to the job's Finish.
	Estimate float64
	// Calibration is the factor applied to the profiled durations (1 when
	// the profile agreed with the measured throughput or there was none).
	Calibration float64
}

// Workspace is the reusable planner: it keeps the buffers of the predictor,
// the FT* series and the market solver, so steady-state planning does not
// allocate. The zero value is ready to use. A Workspace is not safe for
// concurrent use.
type Workspace struct {
	pred   predictor.Predictor
	series predictor.FinishSeries
	solver market.Workspace
	prob   market.Problem
	cur    []float64
	res    Result
	ids    []int
}

// Plan computes the plan of s with a fresh [Workspace].
func Plan(ctx context.Context, s *State) (*Result, error) {
	return new(Workspace).Plan(ctx, s)
}

// Plan predicts every job's remaining runtime, mean epoch duration and fair
// finish time (package predictor), solves the round program (package
// market) and returns the plan. It is a pure function of s: s is not
// modified. Invalid input gives a *[FieldError]; a context that ends gives
// the best plan found, or, when it ends before there is a first plan
// (while the jobs are predicted or the market builds its tables), an error
// wrapping market.ErrTimeLimit.
func (w *Workspace) Plan(ctx context.Context, s *State) (*Result, error) {
	return w.plan(ctx, s, nil)
}

// given is one job's remaining runtime, its spread, mean epoch, elapsed
// time and calibration factor, computed by the caller (the Scheduler's
// incremental trackers) exactly as steps 1 and 2 would; ok false means
// "compute them".
type given struct {
	ok                                              bool
	remaining, std, meanEpoch, elapsed, calibration float64
	// checked: the job's profile passed checkProfile in an earlier plan
	// and has not changed since (a Scheduler's own copy): checking its
	// durations at every plan was a fifth of a long replay.
	checked bool
}

// plan is Plan with the predictions of the jobs whose g[i].ok is set
// supplied by the caller (g may be nil).
func (w *Workspace) plan(ctx context.Context, s *State, g []given) (*Result, error) {
	if _, err := w.predictBy(ctx, s, g); err != nil {
		return nil, err
	}
	res := &w.res
	sol, err := w.solver.Solve(ctx, &w.prob)
	if err != nil {
		return nil, fromMarket(s, res.Jobs, err)
	}
	res.Round, res.Status, res.Relaxed = s.Round, sol.Status, sol.Relaxed
	res.Objective, res.Bound, res.Welfare, res.Makespan, res.Nodes = sol.Objective, sol.Bound, sol.Welfare, sol.Makespan, sol.Nodes
	for i := range res.Jobs {
		res.Jobs[i].Rounds, res.Jobs[i].Epochs, res.Jobs[i].Priority = sol.Count[i], sol.Epochs[i], sol.Priority[i]
	}
	ids := w.ids[:0]
	T := len(sol.Rounds)
	for t := 0; t < T; t++ {
		for _, j := range sol.Rounds[t] {
			ids = append(ids, s.Jobs[j].ID)
		}
		for _, j := range sol.Backfill[t] {
			ids = append(ids, s.Jobs[j].ID)
		}
	}
	w.ids = ids
	res.Rounds, res.Backfill = res.Rounds[:0], res.Backfill[:0]
	at := 0
	for t := 0; t < T; t++ {
		np, nb := len(sol.Rounds[t]), len(sol.Backfill[t])
		res.Rounds = append(res.Rounds, ids[at:at+np+nb:at+np+nb])
		res.Backfill = append(res.Backfill, ids[at+np:at+np+nb:at+np+nb])
		at += np + nb
	}
	return res, nil
}

// Predict returns what [Workspace.Plan] predicts for every job before it
// solves the round program (steps 1 to 3 of the package doc): R_j and its
// spread, D̄_j, FT*_j, this round's finish-time estimate and the
// calibration factor. The plan fields (Rounds, Epochs, Priority) are zero.
// It checks all of s as Plan does, so it fails exactly when Plan would.
// The slice is overwritten by the Workspace's next call.
func (w *Workspace) Predict(s *State) ([]JobResult, error) {
	jobs, err := w.predict(s, nil)
	if err != nil {
		return nil, err
	}
	if err := w.solver.Check(&w.prob); err != nil {
		return nil, fromMarket(s, jobs, err)
	}
	return jobs, nil
}

// predictEvery is how many jobs predictBy predicts between two looks at
// the clock.
const predictEvery = 64

// predict runs steps 1 to 3 and sets up w.prob for the market; steps 1 and
// 2 of job i come from g[i] when it is set.
func (w *Workspace) predict(s *State, g []given) ([]JobResult, error) {
	return w.predictBy(context.Background(), s, g)
}

// predictBy is predict that stops with market.ErrTimeLimit when ctx ends,
// for a problem of market.WatchedCells cells or more (a smaller one is
// predicted in a millisecond or so).
func (w *Workspace) predictBy(ctx context.Context, s *State, g []given) ([]JobResult, error) {
	delta, err := checkState(s)
	if err != nil {
		return nil, err
	}
	cfg := &s.Config
	w.pred.Options = cfg.Predictor
	w.series.Momentum = cfg.Momentum
	N := len(s.Jobs)
	T := cfg.Market.Rounds
	if T <= 0 {
		T = market.DefaultRounds
	}
	watch := int64(N)*int64(T+1) >= market.WatchedCells
	res := &w.res
	res.Jobs = scratch.Resize(res.Jobs, N)
	w.prob.Jobs = scratch.Resize(w.prob.Jobs, N)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if watch && i%predictEvery == predictEvery-1 && deadline.Done(ctx) {
			return nil, market.ErrTimeLimit
		}
		if err := checkJob(i, j, s.GPUs, s.Round, cfg.Predictor.Estimator, g != nil && g[i].ok && g[i].checked); err != nil {
			return nil, err
		}
		jr := &res.Jobs[i]
		*jr = JobResult{ID: j.ID, Calibration: 1}
		var elapsed float64
		if g != nil && g[i].ok {
			gi := &g[i]
			jr.Remaining, jr.RemainingStd, jr.MeanEpoch, jr.Calibration = gi.remaining, gi.std, gi.meanEpoch, gi.calibration
			elapsed = gi.elapsed
		} else if elapsed, err = w.runtime(s, i, delta, jr); err != nil {
			return nil, err
		}
		if err := w.fairFinish(s, i, elapsed, jr); err != nil {
			return nil, err
		}
		E := j.Epochs
		if E == 0 {
			E = len(j.EpochBS)
		}
		w.prob.Jobs[i] = market.Job{ID: j.ID, GPUs: j.GPUs, Epochs: E, Progress: j.Progress,
			MeanEpoch: jr.MeanEpoch, Remaining: jr.Remaining, FairFinish: jr.FairFinish}
	}
	w.prob.GPUs, w.prob.Round, w.prob.Config = s.GPUs, s.Round, cfg.Market
	return res.Jobs, nil
}

// checkState validates the State's own fields and returns the round length.
func checkState(s *State) (delta float64, err error) {
	if s.GPUs < 1 {
		return 0, invalid("GPUs", "%d GPUs (want ≥ 1)", s.GPUs)
	}
	if s.Round < 0 || s.Round > market.MaxRound {
		return 0, invalid("Round", "%d (want 0..%d)", s.Round, market.MaxRound)
	}
	cfg := &s.Config
	if !finite(cfg.Momentum) || cfg.Momentum < 0 || cfg.Momentum > 1 {
		return 0, invalid("Config.Momentum", "%v (want a value in [0, 1])", cfg.Momentum)
	}
	if !finite(cfg.Tolerance) || cfg.Tolerance < 0 {
		return 0, invalid("Config.Tolerance", "%v (want a finite value ≥ 0)", cfg.Tolerance)
	}
	if cfg.ReoptRounds < -1 {
		return 0, invalid("Config.ReoptRounds", "%d (want ≥ 0, or -1 for none)", cfg.ReoptRounds)
	}
	// The configuration's own checks before the sizes and the jobs, so
	// that a configuration is refused (or accepted) whatever the jobs: a
	// Scheduler checks it once, with none.
	if err := market.CheckConfig(&cfg.Market); err != nil {
		return 0, fromMarket(nil, nil, err)
	}
	if cfg.Market.K > MaxK {
		return 0, invalid("Config.Market.K", "%v per second (want at most %g)", cfg.Market.K, float64(MaxK))
	}
	if err := cfg.Predictor.Check(); err != nil {
		return 0, fromPredictor(s, -1, -1, err)
	}
	// The sizes first: nothing is predicted for a problem the market
	// would refuse as too large.
	if err := CheckSize(s.GPUs, len(s.Jobs), *cfg); err != nil {
		return 0, err
	}
	delta = cfg.Market.RoundSeconds
	if delta == 0 {
		delta = market.DefaultRoundSeconds
	}
	if !(delta >= MinRoundSeconds && delta <= MaxSeconds) {
		return 0, invalid("Config.Market.RoundSeconds", "%v (want a duration in [%v, %g] s)", cfg.Market.RoundSeconds, MinRoundSeconds, float64(MaxSeconds))
	}
	return delta, nil
}

// CheckSize reports the size limit (market.CheckSize) a State of gpus GPUs
// and jobs jobs with the configuration cfg passes, as Plan reports it
// before it predicts anything; nil when it is within them. A window of
// fewer than one round is left to the configuration's own check.
func CheckSize(gpus, jobs int, cfg Config) error {
	T := cfg.Market.Rounds
	if T < 0 {
		return nil
	}
	if T == 0 {
		T = market.DefaultRounds
	}
	if err := market.CheckSize(gpus, jobs, T); err != nil {
		return fromMarket(nil, nil, err)
	}
	return nil
}

// runtime fills job i's remaining runtime, its spread, the mean epoch
// duration and the calibration factor (steps 1 and 2), from the caller's
// Known or from the calibrated profile, and returns the elapsed time.
func (w *Workspace) runtime(s *State, i int, delta float64, jr *JobResult) (elapsed float64, err error) {
	j := &s.Jobs[i]
	if k := j.Known; k != nil {
		jr.Remaining, jr.MeanEpoch = k.Remaining, k.MeanEpoch
		return k.Elapsed, nil
	}
	dur := j.EpochDur
	if len(j.Timeline) > 0 {
		w.cur = append(w.cur[:0], j.EpochDur...)
		pre := j.ProfiledDur
		if pre == nil {
			pre = j.EpochDur
		}
		f, _, err := predictor.Calibrate(w.cur, pre, j.SamplesPerEpoch, j.Timeline, calibrateOptions(delta, s.Config.Tolerance))
		if err != nil {
			return 0, fromPredictor(s, i, -1, err)
		}
		jr.Calibration, dur = f, w.cur
	}
	est, err := w.pred.Predict(&predictor.Job{Epochs: j.Epochs, Progress: j.Progress,
		EpochBS: j.EpochBS, EpochDur: dur, Modes: j.Modes, ModeDur: j.ModeDur})
	if err != nil {
		return 0, fromPredictor(s, i, -1, err)
	}
	jr.Remaining, jr.RemainingStd, jr.MeanEpoch = est.Remaining, est.Std(), est.MeanEpoch
	return est.Elapsed, nil
}

// fairFinish fills job i's FT* (step 3): the caller's, or the momentum
// average of its history plus, on re-estimation, this round's
// uniform-share estimate.
func (w *Workspace) fairFinish(s *State, i int, elapsed float64, jr *JobResult) error {
	j := &s.Jobs[i]
	if k := j.Known; k != nil && k.FairFinish > 0 {
		jr.FairFinish = k.FairFinish
		return nil
	}
	w.series.Reset()
	for k, p := range j.Finish {
		if err := w.series.Add(p.Round, p.Estimate); err != nil {
			return fromPredictor(s, i, k, err)
		}
	}
	if s.Reestimate || len(j.Finish) == 0 {
		est, err := predictor.FinishEstimate(j.Submit, elapsed, jr.Remaining, s.GPUs, len(s.Jobs))
		if err != nil {
			return fromPredictor(s, i, -1, err)
		}
		jr.Estimate = est
		if err := w.series.Add(s.Round, est); err != nil {
			return fromPredictor(s, i, -1, err)
		}
	}
	ft, err := w.series.Target(s.Round)
	if err != nil {
		return fromPredictor(s, i, -1, err)
	}
	if !(ft > 0) {
		return jobInvalid(i, j, "Finish", "fair finish time %v s is not positive", ft)
	}
	jr.FairFinish = ft
	return nil
}

// Predict is [Workspace.Predict] with a fresh Workspace.
func Predict(s *State) ([]JobResult, error) {
	return new(Workspace).Predict(s)
}

// calibrateOptions are the calibration's options for round length delta
// and tolerance tol: the authors' rule, with the rescaled durations
// clamped to the durations a job may state.
func calibrateOptions(delta, tol float64) predictor.CalibrateOptions {
	return predictor.CalibrateOptions{RoundSec: delta, Tolerance: tol, MinDur: MinEpochSeconds, MaxDur: MaxSeconds}
}
