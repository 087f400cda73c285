package predictor

import (
	"math"
	"strconv"
)

// Estimator selects the point estimate reported as [Estimate.Remaining].
type Estimator uint8

const (
	// Faithful is the authors' formula (see the package doc), including
	// R = 1.0 once no epoch remains.
	Faithful Estimator = iota
	// Posterior reports the Dirichlet-multinomial posterior mean
	// ([Estimate.Mean]); 0 once no epoch remains.
	Posterior
	// Oracle reports the true remaining runtime of the profile, Σ_{e≥F} d_e
	// (the authors' oracle switch). It needs the full profile and is meant
	// for measuring the other estimators.
	Oracle
)

// String returns the estimator's name.
func (e Estimator) String() string {
	switch e {
	case Faithful:
		return "faithful"
	case Posterior:
		return "posterior"
	case Oracle:
		return "oracle"
	}
	return "Estimator(" + strconv.Itoa(int(e)) + ")"
}

// Options configure a [Predictor]. The zero value is the authors' predictor.
type Options struct {
	// Estimator selects Estimate.Remaining; the zero value is Faithful.
	Estimator Estimator
	// PriorStrength is the Dirichlet prior's total concentration, spread
	// evenly over the job's modes, at most MaxPriorStrength. 0 means E, the
	// job's epoch count (the authors' choice: α_b = E/m); smaller values let
	// the observed epochs move the posterior faster.
	PriorStrength float64
}

// Job is one job as the predictor sees it: its profile (batch size and
// duration of each epoch, on the GPUs it runs on) and its progress.
//
// The slices are read, never kept or modified.
type Job struct {
	// Epochs is E, the job's total epoch count. 0 means len(EpochBS).
	Epochs int
	// Progress is F, the number of completed epochs, 0 ≤ F ≤ E. Epoch F is
	// the current one and counts as observed, as in the authors' code.
	Progress int
	// EpochBS is b_e, the batch size of each profiled epoch. With the
	// authors' hindsight modes it must cover all E epochs; with declared
	// Modes and ModeDur it needs only the epochs 0..F seen so far.
	EpochBS []int
	// EpochDur is d_e, the (calibrated) duration of each profiled epoch in
	// seconds, parallel to EpochBS.
	EpochDur []float64
	// Modes declares the job's candidate batch sizes, strictly ascending.
	// Nil means the distinct batch sizes of EpochBS: the authors' choice,
	// which knows from hindsight which sizes the job will reach.
	Modes []int
	// ModeDur gives the epoch duration at each declared mode, parallel to
	// Modes. Nil, or a 0 entry, means the mean of EpochDur over the
	// profiled epochs at that batch size (the authors' d̄_b).
	ModeDur []float64
}

// Estimate is the predictor's answer for one job.
type Estimate struct {
	// Remaining is R_j in seconds, as chosen by Options.Estimator.
	Remaining float64
	// Mean and Var are the posterior mean (s) and variance (s²) of the
	// remaining runtime under the Dirichlet-multinomial model (package doc).
	Mean, Var float64
	// MeanEpoch is D̄_j, the mean duration of epochs 0..F (inclusive of the
	// current epoch), which the planner uses to turn rounds into epochs.
	MeanEpoch float64
	// Elapsed is Σ_{e<F} d_e, the isolated time of the completed epochs.
	Elapsed float64
}

// Std returns the posterior standard deviation of the remaining runtime.
func (e Estimate) Std() float64 { return math.Sqrt(e.Var) }

// Finish returns the job's finish-time estimate under a uniform 1/N share of
// M GPUs; see [FinishEstimate].
func (e Estimate) Finish(submit float64, gpus, jobs int) (float64, error) {
	return FinishEstimate(submit, e.Elapsed, e.Remaining, gpus, jobs)
}

// MaxPriorStrength bounds Options.PriorStrength (beyond it the authors'
// +1 updates would be lost to rounding anyway).
const MaxPriorStrength = 1 << 40

