package affinity

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// optimizeIn solves every group of g on its own in the given mode, as
// Algorithm 2 does before Algorithm 1.
func optimizeIn(t testing.TB, w *link.Workspace, g Graph, jobs []profile.Profile, mode link.Mode) []Optimum {
	t.Helper()
	opt := make([]Optimum, len(g.Groups))
	for i, gr := range g.Groups {
		ps := make([]profile.Profile, len(gr.Jobs))
		for k, j := range gr.Jobs {
			ps[k] = jobs[j]
		}
		res, err := w.Search(context.Background(), link.Problem{Jobs: ps, Capacity: gr.Capacity}, link.Options{Mode: mode}, nil)
		if err != nil {
			t.Fatal(err)
		}
		opt[i] = Optimum{Shifts: slices.Clone(res.Shifts), Excess: res.Excess}
	}
	return opt
}

// fits reports whether the jobs' summed peaks fit capacity c.
func fits(jobs []profile.Profile, on []int, c int32) bool {
	var peaks int64
	for _, j := range on {
		peaks += int64(jobs[j].Peak())
	}
	return peaks <= int64(c)
}

// bruteTables returns the brute-force tables of the links of in that
// their jobs' summed peaks exceed: each group's smallest capacity (weak),
// and every distinct capacity of every group (strict).
func bruteTables(in cyclic, g Graph, mode link.Mode) (weak, strict []table) {
	for _, gr := range g.Groups {
		var caps []int32
		for _, li := range gr.Links {
			caps = append(caps, in.links[li].Capacity)
		}
		slices.Sort(caps)
		for k, c := range slices.Compact(caps) {
			if fits(in.jobs, gr.Jobs, c) {
				break
			}
			tb := bruteTable(in.jobs, gr.Jobs, c, mode)
			if k == 0 {
				weak = append(weak, tb)
			}
			strict = append(strict, tb)
		}
	}
	return weak, strict
}

// TestResolveMatchesBruteForce is the loop policy's property test, on
// random affinity graphs with forced cycles and periods small enough to
// try every shift vector: whenever some shift per job puts every shared
// link at its own optimum (links the jobs' summed peaks fit excepted: they
// are at it whatever the shifts), Resolve accepts, and its shifts put every
// link there; when Resolve rejects, no such shifts exist. Where shifts also
// exist that put the links above a group's smallest capacity at their own
// optimum, Resolve's do. In Exact mode "at its optimum" is the link's own
// optimal excess; in Paper mode it is Eq. 6: the shifts are an optimal
// 5-degree rotation plus a common offset. Reoptimize gives the same
// assignment where one exists, and otherwise keeps the placement with a
// degraded group. Every reported excess is the one the final shifts give.
func TestResolveMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		mode    link.Mode
		periods []int
		jobs, n int
	}{
		{link.Exact, []int{2, 3, 4, 6, 8, 12}, 6, 2000},
		{link.Paper, []int{12, 15, 20, 25, 30, 40}, 4, 600},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.mode)))
			var w link.Workspace
			var stats struct{ accepted, rejected, oldRejected, strictOnly int }
			n := tc.n / raceScale
			for it := range n {
				in := randomCyclic(rng, tc.periods, tc.jobs)
				g, err := Build(len(in.jobs), in.links, Resolve)
				if err != nil {
					t.Fatal(err)
				}
				opt := optimizeIn(t, &w, g, in.jobs, tc.mode)
				weak, strict := bruteTables(in, g, tc.mode)
				for _, tb := range weak {
					gi := slices.IndexFunc(g.Groups, func(gr Group) bool { return slices.Equal(gr.Jobs, tb.on) })
					if tb.opt != opt[gi].Excess {
						t.Fatalf("case %d: link search optimum %d, brute force %d", it, opt[gi].Excess, tb.opt)
					}
				}
				want, wantStrict := bruteConsistent(in.jobs, weak), bruteConsistent(in.jobs, strict)
				lopt := link.Options{Mode: tc.mode}
				a, err := Assign(context.Background(), &w, g, in.jobs, opt, lopt, Resolve)
				if _, _, oerr := oldAssign(context.Background(), &w, g, in.jobs, opt, lopt, Resolve); oerr != nil {
					stats.oldRejected++
				}
				if err != nil {
					var ie *InconsistentError
					if !errors.As(err, &ie) || ie.Status != link.Optimal {
						t.Fatalf("case %d: %v", it, err)
					}
					if want != nil {
						t.Fatalf("case %d: Resolve rejected (%v), but shifts %v put every link at its optimum\n%+v", it, err, want, in)
					}
					stats.rejected++
				} else {
					stats.accepted++
					if want == nil {
						t.Fatalf("case %d: Resolve accepted shifts %v, brute force finds none consistent", it, a.Shifts)
					}
					tables := weak
					if wantStrict != nil {
						tables = strict
					} else if len(strict) > len(weak) {
						stats.strictOnly++
					}
					for _, tb := range tables {
						if !tb.holds(a.Shifts) {
							t.Fatalf("case %d: shifts %v leave jobs %v off their link's optimum (brute force: %v)\n%+v", it, a.Shifts, tb.on, wantStrict, in)
						}
					}
					checkReported(t, it, in, g, a, tc.mode)
				}
				ra, err := Assign(context.Background(), &w, g, in.jobs, opt, lopt, Reoptimize)
				if err != nil {
					t.Fatalf("case %d: Reoptimize: %v", it, err)
				}
				degraded := slices.ContainsFunc(ra.Outcomes, func(o Outcome) bool { return o.Degraded })
				if want != nil && (degraded || !slices.Equal(ra.Shifts, a.Shifts)) {
					t.Fatalf("case %d: Reoptimize %v degraded %v, Resolve %v", it, ra.Shifts, degraded, a.Shifts)
				}
				if want == nil && !degraded {
					t.Fatalf("case %d: Reoptimize kept an inconsistent cycle without a degraded group", it)
				}
				checkReported(t, it, in, g, ra, tc.mode)
			}
			t.Logf("%d graphs: Resolve accepted %d, rejected %d (the earlier Resolve rejected %d); %d accepted without their larger capacities' optima", n, stats.accepted, stats.rejected, stats.oldRejected, stats.strictOnly)
			if stats.rejected == 0 || stats.oldRejected <= stats.rejected {
				t.Fatalf("the generator does not exercise the search: %+v", stats)
			}
		})
	}
}

