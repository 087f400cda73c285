package candidate_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// pulse is a job with a 72 ms iteration that sends 40 Gbps (in 1 Gbps
// units) for its first up ms.
func pulse(up int) profile.Profile {
	d := make([]int32, 72)
	for i := range up {
		d[i] = 40
	}
	return profile.Profile{Period: 72, Demand: d}
}

// Three jobs, three 50 Gbps links, two placements. In the first, jobs 0 and
// 2 share link 0 and cannot fully interleave: 30 + 45 ms of traffic in a
// 72 ms iteration overlap for at least 3 ms, 30 Gbps over capacity, so the
// best score is 1 - 3*30/(72*50) = 0.975; in the second, jobs 0 and 1 share link 0 and interleave
// perfectly once job 1 is delayed by 30 ms.
func ExampleRank() {
	jobs := []profile.Profile{pulse(30), pulse(30), pulse(45)}
	links := []candidate.Link{{Capacity: 50}, {Capacity: 50}, {Capacity: 50}}
	cands := []candidate.Candidate{
		{Paths: [][]int{{0}, {1}, {0}}},
		{Paths: [][]int{{0}, {0}, {2}}},
	}
	r, err := candidate.Rank(context.Background(), jobs, links, cands, candidate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Order {
		o := r.Outcomes[c]
		fmt.Printf("candidate %d: score %.4f, shifts %v ms\n", c, o.Score, o.Shifts)
	}
	fmt.Println("best:", r.Best)
	// Output:
	// candidate 1: score 1.0000, shifts [0 30 0] ms
	// candidate 0: score 0.9750, shifts [0 0 27] ms
	// best: 1
}
