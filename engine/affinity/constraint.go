package affinity

import (
	"slices"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
)

// constraint is one link capacity of a group that its jobs' summed peaks
// exceed: an assignment must keep the link at its own optimum there.
type constraint struct {
	group    int
	jobs     []int // the group's jobs
	capacity int32
	target   int64 // the excess of the link's own optimization
	strict   bool  // a member link above the group's smallest capacity

	// Set by prepare, for the search.
	ready   bool
	trivial bool          // every shift is optimal: constrains nothing
	mod     int           // two jobs: the gcd of their periods
	rel     []bool        // two jobs: rel[(t_b - t_a) mod mod], at the optimum
	chk     *link.Checker // three or more jobs
	mods    []int         // per job of the constraint: its shift matters modulo this
}

// constrain lists every group's constraints: its smallest capacity (the
// one Build optimized, at opt's excess) and each larger capacity among its
// member links (optimized here), skipping those the jobs' summed peaks
// fit. It then checks each at the walk's shifts.
func (a *assigner) constrain() error {
	a.consOf = make([][]int, len(a.g.Groups))
	var caps []int32
	for gi, gr := range a.g.Groups {
		var peaks int64
		for _, j := range gr.Jobs {
			peaks += int64(a.jobs[j].Peak())
		}
		caps = caps[:0]
		for _, li := range gr.Links {
			caps = append(caps, a.g.Links[li].Capacity)
		}
		slices.Sort(caps)
		caps = slices.Compact(caps)
		for k, c := range caps {
			if peaks <= int64(c) {
				break // never exceeded at any shift, nor at larger capacities
			}
			target := a.opt[gi].Excess
			if k > 0 {
				ps := make([]profile.Profile, len(gr.Jobs))
				for i, j := range gr.Jobs {
					ps[i] = a.jobs[j]
				}
				res, err := a.w.Search(a.effort.ctx, link.Problem{Jobs: ps, Capacity: c}, a.lopt, nil)
				if err != nil {
					return err
				}
				a.extra += res.Evaluated
				target = res.Excess
			}
			a.consOf[gi] = append(a.consOf[gi], len(a.cons))
			a.cons = append(a.cons, &constraint{group: gi, jobs: gr.Jobs, capacity: c, target: target, strict: k > 0})
		}
	}
	a.holds1 = make([]bool, len(a.cons))
	for i, c := range a.cons {
		ok, err := a.holds(c, a.walked)
		if err != nil {
			return err
		}
		a.holds1[i] = ok
	}
	return nil
}

// component is a connected set of constraining groups: its jobs in walk
// order and its constraints.
type component struct {
	jobs []int
	cons []int // indices into assigner.cons
	all  []*constraint
}

// weak returns the component's constraints at their groups' smallest
// capacities.
func (c component) weak() []int {
	var w []int
	for _, i := range c.cons {
		if !c.all[i].strict {
			w = append(w, i)
		}
	}
	return w
}

// components splits the constraints into connected sets, ordered by their
// first job in the walk.
func (a *assigner) components() []component {
	root := unionFind(a.g.Jobs, a.cons)
	index := map[int]int{}
	var comps []component
	for _, j := range a.order {
		r := root(j)
		if _, ok := index[r]; ok || !a.constrained(j) {
			continue
		}
		index[r] = len(comps)
		comps = append(comps, component{all: a.cons})
	}
	for _, j := range a.order {
		if a.constrained(j) {
			c := &comps[index[root(j)]]
			c.jobs = append(c.jobs, j)
		}
	}
	for i, c := range a.cons {
		comp := &comps[index[root(c.jobs[0])]]
		comp.cons = append(comp.cons, i)
	}
	return comps
}

// constrained reports whether job j is in some constraint.
func (a *assigner) constrained(j int) bool {
	for _, gi := range a.byJob[j] {
		if len(a.consOf[gi]) > 0 {
			return true
		}
	}
	return false
}

// unionFind joins the jobs of each constraint and returns the root finder.
func unionFind(n int, cons []*constraint) func(int) int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, c := range cons {
		for _, j := range c.jobs[1:] {
			if ra, rb := find(j), find(c.jobs[0]); ra != rb {
				parent[max(ra, rb)] = min(ra, rb)
			}
		}
	}
	return find
}

// holds reports whether constraint c holds at the job shifts t.
func (a *assigner) holds(c *constraint, t []int) (bool, error) {
	chk := c.chk
	if chk == nil {
		chk = &a.chk
		if err := a.reset(chk, c.jobs, c.capacity); err != nil {
			return false, err
		}
	}
	a.sh = a.sh[:0]
	for _, j := range c.jobs {
		a.sh = append(a.sh, t[j])
	}
	before := chk.Evaluated()
	ok := a.holdsOn(chk, c, a.sh)
	a.effort.work += chk.Evaluated() - before
	return ok, nil
}

// holdsOn reports whether c holds at the shifts sh of its jobs, with chk
// prepared for c. In Exact mode that is its excess; in Paper mode, whether
// sh is an optimal rotation (the first job at 0, the others on the
// 5-degree grid) plus a common offset o, o = sh[0] + n*T_0 for some n.
func (a *assigner) holdsOn(chk *link.Checker, c *constraint, sh []int) bool {
	if a.lopt.Mode == link.Exact {
		return chk.Excess(sh) <= c.target
	}
	a.rot = append(a.rot[:0], sh...)
	rot := a.rot
	rot[0] = 0
	t0, p := chk.Period(0), chk.Perimeter()
	for n := 0; n < p/t0; n++ {
		o := sh[0] + n*t0
		ok := true
		for i := 1; i < len(sh) && ok; i++ {
			rot[i] = circle.Mod(sh[i]-o, chk.Period(i))
			ok = onGrid(rot[i], p)
		}
		if ok && chk.Excess(rot) <= c.target {
			return true
		}
	}
	return false
}

// onGrid reports whether shift v (in ticks) is a 5-degree rotation of a
// circle of perimeter p: v = floor(m*p/72) for some m.
func onGrid(v, p int) bool {
	m := (int64(v)*link.PaperAngles + int64(p) - 1) / int64(p)
	return m*int64(p)/link.PaperAngles == int64(v)
}

// prepare readies c for the search: for two jobs, the relative shifts
// (modulo the gcd of their periods) at which the link is at its optimum,
// from one scan of the second job's shifts; for more, a Checker of its own.
func (a *assigner) prepare(c *constraint) error {
	if c.ready {
		return nil
	}
	c.ready = true
	if len(c.jobs) == 2 {
		if err := a.reset(&a.chk, c.jobs, c.capacity); err != nil {
			return err
		}
		scan := a.chk.Scan(nil, []int{0, 0}, 1)
		a.effort.work += a.chk.Evaluated()
		c.mod = circle.GCD(a.jobs[c.jobs[0]].Period, a.jobs[c.jobs[1]].Period)
		c.rel = make([]bool, c.mod)
		for m, e := range scan {
			if e <= c.target {
				c.rel[a.chk.Shift(m)%c.mod] = true
			}
		}
		c.trivial = !slices.Contains(c.rel, false)
		c.mods = []int{c.mod, c.mod}
		return nil
	}
	c.chk = new(link.Checker)
	if err := a.reset(c.chk, c.jobs, c.capacity); err != nil {
		return err
	}
	for i, j := range c.jobs {
		m := a.jobs[j].Period
		if a.lopt.Mode == link.Exact {
			m = c.chk.Candidates(i)
		}
		c.mods = append(c.mods, m)
	}
	return nil
}
