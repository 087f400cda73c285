package round

import (
	"math"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
)

// DefaultReoptRounds is the authors' REOPT_ROUNDS: a periodic re-plan every
// 8 rounds.
const DefaultReoptRounds = 8

// Config holds the planner's knobs. The zero value is the authors'
// tacc_32gpus configuration with their predictor.
type Config struct {
	// Market is the round program's configuration (window, round length,
	// k, λ, ρ_max, log breakpoints, ...). Market.RoundSeconds is also the
	// round length used for calibration.
	Market market.Config
	// Predictor selects the remaining-runtime estimator and prior strength.
	Predictor predictor.Options
	// Momentum is the weight of the time-weighted mean in FT*; 0 means 0.9.
	Momentum float64
	// Tolerance is the calibration tolerance; 0 means 0.4.
	Tolerance float64
	// ReoptRounds is the period of forced re-plans of a [Scheduler]; 0
	// means 8, -1 none (the caller forces them with [Scheduler.Resolve],
	// as the authors' simulator does with set_resolve). Plan ignores it.
	ReoptRounds int
}

// Job is one active job as the planner sees it. Times are seconds.
type Job struct {
	ID     int
	GPUs   int     // GPUs the job runs on
	Submit float64 // submission time, seconds since the start of the trace
	// Epochs is E; 0 means len(EpochBS).
	Epochs int
	// Progress is F, the completed epochs.
	Progress int
	// EpochBS and EpochDur are the profile: the batch size and the duration
	// (on the job's GPUs) of each epoch, for all E epochs, or, with Modes
	// and ModeDur declared, for the epochs 0..F seen so far.
	EpochBS  []int
	EpochDur []float64
	// Modes and ModeDur declare the job's candidate batch sizes and their
	// epoch durations (see package predictor); nil means the authors'
	// hindsight modes (the distinct batch sizes of EpochBS).
	Modes   []int
	ModeDur []float64
	// Calibration (optional): when Timeline is not empty, EpochDur is
	// checked against the measured throughput and rescaled from
	// ProfiledDur (nil means EpochDur) as the authors do before every use.
	// SamplesPerEpoch is the dataset size.
	ProfiledDur     []float64
	SamplesPerEpoch float64
	Timeline        []predictor.Sample
	// Finish holds the job's earlier finish-time estimates, the history
	// FT* is computed from.
	Finish []FinishPoint
	// Known, if not nil, replaces the predictor: the caller's own R_j, D̄_j
	// and elapsed time (and FT*_j when FairFinish > 0).
	Known *Known
}

// FinishPoint is one finish-time estimate and the round it was made in.
type FinishPoint struct {
	Round    int
	Estimate float64
}

// Known carries predictions made by the caller.
type Known struct {
	Remaining  float64 // R_j ≥ 0
	MeanEpoch  float64 // D̄_j > 0
	Elapsed    float64 // Σ_{e<F} d_e ≥ 0, for finish-time estimates
	FairFinish float64 // FT*_j; 0 means from the Finish history
}

