package predictor

import (
	"math"
	"sort"
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
	// MinDur and MaxDur, when positive, bound the rescaled durations: a
	// factor that would take the shortest pre-profiled epoch below MinDur
	// (or the longest above MaxDur) is clamped to the bound. A throughput
	// sample far off the profile (a batch size of 1e15 against 5e4
	// samples an epoch) otherwise rescales epochs to picoseconds, which
	// a planner refuses as input. Zero is the authors' rule: no bound.
	MinDur, MaxDur float64
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
		return 1, false, fieldErr("cur", -1, strconv.Itoa(len(cur))+" current durations, "+strconv.Itoa(len(pre))+" pre-profiled", ErrLength)
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
	delta, tol, err := calibrateOptions(opts)
	if err != nil {
		return 1, false, err
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
	lo, hi := math.Inf(1), 0.0
	for _, d := range pre {
		lo, hi = min(lo, d), max(hi, d)
	}
	factor, applied, err = decide(pre, lo, hi, opts, tol, meas, prof)
	if applied {
		for i := range cur {
			cur[i] = pre[i] * factor
		}
	}
	return factor, applied, err
}

// calibrateOptions returns the round length and tolerance of opts.
func calibrateOptions(opts CalibrateOptions) (delta, tol float64, err error) {
	delta, tol = opts.RoundSec, opts.Tolerance
	if delta == 0 {
		delta = DefaultRoundSec
	}
	if tol == 0 {
		tol = DefaultTolerance
	}
	if !(delta > 0) || math.IsInf(delta, 1) {
		return 0, 0, fieldErr("CalibrateOptions.RoundSec", -1, ftoa(delta), ErrInvalid)
	}
	if !(tol > 0) || math.IsInf(tol, 1) {
		return 0, 0, fieldErr("CalibrateOptions.Tolerance", -1, ftoa(tol), ErrInvalid)
	}
	return delta, tol, nil
}

// Calibrator is [Calibrate] for a timeline that grows one sample at a time,
// as a planner sees it: the pre-profiled durations' prefix sums are computed
// once by [Calibrator.Reset], each [Calibrator.Observe] adds one sample to
// the measured count, and [Calibrator.Factor] answers in O(log E) what
// Calibrate would for the timeline so far, bit for bit. The zero value is
// empty; a Calibrator is not safe for concurrent use.
type Calibrator struct {
	pre   []float64 // the pre-profiled durations (a copy)
	lo    float64   // the shortest of them
	hi    float64   // the longest
	cum   []float64 // cum[k] = Σ_{e<k} pre[e], added in order as Calibrate does
	prof  []float64 // prof[k] = k sequential additions of samplesPerEpoch; nil when exact as k·spe
	spe   float64
	delta float64
	tol   float64
	opts  CalibrateOptions
	meas  float64 // measured samples so far
	last  int     // round of the last sample
	n     int     // samples observed
}

// Reset starts an empty timeline for a job with the given pre-profiled
// durations and dataset size, checked as Calibrate checks them.
func (c *Calibrator) Reset(pre []float64, samplesPerEpoch float64, opts CalibrateOptions) error {
	*c = Calibrator{pre: c.pre[:0], cum: c.cum[:0], prof: c.prof[:0]}
	if len(pre) == 0 {
		return fieldErr("pre", -1, "", ErrNoEpochs)
	}
	for i, d := range pre {
		if !(d >= 0) || math.IsInf(d, 1) {
			return fieldErr("pre", i, ftoa(d), ErrInvalid)
		}
	}
	if !(samplesPerEpoch > 0) || math.IsInf(samplesPerEpoch, 1) {
		return fieldErr("samplesPerEpoch", -1, ftoa(samplesPerEpoch), ErrInvalid)
	}
	delta, tol, err := calibrateOptions(opts)
	if err != nil {
		return err
	}
	c.pre = append(c.pre, pre...)
	c.cum = append(c.cum, 0)
	var covered float64
	c.lo = math.Inf(1)
	for _, d := range pre {
		covered += d
		c.cum = append(c.cum, covered)
		c.lo, c.hi = min(c.lo, d), max(c.hi, d)
	}
	// k additions of an integer below 2^53/k are exact: k·spe.
	if samplesPerEpoch != math.Trunc(samplesPerEpoch) || samplesPerEpoch*float64(len(pre)) > 1<<53 {
		var prof float64
		c.prof = append(c.prof, 0)
		for range pre {
			prof += samplesPerEpoch
			c.prof = append(c.prof, prof)
		}
	} else {
		c.prof = c.prof[:0:0]
	}
	c.spe, c.delta, c.tol, c.opts = samplesPerEpoch, delta, tol, opts
	return nil
}

// Len returns the number of samples observed since Reset.
func (c *Calibrator) Len() int { return c.n }

// Observe appends a sample to the timeline, checked as Calibrate checks its
// timeline (rounds strictly increasing). A rejected sample changes nothing.
func (c *Calibrator) Observe(s Sample) error {
	i := c.n
	if s.Round < 0 || (i > 0 && s.Round <= c.last) {
		return fieldErr("timeline[].Round", i, strconv.Itoa(s.Round), ErrRound)
	}
	if !(s.ItPerSec >= 0) || math.IsInf(s.ItPerSec, 1) {
		return fieldErr("timeline[].ItPerSec", i, ftoa(s.ItPerSec), ErrInvalid)
	}
	if s.BatchSize <= 0 {
		return fieldErr("timeline[].BatchSize", i, strconv.Itoa(s.BatchSize), ErrInvalid)
	}
	prev := 0
	if i > 0 {
		prev = c.last
	}
	c.meas += float64(float64(s.BatchSize) * (s.ItPerSec * c.delta * float64(s.Round-prev)))
	c.last, c.n = s.Round, c.n+1
	return nil
}

// Factor returns what Calibrate(cur, pre, samplesPerEpoch, timeline, opts)
// returns for the timeline observed so far, without writing cur: the factor
// to apply to the pre-profiled durations (1 when none) and whether it
// applies. Only the duration of the epoch the measured range ends in is
// read from cur (the authors' partial-epoch quirk).
func (c *Calibrator) Factor(cur []float64) (factor float64, applied bool, err error) {
	if len(c.pre) == 0 {
		return 1, false, fieldErr("pre", -1, "", ErrNoEpochs)
	}
	if len(cur) != len(c.pre) {
		return 1, false, fieldErr("cur", -1, strconv.Itoa(len(cur))+" current durations, "+strconv.Itoa(len(c.pre))+" pre-profiled", ErrLength)
	}
	if c.n == 0 {
		return 1, false, nil
	}
	span := float64(c.delta * float64(c.last))
	// The first epoch e whose end passes the range: cum[e+1] > span (cum
	// does not decrease); every epoch fits when there is none.
	E := len(c.pre)
	e := sort.Search(E, func(e int) bool { return c.cum[e+1] > span })
	whole := e
	if e == E {
		e = E - 1
		whole = E
	}
	covered := c.cum[whole]
	prof := float64(whole) * c.spe
	if len(c.prof) > 0 {
		prof = c.prof[whole]
	}
	if deficit := span - covered; deficit > 0 {
		d := cur[e]
		if !(d >= 0) || math.IsInf(d, 1) {
			return 1, false, fieldErr("cur", e, ftoa(d), ErrInvalid)
		}
		if c.opts.ProfiledDeficit {
			d = c.pre[e]
		}
		if d == 0 {
			return 1, false, fieldErr("cur", e, "0 (partial epoch)", ErrInvalid)
		}
		prof += float64(c.spe * deficit / d)
	}
	return decide(c.pre, c.lo, c.hi, c.opts, c.tol, c.meas, prof)
}

// decide compares measured and profiled samples and returns the factor to
// apply to pre (whose shortest and longest durations are lo and hi),
// clamped to opts' bounds, checking that the rescaled durations stay
// finite.
func decide(pre []float64, lo, hi float64, opts CalibrateOptions, tol, meas, prof float64) (float64, bool, error) {
	if math.IsInf(meas, 0) || math.IsInf(prof, 0) {
		return 1, false, fieldErr("timeline", -1, "", ErrOverflow)
	}
	if meas <= 0 || prof <= 0 || math.Abs(meas-prof)/prof <= tol {
		return 1, false, nil
	}
	factor := prof / meas
	if opts.MinDur > 0 && lo > 0 && !(factor*lo >= opts.MinDur) {
		// The least factor whose product with lo rounds to MinDur or
		// more (a quotient can round the product an ulp below it).
		factor = opts.MinDur / lo
		for factor*lo < opts.MinDur {
			factor = math.Nextafter(factor, math.Inf(1))
		}
	}
	if opts.MaxDur > 0 && hi > 0 && !(factor*hi <= opts.MaxDur) {
		factor = opts.MaxDur / hi
		for factor*hi > opts.MaxDur {
			factor = math.Nextafter(factor, 0)
		}
	}
	for _, d := range pre {
		if math.IsInf(d*factor, 0) {
			return 1, false, fieldErr("timeline", -1, "", ErrOverflow)
		}
	}
	return factor, true, nil
}
