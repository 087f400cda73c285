package predictor

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// schedule builds a profile from (epochs, batch size, duration) runs.
func schedule(runs ...[3]float64) ([]int, []float64) {
	var bs []int
	var d []float64
	for _, r := range runs {
		for range int(r[0]) {
			bs = append(bs, int(r[1]))
			d = append(d, r[2])
		}
	}
	return bs, d
}

// The worked example of the notes: E = 100, B = {32, 256}, ten epochs
// observed at 32 (F = 9). α = 50 each, α' = (60, 50), r = 100·α'/110 with 10
// decrements at 32: (44.545…, 45.454…) (the notes round to (44.5, 45.5)),
// Ĩ = int(90 + 1) = 91 = E − F, R = r_32·d̄_32 + r_256·d̄_256.
func TestWorkedExample(t *testing.T) {
	bs, d := schedule([3]float64{60, 32, 36}, [3]float64{40, 256, 31})
	var p Predictor
	est, err := p.Predict(&Job{Progress: 9, EpochBS: bs, EpochDur: d})
	if err != nil {
		t.Fatal(err)
	}
	r32, r256 := 100*60.0/110-10, 100*50.0/110
	if math.Abs(r32-44.5) > 0.05 || math.Abs(r256-45.5) > 0.05 {
		t.Fatalf("r = (%v, %v)", r32, r256)
	}
	if want := (r32*36 + r256*31) * (91.0 / 91); est.Remaining != want {
		t.Errorf("R = %v, want %v", est.Remaining, want)
	}
	if est.MeanEpoch != 36 || est.Elapsed != 9*36 {
		t.Errorf("D̄ = %v, elapsed = %v", est.MeanEpoch, est.Elapsed)
	}
	// Posterior: the current epoch at 32, then U = 90 epochs with
	// p̄ = (60, 50)/110.
	mu := (60*36.0 + 50*31.0) / 110
	v := (60*(36-mu)*(36-mu) + 50*(31-mu)*(31-mu)) / 110
	if want := 36 + 90*mu; math.Abs(est.Mean-want) > 1e-9 {
		t.Errorf("Mean = %v, want %v", est.Mean, want)
	}
	if want := 90 * (110.0 + 90) / 111 * v; math.Abs(est.Var-want) > 1e-9 {
		t.Errorf("Var = %v, want %v", est.Var, want)
	}
}

// refFaithful transcribes the authors' dirichlet_posterior_remaining_runtime
// step by step (repeated += 1, decrement loop, int() truncation) to check
// the closed forms used by Predict bit for bit.
func refFaithful(E, F int, bs []int, d []float64) float64 {
	var modes []int
	for _, b := range bs {
		if !slices.Contains(modes, b) {
			modes = append(modes, b)
		}
	}
	slices.Sort(modes)
	idx := func(b int) int { return slices.Index(modes, b) }
	post := make([]float64, len(modes))
	for i := range post {
		post[i] = float64(E) / float64(len(modes))
	}
	observed := bs[:min(F+1, E)]
	for _, b := range observed {
		post[idx(b)] += 1
	}
	var A float64
	for _, a := range post {
		A += a
	}
	r := make([]float64, len(modes))
	for i := range r {
		r[i] = float64(E) * post[i] / A
	}
	for _, b := range observed {
		if r[idx(b)] >= 1 {
			r[idx(b)] -= 1
		}
	}
	var sr float64
	for _, x := range r {
		sr += x
	}
	inflated := int(sr + 1)
	rem := E - F
	if inflated < rem {
		inflated = rem
	}
	if inflated <= 0 || rem <= 0 {
		return 1.0
	}
	var R float64
	for i, b := range modes {
		var s float64
		n := 0
		for e := range bs {
			if bs[e] == b {
				s += d[e]
				n++
			}
		}
		R += r[i] * (s / float64(n))
	}
	R *= float64(rem) / float64(inflated)
	return R
}

