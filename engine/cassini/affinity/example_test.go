package affinity_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// Three jobs of a 72 ms iteration each send 40 Gbps for 24 ms; every pair
// shares a 50 Gbps link, a cycle. On each link any delay of 24 to 48 ms
// between its two jobs interleaves them, and each link's search reports
// the smallest, 24 ms, so the walk of Algorithm 1 delays jobs 1 and 2 both
// by 24 ms, overlapping them on the link they share. Resolve searches the
// links' tied optima and finds delays 0, 24 and 48 ms, at which every link
// scores 1.
func ExampleAssign() {
	pulse := func() profile.Profile {
		d := make([]int32, 72)
		for i := range 24 {
			d[i] = 40
		}
		return profile.Profile{Period: 72, Demand: d}
	}
	jobs := []profile.Profile{pulse(), pulse(), pulse()}
	g, err := affinity.Build(3, []affinity.Link{
		{Jobs: []int{0, 1}, Capacity: 50},
		{Jobs: []int{1, 2}, Capacity: 50},
		{Jobs: []int{0, 2}, Capacity: 50},
	}, affinity.Resolve)
	if err != nil {
		fmt.Println(err)
		return
	}
	var w link.Workspace
	opt := make([]affinity.Optimum, len(g.Groups))
	for i, gr := range g.Groups {
		res, err := w.Search(context.Background(), link.Problem{Jobs: []profile.Profile{jobs[gr.Jobs[0]], jobs[gr.Jobs[1]]}, Capacity: gr.Capacity}, link.Options{}, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		opt[i] = affinity.Optimum{Shifts: append([]int(nil), res.Shifts...), Excess: res.Excess}
		fmt.Printf("link %v: its own optimum delays job %d by %d ms\n", gr.Jobs, gr.Jobs[1], res.Shifts[1])
	}
	a, err := affinity.Assign(context.Background(), &w, g, jobs, opt, link.Options{}, affinity.Resolve)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("shifts:", a.Shifts)
	for i, oc := range a.Outcomes {
		fmt.Printf("link %v: score %.2f\n", g.Groups[i].Jobs, oc.Scores[0])
	}
	// Output:
	// link [0 1]: its own optimum delays job 1 by 24 ms
	// link [1 2]: its own optimum delays job 2 by 24 ms
	// link [0 2]: its own optimum delays job 2 by 24 ms
	// shifts: [0 24 48]
	// link [0 1]: score 1.00
	// link [1 2]: score 1.00
	// link [0 2]: score 1.00
}
