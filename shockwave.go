package orrery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/engine/shockwave/round"
	"github.com/orrery/orrery/internal/codec"
)

// ShockwavePlanRequest is the request of "shockwave.plan" (schema v1).
//
// It plans the next T rounds of a GPU cluster with Shockwave's market (package
// round, on package predictor and package market). The request is the whole
// cluster state, so the call is a pure function: the caller keeps the
// history (finish-time estimates, throughput samples) and appends what the
// response reports. Times are seconds, epochs whole epochs.
//
// Request:
//
//	{
//	  "gpus": 32,                 // M, GPUs in the cluster (≥ 1)
//	  "round": 42,                // r, absolute index of the round to plan (≥ 0)
//	  "reestimate": true,         // record a finish-time estimate for every job at r
//	                              // (do it on the re-plan after an arrival or completion);
//	                              // jobs without history always get one
//	  "config": {                 // every field optional; absent = default
//	    "rounds": 20,             // T, window length (1..1024)
//	    "round_s": 120,           // Δ, round length
//	    "k": 0.001,               // makespan regulariser, per second
//	    "lambda": 12,             // priority power on the relaxed path
//	    "rho_max": 1,             // finish-time-fairness bound
//	    "breakpoints": [0, 0.2, 0.4, 0.6, 0.8, 1],  // piecewise log, 0 first, 1 last
//	    "log_zero": 1e-6,         // stands in for 0 inside ln
//	    "urgent_power": 100,      // priority power for jobs with R < Δ
//	    "log": "piecewise",       // or "exact": ln u (tangent below log_zero)
//	    "no_relax": false,        // report "infeasible" instead of relaxing FTF
//	    "gap": 0,                 // stop within this relative gap (0 = prove optimality)
//	    "max_nodes": 20000,       // packing branch-and-bound nodes
//	    "estimator": "faithful",  // R_j: "faithful" (authors'), "posterior" (mean) or "oracle"
//	    "prior_strength": 0,      // Dirichlet prior total (0 = E, the authors')
//	    "momentum": 0.9,          // FT* weight of the time-weighted mean (0..1)
//	    "tolerance": 0.4,         // calibration tolerance
//	    "time_limit_ms": 0,       // wall-clock limit (0 none; results then depend on the host's speed)
//	    "reopt_rounds": 8         // a Scheduler's periodic re-plan; -1 only on resolve (plan ignores it)
//	  },
//	  "jobs": [{
//	    "id": 7,                  // unique integer; the last tie-breaker
//	    "gpus": 2,                // GPUs the job runs on (1..gpus)
//	    "submit_s": 300,          // submission time
//	    "epochs": 0,              // E (0 = length of epoch_bs)
//	    "progress": 12,           // F, completed epochs (0..E)
//	    "epoch_bs": [32, ...],    // batch size of each profiled epoch
//	    "epoch_dur_s": [36.4, ...],   // duration of each profiled epoch on the job's GPUs
//	    "modes": [32, 64],        // optional declared batch sizes (else the distinct epoch_bs)
//	    "mode_dur_s": [36.4, 36.5],   // optional epoch duration per declared mode
//	    "profiled_dur_s": [...],  // optional pre-profiled durations for calibration
//	    "samples_per_epoch": 50000,   // dataset size, needed with a timeline
//	    "timeline": [{"round": 3, "it_per_s": 10.5, "bs": 32}],  // throughput samples
//	    "finish": [{"round": 0, "estimate_s": 5400}],  // earlier finish-time estimates
//	    "known": {                // optional: the caller's own predictions
//	      "remaining_s": 3600, "mean_epoch_s": 36, "elapsed_s": 400,
//	      "fair_finish_s": 0      // 0 = from "finish"
//	    }
//	  }]
//	}
//
// Response:
//
//	{
//	  "round": 42, "window": 20,  // the plan covers rounds round .. round+window−1
//	  "status": "optimal",        // or "feasible" (bound below) or "infeasible" (no_relax)
//	  "relaxed": true,            // FTF constraints were infeasible: priorities path
//	  "objective": -10.32, "bound": -10.32,   // program objective and upper bound
//	  "welfare": -0.023, "makespan_s": 10298.9, "nodes": 1,
//	  "rounds": [[3, 7, 9], ...], // job IDs per round: planned, then backfilled
//	  "backfill": [[9], ...],     // the backfilled tail of each round
//	  "jobs": [{"id": 7, "rounds": 8, "epochs": 26.4, "priority": 1,
//	            "remaining_s": 3600, "remaining_std_s": 210, "mean_epoch_s": 36,
//	            "fair_finish_s": 9000, "estimate_s": 8800, "calibration": 1}]
//	}
//
// "estimate_s" is present when an estimate was recorded at "round"; append
// {"round", "estimate_s"} to the job's "finish" for the next call.
// "calibration" is the factor applied to the profiled durations (1 = none).
//
// Errors name the field: "jobs[3].epoch_dur_s[7]", "config.rounds",
// "jobs[1].gpus". An explicit 0 for a field whose default is used when it is
// absent (rounds, round_s, k, lambda, rho_max, log_zero, urgent_power,
// momentum, tolerance) is an error, so an empty window is never silently
// replaced by the default one.
type ShockwavePlanRequest struct {
	GPUs       int             `json:"gpus"`
	Round      int             `json:"round"`
	Reestimate bool            `json:"reestimate,omitempty"`
	Config     ShockwaveConfig `json:"config"`
	Jobs       []ShockwaveJob  `json:"jobs"`
}

