package link

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// pulse is a job of period t ticks that sends bw units for its first up ticks.
func pulse(t, up int, bw int32) profile.Profile {
	d := make([]int32, t)
	for i := range up {
		d[i] = bw
	}
	return profile.Profile{Period: t, Demand: d}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

// TestVectors checks the brief's test vectors D, E, F, G and H (C = 50,
// one tick = 1 ms, bandwidth in Gbps units).
func TestVectors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		jobs      []profile.Profile
		unshifted float64
		score     float64
		shifts    []int // the lexicographically smallest optimum
		modes     []Mode
	}{
		{"D", []profile.Profile{pulse(72, 30, 40), pulse(72, 30, 40)}, 0.75, 1, []int{0, 30}, []Mode{Exact, Paper}},
		{"E", []profile.Profile{pulse(72, 45, 40), pulse(72, 45, 40)}, 0.625, 0.85, []int{0, 27}, []Mode{Exact, Paper}},
		{"F", []profile.Profile{pulse(40, 10, 30), pulse(60, 10, 30)}, 0.98333, 1, []int{0, 10}, []Mode{Exact}},
		{"G", []profile.Profile{pulse(40, 20, 30), pulse(60, 20, 30)}, 0.96667, 0.96667, []int{0, 0}, []Mode{Exact}},
		{"H", []profile.Profile{pulse(72, 24, 40), pulse(72, 24, 40), pulse(72, 24, 40)}, 0.53333, 1, []int{0, 24, 48}, []Mode{Exact, Paper}},
	} {
		for _, mode := range tc.modes {
			t.Run(tc.name+"/"+mode.String(), func(t *testing.T) {
				var w Workspace
				res, err := w.Search(context.Background(), Problem{Jobs: tc.jobs, Capacity: 50}, Options{Mode: mode}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !near(res.Unshifted, tc.unshifted) || !near(res.Score, tc.score) || !slices.Equal(res.Shifts, tc.shifts) || res.Status != Optimal || res.Bound != res.Score {
					t.Errorf("got unshifted %.5f score %.5f shifts %v status %v bound %v; want %.5f %.5f %v optimal",
						res.Unshifted, res.Score, res.Shifts, res.Status, res.Bound, tc.unshifted, tc.score, tc.shifts)
				}
			})
		}
	}
}

// TestVectorDOptimalRange checks that every shift in 30..42 ms, and only
// those, is optimal for vector D.
func TestVectorDOptimalRange(t *testing.T) {
	var w Workspace
	jobs := []profile.Profile{pulse(72, 30, 40), pulse(72, 30, 40)}
	for s := range 72 {
		e, _, err := w.Evaluate(Problem{Jobs: jobs, Capacity: 50}, Options{}, []int{0, s})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := e == 0, s >= 30 && s <= 42; got != want {
			t.Errorf("shift %d: optimal=%v, want %v", s, got, want)
		}
	}
}

// bruteExact finds the lexicographically smallest optimal shifts by trying
// every shift of every free job over its whole period, scoring on the
// materialized unified circle. It shares no code with the search.
func bruteExact(jobs []profile.Profile, c int32, fixed []int) (int64, []int) {
	p := 1
	for _, j := range jobs {
		p = p / circle.GCD(p, j.Period) * j.Period
	}
	k := len(jobs)
	cur := make([]int, k)
	var best []int
	bestE := int64(math.MaxInt64)
	var rec func(i int)
	rec = func(i int) {
		if i == k {
			var e int64
			for a := range p {
				var s int64
				for j, jb := range jobs {
					s += int64(jb.Demand[((a-cur[j])%jb.Period+jb.Period)%jb.Period])
				}
				e += max(s-int64(c), 0)
			}
			if e < bestE {
				bestE, best = e, slices.Clone(cur)
			}
			return
		}
		lo, hi := 0, jobs[i].Period
		if fixed == nil && i == 0 {
			hi = 1
		} else if fixed != nil && fixed[i] >= 0 {
			lo, hi = fixed[i], fixed[i]+1
		}
		for s := lo; s < hi; s++ {
			cur[i] = s
			rec(i + 1)
		}
	}
	rec(0)
	return bestE, best
}