// Predictor computes [Estimate]s. The zero value is ready to use and is the
// authors' predictor; it keeps scratch space between calls, so it is not safe
// for concurrent use.
type Predictor struct {
	Options Options

	modes []int
	runs  []run
	obs   []int     // c_b: observed epochs (0..F) at each mode
	cnt   []int     // profiled epochs at each mode
	sum   []float64 // Σ d_e over profiled epochs at each mode
	post  []float64 // α'_b
	dbar  []float64 // d̄_b
}

// Predict returns the estimate for j. It returns a *FieldError wrapping
// ErrInvalid, ErrNoEpochs, ErrLength, ErrProgress, ErrUnknownBatchSize or
// ErrMissingDuration when j is malformed.
func (p *Predictor) Predict(j *Job) (Estimate, error) {
	opts := p.Options
	if opts.Estimator > Oracle {
		return Estimate{}, fieldErr("Options.Estimator", -1, opts.Estimator.String(), ErrInvalid)
	}
	if s := opts.PriorStrength; !(s >= 0 && s <= MaxPriorStrength) {
		return Estimate{}, fieldErr("Options.PriorStrength", -1, ftoa(s), ErrInvalid)
	}
	n := len(j.EpochBS)
	if len(j.EpochDur) != n {
		return Estimate{}, fieldErr("Job.EpochDur", -1, "len "+strconv.Itoa(len(j.EpochDur))+", EpochBS has "+strconv.Itoa(n), ErrLength)
	}
	E := j.Epochs
	if E < 0 {
		return Estimate{}, fieldErr("Job.Epochs", -1, strconv.Itoa(E), ErrInvalid)
	}
	if E == 0 {
		E = n
	}
	if E == 0 {
		return Estimate{}, fieldErr("Job.EpochBS", -1, "", ErrNoEpochs)
	}
	if n > E {
		return Estimate{}, fieldErr("Job.EpochBS", -1, "len "+strconv.Itoa(n)+" > Epochs "+strconv.Itoa(E), ErrLength)
	}
	F := j.Progress
	if F < 0 || F > E {
		return Estimate{}, fieldErr("Job.Progress", -1, strconv.Itoa(F)+" of "+strconv.Itoa(E)+" epochs", ErrProgress)
	}
	o := min(F+1, E) // observed epochs 0..F
	if n < o {
		return Estimate{}, fieldErr("Job.EpochBS", -1, "len "+strconv.Itoa(n)+" < Progress+1", ErrLength)
	}
	full := n == E
	if opts.Estimator == Oracle && !full {
		return Estimate{}, fieldErr("Job.EpochBS", -1, "len "+strconv.Itoa(n)+"; the oracle needs all "+strconv.Itoa(E)+" epochs", ErrLength)
	}
	if err := p.setModes(j, full); err != nil {
		return Estimate{}, err
	}
	m := len(p.modes)

	strength := opts.PriorStrength
	if strength == 0 {
		strength = float64(E)
	}
	prior := strength / float64(m)
	for i := range m {
		p.obs[i], p.cnt[i], p.sum[i] = 0, 0, 0
	}

	// One pass over the runs of equal batch size: validate, count, sum.
	cur := 0 // mode of the current epoch F
	for r, run := range p.runs {
		end := n
		if r+1 < len(p.runs) {
			end = p.runs[r+1].start
		}
		k := p.find(run.bs)
		if k < 0 {
			return Estimate{}, fieldErr("Job.EpochBS", run.start, strconv.Itoa(run.bs), ErrUnknownBatchSize)
		}
		s, bad := sumChecked(j.EpochDur[run.start:end])
		if bad >= 0 {
			e := run.start + bad
			return Estimate{}, fieldErr("Job.EpochDur", e, ftoa(j.EpochDur[e]), ErrInvalid)
		}
		p.cnt[k] += end - run.start
		p.sum[k] += s
		if run.start < o {
			p.obs[k] += min(end, o) - run.start
		}
		if run.start <= F && F < end {
			cur = k
		}
	}
	for i := range m {
		// The authors add 1 per observed epoch; addOnes rounds as that
		// loop does.
		p.post[i] = addOnes(prior, p.obs[i])
	}

	for i := range m {
		var md float64
		if j.ModeDur != nil {
			md = j.ModeDur[i]
		}
		switch {
		case md > 0:
			p.dbar[i] = md
		case p.cnt[i] > 0:
			p.dbar[i] = p.sum[i] / float64(p.cnt[i])
		default:
			return Estimate{}, fieldErr("Job.ModeDur", i, "none for batch size "+strconv.Itoa(p.modes[i]), ErrMissingDuration)
		}
	}

	elapsed, _ := sumChecked(j.EpochDur[:F]) // checked above
	observed := elapsed
	if F < E {
		observed += j.EpochDur[F]
	}
	est := Estimate{
		MeanEpoch: observed / float64(o),
		Elapsed:   elapsed,
	}
	var A float64 // Σα', summed in mode order as the authors do
	for i := range m {
		A += p.post[i]
	}
	faithful := 1.0
	if rem := E - F; rem > 0 {
		var sr float64
		for i := range m {
			r := float64(E) * p.post[i] / A
			// Decrementing r by 1 per observed epoch while r ≥ 1 equals
			// subtracting min(c_b, ⌊r⌋), exactly: every step is exact in
			// binary floating point when r ≥ 1.
			r -= min(float64(p.obs[i]), math.Floor(r))
			p.sum[i] = r // reuse: sum now holds r_b
			sr += r
		}
		inflated := max(int(sr+1), rem)
		var R float64
		for i := range m {
			R += float64(p.sum[i] * p.dbar[i])
		}
		faithful = R * (float64(rem) / float64(inflated))

		u := float64(E - F - 1)
		var mu float64
		for i := range m {
			mu += float64(p.post[i] / A * p.dbar[i])
		}
		var v float64
		for i := range m {
			dd := p.dbar[i] - mu
			v += float64(p.post[i] / A * dd * dd)
		}
		est.Mean = p.dbar[cur] + float64(u*mu)
		est.Var = u * (A + u) / (A + 1) * v
	}
	switch opts.Estimator {
	case Faithful:
		est.Remaining = faithful
	case Posterior:
		est.Remaining = est.Mean
	case Oracle:
		est.Remaining, _ = sumChecked(j.EpochDur[F:]) // checked above
	}
	// Finite durations near float64's maximum can still overflow the sums
	// and the variance (squares of differences).
	for _, v := range [...]float64{est.Remaining, est.Mean, est.Var, est.MeanEpoch, est.Elapsed} {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return Estimate{}, fieldErr("Job.EpochDur", -1, "", ErrOverflow)
		}
	}
	return est, nil
}