// randomJob draws a piecewise-constant schedule over up to 5 modes, with
// non-integer durations, and a random progress.
func randomJob(rng *rand.Rand) Job {
	E := 1 + rng.IntN(400)
	sizes := []int{16, 32, 64, 128, 256}
	var bs []int
	var d []float64
	for len(bs) < E {
		b := sizes[rng.IntN(len(sizes))]
		dur := float64(1 + rng.IntN(100))
		for range min(1+rng.IntN(60), E-len(bs)) {
			bs = append(bs, b)
			d = append(d, dur)
		}
	}
	return Job{Progress: rng.IntN(E + 1), EpochBS: bs, EpochDur: d}
}

// With whole-second durations (the authors') Predict matches the
// transcription bit for bit; with fractional ones, to rounding.
func TestFaithfulMatchesTranscription(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p Predictor
	for i := range 3000 {
		j := randomJob(rng)
		est, err := p.Predict(&j)
		if err != nil {
			t.Fatal(err)
		}
		if want := refFaithful(len(j.EpochBS), j.Progress, j.EpochBS, j.EpochDur); est.Remaining != want {
			t.Fatalf("job %d (E=%d F=%d): R = %v, transcription %v", i, len(j.EpochBS), j.Progress, est.Remaining, want)
		}
		var elapsed float64
		for _, d := range j.EpochDur[:j.Progress] {
			elapsed += d
		}
		if est.Elapsed != elapsed {
			t.Fatalf("job %d: elapsed %v, want %v", i, est.Elapsed, elapsed)
		}
		for e := range j.EpochDur {
			j.EpochDur[e] += rng.Float64() / 3
		}
		est, err = p.Predict(&j)
		if err != nil {
			t.Fatal(err)
		}
		if want := refFaithful(len(j.EpochBS), j.Progress, j.EpochBS, j.EpochDur); math.Abs(est.Remaining-want) > 1e-12*want {
			t.Fatalf("job %d fractional: R = %v, transcription %v", i, est.Remaining, want)
		}
	}
}

// addOnes must round exactly like the authors' loop of += 1.
func TestAddOnes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		x := math.Ldexp(rng.Float64(), rng.IntN(40)-8)
		if x == 0 {
			continue
		}
		c := rng.IntN(3000)
		want := x
		for range c {
			want += 1
		}
		if got := addOnes(x, c); got != want {
			t.Fatalf("addOnes(%v, %d) = %v, loop gives %v", x, c, got, want)
		}
	}
	// The emulation matters: 1/3 plus 1000 ones rounds at each binade
	// crossing and ends one ulp away from 1/3 + 1000.
	if got, direct := addOnes(1.0/3, 1000), 1.0/3+1000; got != 1000.3333333333333 || got == direct {
		t.Errorf("addOnes(1/3, 1000) = %v, direct sum %v", got, direct)
	}
}

