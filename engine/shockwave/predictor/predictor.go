package predictor

import (
	"math"
	"slices"
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

	t Tracker
}

// Predict returns the estimate for j. It returns a *FieldError wrapping
// ErrInvalid, ErrNoEpochs, ErrLength, ErrProgress, ErrUnknownBatchSize or
// ErrMissingDuration when j is malformed.
func (p *Predictor) Predict(j *Job) (Estimate, error) {
	E, n, err := shape(j, p.Options)
	if err != nil {
		return Estimate{}, err
	}
	if err := checkProgress(j.Progress, E, n); err != nil {
		return Estimate{}, err
	}
	if err := checkOracle(p.Options, E, n); err != nil {
		return Estimate{}, err
	}
	// The profile is borrowed for the call only: Job's slices are never kept.
	err = p.t.reset(j, p.Options, E, n, j.EpochDur)
	defer func() { p.t.dur = nil }()
	if err != nil {
		return Estimate{}, err
	}
	return p.t.estimate(j.Progress)
}

// Tracker follows one job's prediction as its progress advances: everything
// that depends only on the profile (the modes, the runs of equal batch size,
// the per-mode mean durations, prefix sums of the durations) is computed
// once by [Tracker.Reset], so that [Tracker.Estimate] at any progress costs
// O(modes + runs) instead of Predict's O(E). Its estimates equal Predict's
// bit for bit (the prefix sums group the additions exactly as Predict's
// sums do). A planner keeps one per job and resets it only when the
// profile's durations change (calibration). The zero value is empty; a
// Tracker is not safe for concurrent use.
type Tracker struct {
	opts   Options
	E, n   int       // epochs; profiled epochs
	prior  float64   // α_b, the same for every mode
	modes  []int     // ascending
	runs   []run     // runs of equal batch size, with their mode
	cnt    []int     // profiled epochs at each mode
	dbar   []float64 // d̄_b
	dur    []float64 // the durations (owned by Reset, borrowed by Predict)
	blocks [][4]float64
	obs    []int     // scratch: c_b
	post   []float64 // scratch: α'_b
	r      []float64 // scratch: r_b
}

// Reset loads j's profile (j.Progress is ignored; [Tracker.Estimate] takes
// it). It checks j as Predict does, except its progress, and keeps a copy
// of j.EpochDur. On error the Tracker is empty.
func (t *Tracker) Reset(j *Job, opts Options) error {
	E, n, err := shape(j, opts)
	if err == nil {
		err = checkOracle(opts, E, n)
	}
	if err == nil {
		err = t.reset(j, opts, E, n, append(t.dur[:0], j.EpochDur...))
	}
	if err != nil {
		t.E = 0
	}
	return err
}

// Estimate returns the job's estimate at progress F (completed epochs),
// equal to Predict's for the loaded job with Progress F. It returns
// ErrProgress or ErrLength as Predict does for a progress out of range,
// and ErrNoEpochs before a successful Reset.
func (t *Tracker) Estimate(progress int) (Estimate, error) {
	if t.E == 0 {
		return Estimate{}, fieldErr("Job.EpochBS", -1, "none loaded (Tracker.Reset)", ErrNoEpochs)
	}
	if err := checkProgress(progress, t.E, t.n); err != nil {
		return Estimate{}, err
	}
	return t.estimate(progress)
}

// Check reports the error Predict gives for any job under o: an unknown
// estimator, or a prior strength outside [0, MaxPriorStrength].
func (o Options) Check() error {
	if o.Estimator > Oracle {
		return fieldErr("Options.Estimator", -1, o.Estimator.String(), ErrInvalid)
	}
	if s := o.PriorStrength; !(s >= 0 && s <= MaxPriorStrength) {
		return fieldErr("Options.PriorStrength", -1, ftoa(s), ErrInvalid)
	}
	return nil
}

// shape checks the options and the profile's lengths and returns E and the
// profiled epoch count n.
func shape(j *Job, opts Options) (E, n int, err error) {
	if err := opts.Check(); err != nil {
		return 0, 0, err
	}
	n = len(j.EpochBS)
	if len(j.EpochDur) != n {
		return 0, 0, fieldErr("Job.EpochDur", -1, strconv.Itoa(len(j.EpochDur))+" durations for "+strconv.Itoa(n)+" batch sizes", ErrLength)
	}
	E = j.Epochs
	if E < 0 {
		return 0, 0, fieldErr("Job.Epochs", -1, strconv.Itoa(E), ErrInvalid)
	}
	if E == 0 {
		E = n
	}
	if E == 0 {
		return 0, 0, fieldErr("Job.EpochBS", -1, "", ErrNoEpochs)
	}
	if n > E {
		return 0, 0, fieldErr("Job.EpochBS", -1, strconv.Itoa(n)+" epochs profiled, more than the job's "+strconv.Itoa(E), ErrLength)
	}
	return E, n, nil
}

