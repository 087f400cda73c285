package fluid

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Unit weights give the legacy filling's rates bit for bit, and the
// default filling's to 1e-12, relative.
func TestWeightedUnitIsRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var s, w Solver
	l := Solver{Filling: Legacy}
	for range 2000 {
		capacity, flows := randomProblem(rng, 1+rng.IntN(12), rng.IntN(20))
		want, err := s.Rates(nil, capacity, flows)
		if err != nil {
			t.Fatal(err)
		}
		ones := make([]float64, len(flows))
		for i := range ones {
			ones[i] = 1
		}
		got, err := w.WeightedRates(nil, capacity, flows, ones)
		if err != nil {
			t.Fatal(err)
		}
		legacy, err := l.Rates(nil, capacity, flows)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, legacy) {
			t.Fatalf("unit weights %v, legacy filling %v", got, legacy)
		}
		for i := range want {
			if d := math.Abs(got[i] - want[i]); d > 1e-12*math.Abs(want[i]) {
				t.Fatalf("flow %d: unit weights %v, Rates %v", i, got[i], want[i])
			}
		}
	}
}

func TestWeightedHandComputed(t *testing.T) {
	inf := math.Inf(1)
	var s Solver
	for _, tc := range []struct {
		name    string
		flows   []Flow
		weights []float64
		want    []float64
	}{
		{"two to one", []Flow{{[]int{0}, inf}, {[]int{0}, inf}}, []float64{2, 1}, []float64{60, 30}},
		{"the heavy one at its peak", []Flow{{[]int{0}, 40}, {[]int{0}, inf}}, []float64{3, 1}, []float64{40, 50}},
		{"the light one at its peak", []Flow{{[]int{0}, inf}, {[]int{0}, 10}}, []float64{1, 4}, []float64{80, 10}},
		// Link 1 (30) holds flows 0 and 2 at weights 1 and 2: 10 and 20;
		// flow 1 takes the rest of link 0.
		{"bottleneck", []Flow{{[]int{0, 1}, inf}, {[]int{0}, inf}, {[]int{1}, inf}}, []float64{1, 1, 2}, []float64{10, 80, 20}},
	} {
		capacity := []float64{90, 30}
		got, err := s.WeightedRates(nil, capacity, tc.flows, tc.weights)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Fatalf("%s: rates %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// The certificate of weighted max-min fairness on random problems: links
// within capacity, and every flow at its peak or crossing a saturated link
// on which no flow has a larger rate per unit of weight.
func TestWeightedProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var s Solver
	const tol = 1e-9
	for range 2000 {
		capacity, flows := randomProblem(rng, 1+rng.IntN(12), rng.IntN(20))
		weights := make([]float64, len(flows))
		for i := range weights {
			weights[i] = 0.25 + 4*rng.Float64()
		}
		r, err := s.WeightedRates(nil, capacity, flows, weights)
		if err != nil {
			t.Fatal(err)
		}
		loads := Loads(nil, len(capacity), flows, r)
		for l, ld := range loads {
			if ld > capacity[l]*(1+tol) {
				t.Fatalf("link %d carries %v > %v", l, ld, capacity[l])
			}
		}
		for f, fl := range flows {
			if r[f] >= fl.Peak*(1-tol) {
				continue
			}
			ok := false
			for _, l := range fl.Links {
				if loads[l] < capacity[l]*(1-tol) {
					continue
				}
				top := true
				for g, gl := range flows {
					if slices.Contains(gl.Links, l) && r[g]/weights[g] > r[f]/weights[f]*(1+tol) {
						top = false
					}
				}
				ok = ok || top
			}
			if !ok {
				t.Fatalf("flow %d has no bottleneck: rates %v, weights %v", f, r, weights)
			}
		}
	}
}

func TestWeightedErrors(t *testing.T) {
	var s Solver
	flows := []Flow{{[]int{0}, 1}}
	for _, w := range [][]float64{nil, {0}, {-1}, {math.Inf(1)}, {math.NaN()}} {
		if _, err := s.WeightedRates(nil, []float64{1}, flows, w); !errors.Is(err, ErrInvalid) {
			t.Errorf("weights %v: %v", w, err)
		}
	}
}