func TestDegenerateCases(t *testing.T) {
	var p Predictor
	bs, d := schedule([3]float64{20, 32, 10}, [3]float64{30, 64, 6})
	// No epoch left: the authors return 1.0; the posterior 0.
	for _, est := range []Estimator{Faithful, Posterior, Oracle} {
		p.Options.Estimator = est
		e, err := p.Predict(&Job{Progress: 50, EpochBS: bs, EpochDur: d})
		if err != nil {
			t.Fatal(err)
		}
		want := map[Estimator]float64{Faithful: 1, Posterior: 0, Oracle: 0}[est]
		if e.Remaining != want || e.Mean != 0 || e.Var != 0 {
			t.Errorf("%v at F = E: %+v", est, e)
		}
		if e.Elapsed != 20*10+30*6 || e.MeanEpoch != e.Elapsed/50 {
			t.Errorf("%v at F = E: elapsed %v D̄ %v", est, e.Elapsed, e.MeanEpoch)
		}
	}
	p.Options.Estimator = Faithful

	// A static job: m = 1, r = E - (F+1), Ĩ = E - F: the authors' R leaves
	// out the current epoch; the posterior mean is exact with zero variance.
	bs, d = schedule([3]float64{40, 64, 7})
	for F := range 40 {
		e, err := p.Predict(&Job{Progress: F, EpochBS: bs, EpochDur: d})
		if err != nil {
			t.Fatal(err)
		}
		if e.Remaining != float64(40-F-1)*7 || e.Mean != float64(40-F)*7 || e.Var != 0 {
			t.Fatalf("static F=%d: %+v", F, e)
		}
	}

	// Ĩ is raised to E - F when Σr + 1 truncates below it, and r_b < 1 is
	// not decremented: E = 3, F = 1, B = {16, 32}: α' = (1.5+1, 1.5+1),
	// r = (1.5, 1.5) → (0.5, 0.5) after one decrement each, Ĩ = max(2, 2).
	bs, d = []int{16, 32, 32}, []float64{10, 20, 20}
	e, err := p.Predict(&Job{Progress: 1, EpochBS: bs, EpochDur: d})
	if err != nil {
		t.Fatal(err)
	}
	if want := (0.5*10 + 0.5*20) * (2.0 / 2); e.Remaining != want {
		t.Errorf("small job R = %v, want %v", e.Remaining, want)
	}
	// One epoch, F = 0: r = 1·2/2 = 1 → 0, Ĩ = 1, R = 0.
	e, _ = p.Predict(&Job{EpochBS: []int{8}, EpochDur: []float64{3}})
	if e.Remaining != 0 || e.Mean != 3 || e.MeanEpoch != 3 || e.Elapsed != 0 {
		t.Errorf("one epoch: %+v", e)
	}
	// Oracle: Σ_{e≥F} d_e.
	p.Options.Estimator = Oracle
	e, _ = p.Predict(&Job{Progress: 1, EpochBS: bs, EpochDur: d})
	if e.Remaining != 40 {
		t.Errorf("oracle %v", e.Remaining)
	}
}

func TestDeclaredModes(t *testing.T) {
	var p Predictor
	bs, d := schedule([3]float64{60, 32, 36}, [3]float64{40, 256, 31})
	full := Job{Progress: 9, EpochBS: bs, EpochDur: d}
	hind, err := p.Predict(&full)
	if err != nil {
		t.Fatal(err)
	}
	// Declaring the same modes as the profile gives the same answer, and so
	// does a partial profile once the mode durations are declared.
	decl := full
	decl.Modes = []int{32, 256}
	if e, err := p.Predict(&decl); err != nil || e != hind {
		t.Errorf("declared = hindsight modes: %+v %v, want %+v", e, err, hind)
	}
	part := Job{Epochs: 100, Progress: 9, EpochBS: bs[:10], EpochDur: d[:10], Modes: []int{32, 256}, ModeDur: []float64{36, 31}}
	if e, err := p.Predict(&part); err != nil || e != hind {
		t.Errorf("partial profile: %+v %v, want %+v", e, err, hind)
	}
	// An extra mode the job never reaches changes the prior (α = E/3) and
	// needs a duration.
	part.Modes, part.ModeDur = []int{32, 64, 256}, []float64{36, 0, 31}
	if _, err := p.Predict(&part); !errors.Is(err, ErrMissingDuration) || !strings.Contains(err.Error(), "ModeDur[1]") {
		t.Errorf("missing duration: %v", err)
	}
	part.ModeDur[1] = 33
	e, err := p.Predict(&part)
	if err != nil {
		t.Fatal(err)
	}
	// α' = (100/3 + 10, 100/3, 100/3); r_32 = 100·α'_32/110 − 10.
	a := 100.0 / 3
	r := []float64{100*(a+10)/110 - 10, 100 * a / 110, 100 * a / 110}
	inflated := max(int(r[0]+r[1]+r[2]+1), 91)
	if want := (r[0]*36 + r[1]*33 + r[2]*31) * (91 / float64(inflated)); math.Abs(e.Remaining-want) > 1e-9 {
		t.Errorf("three declared modes: R = %v, want %v", e.Remaining, want)
	}
	// PriorStrength: a weaker prior follows the observations: with strength
	// 2, α' = (1 + 10, 1), nearly all remaining epochs are predicted at 32.
	p.Options = Options{Estimator: Posterior, PriorStrength: 2}
	e, _ = p.Predict(&full)
	if want := 36 + 90*(11*36.0+1*31)/12; math.Abs(e.Mean-want) > 1e-9 || e.Remaining != e.Mean {
		t.Errorf("prior strength 2: %+v, want mean %v", e, want)
	}
}