// ShockwaveConfig is the planner configuration; absent fields take the
// authors' defaults (tacc_32gpus). The zero value is those defaults.
//
// Fields whose explicit zero the schema refuses (an empty window is never
// silently the default one) are pointers, nil meaning absent; write one
// inline with new: ShockwaveConfig{Rounds: new(4), K: new(1e-3)}.
type ShockwaveConfig struct {
	Rounds        *int      `json:"rounds,omitempty" round:"Market.Rounds"`
	RoundS        *float64  `json:"round_s,omitempty" round:"Market.RoundSeconds"`
	K             *float64  `json:"k,omitempty" round:"Market.K"`
	Lambda        *float64  `json:"lambda,omitempty" round:"Market.Lambda"`
	RhoMax        *float64  `json:"rho_max,omitempty" round:"Market.RhoMax"`
	Breakpoints   []float64 `json:"breakpoints,omitempty" round:"Market.Breakpoints"`
	LogZero       *float64  `json:"log_zero,omitempty" round:"Market.LogZero"`
	UrgentPower   *float64  `json:"urgent_power,omitempty" round:"Market.UrgentPower"`
	Log           string    `json:"log,omitempty" round:"Market.Log"`
	NoRelax       bool      `json:"no_relax,omitempty" round:"Market.NoRelax"`
	Gap           float64   `json:"gap,omitempty" round:"Market.Gap"`
	MaxNodes      int       `json:"max_nodes,omitempty" round:"Market.MaxNodes"`
	Estimator     string    `json:"estimator,omitempty" round:"Predictor.Estimator"`
	PriorStrength float64   `json:"prior_strength,omitempty" round:"Predictor.PriorStrength"`
	Momentum      *float64  `json:"momentum,omitempty"`
	Tolerance     *float64  `json:"tolerance,omitempty"`
	TimeLimitMs   float64   `json:"time_limit_ms,omitempty" round:"-"`
	ReoptRounds   int       `json:"reopt_rounds,omitempty"` // Scheduler: re-plan every this many rounds; 0 = 8, -1 = only on request (shockwave.scheduler.resolve); plan ignores it
}

// ShockwaveJob is one active job.
type ShockwaveJob struct {
	ID              int               `json:"id"`
	GPUs            int               `json:"gpus"`
	SubmitS         float64           `json:"submit_s" round:"Submit"`
	Epochs          int               `json:"epochs,omitempty"`
	Progress        int               `json:"progress"`
	EpochBS         []int             `json:"epoch_bs,omitempty"`
	EpochDurS       []float64         `json:"epoch_dur_s,omitempty" round:"EpochDur"`
	Modes           []int             `json:"modes,omitempty"`
	ModeDurS        []float64         `json:"mode_dur_s,omitempty" round:"ModeDur"`
	ProfiledDurS    []float64         `json:"profiled_dur_s,omitempty" round:"ProfiledDur"`
	SamplesPerEpoch float64           `json:"samples_per_epoch,omitempty"`
	Timeline        []ThroughputSpec  `json:"timeline,omitempty"`
	Finish          []FinishSpec      `json:"finish,omitempty"`
	Known           *KnownPredictions `json:"known,omitempty"`
}

