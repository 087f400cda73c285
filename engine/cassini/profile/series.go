package profile

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// What users measure is not one iteration but a long record: a NIC's byte
// counter read every few milliseconds for minutes, or the timestamps and
// sizes of the collective calls a training loop makes. FromSeries finds the
// iteration in such a record (the period at which it repeats), folds the
// record onto one iteration (each phase's mean over all iterations) and
// quantizes it; FromEvents turns events into such a series first. Fit says
// how well the record repeats.

// Errors of FromSeries and FromEvents.
var (
	// ErrNotPeriodic: no period in the search range explains enough of the
	// series (Fit.Quality below SeriesOptions.MinQuality), or the series is
	// constant, or too short to hold two periods.
	ErrNotPeriodic = errors.New("profile: the series is not periodic")
	// ErrSeriesTooLong: more than MaxSeriesSamples samples.
	ErrSeriesTooLong = errors.New("profile: the series has too many samples")
)

// MaxSeriesSamples bounds a series (2^22, about 70 minutes at 1 ms): the
// period search holds a few float64 arrays of twice its length.
const MaxSeriesSamples = 1 << 22

// SeriesOptions configure the period search. The zero value searches
// periods from 2 samples to half the series and accepts a fit of quality
// 0.5 or more.
type SeriesOptions struct {
	// MinPeriod and MaxPeriod bound the period searched; 0 means 2
	// samples and half the series (at least two whole periods are needed
	// to see one repeat).
	MinPeriod, MaxPeriod time.Duration
	// MinQuality is the least Fit.Quality accepted; 0 means 0.5. A
	// series that fits worse is ErrNotPeriodic.
	MinQuality float64
}

// Fit is the period found in a series and how well the series repeats it.
type Fit struct {
	// Period is the iteration time found, to the nanosecond. The profile's
	// period is it rounded to the nearest tick (the record measures it no
	// better than that), not up as FromPhases rounds.
	Period time.Duration
	// Quality is the correlation of the series with itself one period
	// later (Pearson, over the overlap): how alike consecutive iterations
	// are, 1 when every iteration is the same, near 0 for noise. Noise and
	// jitter in the iteration time lower it; slow drift of the iteration's
	// phase does not.
	Quality float64
	// Explained is the share of the series' variance the folded iteration
	// explains, 1 − Σ(x − fold)² / Σ(x − mean)². Unlike Quality it also
	// falls when the phase drifts over the series (jitter accumulates), so
	// a low Explained with a high Quality says the iteration is clear but
	// the record is long for the jitter: fold a shorter stretch.
	Explained float64
	// Iterations is the number of whole periods in the series.
	Iterations int
	// Bins is the number of samples of the folded iteration.
	Bins int
}

// DefaultMinQuality is the MinQuality of the zero SeriesOptions.
const DefaultMinQuality = 0.5

// FromSeries finds the period of a bandwidth series (bits per second,
// sample i held for interval from i·interval), folds the series onto one
// period and quantizes it onto q's grid. The period is found from the
// series' autocorrelation (computed by FFT): the shortest lag whose
// correlation is a local peak within 10% of the best in the range, refined
// by the peaks at its multiples to a fraction of a sample (a lag at the
// bottom of the range is no peak: correlation falls from lag 0). The fold puts
// each sample at its phase in that period and takes each phase's mean.
func FromSeries(samples []float64, interval time.Duration, q Quantum, opt SeriesOptions) (Profile, Fit, error) {
	period, phases, fit, err := FitSeries(samples, interval, q, opt)
	if err != nil {
		return Profile{}, fit, err
	}
	p, err := FromPhases(period, phases, q)
	return p, fit, err
}