func TestBadInput(t *testing.T) {
	bs, d := schedule([3]float64{5, 32, 10}, [3]float64{5, 64, 8})
	nan := math.NaN()
	for _, c := range []struct {
		name  string
		opts  Options
		job   Job
		want  error
		field string
	}{
		{"no epochs", Options{}, Job{}, ErrNoEpochs, "Job.EpochBS"},
		{"negative epochs", Options{}, Job{Epochs: -1, EpochBS: bs, EpochDur: d}, ErrInvalid, "Job.Epochs"},
		{"length mismatch", Options{}, Job{EpochBS: bs, EpochDur: d[:3]}, ErrLength, "Job.EpochDur"},
		{"profile longer than E", Options{}, Job{Epochs: 5, EpochBS: bs, EpochDur: d}, ErrLength, "Job.EpochBS"},
		{"progress past total", Options{}, Job{Progress: 11, EpochBS: bs, EpochDur: d}, ErrProgress, "Job.Progress"},
		{"negative progress", Options{}, Job{Progress: -1, EpochBS: bs, EpochDur: d}, ErrProgress, "Job.Progress"},
		{"NaN duration", Options{}, Job{EpochBS: bs, EpochDur: with(d, 3, nan)}, ErrInvalid, "Job.EpochDur[3]"},
		{"negative duration", Options{}, Job{EpochBS: bs, EpochDur: with(d, 7, -1)}, ErrInvalid, "Job.EpochDur[7]"},
		{"infinite duration", Options{}, Job{EpochBS: bs, EpochDur: with(d, 0, math.Inf(1))}, ErrInvalid, "Job.EpochDur[0]"},
		{"zero batch size", Options{}, Job{EpochBS: withInt(bs, 2, 0), EpochDur: d}, ErrInvalid, "Job.EpochBS[2]"},
		// Found by FuzzPredict (testdata/fuzz/FuzzPredict/e2aebc9521745f29):
		// a leading 0 used to be skipped as "same as the previous size".
		{"zero batch size first", Options{}, Job{EpochBS: []int{0}, EpochDur: []float64{1}}, ErrInvalid, "Job.EpochBS[0]"},
		{"unknown batch size", Options{}, Job{EpochBS: withInt(bs, 6, 128), EpochDur: d, Modes: []int{32, 64}}, ErrUnknownBatchSize, "Job.EpochBS[6]"},
		{"partial without modes", Options{}, Job{Epochs: 20, EpochBS: bs, EpochDur: d}, ErrLength, "Job.Modes"},
		{"partial shorter than progress", Options{}, Job{Epochs: 20, Progress: 10, EpochBS: bs, EpochDur: d, Modes: []int{32, 64}, ModeDur: []float64{10, 8}}, ErrLength, "Job.EpochBS"},
		{"partial missing durations", Options{}, Job{Epochs: 20, EpochBS: bs[:5], EpochDur: d[:5], Modes: []int{32, 64}}, ErrMissingDuration, "Job.ModeDur[1]"},
		{"oracle on partial", Options{Estimator: Oracle}, Job{Epochs: 20, EpochBS: bs, EpochDur: d, Modes: []int{32, 64}, ModeDur: []float64{10, 8}}, ErrLength, "Job.EpochBS"},
		{"modes unsorted", Options{}, Job{EpochBS: bs, EpochDur: d, Modes: []int{64, 32}}, ErrInvalid, "Job.Modes[1]"},
		{"modes empty", Options{}, Job{EpochBS: bs, EpochDur: d, Modes: []int{}}, ErrInvalid, "Job.Modes"},
		{"mode durations length", Options{}, Job{EpochBS: bs, EpochDur: d, Modes: []int{32, 64}, ModeDur: []float64{1}}, ErrLength, "Job.ModeDur"},
		{"mode duration NaN", Options{}, Job{EpochBS: bs, EpochDur: d, Modes: []int{32, 64}, ModeDur: []float64{1, nan}}, ErrInvalid, "Job.ModeDur[1]"},
		{"durations without modes", Options{}, Job{EpochBS: bs, EpochDur: d, ModeDur: []float64{1}}, ErrInvalid, "Job.ModeDur"},
		{"bad estimator", Options{Estimator: 7}, Job{EpochBS: bs, EpochDur: d}, ErrInvalid, "Options.Estimator"},
		{"negative prior", Options{PriorStrength: -1}, Job{EpochBS: bs, EpochDur: d}, ErrInvalid, "Options.PriorStrength"},
		{"NaN prior", Options{PriorStrength: nan}, Job{EpochBS: bs, EpochDur: d}, ErrInvalid, "Options.PriorStrength"},
		// Finite, but the variance squares a 1e300 s difference of means.
		{"variance overflow", Options{}, Job{EpochBS: bs, EpochDur: with(d, 9, 1e300)}, ErrOverflow, "Job.EpochDur"},
		{"sum overflow", Options{Estimator: Oracle}, Job{EpochBS: bs, EpochDur: with(with(d, 8, 1.7e308), 9, 1.7e308)}, ErrOverflow, "Job.EpochDur"},
	} {
		p := Predictor{Options: c.opts}
		_, err := p.Predict(&c.job)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), "predictor: "+c.field) {
			t.Errorf("%s: %q does not name %s", c.name, err, c.field)
		}
	}
}

