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

// Upper bounds of a State's values, derived from the arithmetic they feed
// so that no accepted value makes a later plan fail (a [Scheduler]'s
// state moves on by itself: other jobs arrive, rounds pass, calibration
// rescales, finish estimates accumulate):
//
//   - MaxSeconds bounds every time and duration a job or the
//     configuration states (epochs, submission, round length, known
//     predictions). A remaining runtime is then at most 2^63 epochs ×
//     1e15 s ≈ 9.2e33 s, a finish estimate (submission plus elapsed and
//     remaining over a 1/2^20 share) under 2e40 s, and
//     round × round length under 2^40 × 1e15 s: far inside float64.
//   - MaxK bounds config.k so that k × a remaining runtime (under
//     9.3e39) stays below market.MaxPriority: a configuration accepted
//     alone then never refuses a job.
//   - MaxFinishSeconds bounds a finish-time estimate the caller states:
//     above any estimate Plan makes (2e40 s), and far enough below
//     float64's maximum that FT*'s weighted mean of estimates cannot
//     round past it.
//   - MaxItPerSec and MaxSamplesPerEpoch bound a throughput sample and
//     the dataset size, so that calibration's sample counts (at most
//     2^63 × 1e12 × 1e15 s × 2^40 rounds a sample) stay finite.
//
// Calibration's rescaled durations are clamped to [MinEpochSeconds,
// MaxSeconds] (predictor.CalibrateOptions), so that they stay a profile
// the next plan accepts.
const (
	MaxSeconds         = 1e15
	MaxK               = 1e6
	MaxFinishSeconds   = 1e100
	MaxItPerSec        = 1e12
	MaxSamplesPerEpoch = 1e15
)

// tooShort reports whether d is a duration of 0 (or -0) up to
// MinEpochSeconds, or one above MaxSeconds: a non-negative number that is
// no epoch. Negative, infinite and NaN durations are the predictor's to
// refuse.
func tooShort(d float64) bool { return d >= 0 && (d < MinEpochSeconds || d > MaxSeconds) }

// seconds reports whether x is a finite time in [0, MaxSeconds].
func seconds(x float64) bool { return x >= 0 && x <= MaxSeconds }

