package predictor

import (
	"math"
	"strconv"
)

// Defaults of [CalibrateOptions].
const (
	DefaultRoundSec  = 120.0 // Δ, the authors' --time_per_iteration
	DefaultTolerance = 0.4   // relative sample-count error tolerated before rescaling
)

// Sample is one throughput measurement of a job: the lease that ended in
// round Round ran at ItPerSec iterations per second with batch size
// BatchSize (the authors' throughput timeline {round: (tput, bs)}).
type Sample struct {
	Round     int
	ItPerSec  float64
	BatchSize int
}

// CalibrateOptions configure [Calibrate]. The zero value is the authors'
// calibrate_profiled_epoch_duration.
type CalibrateOptions struct {
	// RoundSec is the round length Δ in seconds; 0 means DefaultRoundSec.
	RoundSec float64
	// Tolerance is the relative error |meas − prof|/prof tolerated before
	// durations are rescaled; 0 means DefaultTolerance.
	Tolerance float64
	// ProfiledDeficit fixes a quirk: the authors convert the partial epoch
	// at the end of the measured range into samples with the *current*
	// (possibly already calibrated) duration of that epoch, so repeated
	// calls with the same timeline can rescale again. With ProfiledDeficit
	// the pre-profiled duration is used and Calibrate is idempotent.
	ProfiledDeficit bool
}

// Calibrate checks a job's profile against its measured throughput and, if
// they disagree, rescales it, as the authors do before every prediction:
//
//   - measured samples: Σ_i ItPerSec_i·Δ·(r_i − r_{i−1})·BatchSize_i with
//     r_0 = 0, over the time range Δ·r_last (idle rounds count as running,
//     so this is a throughput-ratio test);
//   - profiled samples: the whole pre-profiled epochs that fit in the same
//     range, plus the fraction of the next one;
//   - if |meas − prof|/prof > Tolerance, cur[e] = pre[e]·prof/meas for
//     every epoch; otherwise cur is left as it is (not reset to pre).
//
// cur holds the current durations and is updated in place; pre holds the
// pre-profiled ones; samplesPerEpoch is the dataset size. Samples must be in
// strictly increasing round order. It returns the factor applied (1 when
// none) and whether cur changed.
func Calibrate(cur, pre []float64, samplesPerEpoch float64, timeline []Sample, opts CalibrateOptions) (factor float64, applied bool, err error) {
	if len(pre) == 0 {
		return 1, false, fieldErr("pre", -1, "", ErrNoEpochs)
	}
	if len(cur) != len(pre) {
		return 1, false, fieldErr("cur", -1, "len "+strconv.Itoa(len(cur))+", pre has "+strconv.Itoa(len(pre)), ErrLength)
	}
	for i := range pre {
		if d := pre[i]; !(d >= 0) || math.IsInf(d, 1) {
			return 1, false, fieldErr("pre", i, ftoa(d), ErrInvalid)
		}
		if d := cur[i]; !(d >= 0) || math.IsInf(d, 1) {
			return 1, false, fieldErr("cur", i, ftoa(d), ErrInvalid)
		}
	}
	if !(samplesPerEpoch > 0) || math.IsInf(samplesPerEpoch, 1) {
		return 1, false, fieldErr("samplesPerEpoch", -1, ftoa(samplesPerEpoch), ErrInvalid)
	}
	delta, tol := opts.RoundSec, opts.Tolerance
	if delta == 0 {
		delta = DefaultRoundSec
	}
	if tol == 0 {
		tol = DefaultTolerance
	}
	if !(delta > 0) || math.IsInf(delta, 1) {
		return 1, false, fieldErr("CalibrateOptions.RoundSec", -1, ftoa(delta), ErrInvalid)
	}
	if !(tol > 0) || math.IsInf(tol, 1) {
		return 1, false, fieldErr("CalibrateOptions.Tolerance", -1, ftoa(tol), ErrInvalid)
	}
	prev := 0
	var meas float64
	for i, s := range timeline {
		if s.Round < 0 || (i > 0 && s.Round <= timeline[i-1].Round) {
			return 1, false, fieldErr("timeline[].Round", i, strconv.Itoa(s.Round), ErrRound)
		}
		if !(s.ItPerSec >= 0) || math.IsInf(s.ItPerSec, 1) {
			return 1, false, fieldErr("timeline[].ItPerSec", i, ftoa(s.ItPerSec), ErrInvalid)
		}
		if s.BatchSize <= 0 {
			return 1, false, fieldErr("timeline[].BatchSize", i, strconv.Itoa(s.BatchSize), ErrInvalid)
		}
		meas += float64(float64(s.BatchSize) * (s.ItPerSec * delta * float64(s.Round-prev)))
		prev = s.Round
	}
	if len(timeline) == 0 {
		return 1, false, nil
	}
	span := float64(delta * float64(prev))

	var covered, prof float64
	e := 0
	for e = range pre {
		if covered+pre[e] > span {
			break
		}
		covered += pre[e]
		prof += samplesPerEpoch
	}
	// e is the epoch the range ends in; when every epoch fits it is the last
	// one, whose duration then extrapolates past the profile (as upstream).
	if deficit := span - covered; deficit > 0 {
		d := cur[e]
		if opts.ProfiledDeficit {
			d = pre[e]
		}
		if d == 0 {
			return 1, false, fieldErr("cur", e, "0 (partial epoch)", ErrInvalid)
		}
		prof += float64(samplesPerEpoch * deficit / d)
	}
	// Extreme but finite inputs (it/s near the float64 maximum, a huge Δ)
	// overflow the sample counts; the rescaled durations are checked before
	// cur is written, so an error leaves it as it was.
	if math.IsInf(meas, 0) || math.IsInf(prof, 0) {
		return 1, false, fieldErr("timeline", -1, "", ErrOverflow)
	}
	if meas <= 0 || prof <= 0 || math.Abs(meas-prof)/prof <= tol {
		return 1, false, nil
	}
	factor = prof / meas
	for i := range pre {
		if math.IsInf(pre[i]*factor, 0) {
			return 1, false, fieldErr("timeline", -1, "", ErrOverflow)
		}
	}
	for i := range cur {
		cur[i] = pre[i] * factor
	}
	return factor, true, nil
}
