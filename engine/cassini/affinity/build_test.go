package affinity

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// refBuild is Build as it was written first: a stable sort of the links
// by their jobs, a merge into the last groups of the same jobs, then the
// groups sorted by their first link. Build must give the same graph.
func refBuild(jobs int, links []Link, policy Policy) (Graph, error) {
	if err := check(jobs, links, policy); err != nil {
		return Graph{}, err
	}
	g := Graph{Links: links, Jobs: jobs}
	order := make([]int, len(links))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return slices.Compare(links[a].Jobs, links[b].Jobs) })
	for _, i := range order {
		l := links[i]
		// Links with the same jobs are adjacent; merge with the one of the
		// same demands, if any.
		k := len(g.Groups) - 1
		for ; k >= 0 && slices.Equal(g.Groups[k].Jobs, l.Jobs); k-- {
			if sameDemand(g.Groups[k].Profiles, l.Profiles) {
				break
			}
		}
		if k >= 0 && slices.Equal(g.Groups[k].Jobs, l.Jobs) {
			gr := &g.Groups[k]
			gr.Links = append(gr.Links, i)
			gr.Capacity = min(gr.Capacity, l.Capacity)
			continue
		}
		g.Groups = append(g.Groups, Group{Jobs: l.Jobs, Capacity: l.Capacity, Links: []int{i}, Profiles: l.Profiles})
	}
	// Process groups in the order of their first link, as given.
	slices.SortFunc(g.Groups, func(a, b Group) int { return cmp.Compare(a.Links[0], b.Links[0]) })
	return g, nil
}

// TestBuildAsReference: Build merges links as refBuild does, on random
// links with repeated job sets, capacities and per-link demands.
func TestBuildAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	demand := func(v int32) profile.Profile { return profile.Profile{Period: 2, Demand: []int32{v, 0}} }
	for it := range 500 {
		jobs := 2 + rng.IntN(5)
		var links []Link
		for range rng.IntN(12) {
			var on []int
			for j := range jobs {
				if rng.IntN(2) == 0 {
					on = append(on, j)
				}
			}
			if len(on) < 2 {
				on = []int{0, jobs - 1}
			}
			l := Link{Jobs: on, Capacity: int32(1 + rng.IntN(3))}
			if rng.IntN(3) == 0 {
				for range on {
					l.Profiles = append(l.Profiles, demand(int32(1+rng.IntN(2))))
				}
			}
			links = append(links, l)
		}
		policy := Policy(it % 3)
		got, err := Build(jobs, links, policy)
		want, werr := refBuild(jobs, links, policy)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("case %d: error %v, reference %v", it, err, werr)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("case %d: graph differs (-reference +Build):\n%s", it, diff)
		}
	}
}