// State is everything Plan needs: the cluster, the round about to start and
// the active jobs.
type State struct {
	GPUs  int // M
	Round int // r, the absolute index of the round about to be planned
	// Reestimate records a finish-time estimate for every job at Round
	// before planning, as the authors do on the re-plan that follows an
	// arrival or a completion. Jobs with no history always get one.
	Reestimate bool
	Jobs       []Job
	Config     Config
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Domains of the times a job states, in seconds: an epoch lasts at least
// MinEpochSeconds (0, a subnormal 1e-320 or a nanosecond's fraction is no
// epoch, and would overflow the epochs a round holds), a round at least
// MinRoundSeconds.
const (
	MinEpochSeconds = 1e-9
	MinRoundSeconds = 1e-3
)

// tooShort reports whether d is a duration of 0 (or -0) up to
// MinEpochSeconds: a non-negative number that is no epoch. Negative,
// infinite and NaN durations are the predictor's to refuse.
func tooShort(d float64) bool { return d >= 0 && d < MinEpochSeconds }

// checkJob validates what Plan reads directly from job i (the predictor
// and the market check the rest); i < 0 is the job of [Scheduler.Add].
// profileChecked skips checkProfile for a profile an earlier plan checked.
func checkJob(i int, j *Job, gpus, round int, profileChecked bool) error {
	switch {
	case j.GPUs < 1 || j.GPUs > gpus:
		return jobInvalid(i, j, "GPUs", "%d GPUs on a %d-GPU cluster", j.GPUs, gpus)
	case !finite(j.Submit) || j.Submit < 0:
		return jobInvalid(i, j, "Submit", "%v (want a finite time ≥ 0)", j.Submit)
	case j.Epochs < 0:
		return jobInvalid(i, j, "Epochs", "%d (want ≥ 1, or 0 for the profile's length)", j.Epochs)
	}
	if !profileChecked {
		if err := checkProfile(i, j); err != nil {
			return err
		}
	}
	for k, p := range j.Finish {
		if p.Round < 0 || p.Round > round || (k > 0 && p.Round < j.Finish[k-1].Round) {
			return jobInvalidAt(i, j, "Finish[].Round", k, "%d (rounds must not decrease and not pass the current round %d)", p.Round, round)
		}
		if !finite(p.Estimate) {
			return jobInvalidAt(i, j, "Finish[].Estimate", k, "%v is not finite", p.Estimate)
		}
	}
	if len(j.Timeline) > 0 && !(j.SamplesPerEpoch > 0 && finite(j.SamplesPerEpoch)) {
		return jobInvalid(i, j, "SamplesPerEpoch", "%v (calibration needs the dataset size)", j.SamplesPerEpoch)
	}
	if k := j.Known; k != nil {
		switch {
		case !finite(k.Remaining) || k.Remaining < 0:
			return jobInvalid(i, j, "Known.Remaining", "%v (want a finite duration ≥ 0)", k.Remaining)
		case !finite(k.MeanEpoch) || k.MeanEpoch <= 0:
			return jobInvalid(i, j, "Known.MeanEpoch", "%v (want a finite duration > 0)", k.MeanEpoch)
		case !finite(k.Elapsed) || k.Elapsed < 0:
			return jobInvalid(i, j, "Known.Elapsed", "%v (want a finite duration ≥ 0)", k.Elapsed)
		case !finite(k.FairFinish) || k.FairFinish < 0:
			return jobInvalid(i, j, "Known.FairFinish", "%v (want a finite time ≥ 0)", k.FairFinish)
		}
		if j.Epochs < 1 && len(j.EpochBS) == 0 {
			return jobInvalid(i, j, "Epochs", "%d (a job with known predictions needs its epoch count)", j.Epochs)
		}
	}
	return nil
}

// checkProfile checks the durations of job i's profile (the predictor
// checks the rest of it): every epoch's and every pre-profiled one at least
// MinEpochSeconds, a declared mode's 0 (the profile's mean) or at least
// that, and declared modes with their durations. A job with Known states
// no profile beyond its batch sizes (for its epoch count): Known replaces
// the predictor, so a profile beside it would be silently ignored.
func checkProfile(i int, j *Job) error {
	if j.Known != nil {
		switch {
		case len(j.EpochDur) > 0:
			return jobInvalid(i, j, "EpochDur", "given with Known, which replaces the profile's predictions (give one or the other)")
		case j.Modes != nil || j.ModeDur != nil:
			return jobInvalid(i, j, "Modes", "given with Known, which replaces the profile's predictions (give one or the other)")
		case j.ProfiledDur != nil || len(j.Timeline) > 0:
			return jobInvalid(i, j, "Timeline", "given with Known: calibration rescales a profile, and Known replaces it")
		}
	}
	for k, d := range j.EpochDur {
		if tooShort(d) {
			return jobInvalidAt(i, j, "EpochDur[]", k, "%v (want a finite duration ≥ %v s)", d, MinEpochSeconds)
		}
	}
	for k, d := range j.ProfiledDur {
		if tooShort(d) {
			return jobInvalidAt(i, j, "ProfiledDur[]", k, "%v (want a finite duration ≥ %v s)", d, MinEpochSeconds)
		}
	}
	if j.Modes != nil && j.ModeDur == nil {
		return jobInvalid(i, j, "ModeDur", "missing with Modes: give each declared mode's epoch duration (0: the profile's mean at that batch size)")
	}
	for k, d := range j.ModeDur {
		if d != 0 && tooShort(d) {
			return jobInvalidAt(i, j, "ModeDur[]", k, "%v (want 0 for the profile's mean, or a finite duration ≥ %v s)", d, MinEpochSeconds)
		}
	}
	if k := j.Known; k != nil && k.MeanEpoch > 0 && tooShort(k.MeanEpoch) {
		return jobInvalid(i, j, "Known.MeanEpoch", "%v (want a finite duration ≥ %v s)", k.MeanEpoch, MinEpochSeconds)
	}
	return nil
}
