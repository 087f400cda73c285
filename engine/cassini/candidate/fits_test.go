package candidate

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// rankBoth ranks an instance as Rank does and with every fitting link
// searched, and fails unless the two rankings are the same in every field
// but Fit.
func rankBoth(t *testing.T, name string, jobs []profile.Profile, links []Link, cands []Candidate, opt Options) Ranking {
	t.Helper()
	var fast, slow Workspace
	slow.searchFits = true
	got, err := fast.Rank(context.Background(), jobs, links, cands, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, err := slow.Rank(context.Background(), jobs, links, cands, opt)
	if err != nil {
		t.Fatalf("%s: searched: %v", name, err)
	}
	if want.Fit != 0 {
		t.Fatalf("%s: %d problems answered without a search, want none", name, want.Fit)
	}
	fit := got.Fit
	got.Fit = 0
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == nil && b == nil || a != nil && b != nil && a.Error() == b.Error() })); diff != "" {
		t.Fatalf("%s: ranking with fitting links answered without a search differs (-searched +answered):\n%s", name, diff)
	}
	got.Fit = fit
	return got
}

// TestFitsAsSearched: a link whose jobs' summed peaks fit its capacity is
// answered without a search (excess 0, every job at shift 0), and the
// ranking is exactly the one that searches it: scores, statuses, shifts,
// order, discarded candidates and their reasons, with per-link demands,
// rounded periods, both aggregates, both modes, every loop policy and
// either number of workers.
func TestFitsAsSearched(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	fit, total := 0, 0
	for it := range 200 {
		in := randomInstance(rng)
		if it%4 == 1 {
			// Per-link demands: a job's demand scaled on some of its links.
			for c := range in.cands {
				cd := &in.cands[c]
				cd.Profiles = make([][]profile.Profile, len(cd.Paths))
				for j, path := range cd.Paths {
					if rng.IntN(2) == 0 {
						continue
					}
					cd.Profiles[j] = make([]profile.Profile, len(path))
					for k := range path {
						if rng.IntN(2) == 0 {
							d := make([]int32, in.jobs[j].Period)
							for x, v := range in.jobs[j].Demand {
								d[x] = v * int32(1+rng.IntN(3))
							}
							cd.Profiles[j][k] = profile.Profile{Period: in.jobs[j].Period, Demand: d}
						}
					}
				}
			}
		}
		opt := Options{Aggregate: Aggregate(it % 2), Loops: []affinity.Policy{affinity.Resolve, affinity.Paper, affinity.Reoptimize}[it%3], Workers: 1 + it%2}
		if it%25 == 2 {
			opt.Link.Mode = link.Paper
		}
		r := rankBoth(t, "random instance", in.jobs, in.links, in.cands, opt)
		fit, total = fit+r.Fit, total+r.Searches
	}
	for seed := range uint64(4) {
		jobs, links, cands := paperInstance(rand.New(rand.NewPCG(seed, 2)), 20, 10)
		r := rankBoth(t, "paper fabric", jobs, links, cands, Options{Link: link.Options{Circle: circle.Options{Round: true}}})
		fit, total = fit+r.Fit, total+r.Searches
	}
	t.Logf("%d of %d problems fit", fit, total)
	if fit == 0 || fit == total {
		t.Fatalf("%d of %d problems fit their links: the test needs both kinds", fit, total)
	}
}