// ThroughputSpec is one measured lease: it ended in Round and ran at
// ItPerS iterations per second with batch size BS.
type ThroughputSpec struct {
	Round  int     `json:"round"`
	ItPerS float64 `json:"it_per_s" round:"ItPerSec"`
	BS     int     `json:"bs" round:"BatchSize"`
}

// FinishSpec is an earlier finish-time estimate.
type FinishSpec struct {
	Round     int     `json:"round"`
	EstimateS float64 `json:"estimate_s" round:"Estimate"`
}

// KnownPredictions are the caller's own predictions for a job.
type KnownPredictions struct {
	RemainingS  float64 `json:"remaining_s" round:"Remaining"`
	MeanEpochS  float64 `json:"mean_epoch_s" round:"MeanEpoch"`
	ElapsedS    float64 `json:"elapsed_s,omitempty" round:"Elapsed"`
	FairFinishS float64 `json:"fair_finish_s,omitempty" round:"FairFinish"`
}

// ShockwavePlanResponse is the response of "shockwave.plan".
type ShockwavePlanResponse struct {
	Round     int                `json:"round"`
	Window    int                `json:"window"`
	Status    string             `json:"status"`
	Relaxed   bool               `json:"relaxed"`
	Objective float64            `json:"objective"`
	Bound     float64            `json:"bound"`
	Welfare   float64            `json:"welfare"`
	MakespanS float64            `json:"makespan_s"`
	Nodes     int                `json:"nodes"`
	Rounds    [][]int            `json:"rounds"`
	Backfill  [][]int            `json:"backfill"`
	Jobs      []ShockwaveJobPlan `json:"jobs"`
}

// ShockwaveJobPlan is one job's part of the plan: what the planner gives it
// and the predictions behind it.
type ShockwaveJobPlan struct {
	ID       int     `json:"id"`
	Rounds   int     `json:"rounds"`
	Epochs   float64 `json:"epochs"`
	Priority float64 `json:"priority"`
	ShockwavePrediction
}

// ShockwavePrediction is what the planner predicts for a job.
type ShockwavePrediction struct {
	RemainingS    float64 `json:"remaining_s"`          // R_j, posterior mean
	RemainingStdS float64 `json:"remaining_std_s"`      // its posterior standard deviation
	MeanEpochS    float64 `json:"mean_epoch_s"`         // D̄_j
	FairFinishS   float64 `json:"fair_finish_s"`        // FT*_j
	EstimateS     float64 `json:"estimate_s,omitempty"` // this round's finish-time estimate, to append to the job's finish history
	Calibration   float64 `json:"calibration"`          // factor applied to the profiled durations
}

// ShockwavePredictRequest is the request of "shockwave.predict": the same
// state as "shockwave.plan", checked the same way, so a state that predicts
// also plans. Of config only the predictor's settings matter (estimator,
// prior_strength, momentum, tolerance, round_s).
type ShockwavePredictRequest = ShockwavePlanRequest

// ShockwavePredictResponse is the response of "shockwave.predict".
type ShockwavePredictResponse struct {
	Round int                      `json:"round"`
	Jobs  []ShockwaveJobPrediction `json:"jobs"` // in request order
}

// ShockwaveJobPrediction is one job's prediction.
type ShockwaveJobPrediction struct {
	ID int `json:"id"`
	ShockwavePrediction
}

// maxTimeLimitMs bounds time_limit_ms (about 11.6 days).
const maxTimeLimitMs = 1e9

// measure and limits refuse a plan past the market's size limits
// (market.MaxJobs jobs, jobs × (rounds + 1) value cells) from the element
// count of "jobs" and the value of "config.rounds" before the request is
// decoded: its jobs would otherwise be decoded and predicted first.
func (r *ShockwavePlanRequest) measure() []string { return []string{"gpus", "jobs", "config.rounds"} }