// checkOracle checks that the oracle has the whole profile.
func checkOracle(opts Options, E, n int) error {
	if opts.Estimator == Oracle && n != E {
		return fieldErr("Job.EpochBS", -1, strconv.Itoa(n)+" epochs profiled; the oracle needs all "+strconv.Itoa(E), ErrLength)
	}
	return nil
}

// checkProgress checks F against E epochs of which n are profiled: the
// observed epochs 0..F must be in the profile.
func checkProgress(F, E, n int) error {
	if F < 0 || F > E {
		return fieldErr("Job.Progress", -1, strconv.Itoa(F)+" of "+strconv.Itoa(E)+" epochs", ErrProgress)
	}
	if o := min(F+1, E); n < o {
		return fieldErr("Job.EpochBS", -1, strconv.Itoa(n)+" epochs profiled; a prediction at progress "+strconv.Itoa(F)+" needs epochs 0.."+strconv.Itoa(o-1), ErrLength)
	}
	return nil
}

// reset loads the profile (shape already checked): the modes and runs, the
// per-mode means and the prefix sums of dur, which holds j.EpochDur.
func (t *Tracker) reset(j *Job, opts Options, E, n int, dur []float64) error {
	t.opts, t.E, t.n, t.dur = opts, E, n, dur
	if err := t.setModes(j, n == E); err != nil {
		return err
	}
	m := len(t.modes)
	strength := opts.PriorStrength
	if strength == 0 {
		strength = float64(E)
	}
	t.prior = strength / float64(m)
	if err := t.tally(j); err != nil {
		return err
	}
	t.prefix()
	return nil
}

// tally validates the runs and computes each mode's mean duration d̄_b:
// the declared one, or the mean over the profiled epochs at b.
func (t *Tracker) tally(j *Job) error {
	m := len(t.modes)
	sum := t.r // scratch, m long
	for i := range m {
		t.cnt[i], sum[i] = 0, 0
	}
	for r := range t.runs {
		run := &t.runs[r]
		k := t.find(run.bs)
		if k < 0 {
			return fieldErr("Job.EpochBS", run.start, strconv.Itoa(run.bs), ErrUnknownBatchSize)
		}
		run.mode = k
		end := t.runEnd(r)
		s, bad := sumChecked(t.dur[run.start:end])
		if bad >= 0 {
			e := run.start + bad
			return fieldErr("Job.EpochDur", e, ftoa(t.dur[e]), ErrInvalid)
		}
		t.cnt[k] += end - run.start
		sum[k] += s
	}
	for i := range m {
		var md float64
		if j.ModeDur != nil {
			md = j.ModeDur[i]
		}
		switch {
		case md > 0:
			t.dbar[i] = md
		case t.cnt[i] > 0:
			t.dbar[i] = sum[i] / float64(t.cnt[i])
		default:
			return fieldErr("Job.ModeDur", i, "none for batch size "+strconv.Itoa(t.modes[i]), ErrMissingDuration)
		}
	}
	return nil
}

// prefix records sumChecked's four accumulators after every block of four
// durations, so that Σ_{e<F} d_e is recovered with the same roundings.
func (t *Tracker) prefix() {
	nb := len(t.dur) / 4
	t.blocks = slices.Grow(t.blocks[:0], nb+1)[:nb+1]
	var s [4]float64
	t.blocks[0] = s
	for b := range nb {
		d := t.dur[4*b : 4*b+4]
		s = [4]float64{s[0] + d[0], s[1] + d[1], s[2] + d[2], s[3] + d[3]}
		t.blocks[b+1] = s
	}
}

