package fluid

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// solveMode solves with a fresh Solver in mode m.
func solveMode(t testing.TB, m Filling, capacity []float64, flows []Flow) []float64 {
	t.Helper()
	s := Solver{Filling: m}
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

// The three fillings (the whole network eagerly, component by component
// with every link, hot component by hot component) give the same rates, bit
// for bit, on random and tie-heavy problems.
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
		want := solveMode(t, Eager, capacity, flows)
		for _, m := range []Filling{Full, Hot} {
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
		want := solveMode(t, Legacy, capacity, flows)
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

// A Solver fed a sequence of related problems, as a simulator's events
// make them, returns on each what a fresh Solver returns, bit for bit: no
// state leaks from one call into the next.
func TestSolverSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for seq := range 200 {
		capacity, flows := randomProblem(rng, 5+rng.IntN(60), rng.IntN(50))
		if seq%2 == 1 {
			capacity, flows = tiedProblem(rng, 5+rng.IntN(60), rng.IntN(50))
		}
		var s Solver
		var r []float64
		for step := range 60 {
			var err error
			if r, err = s.Rates(r, capacity, flows); err != nil {
				t.Fatal(err)
			}
			want := solveMode(t, Eager, capacity, flows)
			if f := sameBits(r, want); f >= 0 {
				t.Fatalf("sequence %d step %d: flow %d rate %v, a fresh solver %v", seq, step, f, r[f], want[f])
			}
			if step%10 == 9 { // a rejected problem in between changes nothing
				if _, err := s.Rates(nil, capacity, append(slices.Clone(flows), Flow{Links: []int{len(capacity)}, Peak: 1})); err == nil {
					t.Fatal("link out of range accepted")
				}
			}
			capacity, flows = mutate(rng, capacity, flows)
		}
	}
}

// The hot test is conservative: a link it leaves out never saturates in
// the full filling.
func TestColdLinksNeverSaturate(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	cold := 0
	for range 3000 {
		capacity, flows := randomProblem(rng, 1+rng.IntN(30), rng.IntN(40))
		r := solveMode(t, Eager, capacity, flows)
		loads := Loads(nil, len(capacity), flows, r)
		peak := make([]float64, len(capacity))
		n := make([]int, len(capacity))
		crossings := 0
		for _, fl := range flows {
			for _, l := range fl.Links {
				peak[l] += fl.Peak
				n[l]++
				crossings++
			}
		}
		keep := margin(crossings, len(flows))
		for l := range capacity {
			if n[l] == 0 || hot(capacity[l], peak[l], keep) {
				continue
			}
			cold++
			if loads[l] >= capacity[l] {
				t.Fatalf("link %d is not hot (peaks %v, capacity %v) but carries %v", l, peak[l], capacity[l], loads[l])
			}
		}
	}
	if cold == 0 {
		t.Fatal("no cold link: the test checks nothing")
	}
	// At the margin: a link whose peaks sum to its capacity is hot, and so
	// is one a rounding below it.
	keep := margin(2, 2)
	for _, load := range []float64{100, math.Nextafter(100, 0), 100 * (1 - 1e-15)} {
		if !hot(100, load, keep) {
			t.Errorf("peaks %v on a 100 link: not hot", load)
		}
	}
	if hot(100, 99.99, keep) || !hot(100, math.Inf(1), keep) {
		t.Error("hot(100, 99.99) or not hot(100, +Inf)")
	}
}

func TestParseFilling(t *testing.T) {
	for v, want := range map[string]Filling{"": Hot, "default": Hot, "hot": Hot, "full": Full, "eager": Eager, "legacy": Legacy} {
		if got, err := ParseFilling(v); got != want || err != nil {
			t.Errorf("%q: filling %v (%v), want %v", v, got, err, want)
		}
		if f, _ := ParseFilling(want.String()); f != want {
			t.Errorf("%v does not parse back", want)
		}
	}
	if _, err := ParseFilling("other"); err == nil {
		t.Error("other: no error")
	}
}

func TestModesNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	capacity, a := randomProblem(rng, 60, 80)
	b := slices.Delete(slices.Clone(a), 3, 4)
	for _, m := range []Filling{Hot, Full, Eager, Legacy} {
		s := Solver{Filling: m}
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

// Offered lists each touched link once, in order of first crossing, with
// the peaks on it summed in flow order, and nothing after a rejected call.
func TestOffered(t *testing.T) {
	inf := math.Inf(1)
	capacity := []float64{10, 10, 10, 10}
	flows := []Flow{{[]int{2, 0}, 3}, {nil, 1}, {[]int{0, 0, 3}, 0.5}, {[]int{2}, inf}}
	for _, m := range []Filling{Hot, Full, Eager, Legacy} {
		s := Solver{Filling: m}
		if _, err := s.Rates(nil, capacity, flows); err != nil {
			t.Fatal(err)
		}
		want := []Offer{{2, inf}, {0, 4}, {3, 0.5}}
		if d := cmp.Diff(want, s.Offered()); d != "" {
			t.Fatalf("mode %d: offered (-want +got):\n%s", m, d)
		}
		if _, err := s.Rates(nil, capacity, []Flow{{[]int{1}, 1}, {[]int{9}, 1}}); err == nil {
			t.Fatal("link out of range accepted")
		}
		if o := s.Offered(); len(o) != 0 {
			t.Fatalf("after a rejected call: offered %v", o)
		}
	}
}

// The filler's two ways of finding a round's level, scanning the links or
// keeping their shares in a heap, give the same rates: the equivalence
// tests, which otherwise fill their small components by scanning, with
// every component kept in a heap. A Network's sorting of flows by peak,
// by counting or not, plays no part either.
func TestFillPaths(t *testing.T) {
	defer func(v, r int) { scanLinks, maxRanks = v, r }(scanLinks, maxRanks)
	scan := scanLinks
	t.Run("heap", func(t *testing.T) {
		scanLinks = 0
		TestModesAgree(t)
		TestSolverSequences(t)
		TestNetworkMatchesScratch(t)
		TestRatesHandComputed(t)
	})
	t.Run("sorted", func(t *testing.T) {
		scanLinks, maxRanks = scan, 0
		TestNetworkMatchesScratch(t)
	})
}