func (r *ShockwavePlanRequest) limits(m *codec.Measures) error {
	_, jobs := m.Get("jobs")
	var cfg round.Config
	if n, ok := m.Int("config.rounds"); ok {
		cfg.Market.Rounds = max(n, 1) // a bad count is left to the decoded check
	}
	gpus, _ := m.Int("gpus")
	if err := round.CheckSize(gpus, jobs, cfg); err != nil {
		return planError(err)
	}
	return nil
}

// optional reads an explicitly given positive value.
func optional(field string, v *float64, upTo float64) (float64, error) {
	if v == nil {
		return 0, nil
	}
	if !(*v > 0) || math.IsInf(*v, 0) || *v > upTo {
		return 0, fieldError(field, fmt.Errorf("%w: %v (want a finite value in (0, %v]; omit the field for the default)", round.ErrInvalid, *v, upTo))
	}
	return *v, nil
}

// state converts the request to the round planner's state.
func (r *ShockwavePlanRequest) state() (*round.State, time.Duration, error) {
	cfg, limit, err := r.Config.config()
	if err != nil {
		return nil, 0, err
	}
	st := &round.State{GPUs: r.GPUs, Round: r.Round, Reestimate: r.Reestimate, Config: cfg, Jobs: make([]round.Job, len(r.Jobs))}
	for i := range r.Jobs {
		st.Jobs[i] = r.Jobs[i].job()
	}
	return st, limit, nil
}

// config converts the configuration to the planner's, and its time limit.
func (c *ShockwaveConfig) config() (round.Config, time.Duration, error) {
	var mc market.Config
	if c.Rounds != nil {
		if *c.Rounds < 1 {
			return round.Config{}, 0, fieldError("config.rounds", fmt.Errorf("%w: %d rounds, the window is empty", market.ErrInvalid, *c.Rounds))
		}
		mc.Rounds = *c.Rounds
	}
	inf := math.Inf(1)
	var err error
	for _, f := range []struct {
		name string
		v    *float64
		dst  *float64
		upTo float64
	}{
		{"config.round_s", c.RoundS, &mc.RoundSeconds, round.MaxSeconds},
		{"config.k", c.K, &mc.K, round.MaxK},
		{"config.lambda", c.Lambda, &mc.Lambda, inf},
		{"config.rho_max", c.RhoMax, &mc.RhoMax, inf},
		{"config.log_zero", c.LogZero, &mc.LogZero, inf},
		{"config.urgent_power", c.UrgentPower, &mc.UrgentPower, inf},
	} {
		if *f.dst, err = optional(f.name, f.v, f.upTo); err != nil {
			return round.Config{}, 0, err
		}
	}
	if c.Breakpoints != nil {
		mc.Breakpoints = c.Breakpoints
	}
	switch c.Log {
	case "", "piecewise":
	case "exact":
		mc.Log = market.ExactLog
	default:
		return round.Config{}, 0, fieldError("config.log", fmt.Errorf("%w: %q (want \"piecewise\" or \"exact\")", market.ErrInvalid, c.Log))
	}
	mc.NoRelax, mc.Gap, mc.MaxNodes = c.NoRelax, c.Gap, c.MaxNodes
	cfg := round.Config{Market: mc}
	switch c.Estimator {
	case "", "faithful":
	case "posterior":
		cfg.Predictor.Estimator = predictor.Posterior
	case "oracle":
		cfg.Predictor.Estimator = predictor.Oracle
	default:
		return round.Config{}, 0, fieldError("config.estimator", fmt.Errorf("%w: %q (want \"faithful\", \"posterior\" or \"oracle\")", predictor.ErrInvalid, c.Estimator))
	}
	if !(c.PriorStrength >= 0 && c.PriorStrength <= predictor.MaxPriorStrength) {
		return round.Config{}, 0, fieldError("config.prior_strength", fmt.Errorf("%w: %v (want 0..%d; 0 is the job's epoch count, the authors')", predictor.ErrInvalid, c.PriorStrength, predictor.MaxPriorStrength))
	}
	cfg.Predictor.PriorStrength = c.PriorStrength
	if cfg.Momentum, err = optional("config.momentum", c.Momentum, 1); err != nil {
		return round.Config{}, 0, err
	}
	if cfg.Tolerance, err = optional("config.tolerance", c.Tolerance, inf); err != nil {
		return round.Config{}, 0, err
	}
	if c.TimeLimitMs < 0 || c.TimeLimitMs > maxTimeLimitMs || math.IsNaN(c.TimeLimitMs) {
		return round.Config{}, 0, fieldError("config.time_limit_ms", fmt.Errorf("%w: %v (want 0..%v)", round.ErrInvalid, c.TimeLimitMs, maxTimeLimitMs))
	}
	cfg.ReoptRounds = c.ReoptRounds
	return cfg, limit(c.TimeLimitMs), nil
}