// checkJob validates what Plan reads directly from job i (the predictor
// and the market check the rest); i < 0 is the job of [Scheduler.Add].
// profileChecked skips checkProfile for a profile an earlier plan checked.
func checkJob(i int, j *Job, gpus, round int, est predictor.Estimator, profileChecked bool) error {
	switch {
	case j.GPUs < 1 || j.GPUs > gpus:
		return jobInvalid(i, j, "GPUs", "%d GPUs on a %d-GPU cluster", j.GPUs, gpus)
	case !seconds(j.Submit):
		return jobInvalid(i, j, "Submit", "%v (want a time in [0, %g] s)", j.Submit, float64(MaxSeconds))
	case j.Epochs < 0:
		return jobInvalid(i, j, "Epochs", "%d (want ≥ 1, or 0 for the profile's length)", j.Epochs)
	case !(j.SamplesPerEpoch >= 0 && j.SamplesPerEpoch <= MaxSamplesPerEpoch):
		return jobInvalid(i, j, "SamplesPerEpoch", "%v (want a dataset size in (0, %g], or 0 for none)", j.SamplesPerEpoch, float64(MaxSamplesPerEpoch))
	}
	if !profileChecked {
		if err := checkProfile(i, j); err != nil {
			return err
		}
		for k, x := range j.Timeline {
			prev := -1
			if k > 0 {
				prev = j.Timeline[k-1].Round
			}
			if err := checkSample(x, prev, round); err != nil {
				return timelineErr(i, j, k, err)
			}
		}
	}
	for k, p := range j.Finish {
		if p.Round < 0 || p.Round > round || (k > 0 && p.Round < j.Finish[k-1].Round) {
			return jobInvalidAt(i, j, "Finish[].Round", k, "%d (rounds must not decrease and not pass the current round %d)", p.Round, round)
		}
		if !(p.Estimate > 0 && p.Estimate <= MaxFinishSeconds) {
			return jobInvalidAt(i, j, "Finish[].Estimate", k, "%v (want a time in (0, %g] s)", p.Estimate, float64(MaxFinishSeconds))
		}
	}
	if j.Known == nil && j.Submit == 0 && est == predictor.Faithful && (j.Epochs == 1 || (j.Epochs == 0 && len(j.EpochBS) == 1)) {
		// Before its one epoch ends the authors' estimator predicts no
		// remaining time (R = 0 at F = 0 of E = 1), so the job's
		// finish-time estimate is 0 s, and a fair finish time must be
		// positive: every re-estimate at progress 0 would fail.
		return jobInvalid(i, j, "Submit", "0 for a job of one epoch: at progress 0 its predicted remaining time, and so its finish-time estimate, is 0 s (give a submission time above 0)")
	}
	if len(j.Timeline) > 0 && !(j.SamplesPerEpoch > 0) {
		return jobInvalid(i, j, "SamplesPerEpoch", "%v (calibration needs the dataset size)", j.SamplesPerEpoch)
	}
	if k := j.Known; k != nil {
		switch {
		case !seconds(k.Remaining):
			return jobInvalid(i, j, "Known.Remaining", "%v (want a duration in [0, %g] s)", k.Remaining, float64(MaxSeconds))
		case !(k.MeanEpoch > 0 && k.MeanEpoch <= MaxSeconds):
			return jobInvalid(i, j, "Known.MeanEpoch", "%v (want a duration in (0, %g] s)", k.MeanEpoch, float64(MaxSeconds))
		case !seconds(k.Elapsed):
			return jobInvalid(i, j, "Known.Elapsed", "%v (want a duration in [0, %g] s)", k.Elapsed, float64(MaxSeconds))
		case !seconds(k.FairFinish):
			return jobInvalid(i, j, "Known.FairFinish", "%v (want a time in [0, %g] s, 0 for the finish history's)", k.FairFinish, float64(MaxSeconds))
		case k.FairFinish == 0 && j.Submit == 0 && k.Elapsed == 0 && k.Remaining == 0:
			// Its finish-time estimates would be 0 s, and a fair finish
			// time must be positive: a re-estimate would make one.
			return jobInvalid(i, j, "Known.FairFinish", "0 with the submission, elapsed and remaining times all 0: the job's finish-time estimate is 0 s (give a fair finish time)")
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
			return jobInvalid(i, j, "EpochDur", "given with known predictions, which replace the profile's (give one or the other)")
		case j.Modes != nil || j.ModeDur != nil:
			return jobInvalid(i, j, "Modes", "given with known predictions, which replace the profile's (give one or the other)")
		case j.ProfiledDur != nil || len(j.Timeline) > 0:
			return jobInvalid(i, j, "Timeline", "given with known predictions: calibration rescales a profile, and known predictions replace it")
		}
	}
	for k, d := range j.EpochDur {
		if tooShort(d) {
			return jobInvalidAt(i, j, "EpochDur[]", k, "%v (want a duration in [%v, %g] s)", d, MinEpochSeconds, float64(MaxSeconds))
		}
	}
	if j.ProfiledDur != nil && len(j.ProfiledDur) != len(j.EpochDur) {
		return jobInvalid(i, j, "ProfiledDur", "%d durations for the profile's %d epochs (give one for each, or none)", len(j.ProfiledDur), len(j.EpochDur))
	}
	for k, d := range j.ProfiledDur {
		if tooShort(d) {
			return jobInvalidAt(i, j, "ProfiledDur[]", k, "%v (want a duration in [%v, %g] s)", d, MinEpochSeconds, float64(MaxSeconds))
		}
	}
	if j.Modes != nil && j.ModeDur == nil {
		return jobInvalid(i, j, "ModeDur", "missing with modes: give each declared mode's epoch duration (0: the profile's mean at that batch size)")
	}
	for k, d := range j.ModeDur {
		if d != 0 && tooShort(d) {
			return jobInvalidAt(i, j, "ModeDur[]", k, "%v (want 0 for the profile's mean, or a duration in [%v, %g] s)", d, MinEpochSeconds, float64(MaxSeconds))
		}
	}
	if k := j.Known; k != nil && k.MeanEpoch > 0 && tooShort(k.MeanEpoch) {
		return jobInvalid(i, j, "Known.MeanEpoch", "%v (want a duration in [%v, %g] s)", k.MeanEpoch, MinEpochSeconds, float64(MaxSeconds))
	}
	return nil
}

// checkSample checks a throughput sample that follows one of round prev
// (−1 for none) in a job's timeline, at the current round: the lease it
// measures ended after prev and by the end of the current round
// (round + 1), at a throughput in [0, MaxItPerSec] and a batch size ≥ 1.
// Plan checks a job's timeline with it and [Scheduler.Observe] a new
// sample, so that what one accepts the other does. Errors name the
// sample's fields ("sample.Round").
func checkSample(x predictor.Sample, prev, round int) error {
	switch {
	case x.Round < 0 || x.Round > round+1:
		return argErr("sample.Round", ErrInvalid, "%d (want 0..%d: a lease cannot end after the current round %d)", x.Round, round+1, round)
	case x.Round <= prev:
		return argErr("sample.Round", ErrInvalid, "%d does not follow the previous sample's round %d", x.Round, prev)
	case !(x.ItPerSec >= 0 && x.ItPerSec <= MaxItPerSec):
		return argErr("sample.ItPerSec", ErrInvalid, "%v (want a throughput in [0, %g])", x.ItPerSec, float64(MaxItPerSec))
	case x.BatchSize < 1:
		return argErr("sample.BatchSize", ErrInvalid, "%d (want ≥ 1)", x.BatchSize)
	}
	return nil
}

// timelineErr re-roots checkSample's error about element k of job j's
// timeline.
func timelineErr(i int, j *Job, k int, err error) error {
	fe := err.(*FieldError)
	field := "Timeline[]"
	switch fe.Field {
	case "sample.Round":
		field = "Timeline[].Round"
	case "sample.ItPerSec":
		field = "Timeline[].ItPerSec"
	case "sample.BatchSize":
		field = "Timeline[].BatchSize"
	}
	return jobErr(i, j, indexed(field, k), fe.Err)
}
