package fluid

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// netRef is what a simulator computes from scratch over the flows present,
// in order of addition: Solver.Rates, the excess summed over Offered, and
// each flow's mark.
func netRef(t *testing.T, m Filling, capacity []float64, flows []Flow) (rates []float64, excess float64, marked []bool) {
	t.Helper()
	s := Solver{Filling: m}
	rates, err := s.Rates(nil, capacity, flows)
	if err != nil {
		t.Fatal(err)
	}
	over := map[int]bool{}
	for _, o := range s.Offered() {
		excess += max(o.Load-capacity[o.Link], 0)
		over[o.Link] = o.Load > capacity[o.Link]
	}
	for _, fl := range flows {
		mk := false
		for _, l := range fl.Links {
			mk = mk || over[l]
		}
		marked = append(marked, mk)
	}
	return rates, excess, marked
}

// netProblem draws capacities and a pool of flows: random, tie-heavy,
// links offered exactly their capacity, or NIC-limited (finite peaks on fat
// links, so that most links are cold and a few saturate).
func netProblem(rng *rand.Rand, kind int) ([]float64, []Flow) {
	switch kind {
	case 0:
		return randomProblem(rng, 1+rng.IntN(30), 1+rng.IntN(60))
	case 1:
		return tiedProblem(rng, 1+rng.IntN(30), 1+rng.IntN(80))
	case 2:
		return tightProblem(rng, 1+rng.IntN(6))
	}
	links := 2 + rng.IntN(40)
	capacity := make([]float64, links)
	for l := range capacity {
		capacity[l] = []float64{100e9, 400e9, 50e9}[rng.IntN(3)]
	}
	fs := make([]Flow, 1+rng.IntN(80))
	for f := range fs {
		for range 1 + rng.IntN(6) {
			fs[f].Links = append(fs[f].Links, rng.IntN(links))
		}
		fs[f].Peak = []float64{25e9, 50e9, 100e9 / 3}[rng.IntN(3)]
	}
	return capacity, fs
}

// tightProblem offers each link flows whose peaks are fractions of its
// capacity summing to it (1/2+1/3+1/6, ...): the link is hot, rounding may
// freeze its flows a little below their peaks, and it is not offered past
// capacity. Most flows cross that link alone, so removing one touches no
// other link.
func tightProblem(rng *rand.Rand, links int) ([]float64, []Flow) {
	parts := [][]float64{{2, 3, 6}, {3, 3, 6, 6}, {4, 4, 6, 6, 6}, {10, 10, 10, 10, 5, 5, 10, 10}, {3, 7, 42, 2}, {5, 5, 5, 10, 10, 10, 10, 10, 10, 10, 10}}
	capacity := make([]float64, links)
	var fs []Flow
	for l := range capacity {
		capacity[l] = []float64{100e9, 1, 0.3, 7}[rng.IntN(4)]
		for _, k := range parts[rng.IntN(len(parts))] {
			f := Flow{Links: []int{l}, Peak: capacity[l] / k}
			if rng.IntN(6) == 0 {
				f.Links = append(f.Links, rng.IntN(links))
			}
			fs = append(fs, f)
		}
	}
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	return capacity, fs
}

// Over random sequences of additions and removals, the incremental Network
// gives every flow the rate and mark, and the network the excess, that a
// solve of every flow from scratch gives, bit for bit, and so does the
// Network's own Scratch path.
func TestNetworkMatchesScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var inc, ref Network
	inc.Filling = Hot
	ref.Filling, ref.Scratch = Hot, true
	for i := range 400 {
		capacity, pool := netProblem(rng, i%4)
		inc.Reset(capacity)
		ref.Reset(capacity)
		type live struct {
			pool   int
			id, rf FlowID
			at     int // the step that added it
		}
		var in []live
		for step := range 60 {
			for range rng.IntN(4) {
				if len(in) > 0 && rng.IntN(2) == 0 {
					k := rng.IntN(len(in))
					inc.Remove(in[k].id)
					ref.Remove(in[k].rf)
					in = append(in[:k], in[k+1:]...)
				} else {
					p := rng.IntN(len(pool))
					in = append(in, live{p, inc.Add(pool[p].Links, pool[p].Peak), ref.Add(pool[p].Links, pool[p].Peak), step})
				}
			}
			old := map[FlowID]seen{}
			for _, x := range in {
				if x.at < step { // present at the last Solve
					old[x.id] = seen{inc.Rate(x.id), inc.Marked(x.id)}
				}
			}
			if err := inc.Solve(); err != nil {
				t.Fatal(err)
			}
			checkChanged(t, &inc, in, old, func(x live) FlowID { return x.id })
			if err := ref.Solve(); err != nil {
				t.Fatal(err)
			}
			checkChanged(t, &ref, in, nil, func(x live) FlowID { return x.rf })
			flows := make([]Flow, len(in))
			for k, x := range in {
				flows[k] = pool[x.pool]
			}
			rates, excess, marked := netRef(t, Eager, capacity, flows)
			if math.Float64bits(inc.Excess()) != math.Float64bits(excess) || math.Float64bits(ref.Excess()) != math.Float64bits(excess) {
				t.Fatalf("case %d step %d: excess %v (scratch %v), want %v", i, step, inc.Excess(), ref.Excess(), excess)
			}
			for k, x := range in {
				if math.Float64bits(inc.Rate(x.id)) != math.Float64bits(rates[k]) || math.Float64bits(ref.Rate(x.rf)) != math.Float64bits(rates[k]) {
					t.Fatalf("case %d step %d flow %d: rate %v (scratch %v), want %v", i, step, k, inc.Rate(x.id), ref.Rate(x.rf), rates[k])
				}
				if inc.Marked(x.id) != marked[k] || ref.Marked(x.rf) != marked[k] {
					t.Fatalf("case %d step %d flow %d: marked %v (scratch %v), want %v", i, step, k, inc.Marked(x.id), ref.Marked(x.rf), marked[k])
				}
			}
		}
	}
}