func with(d []float64, i int, v float64) []float64 {
	d = slices.Clone(d)
	d[i] = v
	return d
}

func withInt(b []int, i, v int) []int {
	b = slices.Clone(b)
	b[i] = v
	return b
}

// The Dirichlet-multinomial variance against a Monte Carlo estimate: draw
// p ~ Dirichlet(α'), then the U future epochs' batch sizes from p, and sum
// their durations.
func TestVarianceMonteCarlo(t *testing.T) {
	bs, d := schedule([3]float64{12, 16, 50}, [3]float64{6, 32, 30}, [3]float64{2, 64, 22}, [3]float64{20, 128, 15})
	for _, c := range []struct {
		F        int
		strength float64
	}{{19, 0}, {5, 0}, {19, 6}, {38, 3}} {
		p := Predictor{Options: Options{PriorStrength: c.strength}}
		est, err := p.Predict(&Job{Progress: c.F, EpochBS: bs, EpochDur: d})
		if err != nil {
			t.Fatal(err)
		}
		// Posterior concentration and mode durations, recomputed here.
		modes := []int{16, 32, 64, 128}
		dbar := []float64{50, 30, 22, 15}
		strength := c.strength
		if strength == 0 {
			strength = float64(len(bs))
		}
		alpha := make([]float64, 4)
		for i := range alpha {
			alpha[i] = strength / 4
		}
		for _, b := range bs[:c.F+1] {
			alpha[slices.Index(modes, b)]++
		}
		cur := dbar[slices.Index(modes, bs[c.F])]
		U := len(bs) - c.F - 1

		rng := rand.New(rand.NewPCG(7, uint64(c.F)))
		const n = 50000
		var sum, sumSq float64
		pr := make([]float64, 4)
		for range n {
			var tot float64
			for i, a := range alpha {
				pr[i] = gamma(rng, a)
				tot += pr[i]
			}
			x := cur
			for range U {
				u := rng.Float64() * tot
				k := 0
				for k < 3 && u >= pr[k] {
					u -= pr[k]
					k++
				}
				x += dbar[k]
			}
			sum += x
			sumSq += x * x
		}
		mean := sum / n
		variance := (sumSq - n*mean*mean) / (n - 1)
		// Standard error of the mean: sqrt(Var/n); of the variance, for
		// these near-normal sums, about Var·sqrt(2/n) (0.6%).
		if se := math.Sqrt(est.Var / n); math.Abs(mean-est.Mean) > 5*se+1e-9 {
			t.Errorf("F=%d strength %v: MC mean %v, formula %v (se %v)", c.F, c.strength, mean, est.Mean, se)
		}
		if math.Abs(variance-est.Var) > 0.03*est.Var {
			t.Errorf("F=%d strength %v: MC variance %v, formula %v", c.F, c.strength, variance, est.Var)
		}
		t.Logf("F=%d strength %v: mean %.2f (MC %.2f), var %.2f (MC %.2f)", c.F, c.strength, est.Mean, mean, est.Var, variance)
	}
}

