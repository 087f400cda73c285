package fluid_test

import (
	"math/rand/v2"
	"testing"

	"github.com/orrery/orrery/internal/eval/fluid"
)

// nicProblem draws fat links and NIC-limited flows, most links cold.
func nicProblem(rng *rand.Rand) ([]float64, []fluid.Flow) {
	capacity := make([]float64, 40)
	for l := range capacity {
		capacity[l] = []float64{100e9, 400e9, 50e9}[rng.IntN(3)]
	}
	fs := make([]fluid.Flow, 80)
	for f := range fs {
		for range 1 + rng.IntN(6) {
			fs[f].Links = append(fs[f].Links, rng.IntN(len(capacity)))
		}
		fs[f].Peak = []float64{25e9, 50e9, 100e9 / 3}[rng.IntN(3)]
	}
	return capacity, fs
}

// Adding and removing flows allocates nothing once the network has held
// as many.
func TestNetworkAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rng := rand.New(rand.NewPCG(23, 24))
	capacity, pool := nicProblem(rng)
	var n fluid.Network
	n.Reset(capacity)
	ids := make([]fluid.FlowID, len(pool))
	for i, f := range pool {
		ids[i] = n.Add(f.Links, f.Peak)
	}
	step := func() {
		for i := range 5 {
			n.Remove(ids[i])
			ids[i] = n.Add(pool[i].Links, pool[i].Peak)
		}
		if err := n.Solve(); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Errorf("%v allocations per step, want 0", a)
	}
}
