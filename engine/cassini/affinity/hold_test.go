package affinity

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// This file checks AssignFixed against brute force over every shift vector
// of the free jobs, sharing no code with it or with package link.

// demandOn returns job j's demand on link l.
func demandOn(jobs []profile.Profile, l Link, k int) profile.Profile {
	if l.Profiles != nil {
		return l.Profiles[k]
	}
	return jobs[l.Jobs[k]]
}

// linkExcess is link l's excess at the job shifts s (indexed by job) on its
// materialized unified circle, and that circle's perimeter.
func linkExcess(jobs []profile.Profile, l Link, s []int) (int64, int) {
	p := lcmOf(jobs, l.Jobs)
	var e int64
	for a := range p {
		var sum int64
		for k, j := range l.Jobs {
			d := demandOn(jobs, l, k)
			sum += int64(d.Demand[circle.Mod(a-s[j], d.Period)])
		}
		e += max(sum-int64(l.Capacity), 0)
	}
	return e, p
}

// objective is one shift vector's value: the worst link's excess over its
// points times capacity, and their sum; floats screen, fractions decide.
type objective struct {
	worst, sum   float64
	rworst, rsum *big.Rat
}

func valueOf(jobs []profile.Profile, links []Link, s []int) objective {
	var o objective
	o.rworst, o.rsum = new(big.Rat), new(big.Rat)
	for _, l := range links {
		e, p := linkExcess(jobs, l, s)
		x := big.NewRat(e, int64(p)*int64(l.Capacity))
		o.rsum.Add(o.rsum, x)
		if x.Cmp(o.rworst) > 0 {
			o.rworst = x
		}
		f := float64(e) / (float64(p) * float64(l.Capacity))
		o.sum += f
		o.worst = max(o.worst, f)
	}
	return o
}

// compare orders objectives: -1 if a is better (smaller) than b.
func compare(a, b objective, obj Objective) int {
	if obj == WorstScore {
		if c := a.rworst.Cmp(b.rworst); c != 0 {
			return c
		}
	}
	return a.rsum.Cmp(b.rsum)
}

// bruteHeld returns the lexicographically smallest shift vector of the free
// jobs (the fixed ones at theirs) that maximizes the objective, trying
// every shift of every free job some link's summed peaks can make exceed
// it (any other free job is at 0: its shift changes nothing).
func bruteHeld(jobs []profile.Profile, links []Link, fixed []int, obj Objective) ([]int, objective) {
	s := make([]int, len(jobs))
	var free, mods []int
	matters := make([]bool, len(jobs))
	for _, l := range links {
		var peaks int64
		for k := range l.Jobs {
			peaks += int64(demandOn(jobs, l, k).Peak())
		}
		if peaks > int64(l.Capacity) {
			for _, j := range l.Jobs {
				matters[j] = true
			}
		}
	}
	for j, f := range fixed {
		if f >= 0 {
			s[j] = circle.Mod(f, jobs[j].Period)
		} else if matters[j] {
			free = append(free, j)
			mods = append(mods, jobs[j].Period)
		}
	}
	var best []int
	var bestV objective
	odometer(mods, func(v []int) bool {
		for i, j := range free {
			s[j] = v[i]
		}
		o := valueOf(jobs, links, s)
		if best == nil || compare(o, bestV, obj) < 0 {
			best, bestV = slices.Clone(s), o
		}
		return true
	})
	if best == nil {
		best, bestV = s, valueOf(jobs, links, s)
	}
	return best, bestV
}

// bruteLeast returns link l's least excess over every shift of its jobs
// that are free (fixed[j] < 0, or every job if all is set), the others at
// s.
func bruteLeast(jobs []profile.Profile, l Link, s []int, fixed []int, all bool) int64 {
	s = slices.Clone(s)
	var free, mods []int
	for k, j := range l.Jobs {
		if all && k == 0 {
			continue // a common delay changes nothing
		}
		if all || fixed[j] < 0 {
			free = append(free, j)
			mods = append(mods, jobs[j].Period)
		}
	}
	least := int64(-1)
	odometer(mods, func(v []int) bool {
		for i, j := range free {
			s[j] = v[i]
		}
		if e, _ := linkExcess(jobs, l, s); least < 0 || e < least {
			least = e
		}
		return true
	})
	return least
}

// withProfiles gives some links demands of their own: each job's scaled
// down, as an all-to-all loads a server link less than an uplink.
func withProfiles(rng *rand.Rand, in cyclic) cyclic {
	for i := range in.links {
		if rng.IntN(4) != 0 {
			continue
		}
		l := &in.links[i]
		l.Profiles = make([]profile.Profile, len(l.Jobs))
		for k, j := range l.Jobs {
			d := slices.Clone(in.jobs[j].Demand)
			f := int32(50 + rng.IntN(51))
			for x := range d {
				d[x] = d[x] * f / 100
			}
			l.Profiles[k] = profile.Profile{Period: in.jobs[j].Period, Demand: d}
		}
	}
	return in
}