// brutePaper is the paper's discretization by brute force: 72 sample
// points, rotations by multiples of 5 degrees within 2π/r_j.
func brutePaper(jobs []profile.Profile, c int32) (int64, []int) {
	p := 1
	for _, j := range jobs {
		p = p / circle.GCD(p, j.Period) * j.Period
	}
	k := len(jobs)
	cur := make([]int, k)
	var best []int
	bestE := int64(math.MaxInt64)
	var rec func(i int)
	rec = func(i int) {
		if i == k {
			var e int64
			for a := range 72 {
				x := a * p / 72
				var s int64
				for j, jb := range jobs {
					s += int64(jb.Demand[((x-cur[j])%jb.Period+jb.Period)%jb.Period])
				}
				e += max(s-int64(c), 0)
			}
			if e < bestE {
				bestE, best = e, slices.Clone(cur)
			}
			return
		}
		for m := 0; ; m++ {
			if m*p >= 72*jobs[i].Period { // 5m degrees reached 360/r_j
				break
			}
			if i == 0 && m > 0 {
				break
			}
			cur[i] = m * p / 72
			rec(i + 1)
		}
	}
	rec(0)
	return bestE, best
}

func randomJob(rng *rand.Rand, periods []int) profile.Profile {
	t := periods[rng.IntN(len(periods))]
	d := make([]int32, t)
	switch rng.IntN(3) {
	case 0: // one pulse
		start, n, bw := rng.IntN(t), 1+rng.IntN(t), int32(1+rng.IntN(40))
		for i := range n {
			d[(start+i)%t] = bw
		}
	case 1: // several phases
		for i := 0; i < t; {
			n := 1 + rng.IntN(t/2+1)
			bw := int32(rng.IntN(3) * 15)
			for ; n > 0 && i < t; n, i = n-1, i+1 {
				d[i] = bw
			}
		}
	default: // noise
		for i := range d {
			d[i] = int32(rng.IntN(30))
		}
	}
	return profile.Profile{Period: t, Demand: d}
}

// TestSearchMatchesBruteForce compares the search with brute force on random
// two- and three-job links in both modes, including fixed jobs.
func TestSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	periods := []int{4, 6, 8, 9, 10, 12, 15, 18}
	var w Workspace
	for it := range 400 {
		k := 2 + it%2
		jobs := make([]profile.Profile, k)
		for j := range jobs {
			jobs[j] = randomJob(rng, periods)
		}
		c := int32(10 + rng.IntN(50))
		name := fmt.Sprintf("case %d (k=%d c=%d)", it, k, c)

		res, err := w.Search(context.Background(), Problem{Jobs: jobs, Capacity: c}, Options{}, nil)
		if err != nil {
			t.Fatal(name, err)
		}
		e, s := bruteExact(jobs, c, nil)
		if res.Excess != e || !slices.Equal(res.Shifts, s) || res.Status != Optimal {
			t.Fatalf("%s exact: got excess %d shifts %v (%v), brute force %d %v", name, res.Excess, res.Shifts, res.Status, e, s)
		}
		if got, _, _ := w.Evaluate(Problem{Jobs: jobs, Capacity: c}, Options{}, s); got != e {
			t.Fatalf("%s: Evaluate(%v) = %d, want %d", name, s, got, e)
		}

		res, err = w.Search(context.Background(), Problem{Jobs: jobs, Capacity: c}, Options{Mode: Paper}, nil)
		if err != nil {
			t.Fatal(name, err)
		}
		e, s = brutePaper(jobs, c)
		if res.Excess != e || !slices.Equal(res.Shifts, s) || res.Points != 72 {
			t.Fatalf("%s paper: got excess %d shifts %v, brute force %d %v", name, res.Excess, res.Shifts, e, s)
		}

		// Fix a random job at a random shift; the others are free.
		fixed := make([]int, k)
		for j := range fixed {
			fixed[j] = -1
		}
		fj := rng.IntN(k)
		fixed[fj] = rng.IntN(jobs[fj].Period)
		res, err = w.Search(context.Background(), Problem{Jobs: jobs, Capacity: c, Fixed: fixed}, Options{}, nil)
		if err != nil {
			t.Fatal(name, err)
		}
		e, s = bruteExact(jobs, c, fixed)
		if res.Excess != e || !slices.Equal(res.Shifts, s) {
			t.Fatalf("%s fixed %v: got excess %d shifts %v, brute force %d %v", name, fixed, res.Excess, res.Shifts, e, s)
		}
	}
}