// elapsed is sumChecked(dur[:F]), bit for bit.
func (t *Tracker) elapsed(F int) float64 {
	s := t.blocks[F/4]
	for _, d := range t.dur[F/4*4 : F] {
		s[0] += d
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

func (t *Tracker) runEnd(r int) int {
	if r+1 < len(t.runs) {
		return t.runs[r+1].start
	}
	return t.n
}

// estimate computes the estimate at progress F (checked): the posterior
// from the observed epochs 0..F, the authors' R, the posterior mean and
// variance.
func (t *Tracker) estimate(F int) (Estimate, error) {
	E, m := t.E, len(t.modes)
	o := min(F+1, E) // observed epochs 0..F
	cur := t.observe(o, F)
	for i := range m {
		// The authors add 1 per observed epoch; addOnes rounds as that
		// loop does.
		t.post[i] = addOnes(t.prior, t.obs[i])
	}
	elapsed := t.elapsed(F)
	observed := elapsed
	if F < E {
		observed += t.dur[F]
	}
	est := Estimate{MeanEpoch: observed / float64(o), Elapsed: elapsed}
	var A float64 // Σα', summed in mode order as the authors do
	for i := range m {
		A += t.post[i]
	}
	faithful := 1.0
	if E-F > 0 {
		faithful = t.faithful(E, F, A)
		est.Mean, est.Var = t.posterior(E, F, A, cur)
	}
	switch t.opts.Estimator {
	case Faithful:
		est.Remaining = faithful
	case Posterior:
		est.Remaining = est.Mean
	case Oracle:
		est.Remaining, _ = sumChecked(t.dur[F:]) // checked by reset
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

// observe counts the observed epochs 0..o−1 at each mode into t.obs and
// returns the mode of epoch F.
func (t *Tracker) observe(o, F int) (cur int) {
	clear(t.obs)
	for r, run := range t.runs {
		if run.start >= o && run.start > F {
			break
		}
		end := t.runEnd(r)
		if run.start < o {
			t.obs[run.mode] += min(end, o) - run.start
		}
		if run.start <= F && F < end {
			cur = run.mode
		}
	}
	return cur
}

// faithful is the authors' R = (Σ_b r_b·d̄_b)·(E − F)/Ĩ.
func (t *Tracker) faithful(E, F int, A float64) float64 {
	rem := E - F
	var sr float64
	for i := range t.modes {
		r := float64(E) * t.post[i] / A
		// Decrementing r by 1 per observed epoch while r ≥ 1 equals
		// subtracting min(c_b, ⌊r⌋), exactly: every step is exact in
		// binary floating point when r ≥ 1.
		r -= min(float64(t.obs[i]), math.Floor(r))
		t.r[i] = r
		sr += r
	}
	inflated := max(int(sr+1), rem)
	var R float64
	for i := range t.modes {
		R += float64(t.r[i] * t.dbar[i])
	}
	return R * (float64(rem) / float64(inflated))
}

// posterior is the Dirichlet-multinomial mean and variance of the remaining
// runtime: the current epoch at its mode, then U = E−F−1 epochs drawn from
// the posterior.
func (t *Tracker) posterior(E, F int, A float64, cur int) (mean, variance float64) {
	u := float64(E - F - 1)
	var mu float64
	for i := range t.modes {
		mu += float64(t.post[i] / A * t.dbar[i])
	}
	var v float64
	for i := range t.modes {
		dd := t.dbar[i] - mu
		v += float64(t.post[i] / A * dd * dd)
	}
	return t.dbar[cur] + float64(u*mu), u * (A + u) / (A + 1) * v
}

// setModes splits the profile into runs of equal batch size, fills t.modes
// (declared, or the distinct profiled sizes) and sizes the per-mode scratch.
func (t *Tracker) setModes(j *Job, full bool) error {
	t.modes, t.runs = t.modes[:0], t.runs[:0]
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
				return fieldErr("Job.ModeDur", -1, strconv.Itoa(len(j.ModeDur))+" durations for "+strconv.Itoa(len(j.Modes))+" modes", ErrLength)
			}
			for i, d := range j.ModeDur {
				if !(d >= 0) || math.IsInf(d, 1) {
					return fieldErr("Job.ModeDur", i, ftoa(d), ErrInvalid)
				}
			}
		}
		t.modes = append(t.modes, j.Modes...)
	} else {
		if j.ModeDur != nil {
			return fieldErr("Job.ModeDur", -1, "given without modes", ErrInvalid)
		}
		if !full {
			return fieldErr("Job.Modes", -1, "absent with a partial profile (hindsight modes need every epoch)", ErrLength)
		}
	}
	bs := j.EpochBS
	for e := 0; e < len(bs); {
		b := bs[e]
		if b <= 0 {
			return fieldErr("Job.EpochBS", e, strconv.Itoa(b), ErrInvalid)
		}
		t.runs = append(t.runs, run{start: e, bs: b})
		if j.Modes == nil {
			t.insertMode(b)
		}
		for e++; e < len(bs) && bs[e] == b; e++ {
		}
	}
	m := len(t.modes)
	if cap(t.obs) < m {
		t.obs = make([]int, m)
		t.cnt = make([]int, m)
		t.post = make([]float64, m)
		t.dbar = make([]float64, m)
		t.r = make([]float64, m)
	}
	t.obs, t.cnt = t.obs[:m], t.cnt[:m]
	t.post, t.dbar, t.r = t.post[:m], t.dbar[:m], t.r[:m]
	return nil
}

// run is a maximal range of epochs at one batch size, from start to the
// next run's start, and the index of its mode.
type run struct{ start, bs, mode int }

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

// insertMode adds b to the sorted set t.modes.
func (t *Tracker) insertMode(b int) {
	i := 0
	for i < len(t.modes) && t.modes[i] < b {
		i++
	}
	if i < len(t.modes) && t.modes[i] == b {
		return
	}
	t.modes = append(t.modes, 0)
	copy(t.modes[i+1:], t.modes[i:])
	t.modes[i] = b
}

// find returns the index of b in t.modes, or -1.
func (t *Tracker) find(b int) int {
	lo, hi := 0, len(t.modes)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if t.modes[h] < b {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(t.modes) && t.modes[lo] == b {
		return lo
	}
	return -1
}