// heldOptima returns what a ranker would hand AssignFixed: each group's
// best with its fixed jobs held and its own optimum, by link searches.
func heldOptima(t *testing.T, w *link.Workspace, g Graph, jobs []profile.Profile, fixed []int) (best, own []Optimum) {
	for _, gr := range g.Groups {
		ps := make([]profile.Profile, len(gr.Jobs))
		fx := make([]int, len(gr.Jobs))
		for k, j := range gr.Jobs {
			ps[k] = gr.profile(k, jobs[j])
			fx[k] = fixed[j]
		}
		res, err := w.Search(context.Background(), link.Problem{Jobs: ps, Capacity: gr.Capacity, Fixed: fx}, link.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		best = append(best, Optimum{Shifts: slices.Clone(res.Shifts), Excess: res.Excess})
		res, err = w.Search(context.Background(), link.Problem{Jobs: ps, Capacity: gr.Capacity}, link.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		own = append(own, Optimum{Shifts: slices.Clone(res.Shifts), Excess: res.Excess})
	}
	return best, own
}

// TestAssignFixedMatchesBruteForce is AssignFixed's property test: on
// random affinity graphs with cycles, some links' demands their own, and
// random subsets of jobs fixed at random shifts, the shifts are the
// lexicographically smallest vector of free shifts that maximizes the
// mean (or the worst, then the mean) link score over every such vector,
// the fixed jobs keep theirs, every reported excess is the one the shifts
// give, every Target is the link's least excess with the fixed jobs held,
// and every Optimum its least with every job free. Handing it the groups'
// searches changes nothing.
func TestAssignFixedMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 41))
	var w link.Workspace
	var stats struct{ cases, consistent, held, multi int }
	for it := 0; stats.cases < 700/raceScale; it++ {
		in := withProfiles(rng, randomCyclic(rng, []int{2, 3, 4, 6, 8, 12}, 6))
		fixed := make([]int, len(in.jobs))
		size := 1
		for j := range fixed {
			fixed[j] = -1
			if rng.IntN(2) == 0 {
				fixed[j] = rng.IntN(2 * in.jobs[j].Period)
			} else {
				size *= in.jobs[j].Period
			}
		}
		if size > 3000 {
			continue
		}
		g, err := Build(len(in.jobs), in.links, Resolve)
		if err != nil {
			t.Fatal(err)
		}
		stats.cases++
		obj := Objective(rng.IntN(2))
		want, wantV := bruteHeld(in.jobs, in.links, fixed, obj)
		a, err := AssignFixed(context.Background(), &w, g, in.jobs, Fixed{Shifts: fixed, Objective: obj, Optima: true}, link.Options{})
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		if a.Status != link.Optimal {
			t.Fatalf("case %d: status %v", it, a.Status)
		}
		if !slices.Equal(a.Shifts, want) {
			got := valueOf(in.jobs, in.links, a.Shifts)
			t.Fatalf("case %d (%v, fixed %v): shifts %v (mean %v, worst %v), brute force %v (mean %v, worst %v)\n%+v",
				it, obj, fixed, a.Shifts, got.rsum, got.rworst, want, wantV.rsum, wantV.rworst, in)
		}
		allAtTarget, anyHeld, multi := true, false, false
		for gi, gr := range g.Groups {
			nfree := 0
			for _, j := range gr.Jobs {
				if fixed[j] < 0 {
					nfree++
				}
			}
			multi = multi || nfree >= 2 && !fits(in.jobs, gr.Jobs, gr.Capacity)
			oc := a.Outcomes[gi]
			for k, li := range gr.Links {
				l := in.links[li]
				e, _ := linkExcess(in.jobs, l, a.Shifts)
				target := bruteLeast(in.jobs, l, a.Shifts, fixed, false)
				own := bruteLeast(in.jobs, l, a.Shifts, fixed, true)
				if oc.Excess[k] != e || oc.Target[k] != target || oc.Optimum[k] != own {
					t.Fatalf("case %d group %d link %d: excess %d target %d optimum %d, brute force %d, %d, %d", it, gi, li, oc.Excess[k], oc.Target[k], oc.Optimum[k], e, target, own)
				}
				allAtTarget = allAtTarget && e == target
				anyHeld = anyHeld || e > own
			}
		}
		if allAtTarget {
			stats.consistent++
		}
		if anyHeld {
			stats.held++
		}
		if multi && !allAtTarget {
			stats.multi++
		}
		best, own := heldOptima(t, &w, g, in.jobs, fixed)
		b, err := AssignFixed(context.Background(), &w, g, in.jobs, Fixed{Shifts: fixed, Objective: obj, Optima: true, Best: best, Own: own}, link.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b.Evaluated = a.Evaluated
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("case %d: the groups' searches handed in change the result (-own +handed):\n%s", it, diff)
		}
	}
	t.Logf("%d cases: %d with every link at its target, %d where the fixed shifts cost some link its own optimum, %d trading links of two or more free jobs", stats.cases, stats.consistent, stats.held, stats.multi)
	if stats.consistent == 0 || stats.held == 0 || stats.multi == 0 || stats.consistent == stats.cases {
		t.Fatal("the cases do not cover both consistent and inconsistent graphs")
	}
}