// setModes splits the profile into runs of equal batch size, fills p.modes
// (declared, or the distinct profiled sizes) and sizes the per-mode scratch.
func (p *Predictor) setModes(j *Job, full bool) error {
	p.modes, p.runs = p.modes[:0], p.runs[:0]
	if j.Modes != nil {
		if len(j.Modes) == 0 {
			return fieldErr("Job.Modes", -1, "empty", ErrInvalid)
		}
		for i, b := range j.Modes {
			if b <= 0 || (i > 0 && b <= j.Modes[i-1]) {
				return fieldErr("Job.Modes", i, strconv.Itoa(b)+" (must be positive and strictly ascending)", ErrInvalid)
			}
		}
		if j.ModeDur != nil {
			if len(j.ModeDur) != len(j.Modes) {
				return fieldErr("Job.ModeDur", -1, "len "+strconv.Itoa(len(j.ModeDur))+", Modes has "+strconv.Itoa(len(j.Modes)), ErrLength)
			}
			for i, d := range j.ModeDur {
				if !(d >= 0) || math.IsInf(d, 1) {
					return fieldErr("Job.ModeDur", i, ftoa(d), ErrInvalid)
				}
			}
		}
		p.modes = append(p.modes, j.Modes...)
	} else {
		if j.ModeDur != nil {
			return fieldErr("Job.ModeDur", -1, "set without Modes", ErrInvalid)
		}
		if !full {
			return fieldErr("Job.Modes", -1, "nil with a partial profile (hindsight modes need every epoch)", ErrLength)
		}
	}
	bs := j.EpochBS
	for e := 0; e < len(bs); {
		b := bs[e]
		if b <= 0 {
			return fieldErr("Job.EpochBS", e, strconv.Itoa(b), ErrInvalid)
		}
		p.runs = append(p.runs, run{start: e, bs: b})
		if j.Modes == nil {
			p.insertMode(b)
		}
		for e++; e < len(bs) && bs[e] == b; e++ {
		}
	}
	m := len(p.modes)
	if cap(p.obs) < m {
		p.obs = make([]int, m)
		p.cnt = make([]int, m)
		p.sum = make([]float64, m)
		p.post = make([]float64, m)
		p.dbar = make([]float64, m)
	}
	p.obs, p.cnt = p.obs[:m], p.cnt[:m]
	p.sum, p.post, p.dbar = p.sum[:m], p.post[:m], p.dbar[:m]
	return nil
}

