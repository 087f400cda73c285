package fluid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// solveMode solves with a fresh Solver in mode m.
func solveMode(t testing.TB, m mode, capacity []float64, flows []Flow) []float64 {
	t.Helper()
	s := Solver{mode: m}
	r, err := s.Rates(nil, capacity, flows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sameBits reports the first flow whose rates differ in any bit, or -1.
func sameBits(a, b []float64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// tiedProblem builds a problem full of exact ties and near ties: few
// capacities and peaks, many flows over few links, repeated links, several
// components.
func tiedProblem(rng *rand.Rand, links, flows int) ([]float64, []Flow) {
	capacity := make([]float64, links)
	for l := range capacity {
		capacity[l] = []float64{10, 30, 100, 1e9 / 3, 7}[rng.IntN(5)]
	}
	fs := make([]Flow, flows)
	for f := range fs {
		n := 1 + rng.IntN(4)
		base := rng.IntN(links)
		for range n {
			fs[f].Links = append(fs[f].Links, (base+rng.IntN(3))%links) // local: several components
		}
		fs[f].Peak = math.Inf(1)
		if rng.IntN(3) == 0 {
			fs[f].Peak = []float64{2.5, 5, 10.0 / 3, 1e8}[rng.IntN(4)]
		}
	}
	return capacity, fs
}

// The three fillings (the whole network eagerly, component by component,
// component by component reusing the last call's) give the same rates, bit
// for bit, on random problems, tie-heavy problems and the hand-computed
// ones.
func TestModesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 3000 {
		var capacity []float64
		var flows []Flow
		if i%2 == 0 {
			capacity, flows = randomProblem(rng, 1+rng.IntN(30), rng.IntN(40))
		} else {
			capacity, flows = tiedProblem(rng, 1+rng.IntN(30), rng.IntN(60))
		}
		want := solveMode(t, modeEager, capacity, flows)
		for _, m := range []mode{modeScratch, modeIncremental} {
			if got := solveMode(t, m, capacity, flows); sameBits(got, want) >= 0 {
				f := sameBits(got, want)
				t.Fatalf("case %d, mode %d: flow %d rate %v, eager %v", i, m, f, got[f], want[f])
			}
		}
		checkMaxMin(t, capacity, flows, want)
	}
}

// The filling is the old global progressive filling's allocation, to
// rounding.
func TestAgreesWithLegacyFilling(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	worst := 0.0
	for i := range 3000 {
		capacity, flows := randomProblem(rng, 1+rng.IntN(30), rng.IntN(40))
		if i%2 == 1 {
			capacity, flows = tiedProblem(rng, 1+rng.IntN(30), rng.IntN(60))
		}
		got := solveMode(t, 0, capacity, flows)
		want := legacyRates(capacity, flows)
		for f := range got {
			d := math.Abs(got[f]-want[f]) / want[f]
			worst = max(worst, d)
			if d > 1e-12 {
				t.Fatalf("case %d flow %d: %v, the global filling %v", i, f, got[f], want[f])
			}
		}
	}
	t.Logf("largest relative difference from the global filling: %.3g", worst)
}

// mutate changes a problem as a simulator's event does, and sometimes more:
// flows leave (the order of the rest kept, or shuffled), flows arrive, a
// flow's links are rewritten in place, a capacity or a peak changes.
func mutate(rng *rand.Rand, capacity []float64, flows []Flow) ([]float64, []Flow) {
	out := slices.Clone(flows)
	switch rng.IntN(8) {
	case 0, 1: // one or two flows finish
		for range 1 + rng.IntN(2) {
			if len(out) > 0 {
				i := rng.IntN(len(out))
				out = slices.Delete(out, i, i+1)
			}
		}
	case 2, 3: // a job's flows start
		_, more := randomProblem(rng, len(capacity), 1+rng.IntN(3))
		out = append(out, more...)
	case 4: // the same flows in another order
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	case 5: // a flow's link slice rewritten in place by the caller
		if len(out) > 0 {
			f := &out[rng.IntN(len(out))]
			if len(f.Links) > 0 {
				f.Links[rng.IntN(len(f.Links))] = rng.IntN(len(capacity))
			}
		}
	case 6:
		capacity = slices.Clone(capacity)
		capacity[rng.IntN(len(capacity))] *= 1.5
	case 7:
		if len(out) > 0 {
			out[rng.IntN(len(out))].Peak = float64(1+rng.IntN(80)) * 1e9
		}
	}
	return capacity, out
}

// An incremental Solver fed a sequence of related problems returns on each
// what a fresh Solver returns, bit for bit, and does reuse components.
func TestIncrementalSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	reused, total := 0, 0
	for seq := range 200 {
		capacity, flows := randomProblem(rng, 5+rng.IntN(60), rng.IntN(50))
		var s Solver
		var r []float64
		for step := range 60 {
			var err error
			if r, err = s.Rates(r, capacity, flows); err != nil {
				t.Fatal(err)
			}
			want := solveMode(t, modeScratch, capacity, flows)
			if f := sameBits(r, want); f >= 0 {
				t.Fatalf("sequence %d step %d: flow %d rate %v, a fresh solver %v", seq, step, f, r[f], want[f])
			}
			reused += s.reusedFlows()
			total += len(flows)
			capacity, flows = mutate(rng, capacity, flows)
		}
	}
	t.Logf("%d of %d flow rates reused", reused, total)
	if reused*5 < total {
		t.Fatalf("only %d of %d flow rates reused: the test does not exercise reuse", reused, total)
	}
}

// A rejected problem leaves the remembered one intact.
func TestIncrementalAfterError(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	capacity, flows := randomProblem(rng, 20, 30)
	var s Solver
	want, err := s.Rates(nil, capacity, flows)
	if err != nil {
		t.Fatal(err)
	}
	want = slices.Clone(want)
	bad := append(slices.Clone(flows), Flow{Links: []int{99}, Peak: 1})
	if _, err := s.Rates(nil, capacity, bad); err == nil {
		t.Fatal("link out of range accepted")
	}
	got, err := s.Rates(nil, capacity, flows)
	if err != nil || sameBits(got, want) >= 0 || s.reusedFlows() == 0 {
		t.Fatalf("after a rejected call: %v %v (reused %d)", got, err, s.reusedFlows())
	}
}

// Rates of a changed problem read the new capacities even when every flow
// is unchanged, and a problem with fewer links than the last is fine.
func TestIncrementalCapacityChange(t *testing.T) {
	inf := math.Inf(1)
	var s Solver
	flows := []Flow{{[]int{0}, inf}, {[]int{0, 1}, inf}}
	for _, tc := range []struct {
		capacity []float64
		want     []float64
	}{
		{[]float64{10, 4}, []float64{6, 4}},
		{[]float64{10, 4}, []float64{6, 4}},
		{[]float64{10, 8}, []float64{5, 5}},
		{[]float64{10, 8, 1}, []float64{5, 5}},
		{[]float64{2, 8}, []float64{1, 1}},
	} {
		got, err := s.Rates(nil, tc.capacity, flows)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Fatalf("capacity %v: %v %v, want %v", tc.capacity, got, err, tc.want)
		}
	}
}