// checkReported checks every link's reported excess against the final
// shifts, and in Exact mode that fitting links report none.
func checkReported(t *testing.T, it int, in cyclic, g Graph, a Assignment, mode link.Mode) {
	t.Helper()
	for gi, gr := range g.Groups {
		for k, li := range gr.Links {
			c := in.links[li].Capacity
			want := excessAt(in.jobs, gr.Jobs, a.Shifts, c)
			if mode == link.Paper {
				want = sampledExcess(in.jobs, gr.Jobs, a.Shifts, c)
			}
			if got := a.Outcomes[gi].Excess[k]; got != want {
				t.Fatalf("case %d link %d: reported excess %d, the shifts %v give %d", it, li, got, a.Shifts, want)
			}
			if fits(in.jobs, gr.Jobs, c) && want != 0 {
				t.Fatalf("case %d link %d: fits, excess %d", it, li, want)
			}
		}
	}
}

// TestResolveBudget: the same graph gives the same assignment twice, and
// a search stopped by its budget says so.
func TestResolveBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var w link.Workspace
	stopped := 0
	for range 300 {
		in := randomCyclic(rng, []int{6, 8, 12, 24}, 7)
		g, err := Build(len(in.jobs), in.links, Resolve)
		if err != nil {
			t.Fatal(err)
		}
		opt := optimizeIn(t, &w, g, in.jobs, link.Exact)
		full, ferr := Assign(context.Background(), &w, g, in.jobs, opt, link.Options{}, Resolve)
		again, aerr := Assign(context.Background(), &w, g, in.jobs, opt, link.Options{}, Resolve)
		if diff := cmp.Diff(full, again); diff != "" || (ferr == nil) != (aerr == nil) {
			t.Fatalf("two runs differ: %s %v %v", diff, ferr, aerr)
		}
		for _, policy := range []Policy{Resolve, Reoptimize} {
			a, err := Assign(context.Background(), &w, g, in.jobs, opt, link.Options{Budget: 50}, policy)
			var ie *InconsistentError
			switch {
			case errors.As(err, &ie):
				if ie.Status == link.Budget {
					stopped++
				}
				if ie.Status == link.Optimal && ferr == nil {
					t.Fatalf("proven inconsistent on a budget, consistent without: %v", err)
				}
			case err != nil:
				t.Fatal(err)
			case a.Status == link.Budget:
				stopped++
				if policy != Reoptimize || !slices.ContainsFunc(a.Outcomes, func(o Outcome) bool { return o.Degraded && o.Status == link.Budget }) {
					t.Fatalf("%v: status budget without a degraded group: %+v", policy, a)
				}
			}
		}
	}
	if stopped == 0 {
		t.Fatal("the budget never stopped a search")
	}
}