// TestGCDInvariance checks the reduction the search relies on: for two jobs
// the excess depends on the shift only modulo gcd(Ta, Tb).
func TestGCDInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var w Workspace
	for it := range 50 {
		a, b := randomJob(rng, []int{12, 18, 20, 30}), randomJob(rng, []int{8, 15, 27, 45})
		g := circle.GCD(a.Period, b.Period)
		pr := Problem{Jobs: []profile.Profile{a, b}, Capacity: 25}
		for s := range b.Period {
			e1, _, _ := w.Evaluate(pr, Options{}, []int{0, s})
			e2, _, _ := w.Evaluate(pr, Options{}, []int{0, s % g})
			if e1 != e2 {
				t.Fatalf("case %d: periods %d,%d shift %d: excess %d, at shift %d: %d", it, a.Period, b.Period, s, e1, s%g, e2)
			}
		}
	}
}

// TestBranchAndBoundWithDescent forces the over-budget path (coordinate
// descent first, then the proof) and checks it still finds the optimum.
func TestBranchAndBoundWithDescent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var w Workspace
	for it := range 60 {
		jobs := make([]profile.Profile, 4)
		for j := range jobs {
			jobs[j] = randomJob(rng, []int{6, 8, 12})
		}
		pr := Problem{Jobs: jobs, Capacity: 40}
		want, err := w.Search(context.Background(), pr, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.Search(context.Background(), pr, Options{Budget: 50, Restarts: 3, Seed: uint64(it)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Excess < want.Excess {
			t.Fatalf("case %d: budgeted search beat the proven optimum: %d < %d", it, got.Excess, want.Excess)
		}
		if got.Bound < got.Score-1e-12 || got.Bound < want.Score-1e-12 {
			t.Fatalf("case %d: bound %v is below a reachable score (%v, optimum %v)", it, got.Bound, got.Score, want.Score)
		}
		if got.Status == Optimal && (got.Excess != want.Excess || !slices.Equal(got.Shifts, want.Shifts)) {
			t.Fatalf("case %d: optimal status but %d %v, want %d %v", it, got.Excess, got.Shifts, want.Excess, want.Shifts)
		}
	}
}

func TestDeadlineReturnsBestSoFar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	jobs := make([]profile.Profile, 5)
	for j := range jobs {
		jobs[j] = randomJob(rng, []int{200, 300, 400})
	}
	var w Workspace
	var res Result
	var err error
	// A loaded machine may reach 20 ms before the first evaluation
	// (ErrTimeLimit): then the limit grows, still far below the search's.
	for limit := 20 * time.Millisecond; ; limit *= 4 {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		res, err = w.Search(ctx, Problem{Jobs: jobs, Capacity: 40}, Options{Budget: -1}, nil)
		cancel()
		if !errors.Is(err, ErrTimeLimit) || limit > time.Second {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != TimeLimit {
		t.Fatalf("status %v, want time_limit (the search should not finish in 20 ms)", res.Status)
	}
	if res.Score < res.Unshifted || res.Bound < res.Score {
		t.Fatalf("score %v unshifted %v bound %v", res.Score, res.Unshifted, res.Bound)
	}
	e, _, _ := w.Evaluate(Problem{Jobs: jobs, Capacity: 40}, Options{}, res.Shifts)
	if e != res.Excess {
		t.Fatalf("reported excess %d, shifts give %d", res.Excess, e)
	}
}

// TestCoprimeNeedsNoRounding: 255 and 253 ticks share nothing (gcd 1), so
// their 64515-tick circle is searched exactly on a shared circle of one
// residue, under a cap of 10000 ticks and without rounding.
func TestCoprimeNeedsNoRounding(t *testing.T) {
	jobs := []profile.Profile{pulse(255, 100, 30), pulse(253, 100, 30)}
	var w Workspace
	res, err := w.Search(context.Background(), Problem{Jobs: jobs, Capacity: 50}, Options{Circle: circle.Options{MaxPerimeter: 10000, Round: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, p := bruteEvaluate(jobs, 50, []int{0, 0})
	if res.Circle.Grid != 1 || res.Circle.Perimeter != 64515 || res.Circle.Shared != 1 || res.Points != p || res.Excess != want || res.Unrounded.Points != 0 {
		t.Fatalf("got %+v; want the exact circle (64515 ticks, shared 1), excess %d, nothing rounded", res, want)
	}
}

// TestRoundingReportsUnrounded: periods 60, 100 and 150 share a circle of
// lcm(20, 30, 50) = 300 residues. Under a cap of 200 the search fails, or
// rounds to grid 3 (60, 102, 150: shared circle lcm(6, 30, 6) = 30), and
// then scores its shifts on the real periods too.
func TestRoundingReportsUnrounded(t *testing.T) {
	jobs := []profile.Profile{pulse(60, 20, 30), pulse(100, 30, 30), pulse(150, 40, 30)}
	var w Workspace
	pr := Problem{Jobs: jobs, Capacity: 50}
	_, err := w.Search(context.Background(), pr, Options{Circle: circle.Options{MaxPerimeter: 200}}, nil)
	if !errors.Is(err, circle.ErrPerimeterTooLarge) || !IsLimit(err) {
		t.Fatalf("err = %v, want ErrPerimeterTooLarge", err)
	}
	res, err := w.Search(context.Background(), pr, Options{Circle: circle.Options{MaxPerimeter: 200, Round: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Circle.Grid != 3 || !slices.Equal(res.Circle.Periods, []int{60, 102, 150}) || res.Circle.Shared != 30 {
		t.Fatalf("circle %+v, want grid 3, periods [60 102 150], shared 30", res.Circle)
	}
	padded := make([]profile.Profile, len(jobs))
	for j, jb := range jobs {
		d := make([]int32, res.Circle.Periods[j])
		copy(d, jb.Demand)
		padded[j] = profile.Profile{Period: len(d), Demand: d}
	}
	if e, p := bruteEvaluate(padded, 50, res.Shifts); e != res.Excess || p != res.Points {
		t.Fatalf("rounded: excess %d over %d, brute force %d over %d", res.Excess, res.Points, e, p)
	}
	e, p := bruteEvaluate(jobs, 50, res.Shifts)
	if u := res.Unrounded; u.Excess != e || u.Points != p || u.Score != score(e, p, 50) {
		t.Fatalf("unrounded %+v; brute force on the real periods: excess %d over %d", u, e, p)
	}
	// Scoring the real periods is skipped past the cell limit.
	res, err = w.Search(context.Background(), pr, Options{MaxCells: 3 * 200, Circle: circle.Options{MaxPerimeter: 200, Round: true}}, nil)
	if err != nil || res.Unrounded.Points != 0 {
		t.Fatalf("unrounded %+v (%v), want none: 3 jobs on a 300-residue circle pass 600 cells", res.Unrounded, err)
	}
}

// TestLargeCoprimeClosedForm checks the periods against a closed
// form: on coprime periods every pair (or triple) of ticks meets once, so
// for two-level jobs the excess counts the busy ticks of each combination.
func TestLargeCoprimeClosedForm(t *testing.T) {
	f := func(v int64) int64 { return max(v-50000, 0) }
	var w Workspace
	a, b := comm(5000, 2000, 40), comm(4999, 2100, 30)
	res, err := w.Search(context.Background(), Problem{Jobs: []profile.Profile{a, b}, Capacity: 50000}, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(2000)*2100*f(70000) + 2000*2899*f(40000) + 3000*2100*f(30000)
	if res.Excess != want || res.Points != 5000*4999 || res.Status != Optimal || !slices.Equal(res.Shifts, []int{0, 0}) || res.Evaluated > 100 {
		t.Fatalf("5000/4999: %+v; want excess %d over %d points, optimal at [0 0], a few evaluations", res, want, 5000*4999)
	}
	c := comm(1019, 400, 30)
	res, err = w.Search(context.Background(), Problem{Jobs: []profile.Profile{comm(1009, 300, 30), comm(1013, 350, 30), c}, Capacity: 50000}, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	busy := []int64{300, 350, 400}
	idle := []int64{709, 663, 619}
	want = 0
	for mask := range 8 {
		n, v := int64(1), int64(0)
		for j := range 3 {
			if mask>>j&1 == 1 {
				n, v = n*busy[j], v+30000
			} else {
				n *= idle[j]
			}
		}
		want += n * f(v)
	}
	if res.Excess != want || res.Points != 1009*1013*1019 || res.Status != Optimal || res.Evaluated > 100 {
		t.Fatalf("1009/1013/1019: %+v; want excess %d over %d points", res, want, 1009*1013*1019)
	}
}

// TestFoldProvesFlat: on three jobs of 180, 200 and 240 ticks whose
// communication phases spread evenly over the residues they share, every
// one of the 40 x 120 shift vectors has the same excess. Folding the
// classes by their own periods proves it in a few evaluations.
func TestFoldProvesFlat(t *testing.T) {
	jobs := []profile.Profile{comm(180, 60, 30), comm(200, 70, 30), comm(240, 80, 30)}
	pr := Problem{Jobs: jobs, Capacity: 50000}
	var w Workspace
	res, err := w.Search(context.Background(), pr, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Optimal || !slices.Equal(res.Shifts, []int{0, 0, 0}) || res.Evaluated > 100 {
		t.Fatalf("got %+v; want optimal at [0 0 0] in a few evaluations", res)
	}
	step := 1
	if scaled(4) == 1 {
		step = 7 // a sample under WebAssembly
	}
	for s1 := 0; s1 < 40; s1 += step {
		for s2 := 0; s2 < 120; s2 += step {
			if e, _, _ := w.Evaluate(pr, Options{}, []int{0, s1, s2}); e != res.Excess {
				t.Fatalf("shifts [0 %d %d]: excess %d, the search's %d", s1, s2, e, res.Excess)
			}
		}
	}
}

// TestPerimeterPastInt64: three coprime periods near 2^20 have an LCM of
// 1.15e18 ticks: an excess of up to 27 units a tick over it might not fit an
// int64, and the search says so rather than wrapping around.
func TestPerimeterPastInt64(t *testing.T) {
	jobs := []profile.Profile{pulse(1<<20-1, 1, 9), pulse(1<<20-3, 1, 9), pulse(1<<20+1, 1, 9)}
	var w Workspace
	_, err := w.Search(context.Background(), Problem{Jobs: jobs, Capacity: 5}, Options{}, nil)
	if !errors.Is(err, circle.ErrPerimeterTooLarge) || !IsLimit(err) {
		t.Fatalf("err = %v, want ErrPerimeterTooLarge", err)
	}
}

func TestBadInput(t *testing.T) {
	var w Workspace
	ok := pulse(10, 5, 5)
	for _, tc := range []struct {
		pr   Problem
		opt  Options
		want error
	}{
		{Problem{Capacity: 5}, Options{}, ErrNoJobs},
		{Problem{Jobs: []profile.Profile{ok}, Capacity: 0}, Options{}, ErrCapacity},
		{Problem{Jobs: []profile.Profile{ok}, Capacity: -3}, Options{}, ErrCapacity},
		{Problem{Jobs: []profile.Profile{{Period: 3, Demand: []int32{1}}}, Capacity: 5}, Options{}, profile.ErrPeriodMismatch},
		{Problem{Jobs: []profile.Profile{{Period: 1, Demand: []int32{-1}}}, Capacity: 5}, Options{}, profile.ErrInvalidBandwidth},
		{Problem{Jobs: []profile.Profile{pulse(3, 1, 1<<23), pulse(3, 1, 1<<23)}, Capacity: 5}, Options{}, ErrDemandTooLarge},
		{Problem{Jobs: []profile.Profile{ok, ok}, Capacity: 5, Fixed: []int{0}}, Options{}, ErrFixed},
		{Problem{Jobs: []profile.Profile{ok}, Capacity: 5}, Options{Mode: 7}, ErrInvalidOption},
	} {
		if _, err := w.Search(context.Background(), tc.pr, tc.opt, nil); !errors.Is(err, tc.want) {
			t.Errorf("%+v: err = %v, want %v", tc.pr, err, tc.want)
		}
	}
}

// TestSteadyStateAllocs proves a warmed workspace searches without
// allocating, on every path: the materialized circle, the shared circle
// with classes, the static histogram, folding, identical jobs, rounding
// with its unrounded score, and Paper mode.
func TestSteadyStateAllocs(t *testing.T) {
	noise := func(t int, seed uint64) profile.Profile {
		rng := rand.New(rand.NewPCG(seed, 1))
		d := make([]int32, t)
		for i := range d {
			d[i] = int32(rng.IntN(30000))
		}
		return profile.Profile{Period: t, Demand: d}
	}
	for _, tc := range []struct {
		jobs []profile.Profile
		opt  Options
	}{
		{[]profile.Profile{pulse(255, 114, 25000), pulse(181, 60, 25000)}, Options{}},
		{[]profile.Profile{pulse(72, 24, 40), pulse(72, 24, 40), pulse(72, 24, 40)}, Options{}},
		{[]profile.Profile{comm(5000, 2000, 40), comm(4999, 2000, 40)}, Options{}},
		{[]profile.Profile{comm(1009, 300, 30), comm(1013, 350, 30), comm(1019, 400, 30)}, Options{}},
		{[]profile.Profile{comm(180, 60, 30), comm(200, 70, 30), comm(240, 80, 30)}, Options{}},
		{[]profile.Profile{noise(90, 1), noise(120, 2), noise(180, 3)}, Options{}},
		{[]profile.Profile{noise(60, 4), noise(100, 5), noise(7, 6)}, Options{}},
		{[]profile.Profile{pulse(60, 20, 30000), pulse(100, 30, 30000), pulse(150, 40, 30000)}, Options{Circle: circle.Options{MaxPerimeter: 200, Round: true}}},
		{[]profile.Profile{comm(180, 60, 30), comm(200, 70, 30), comm(240, 80, 30)}, Options{Materialize: true}},
	} {
		var w Workspace
		dst := make([]int, len(tc.jobs))
		pr := Problem{Jobs: tc.jobs, Capacity: 50000}
		for _, mode := range []Mode{Exact, Paper} {
			opt := tc.opt
			opt.Mode = mode
			if _, err := w.Search(context.Background(), pr, opt, dst); err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(scaled(8), func() { w.Search(context.Background(), pr, opt, dst) }); n != 0 {
				t.Errorf("%d jobs, %v %+v: %v allocations per search", len(tc.jobs), mode, tc.opt, n)
			}
			if n := testing.AllocsPerRun(scaled(8), func() { w.Evaluate(pr, opt, dst) }); n != 0 {
				t.Errorf("%d jobs, %v %+v: %v allocations per evaluation", len(tc.jobs), mode, tc.opt, n)
			}
		}
	}
}

// TestBudgetBoundsEveryPath: two jobs of 100000-tick periods. Pulses are
// few runs, so the run scan proves them optimal in under a million steps,
// narrow optima included. A noisy burst is 40000 runs: its scan would cost
// 10^10 pair evaluations, so under a 2^24 budget the search strides, stops
// near the budget and still interleaves the bursts; a deadline bounds it too.
func TestBudgetBoundsEveryPath(t *testing.T) {
	// 40% at 40 units, capacity 50: interleaving is perfect at shifts in
	// [40000, 60000].
	jobs := []profile.Profile{pulse(100000, 40000, 40), pulse(100000, 40000, 40)}
	var w Workspace
	res, err := w.Search(context.Background(), Problem{Jobs: jobs, Capacity: 50}, Options{Budget: 1 << 24}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Optimal || res.Excess != 0 || res.Shifts[1] != 40000 || res.Evaluated > 1<<20 {
		t.Fatalf("pulses: %v after %d evaluations, excess %d at %v; want optimal, 0 at [0 40000]", res.Status, res.Evaluated, res.Excess, res.Shifts)
	}
	// A narrow optimum: A's 600-tick gap at [50200, 50800) fits B's
	// 100-tick burst with no excess.
	a := pulse(100000, 100000, 40)
	for i := 50200; i < 50800; i++ {
		a.Demand[i] = 0
	}
	b := pulse(100000, 100, 40)
	res, err = w.Search(context.Background(), Problem{Jobs: []profile.Profile{a, b}, Capacity: 50}, Options{Budget: 1 << 24}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Optimal || res.Excess != 0 || res.Shifts[1] != 50200 {
		t.Fatalf("narrow gap: status %v, excess %d at shifts %v; want optimal, 0 at [0 50200]", res.Status, res.Excess, res.Shifts)
	}

	rng := rand.New(rand.NewPCG(2, 2))
	noisy := pulse(100000, 40000, 0)
	for i := range 40000 {
		noisy.Demand[i] = int32(1 + rng.IntN(40))
	}
	jobs = []profile.Profile{pulse(100000, 40000, 40), noisy}
	res, err = w.Search(context.Background(), Problem{Jobs: jobs, Capacity: 50}, Options{Budget: 1 << 24}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Budget || res.Evaluated > 2<<24 {
		t.Fatalf("noisy: status %v after %d evaluations (budget %d)", res.Status, res.Evaluated, 1<<24)
	}
	if res.Score != 1 {
		t.Fatalf("strided search scored %v (shifts %v); 1 is reachable at every shift in [40000, 60000]", res.Score, res.Shifts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err = w.Search(ctx, Problem{Jobs: jobs, Capacity: 50}, Options{Budget: -1}, nil)
	if errors.Is(err, ErrTimeLimit) && time.Since(start) <= 2*time.Second {
		return // a loaded machine reached the deadline before the first evaluation: it held all the same
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != TimeLimit || time.Since(start) > 2*time.Second {
		t.Fatalf("status %v after %v", res.Status, time.Since(start))
	}
}

// TestCellLimit: the cell limit bounds the circle the search builds. Three
// jobs of 1000, 999 and 1000 ticks have a 999000-tick unified circle but
// share 1000 residues, which fit 2^20 cells; three 2^19-tick jobs share
// all 2^19, which do not.
func TestCellLimit(t *testing.T) {
	jobs := []profile.Profile{pulse(1000, 10, 5), pulse(999, 10, 5), pulse(1000, 1, 5)}
	var w Workspace
	res, err := w.Search(context.Background(), Problem{Jobs: jobs, Capacity: 5}, Options{MaxCells: 1 << 20}, nil)
	if err != nil || res.Points != 999000 || res.Status != Optimal {
		t.Fatalf("3 jobs sharing 1000 residues: %+v, %v", res, err)
	}
	big := []profile.Profile{pulse(1<<19, 10, 5), pulse(1<<19, 10, 5), pulse(1<<19, 1, 5)}
	if _, err := w.Search(context.Background(), Problem{Jobs: big, Capacity: 5}, Options{MaxCells: 1 << 20}, nil); !errors.Is(err, ErrTooLarge) || !IsLimit(err) {
		t.Fatalf("3 jobs on a 2^19-tick shared circle under a 2^20-cell limit: %v", err)
	}
	if _, err := w.Search(context.Background(), Problem{Jobs: big, Capacity: 0}, Options{}, nil); err == nil || IsLimit(err) {
		t.Fatalf("capacity 0 is a bad value, not a limit: %v", err)
	}
	if _, err := w.Search(context.Background(), Problem{Jobs: big, Capacity: 5}, Options{Mode: Paper, MaxCells: 1 << 20}, nil); err != nil {
		t.Fatalf("paper mode holds 72 points whatever the circle: %v", err)
	}
}