func TestModeFromEnv(t *testing.T) {
	for v, want := range map[string]mode{"": modeIncremental, "scratch": modeScratch, "eager": modeEager, "other": modeIncremental} {
		if got := modeFromEnv(v); got != want {
			t.Errorf("%q: mode %d, want %d", v, got, want)
		}
	}
}

func TestIncrementalNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	capacity, a := randomProblem(rng, 60, 80)
	b := slices.Delete(slices.Clone(a), 3, 4)
	for _, m := range []mode{modeIncremental, modeScratch, modeEager} {
		s := Solver{mode: m}
		r, _ := s.Rates(nil, capacity, a)
		r, _ = s.Rates(r, capacity, b)
		if n := testing.AllocsPerRun(50, func() {
			r, _ = s.Rates(r, capacity, a)
			r, _ = s.Rates(r, capacity, b)
		}); n != 0 {
			t.Errorf("mode %d: %v allocations per pair of solves", m, n)
		}
	}
}

func ExampleSolver_Rates_incremental() {
	inf := math.Inf(1)
	capacity := []float64{10, 10, 6}
	flows := []Flow{{[]int{0}, inf}, {[]int{0}, inf}, {[]int{1, 2}, inf}}
	var s Solver
	r, _ := s.Rates(nil, capacity, flows)
	fmt.Println(r, s.reusedFlows())
	// A third flow joins link 0: link 0's component is filled again, the
	// other one's rate is the previous call's.
	flows = append(flows, Flow{[]int{0}, inf})
	r, _ = s.Rates(r, capacity, flows)
	fmt.Printf("%.4g %d\n", r, s.reusedFlows())
	// Output:
	// [5 5 6] 0
	// [3.333 3.333 6 3.333] 1
}