// FitSeries is FromSeries without the quantization: the period found,
// snapped to whole ticks of q, and the folded iteration as phases adding
// up to it, from which FromPhases builds the profile FromSeries returns.
// A caller checks the period (or Summarize's summary) against its limits
// before building a profile that may be millions of ticks long.
func FitSeries(samples []float64, interval time.Duration, q Quantum, opt SeriesOptions) (time.Duration, []Phase, Fit, error) {
	if interval <= 0 {
		return 0, nil, Fit{}, fmt.Errorf("%w: sample interval %v", ErrInvalidDuration, interval)
	}
	n := len(samples)
	if n > MaxSeriesSamples {
		return 0, nil, Fit{}, fmt.Errorf("%w: %d samples (at most %d)", ErrSeriesTooLong, n, MaxSeriesSamples)
	}
	for i, s := range samples {
		if !(s >= 0) || math.IsInf(s, 0) {
			return 0, nil, Fit{}, &PhaseError{i, ErrInvalidBandwidth}
		}
	}
	lo, hi, err := lagRange(n, interval, opt)
	if err != nil {
		return 0, nil, Fit{}, err
	}
	x, mean, ss := centered(samples)
	if ss == 0 {
		return 0, nil, Fit{}, fmt.Errorf("%w: the series is constant (%v bit/s)", ErrNotPeriodic, mean)
	}
	rho := correlations(x, hi)
	period, ok := bestPeriod(rho, lo, hi)
	if !ok {
		return 0, nil, Fit{}, fmt.Errorf("%w: its correlation never rises again after lag 0 in [%v, %v]", ErrNotPeriodic, time.Duration(lo)*interval, time.Duration(hi)*interval)
	}
	bins, fold, explained := foldSeries(samples, ss, period)
	quality := rho[min(hi, max(lo, int(math.Round(period))))]
	minQ := opt.MinQuality
	if minQ == 0 {
		minQ = DefaultMinQuality
	}
	fit := Fit{Period: time.Duration(math.Round(period * float64(interval))), Quality: quality, Explained: explained,
		Iterations: int(float64(n) / period), Bins: bins}
	if !(quality >= minQ) {
		return 0, nil, fit, fmt.Errorf("%w: at the best period, %v (%.2f samples), consecutive iterations correlate %.3f, below %.3f", ErrNotPeriodic, fit.Period, period, quality, minQ)
	}
	q, err = q.Normalize()
	if err != nil {
		return 0, nil, fit, err
	}
	ticks := max(1, int64(math.Round(float64(fit.Period)/float64(q.Tick))))
	if ticks > MaxPeriodTicks {
		return 0, nil, fit, fmt.Errorf("%w: %v is %d ticks", ErrPeriodTooLong, fit.Period, ticks)
	}
	// The bins as phases that add up to the snapped period exactly.
	total := time.Duration(ticks) * q.Tick
	phases := make([]Phase, bins)
	for b := range phases {
		from, to := split(total, b, bins), split(total, b+1, bins)
		phases[b] = Phase{Duration: to - from, Bandwidth: fold[b]}
	}
	return total, phases, fit, nil
}

// split returns ⌊total·b/bins⌋ without overflow.
func split(total time.Duration, b, bins int) time.Duration {
	t, n := int64(total), int64(bins)
	return time.Duration(t/n*int64(b) + t%n*int64(b)/n)
}

// lagRange returns the lags, in samples, the period search covers.
func lagRange(n int, interval time.Duration, opt SeriesOptions) (lo, hi int, err error) {
	if opt.MinPeriod < 0 || opt.MaxPeriod < 0 || (opt.MaxPeriod > 0 && opt.MaxPeriod < opt.MinPeriod) {
		return 0, 0, fmt.Errorf("%w: period range [%v, %v]", ErrInvalidDuration, opt.MinPeriod, opt.MaxPeriod)
	}
	if !(opt.MinQuality >= 0 && opt.MinQuality <= 1) {
		return 0, 0, fmt.Errorf("%w: MinQuality %v (want 0..1)", ErrInvalidQuantum, opt.MinQuality)
	}
	lo, hi = 2, n/2
	if opt.MinPeriod > 0 {
		lo = max(lo, int(math.Floor(float64(opt.MinPeriod)/float64(interval))))
	}
	if opt.MaxPeriod > 0 {
		hi = min(hi, int(math.Ceil(float64(opt.MaxPeriod)/float64(interval))))
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("%w: %d samples of %v hold no two periods in [%v, %v]", ErrNotPeriodic, n, interval,
			time.Duration(lo)*interval, opt.MaxPeriod)
	}
	return lo, hi, nil
}

// centered returns the series minus its mean, the mean and the sum of
// squares of the centered values.
func centered(samples []float64) ([]float64, float64, float64) {
	var sum float64
	for _, s := range samples {
		sum += s
	}
	mean := sum / float64(len(samples))
	x := make([]float64, len(samples))
	var ss float64
	for i, s := range samples {
		x[i] = s - mean
		ss += float64(x[i] * x[i])
	}
	return x, mean, ss
}

// correlations returns, for each lag 0..hi, the Pearson correlation of the
// series with itself shifted by the lag, over their overlap.
func correlations(x []float64, hi int) []float64 {
	n := len(x)
	r := autocorrelation(x, hi)
	// Sums of squares of the first n−lag and of the last n−lag values.
	head := make([]float64, n+1)
	for i, v := range x {
		head[i+1] = head[i] + float64(v*v)
	}
	rho := make([]float64, hi+1)
	for lag := 0; lag <= hi; lag++ {
		a := head[n-lag]
		b := head[n] - head[lag]
		if d := math.Sqrt(float64(a * b)); d > 0 {
			rho[lag] = r[lag] / d
		}
	}
	return rho
}