// seen is a flow's rate and mark as of a Solve.
type seen struct {
	rate   float64
	marked bool
}

// checkChanged checks n.Changed after a Solve: the flows listed are present
// and listed once, and every present flow that is not listed was present
// before (old lists those; nil for every flow to be listed) with the rate
// and mark it has now.
func checkChanged[L any](t *testing.T, n *Network, in []L, old map[FlowID]seen, id func(L) FlowID) {
	t.Helper()
	listed := map[FlowID]bool{}
	for _, f := range n.Changed() {
		if listed[f] {
			t.Fatalf("flow %d listed twice", f)
		}
		listed[f] = true
	}
	present := map[FlowID]bool{}
	for _, x := range in {
		f := id(x)
		present[f] = true
		if listed[f] {
			continue
		}
		o, ok := old[f]
		if !ok {
			t.Fatalf("flow %d is new or its rate may have changed, but it is not listed (%v)", f, n.Changed())
		}
		if math.Float64bits(o.rate) != math.Float64bits(n.Rate(f)) || o.marked != n.Marked(f) {
			t.Fatalf("flow %d: rate %v marked %v, before %v %v, but it is not listed", f, n.Rate(f), n.Marked(f), o.rate, o.marked)
		}
	}
	for f := range listed {
		if !present[f] {
			t.Fatalf("flow %d is listed but not present", f)
		}
	}
}

// A malformed flow is refused: the next Solve reports it, and the network
// is as before.
func TestNetworkInvalid(t *testing.T) {
	var n Network
	n.Reset([]float64{10, 0})
	a := n.Add([]int{0}, 20)
	for _, bad := range []struct {
		links []int
		peak  float64
	}{{[]int{2}, 1}, {[]int{-1}, 1}, {[]int{0}, 0}, {[]int{0}, math.NaN()}, {nil, math.Inf(1)}, {[]int{1}, 1}} {
		if id := n.Add(bad.links, bad.peak); id != -1 {
			t.Errorf("Add(%v, %v) = %d, want -1", bad.links, bad.peak, id)
		}
		n.Remove(-1)
		if err := n.Solve(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Add(%v, %v): Solve: %v, want ErrInvalid", bad.links, bad.peak, err)
		}
	}
	if err := n.Solve(); err != nil {
		t.Fatal(err)
	}
	if r := n.Rate(a); r != 10 || !n.Marked(a) || n.Excess() != 10 {
		t.Errorf("rate %v marked %v excess %v, want 10 true 10", r, n.Marked(a), n.Excess())
	}
}

// Quiet holds exactly when a Network crossed only by those crossings finds
// the link neither hot nor offered past capacity, around both bounds.
func TestQuiet(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	var n Network
	n.Filling = Hot
	count := map[bool]int{}
	for range 2000 {
		c := math.Ldexp(1+rng.Float64(), rng.IntN(80)-10)
		k := 1 + rng.IntN(8)
		peak := c / float64(k) * (1 + float64(rng.IntN(80)-60)*0x1p-52)
		n.Reset([]float64{c})
		for range k {
			n.Add([]int{0}, peak)
		}
		if err := n.Solve(); err != nil {
			t.Fatal(err)
		}
		L := &n.ln[0]
		want := !L.hot && !L.over
		if got := Quiet(c, peak, k); got != want {
			t.Fatalf("Quiet(%v, %v, %d) = %v, the Network finds hot %v over %v", c, peak, k, got, L.hot, L.over)
		}
		count[want]++
	}
	if count[true] < 100 || count[false] < 100 {
		t.Fatalf("quiet %d times, not %d: the cases miss a bound", count[true], count[false])
	}
	for _, c := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if Quiet(c, 1, 1) {
			t.Errorf("Quiet(%v, 1, 1): a capacity the Network rejects", c)
		}
	}
}
