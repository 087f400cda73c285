package fluid

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func rates(t *testing.T, capacity []float64, flows []Flow) []float64 {
	t.Helper()
	var s Solver
	r, err := s.Rates(nil, capacity, flows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Hand-computed allocations.
func TestRatesHandComputed(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name     string
		capacity []float64
		flows    []Flow
		want     []float64
	}{
		{"one flow", []float64{50}, []Flow{{[]int{0}, inf}}, []float64{50}},
		{"two flows on one link get half each", []float64{50}, []Flow{{[]int{0}, inf}, {[]int{0}, inf}}, []float64{25, 25}},
		{"three flows", []float64{30}, []Flow{{[]int{0}, inf}, {[]int{0}, inf}, {[]int{0}, inf}}, []float64{10, 10, 10}},
		{"peak below the fair share", []float64{50}, []Flow{{[]int{0}, 10}, {[]int{0}, 45}}, []float64{10, 40}},
		{"both at peak", []float64{50}, []Flow{{[]int{0}, 20}, {[]int{0}, 20}}, []float64{20, 20}},
		// A crosses links 0 and 1, B only 0, C only 1. Link 1 (4) fills
		// first at level 2, freezing A and C; B takes the rest of link 0.
		{"bottleneck", []float64{10, 4}, []Flow{{[]int{0, 1}, inf}, {[]int{0}, inf}, {[]int{1}, inf}}, []float64{2, 8, 2}},
		// The parking lot: a long flow across three links, one short flow
		// per link. Every link is shared by two flows: 5 each.
		{"parking lot", []float64{10, 10, 10}, []Flow{{[]int{0, 1, 2}, inf}, {[]int{0}, inf}, {[]int{1}, inf}, {[]int{2}, inf}}, []float64{5, 5, 5, 5}},
		// A ring crossing link 0 twice takes two shares: 2r + r = 30.
		{"multiplicity", []float64{30}, []Flow{{[]int{0, 0}, inf}, {[]int{0}, inf}}, []float64{10, 10}},
		// Once the ring is limited by its peak, the other flow takes the rest.
		{"multiplicity with a peak", []float64{30}, []Flow{{[]int{0, 0}, 5}, {[]int{0}, inf}}, []float64{5, 20}},
		{"no links", []float64{10}, []Flow{{nil, 7}}, []float64{7}},
		{"no flows", []float64{10}, nil, []float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rates(t, tc.capacity, tc.flows)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("rates %v, want %v", got, tc.want)
			}
		})
	}
}

// randomProblem builds a feasible random problem.
func randomProblem(rng *rand.Rand, links, flows int) ([]float64, []Flow) {
	capacity := make([]float64, links)
	for l := range capacity {
		capacity[l] = float64(1+rng.IntN(100)) * 1e9
	}
	fs := make([]Flow, flows)
	for f := range fs {
		n := rng.IntN(5)
		if n == 0 && rng.IntN(2) == 0 {
			n = 1
		}
		for range n {
			fs[f].Links = append(fs[f].Links, rng.IntN(links))
		}
		fs[f].Peak = math.Inf(1)
		if n == 0 || rng.IntN(3) == 0 {
			fs[f].Peak = float64(1+rng.IntN(80)) * 1e9
		}
	}
	return capacity, fs
}

// checkMaxMin verifies the certificate of max-min fairness: every link
// carries at most its capacity, and every flow either sends at its peak or
// crosses a saturated link on which no flow is faster (its bottleneck).
func checkMaxMin(t *testing.T, capacity []float64, flows []Flow, r []float64) {
	t.Helper()
	const tol = 1e-9
	loads := Loads(nil, len(capacity), flows, r)
	for l, ld := range loads {
		if ld > capacity[l]*(1+tol) {
			t.Fatalf("link %d carries %v > capacity %v", l, ld, capacity[l])
		}
	}
	for f, fl := range flows {
		if r[f] < 0 || r[f] > fl.Peak*(1+tol) {
			t.Fatalf("flow %d: rate %v outside [0, peak %v]", f, r[f], fl.Peak)
		}
		if r[f] >= fl.Peak*(1-tol) {
			continue
		}
		ok := false
		for _, l := range fl.Links {
			if loads[l] < capacity[l]*(1-tol) {
				continue
			}
			fastest := true
			for g, gl := range flows {
				if slices.Contains(gl.Links, l) && r[g] > r[f]*(1+tol) {
					fastest = false
				}
			}
			ok = ok || fastest
		}
		if !ok {
			t.Fatalf("flow %d (rate %v, links %v) has no bottleneck: loads %v, capacities %v", f, r[f], fl.Links, loads, capacity)
		}
	}
}

func TestRatesMaxMinProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s Solver
	var r []float64
	for range 2000 {
		capacity, flows := randomProblem(rng, 1+rng.IntN(12), rng.IntN(20))
		var err error
		if r, err = s.Rates(r, capacity, flows); err != nil {
			t.Fatal(err)
		}
		checkMaxMin(t, capacity, flows, r)
	}
}

// The allocation does not depend on the order the flows are given in, bit
// for bit.
func TestRatesOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		capacity, flows := randomProblem(rng, 1+rng.IntN(8), 1+rng.IntN(15))
		want := rates(t, capacity, flows)
		perm := rng.Perm(len(flows))
		shuffled := make([]Flow, len(flows))
		for i, p := range perm {
			shuffled[i] = flows[p]
		}
		got := rates(t, capacity, shuffled)
		for i, p := range perm {
			if got[i] != want[p] {
				t.Fatalf("flow %d: %v after shuffling, %v before", p, got[i], want[p])
			}
		}
	}
}

func TestRatesErrors(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name     string
		capacity []float64
		flows    []Flow
	}{
		{"zero peak", []float64{1}, []Flow{{[]int{0}, 0}}},
		{"NaN peak", []float64{1}, []Flow{{[]int{0}, math.NaN()}}},
		{"negative peak", []float64{1}, []Flow{{[]int{0}, -1}}},
		{"unbounded", []float64{1}, []Flow{{nil, inf}}},
		{"link out of range", []float64{1}, []Flow{{[]int{1}, inf}}},
		{"negative link", []float64{1}, []Flow{{[]int{-1}, inf}}},
		{"zero capacity", []float64{0}, []Flow{{[]int{0}, inf}}},
		{"infinite capacity", []float64{inf}, []Flow{{[]int{0}, inf}}},
		{"NaN capacity", []float64{math.NaN()}, []Flow{{[]int{0}, inf}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Solver
			if _, err := s.Rates(nil, tc.capacity, tc.flows); !errors.Is(err, ErrInvalid) {
				t.Fatalf("err %v, want ErrInvalid", err)
			}
			// The solver stays usable after an error.
			r, err := s.Rates(nil, []float64{8}, []Flow{{[]int{0}, inf}, {[]int{0}, inf}})
			if err != nil || !slices.Equal(r, []float64{4, 4}) {
				t.Fatalf("after an error: %v, %v", r, err)
			}
		})
	}
	// An invalid capacity on a link no flow crosses is not read.
	if _, err := new(Solver).Rates(nil, []float64{0, 5}, []Flow{{[]int{1}, inf}}); err != nil {
		t.Fatal(err)
	}
}

func TestRatesNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	capacity, flows := randomProblem(rng, 40, 60)
	var s Solver
	r, err := s.Rates(nil, capacity, flows)
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { r, _ = s.Rates(r, capacity, flows) }); a != 0 {
		t.Fatalf("%v allocations per solve", a)
	}
}

func FuzzRates(f *testing.F) {
	f.Add([]byte{3, 50, 20, 10, 2, 0, 1, 255, 1, 0, 40})
	f.Add([]byte{1, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		links := int(data[0]%16) + 1
		data = data[1:]
		capacity := make([]float64, links)
		for l := range capacity {
			if len(data) == 0 {
				return
			}
			capacity[l] = float64(data[0]) // may be 0: an error
			data = data[1:]
		}
		var flows []Flow
		for len(data) >= 2 && len(flows) < 32 {
			n := int(data[0] % 6)
			peak := math.Inf(1)
			if data[1] != 255 {
				peak = float64(data[1]) // may be 0: an error
			}
			data = data[2:]
			var fl Flow
			for range n {
				if len(data) == 0 {
					break
				}
				fl.Links = append(fl.Links, int(data[0])%(links+1)) // may be out of range
				data = data[1:]
			}
			fl.Peak = peak
			flows = append(flows, fl)
		}
		var s Solver
		r, err := s.Rates(nil, capacity, flows)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		checkMaxMin(t, capacity, flows, r)
		for _, m := range []Filling{Full, Eager} {
			if f := sameBits(solveMode(t, m, capacity, flows), r); f >= 0 {
				t.Fatalf("mode %d: flow %d's rate differs from the default filling's", m, f)
			}
		}
	})
}
