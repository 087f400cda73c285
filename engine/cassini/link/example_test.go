package link_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// pulse is a job of period t ticks sending bw units during its first up ticks.
func pulse(t, up int, bw int32) profile.Profile {
	d := make([]int32, t)
	for i := range up {
		d[i] = bw
	}
	return profile.Profile{Period: t, Demand: d}
}

// Test vector D: two jobs with a 72 ms iteration (one tick per 5 degrees)
// send 40 Gbps for 30 ms on a 50 Gbps link. Started together they overlap
// (score 0.75); delaying the second by 30 ms interleaves them (score 1).
// Every delay in 30..42 ms is optimal; the smallest wins the tie.
func ExampleWorkspace_Search() {
	jobs := []profile.Profile{pulse(72, 30, 40), pulse(72, 30, 40)}
	var w link.Workspace
	for _, mode := range []link.Mode{link.Exact, link.Paper} {
		res, err := w.Search(context.Background(), link.Problem{Jobs: jobs, Capacity: 50}, link.Options{Mode: mode}, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: unshifted %.2f, score %.2f (%v over %d points), shifts %v ticks\n",
			mode, res.Unshifted, res.Score, res.Status, res.Points, res.Shifts)
	}
	// Output:
	// exact: unshifted 0.75, score 1.00 (optimal over 72 points), shifts [0 30] ticks
	// paper: unshifted 0.75, score 1.00 (optimal over 72 points), shifts [0 30] ticks
}

// Evaluate scores given shifts: at a 20 ms delay the pulses still overlap
// for 10 ms, 30 units over capacity each tick.
func ExampleWorkspace_Evaluate() {
	jobs := []profile.Profile{pulse(72, 30, 40), pulse(72, 30, 40)}
	var w link.Workspace
	excess, points, err := w.Evaluate(link.Problem{Jobs: jobs, Capacity: 50}, link.Options{}, []int{0, 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("excess %d unit-ticks over %d points: score %.4f\n", excess, points, 1-float64(excess)/float64(points*50))
	// Output:
	// excess 300 unit-ticks over 72 points: score 0.9167
}