// bestPeriod picks the period, in samples (fractional), from the
// correlations at lags lo..hi, and reports false when they have no peak.
func bestPeriod(rho []float64, lo, hi int) (float64, bool) {
	// A peak rises from its left: the correlation falls from lag 0 through
	// the first lags, which are no period.
	peak := func(l int) bool {
		return l > lo && rho[l] > rho[l-1] && (l == hi || rho[l] >= rho[l+1])
	}
	best := -1
	for l := lo + 1; l <= hi; l++ {
		if peak(l) && (best < 0 || rho[l] > rho[best]) {
			best = l
		}
	}
	if best < 0 {
		return 0, false
	}
	base := best
	for l := lo + 1; l < best; l++ {
		if peak(l) && rho[l] >= 0.9*rho[best] {
			base = l
			break
		}
	}
	// The peak at the largest multiple of base that still stands out gives
	// the period to a fraction of a sample: its error is spread over k
	// periods. Each multiple is looked for near where the estimate so far
	// puts it, in a window narrower than half a period, so it cannot be
	// taken for its neighbour.
	lag, k := base, 1
	est := float64(base)
	w := min(2, (base-1)/2)
	for m := 2; ; m++ {
		c := int(math.Round(float64(m) * est))
		if c+w > hi {
			break
		}
		l := c
		for d := max(lo, c-w); d <= c+w; d++ {
			if rho[d] > rho[l] {
				l = d
			}
		}
		if rho[l] < 0.5*rho[base] {
			break // drift has decorrelated the iterations this far apart
		}
		lag, k = l, m
		est = float64(l) / float64(m)
	}
	frac := 0.0
	if lag > 0 && lag < len(rho)-1 {
		a, b, c := rho[lag-1], rho[lag], rho[lag+1]
		if den := a - 2*b + c; den < 0 {
			frac = min(0.5, max(-0.5, 0.5*(a-c)/den))
		}
	}
	return (float64(lag) + frac) / float64(k), true
}

// foldSeries folds the series onto a period of p samples: bins = round(p)
// phases, each the mean of the samples at that phase. It returns the bins,
// their means (bit/s), and the share of the variance they explain.
func foldSeries(samples []float64, ss, p float64) (int, []float64, float64) {
	bins := max(1, int(math.Round(p)))
	sum := make([]float64, bins)
	count := make([]int, bins)
	at := func(i int) int {
		ph := float64(i) / p
		ph -= math.Floor(ph)
		return min(bins-1, int(ph*float64(bins)))
	}
	for i, s := range samples {
		b := at(i)
		sum[b] += s
		count[b]++
	}
	fold := make([]float64, bins)
	for b := range fold {
		switch {
		case count[b] > 0:
			fold[b] = sum[b] / float64(count[b])
		case b > 0:
			fold[b] = fold[b-1] // no sample at this phase: hold the last
		}
	}
	if count[0] == 0 {
		fold[0] = fold[bins-1]
	}
	var res float64
	for i, s := range samples {
		d := s - fold[at(i)]
		res += float64(d * d)
	}
	return bins, fold, 1 - res/ss
}

// autocorrelation returns r[lag] = Σ_t x[t]·x[t+lag] for lag 0..hi, by
// FFT: |X|² transformed back is the circular autocorrelation, linear once
// the series is padded to twice its length.
func autocorrelation(x []float64, hi int) []float64 {
	size := 1
	for size < 2*len(x) {
		size <<= 1
	}
	re := make([]float64, size)
	im := make([]float64, size)
	copy(re, x)
	fft(re, im, false)
	for i := range re {
		re[i], im[i] = float64(re[i]*re[i])+float64(im[i]*im[i]), 0
	}
	fft(re, im, true)
	out := make([]float64, hi+1)
	for l := range out {
		out[l] = re[l] / float64(size)
	}
	return out
}