// job converts a job to the planner's; its slices are shared.
func (j *ShockwaveJob) job() round.Job {
	rj := round.Job{ID: j.ID, GPUs: j.GPUs, Submit: j.SubmitS, Epochs: j.Epochs, Progress: j.Progress,
		EpochBS: j.EpochBS, EpochDur: j.EpochDurS, Modes: j.Modes, ModeDur: j.ModeDurS,
		ProfiledDur: j.ProfiledDurS, SamplesPerEpoch: j.SamplesPerEpoch}
	for _, s := range j.Timeline {
		rj.Timeline = append(rj.Timeline, s.sample())
	}
	for _, f := range j.Finish {
		rj.Finish = append(rj.Finish, round.FinishPoint{Round: f.Round, Estimate: f.EstimateS})
	}
	if k := j.Known; k != nil {
		rj.Known = &round.Known{Remaining: k.RemainingS, MeanEpoch: k.MeanEpochS, Elapsed: k.ElapsedS, FairFinish: k.FairFinishS}
	}
	return rj
}

// sample converts a throughput measurement to the predictor's.
func (s ThroughputSpec) sample() predictor.Sample {
	return predictor.Sample{Round: s.Round, ItPerSec: s.ItPerS, BatchSize: s.BS}
}

// planError turns a planner error into a wire error naming the JSON path
// of the field (see jsonPath).
func planError(err error) error {
	var fe *round.FieldError
	if !errors.As(err, &fe) {
		return &Error{Code: CodeInvalid, Message: message(err), err: err}
	}
	return fieldPlanError(fe, err)
}

// fieldPlanError is planError of a round.FieldError.
func fieldPlanError(fe *round.FieldError, err error) error {
	field, ok := jsonPath(fe)
	if !ok { // a bug: TestJSONKeys covers every field of round.State
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("no JSON path for %v", err), err: err}
	}
	code := CodeInvalid
	if errors.Is(err, market.ErrLimit) {
		code = CodeLimit
	}
	return &Error{Code: code, Field: field, Message: fieldMessage(fe.Err), err: err}
}

// jsonPath returns the JSON path of the request value a round error names,
// read from the struct tags of the request's types: a field's round tag
// names the field of round.State it fills (its Go name when it has none,
// "-" for none), its json tag its key. "Jobs[3].EpochDur[2]" (Job 3, Field
// "EpochDur[2]") is "jobs[3].epoch_dur_s[2]", "Config.Market.Breakpoints[1]"
// is "config.breakpoints[1]", and "Config.Market", whose fields the schema
// inlines into "config", is "config". It reports false for a path no field
// names; TestJSONKeys checks that every field of round.State has one.
func jsonPath(fe *round.FieldError) (string, bool) {
	path := fe.Field
	if fe.Job >= 0 {
		path = "Jobs[" + strconv.Itoa(fe.Job) + "]." + path
	}
	segs := strings.Split(path, ".")
	t := reflect.TypeFor[ShockwavePlanRequest]()
	var out strings.Builder
	for len(segs) > 0 {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return "", false
		}
		f, n, ok := stateField(t, segs)
		switch {
		case !ok:
			return "", false
		case n == 0: // a struct of the State the schema inlines here
			return out.String(), out.Len() > 0
		}
		key, _ := codec.JSONName(f)
		if out.Len() > 0 {
			out.WriteByte('.')
		}
		out.WriteString(key)
		if _, index, ok := strings.Cut(segs[n-1], "["); ok {
			out.WriteString("[" + index)
		}
		segs, t = segs[n:], f.Type
	}
	return out.String(), true
}