// run is a maximal range of epochs at one batch size, from start to the
// next run's start.
type run struct{ start, bs int }

// sumChecked returns the sum of d, or the index of the first element that
// is negative, NaN or infinite. Four accumulators break the add latency
// chain; the sum is exact when the durations are whole seconds.
func sumChecked(d []float64) (float64, int) {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(d); i += 4 {
		a, b, c, e := d[i], d[i+1], d[i+2], d[i+3]
		if !(a >= 0 && a <= math.MaxFloat64 && b >= 0 && b <= math.MaxFloat64 &&
			c >= 0 && c <= math.MaxFloat64 && e >= 0 && e <= math.MaxFloat64) {
			break
		}
		s0, s1, s2, s3 = s0+a, s1+b, s2+c, s3+e
	}
	for ; i < len(d); i++ {
		if a := d[i]; a >= 0 && a <= math.MaxFloat64 {
			s0 += a
		} else {
			return 0, i
		}
	}
	return (s0 + s1) + (s2 + s3), -1
}

// addOnes returns x after c repetitions of x += 1, each rounded, in
// O(log) steps: inside one binade [2^(k-1), 2^k) below 2^53 every +1 is
// exact, so only the additions that cross into the next binade round.
// x must be positive and x + c below 2^53 (Predict bounds both).
func addOnes(x float64, c int) float64 {
	for c > 0 {
		_, exp := math.Frexp(x) // x < 2^exp
		gap := math.Ldexp(1, exp) - x
		if n := min(c, int(gap)); n > 0 { // x+n ≤ 2^exp: exact
			x += float64(n)
			c -= n
			continue
		}
		x++ // the one rounding step across 2^exp
		c--
	}
	return x
}

// insertMode adds b to the sorted set p.modes.
func (p *Predictor) insertMode(b int) {
	i := 0
	for i < len(p.modes) && p.modes[i] < b {
		i++
	}
	if i < len(p.modes) && p.modes[i] == b {
		return
	}
	p.modes = append(p.modes, 0)
	copy(p.modes[i+1:], p.modes[i:])
	p.modes[i] = b
}

// find returns the index of b in p.modes, or -1.
func (p *Predictor) find(b int) int {
	lo, hi := 0, len(p.modes)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if p.modes[h] < b {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(p.modes) && p.modes[lo] == b {
		return lo
	}
	return -1
}