// TestAssignFixedNoFixed: with every job free, AssignFixed finds what
// Assign finds wherever Assign keeps every member link at its own optimum
// (at every capacity): the same excess on every link (the shifts may
// differ: the tie rules do). Where Assign holds only the smallest
// capacities, AssignFixed's mean is at least as good.
func TestAssignFixedNoFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	var w link.Workspace
	compared := 0
	for range 300 / raceScale {
		in := randomCyclic(rng, []int{2, 3, 4, 6, 8, 12}, 5)
		g, err := Build(len(in.jobs), in.links, Resolve)
		if err != nil {
			t.Fatal(err)
		}
		free := make([]int, len(in.jobs))
		for j := range free {
			free[j] = -1
		}
		a, err := Assign(context.Background(), &w, g, in.jobs, optimizeIn(t, &w, g, in.jobs, link.Exact), link.Options{}, Resolve)
		if errors.Is(err, ErrInconsistent) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		h, err := AssignFixed(context.Background(), &w, g, in.jobs, Fixed{Shifts: free}, link.Options{})
		if err != nil {
			t.Fatal(err)
		}
		strict := true
		for gi, gr := range g.Groups {
			for k, li := range gr.Links {
				strict = strict && a.Outcomes[gi].Excess[k] == bruteLeast(in.jobs, in.links[li], a.Shifts, free, true)
			}
		}
		if !strict {
			if compare(valueOf(in.jobs, in.links, h.Shifts), valueOf(in.jobs, in.links, a.Shifts), MeanScore) > 0 {
				t.Fatalf("AssignFixed's shifts %v score below Assign's %v", h.Shifts, a.Shifts)
			}
			continue
		}
		compared++
		for gi := range g.Groups {
			if !slices.Equal(a.Outcomes[gi].Excess, h.Outcomes[gi].Excess) {
				t.Fatalf("group %d: Assign %v, AssignFixed %v", gi, a.Outcomes[gi].Excess, h.Outcomes[gi].Excess)
			}
		}
	}
	if compared == 0 {
		t.Fatal("nothing compared")
	}
}

// TestAssignFixedBudget: a search cut short by its budget or the context
// returns its best, says so, and never moves a fixed job.
func TestAssignFixedBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var w link.Workspace
	stopped := 0
	for range 200 {
		in := randomCyclic(rng, []int{6, 8, 12}, 7)
		g, err := Build(len(in.jobs), in.links, Resolve)
		if err != nil {
			t.Fatal(err)
		}
		fixed := make([]int, len(in.jobs))
		for j := range fixed {
			fixed[j] = -1
		}
		fixed[0] = 5
		a, err := AssignFixed(context.Background(), &w, g, in.jobs, Fixed{Shifts: fixed}, link.Options{Budget: 20})
		if err != nil {
			t.Fatal(err)
		}
		if a.Status == link.Budget {
			stopped++
		}
		if a.Shifts[0] != 5%in.jobs[0].Period {
			t.Fatalf("fixed job moved: %v", a.Shifts)
		}
		for gi, gr := range g.Groups {
			for k, li := range gr.Links {
				if e, _ := linkExcess(in.jobs, in.links[li], a.Shifts); e != a.Outcomes[gi].Excess[k] {
					t.Fatalf("group %d link %d: reported %d, shifts give %d", gi, li, a.Outcomes[gi].Excess[k], e)
				}
			}
		}
	}
	if stopped == 0 {
		t.Fatal("no search stopped at the budget: the test checks nothing")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := randomCyclic(rng, []int{6, 8, 12}, 7)
	g, _ := Build(len(in.jobs), in.links, Resolve)
	free := make([]int, len(in.jobs))
	for j := range free {
		free[j] = -1
	}
	if _, err := AssignFixed(ctx, &w, g, in.jobs, Fixed{Shifts: free}, link.Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestAssignFixedBadInput(t *testing.T) {
	jobs := []profile.Profile{pulse(4, 2, 30), pulse(4, 2, 30)}
	g, err := Build(2, []Link{{Jobs: []int{0, 1}, Capacity: 40}}, Resolve)
	if err != nil {
		t.Fatal(err)
	}
	var w link.Workspace
	for _, tc := range []struct {
		f    Fixed
		lopt link.Options
	}{
		{Fixed{Shifts: []int{0}}, link.Options{}},
		{Fixed{Shifts: []int{0, -2}}, link.Options{}},
		{Fixed{Shifts: []int{0, -1}, Objective: 7}, link.Options{}},
		{Fixed{Shifts: []int{0, -1}}, link.Options{Mode: link.Paper}},
		{Fixed{Shifts: []int{0, -1}, Best: []Optimum{}}, link.Options{}},
		{Fixed{Shifts: []int{0, -1}, Own: []Optimum{{Shifts: []int{0}}}}, link.Options{}},
	} {
		if _, err := AssignFixed(context.Background(), &w, g, jobs, tc.f, tc.lopt); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err %v, want ErrInvalid", tc.f, err)
		}
	}
}