// fft transforms (re, im) in place, radix 2, len a power of two; inverse
// without the 1/n factor. Products are rounded before they are summed
// (float64(a*b)), so no host fuses them: the same series gives the same
// period everywhere.
func fft(re, im []float64, inverse bool) {
	n := len(re)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			re[i], re[j] = re[j], re[i]
			im[i], im[j] = im[j], im[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for size := 2; size <= n; size <<= 1 {
		half := size >> 1
		step := sign * 2 * math.Pi / float64(size)
		for k := 0; k < half; k++ {
			wr, wi := math.Cos(step*float64(k)), math.Sin(step*float64(k))
			for s := k; s < n; s += size {
				t := s + half
				xr := float64(wr*re[t]) - float64(wi*im[t])
				xi := float64(wr*im[t]) + float64(wi*re[t])
				re[t], im[t] = re[s]-xr, im[s]-xi
				re[s], im[s] = re[s]+xr, im[s]+xi
			}
		}
	}
}

// Event is one communication a training job made: Bytes sent from At (on
// any clock, the same for every event), over Duration when it is known.
type Event struct {
	At       time.Duration
	Bytes    float64
	Duration time.Duration // 0: unknown; the bytes count in At's interval
}

// FromEvents turns events into a bandwidth series of interval-long bins
// (an event's bytes spread evenly over its duration, or all in the bin of
// its start when the duration is unknown) and profiles it with
// FromSeries. The series starts at the earliest event.
func FromEvents(events []Event, interval time.Duration, q Quantum, opt SeriesOptions) (Profile, Fit, error) {
	bits, err := BinEvents(events, interval)
	if err != nil {
		return Profile{}, Fit{}, err
	}
	return FromSeries(bits, interval, q, opt)
}

// Bounds of the series BinEvents makes: at most MaxBinsPerEvent bins per
// event, or MinEventBins whatever the events. The period search costs a
// few hundred bytes and a microsecond per bin, so a few events far apart
// at a fine interval (two, an hour apart, in 1 ms bins: 3.6 million bins)
// would cost seconds and gigabytes before the search found no period;
// the bounds keep that work proportional to the events given. A sparser
// record needs a coarser interval.
const (
	MaxBinsPerEvent = 64
	MinEventBins    = 1 << 16
)

// BinEvents is the bandwidth series of interval-long bins (bits per
// second) that FromEvents profiles: an event's bytes spread evenly over
// its duration, or all in the bin of its start when the duration is
// unknown, from the earliest event on. It holds at most
// max(MinEventBins, MaxBinsPerEvent × events) bins and MaxSeriesSamples.
func BinEvents(events []Event, interval time.Duration) ([]float64, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("%w: interval %v", ErrInvalidDuration, interval)
	}
	if len(events) == 0 {
		return nil, ErrNoPhases
	}
	start, end := events[0].At, events[0].At
	for i, e := range events {
		if !(e.Bytes >= 0) || math.IsInf(e.Bytes, 0) {
			return nil, &PhaseError{i, ErrInvalidBandwidth}
		}
		if e.Duration < 0 || e.At < 0 || e.Duration > math.MaxInt64-e.At {
			return nil, &PhaseError{i, ErrInvalidDuration}
		}
		start, end = min(start, e.At), max(end, e.At+e.Duration)
	}
	n := int64((end-start)/interval) + 1
	if n > MaxSeriesSamples {
		return nil, fmt.Errorf("%w: %v of events in %v bins is %d bins (at most %d)", ErrSeriesTooLong, end-start, interval, n, MaxSeriesSamples)
	}
	if limit := max(MinEventBins, MaxBinsPerEvent*int64(len(events))); n > limit {
		return nil, fmt.Errorf("%w: %v of events in %v bins is %d bins, more than %d for %d events (%d per event, and at least %d): bin them coarser",
			ErrSeriesTooLong, end-start, interval, n, limit, len(events), MaxBinsPerEvent, MinEventBins)
	}
	bits := make([]float64, n)
	rate := make([]float64, n+1) // differences of the per-bin share of events spread over whole bins
	for _, e := range events {
		spread(bits, rate, e.At-start, e.Duration, float64(e.Bytes*8), interval)
	}
	var r float64
	for i := range bits {
		r += rate[i]
		bits[i] += r
	}
	perSecond := 1 / interval.Seconds()
	for i := range bits {
		bits[i] *= perSecond
	}
	return bits, nil
}

// spread adds b bits sent over [at, at+d) to the bins of width iv they
// overlap, in proportion to the overlap: the partial first and last bins
// directly, the whole bins between them as one difference in rate (so an
// event costs the same however many bins it spans).
func spread(bins, rate []float64, at, d time.Duration, b float64, iv time.Duration) {
	first := int(at / iv)
	if d == 0 {
		bins[first] += b
		return
	}
	end := at + d
	last := min(int((end-1)/iv), len(bins)-1) // the bin holding the last instant
	share := func(lo, hi time.Duration) float64 { return b * float64(hi-lo) / float64(d) }
	if first == last {
		bins[first] += share(at, end)
		return
	}
	bins[first] += share(at, time.Duration(first+1)*iv)
	bins[last] += share(time.Duration(last)*iv, min(end, time.Duration(last+1)*iv))
	if last > first+1 {
		whole := share(0, iv)
		rate[first+1] += whole
		rate[last] -= whole
	}
}
