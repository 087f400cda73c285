package affinity

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// loopSet is a generated set of affinity graphs with forced cycles, each
// with its groups' own optima.
type loopSet struct {
	jobs  [][]profile.Profile
	links [][]Link
	g     []Graph
	opt   [][]Optimum
}

func newLoopSet(b *testing.B, n int, periods []int, maxJobs int, mode link.Mode, seed uint64) loopSet {
	rng := rand.New(rand.NewPCG(seed, 1))
	var w link.Workspace
	var s loopSet
	for range n {
		in := randomCyclic(rng, periods, maxJobs)
		g, err := Build(len(in.jobs), in.links, Resolve)
		if err != nil {
			b.Fatal(err)
		}
		s.jobs, s.links, s.g = append(s.jobs, in.jobs), append(s.links, in.links), append(s.g, g)
		s.opt = append(s.opt, optimizeIn(b, &w, g, in.jobs, mode))
	}
	return s
}

// BenchmarkLoops measures, on 1000 random affinity graphs with forced
// cycles per set, how many placements the paper's loop rule, the earlier
// Resolve (oldAssign) and Resolve keep, and the work each spends: pair
// evaluations (evals/op) and time, all 1000 graphs per op. The graphs' own
// link optima are computed once, outside the timing; "links" times those
// searches, for scale.
//
//	go test ./engine/cassini/affinity -run '^$' -bench Loops -benchtime 20x
func BenchmarkLoops(b *testing.B) {
	for _, set := range []struct {
		name    string
		mode    link.Mode
		periods []int
		jobs    int
	}{
		{"exact", link.Exact, []int{2, 3, 4, 6, 8, 12}, 6},
		{"paper", link.Paper, []int{12, 15, 20, 25, 30, 40}, 4},
		{"exact-ms", link.Exact, []int{60, 90, 120, 150, 180, 240}, 7},
	} {
		s := newLoopSet(b, 1000, set.periods, set.jobs, set.mode, 42)
		lopt := link.Options{Mode: set.mode}
		paper := 0
		for i := range s.g {
			if _, err := Build(len(s.jobs[i]), s.links[i], Paper); err == nil {
				paper++
			} else if !errors.Is(err, ErrLoop) {
				b.Fatal(err)
			}
		}
		// The groups' own link searches, which Algorithm 2 runs before
		// Algorithm 1: the scale the loop handling's cost compares with.
		b.Run(set.name+"/links", func(b *testing.B) {
			var w link.Workspace
			for b.Loop() {
				for i, g := range s.g {
					optimizeIn(b, &w, g, s.jobs[i], set.mode)
				}
			}
		})
		for _, impl := range []string{"old", "new"} {
			b.Run(set.name+"/"+impl, func(b *testing.B) {
				var w link.Workspace
				var kept int
				var evals int64
				for b.Loop() {
					kept, evals = 0, 0
					for i, g := range s.g {
						var err error
						var e int64
						if impl == "old" {
							_, e, err = oldAssign(context.Background(), &w, g, s.jobs[i], s.opt[i], lopt, Resolve)
						} else {
							var a Assignment
							a, err = Assign(context.Background(), &w, g, s.jobs[i], s.opt[i], lopt, Resolve)
							e = a.Evaluated
							var ie *InconsistentError
							if errors.As(err, &ie) && ie.Status != link.Optimal {
								b.Fatalf("graph %d: the search stopped: %v", i, err)
							}
						}
						evals += e
						if err == nil {
							kept++
						} else if !errors.Is(err, ErrInconsistent) {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(kept), "kept/op")
				b.ReportMetric(float64(paper), "paper-kept/op")
				b.ReportMetric(float64(evals), "evals/op")
			})
		}
	}
}