// gamma draws from Gamma(a, 1) (Marsaglia and Tsang; boosted for a < 1).
func gamma(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		return gamma(rng, a+1) * math.Pow(rng.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

func TestPredictDoesNotAllocate(t *testing.T) {
	bs, d := schedule([3]float64{300, 32, 36}, [3]float64{200, 64, 35}, [3]float64{500, 256, 31})
	job := Job{Progress: 400, EpochBS: bs, EpochDur: d}
	decl := Job{Epochs: 1000, Progress: 400, EpochBS: bs[:401], EpochDur: d[:401], Modes: []int{32, 64, 128, 256}, ModeDur: []float64{36, 35, 33, 31}}
	var p Predictor
	for _, j := range []*Job{&job, &decl} {
		if _, err := p.Predict(j); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = p.Predict(j) }); n != 0 {
			t.Errorf("Predict allocates %v times per call", n)
		}
	}
	var tr Tracker
	for _, j := range []*Job{&job, &decl} {
		if err := tr.Reset(j, Options{}); err != nil {
			t.Fatal(err)
		}
		F := 0
		if n := testing.AllocsPerRun(100, func() { F = (F + 7) % 400; _, _ = tr.Estimate(F) }); n != 0 {
			t.Errorf("Tracker.Estimate allocates %v times per call", n)
		}
	}
	var c Calibrator
	if err := c.Reset(d, 50000, CalibrateOptions{}); err != nil {
		t.Fatal(err)
	}
	round := 0
	if n := testing.AllocsPerRun(100, func() {
		round++
		_ = c.Observe(Sample{Round: round, ItPerSec: 10, BatchSize: 32})
		_, _, _ = c.Factor(d)
	}); n != 0 {
		t.Errorf("Calibrator allocates %v times per sample", n)
	}
	var s FinishSeries
	for r := range 64 {
		_ = s.Add(r, float64(r))
	}
	s.Reset()
	if n := testing.AllocsPerRun(50, func() {
		s.Reset()
		for r := range 64 {
			_ = s.Add(r, float64(r))
		}
		_, _ = s.Target(70)
	}); n != 0 {
		t.Errorf("FinishSeries allocates %v times per reuse", n)
	}
}

// Predict is deterministic and leaves its inputs alone.
func TestPredictPure(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var p, q Predictor
	for range 200 {
		j := randomJob(rng)
		bs, d := slices.Clone(j.EpochBS), slices.Clone(j.EpochDur)
		a, err1 := p.Predict(&j)
		b, err2 := q.Predict(&j)
		c, err3 := p.Predict(&j)
		if err1 != nil || err2 != nil || err3 != nil || a != b || a != c {
			t.Fatalf("not deterministic: %+v %+v %+v", a, b, c)
		}
		if !slices.Equal(bs, j.EpochBS) || !slices.Equal(d, j.EpochDur) {
			t.Fatal("inputs modified")
		}
	}
}