// stateField returns the field of t that fills the State field path segs
// begins with, and how many of its segments that field's round tag
// covers: 0 when segs end inside the tag ("Config.Market" of
// "Market.Rounds"). Only the last segment covered may be indexed.
func stateField(t reflect.Type, segs []string) (reflect.StructField, int, bool) {
	for f := range t.Fields() {
		name := f.Tag.Get("round")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		parts := strings.Split(name, ".")
		match := true
		for i, p := range parts[:min(len(parts), len(segs))] {
			seg, _, indexed := strings.Cut(segs[i], "[")
			if seg != p || (indexed && i < len(parts)-1) {
				match = false
				break
			}
		}
		switch {
		case !match:
		case len(parts) <= len(segs):
			return f, len(parts), true
		default:
			return f, 0, true
		}
	}
	return reflect.StructField{}, 0, false
}

// Plan runs "shockwave.plan": the next rounds of a GPU cluster from
// Shockwave's market, a pure function of the state in req. Errors are
// *Error values naming the request's field by its JSON path.
func Plan(ctx context.Context, req ShockwavePlanRequest) (ShockwavePlanResponse, error) {
	if err := checkFloats("", &req); err != nil {
		return ShockwavePlanResponse{}, err
	}
	return planOp(ctx, req)
}

// planOp is Plan on a decoded request.
func planOp(ctx context.Context, req ShockwavePlanRequest) (ShockwavePlanResponse, error) {
	st, limit, err := req.state()
	if err != nil {
		return ShockwavePlanResponse{}, err
	}
	ctx, cancel := withLimit(ctx, limit)
	defer cancel()
	res, err := round.Plan(ctx, st)
	if errors.Is(err, market.ErrTimeLimit) {
		return ShockwavePlanResponse{}, timeLimitError("config.time_limit_ms", limit, "plan (predictions and the market's tables)")
	}
	if err != nil {
		return ShockwavePlanResponse{}, planError(err)
	}
	return planResponse(res), nil
}

// planResponse copies a plan into the schema's response.
func planResponse(res *round.Result) ShockwavePlanResponse {
	resp := ShockwavePlanResponse{
		Round: res.Round, Window: len(res.Rounds), Status: res.Status.String(), Relaxed: res.Relaxed,
		Objective: res.Objective, Bound: res.Bound, Welfare: res.Welfare, MakespanS: res.Makespan, Nodes: res.Nodes,
		Rounds: make([][]int, len(res.Rounds)), Backfill: make([][]int, len(res.Backfill)),
		Jobs: make([]ShockwaveJobPlan, len(res.Jobs)),
	}
	for t := range res.Rounds {
		resp.Rounds[t] = append([]int{}, res.Rounds[t]...)
		resp.Backfill[t] = append([]int{}, res.Backfill[t]...)
	}
	for i, j := range res.Jobs {
		resp.Jobs[i] = ShockwaveJobPlan{ID: j.ID, Rounds: j.Rounds, Epochs: j.Epochs, Priority: j.Priority, ShockwavePrediction: prediction(j)}
	}
	return resp
}

// Predict runs "shockwave.predict": what Plan predicts for every job (the
// remaining runtime and its spread, the mean epoch, the fair finish time)
// without solving the round program. It fails exactly when Plan would.
func Predict(ctx context.Context, req ShockwavePredictRequest) (ShockwavePredictResponse, error) {
	if err := checkFloats("", &req); err != nil {
		return ShockwavePredictResponse{}, err
	}
	return predictOp(ctx, req)
}

// predictOp is Predict on a decoded request.
func predictOp(_ context.Context, req ShockwavePredictRequest) (ShockwavePredictResponse, error) {
	st, _, err := req.state()
	if err != nil {
		return ShockwavePredictResponse{}, err
	}
	jobs, err := round.Predict(st)
	if err != nil {
		return ShockwavePredictResponse{}, planError(err)
	}
	resp := ShockwavePredictResponse{Round: st.Round, Jobs: make([]ShockwaveJobPrediction, len(jobs))}
	for i, j := range jobs {
		resp.Jobs[i] = ShockwaveJobPrediction{ID: j.ID, ShockwavePrediction: prediction(j)}
	}
	return resp, nil
}

func prediction(j round.JobResult) ShockwavePrediction {
	return ShockwavePrediction{RemainingS: j.Remaining, RemainingStdS: j.RemainingStd, MeanEpochS: j.MeanEpoch,
		FairFinishS: j.FairFinish, EstimateS: j.Estimate, Calibration: j.Calibration}
}
