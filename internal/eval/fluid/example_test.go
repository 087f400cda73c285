package fluid_test

import (
	"fmt"
	"math"

	"github.com/orrery/orrery/internal/eval/fluid"
)

// Two jobs share a 50 Gbps uplink; a third is limited to 10 Gbps by its own
// peak. Max-min fairness gives the capped flow its 10 and splits the rest.
func ExampleSolver_Rates() {
	capacity := []float64{50e9}
	flows := []fluid.Flow{
		{Links: []int{0}, Peak: math.Inf(1)},
		{Links: []int{0}, Peak: math.Inf(1)},
		{Links: []int{0}, Peak: 10e9},
	}
	var s fluid.Solver
	r, err := s.Rates(nil, capacity, flows)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, x := range r {
		fmt.Printf("flow %d: %.0f Gbps\n", i, x/1e9)
	}
	// Output:
	// flow 0: 20 Gbps
	// flow 1: 20 Gbps
	// flow 2: 10 Gbps
}
