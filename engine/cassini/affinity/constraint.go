package affinity

import (
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
)

// constraint is one link capacity of a group that its jobs' summed peaks
// exceed: an assignment must keep the link at its own optimum there.
type constraint struct {
	group    int
	jobs     []int // the group's jobs
	capacity int32
	target   int64 // the excess of the link's own optimization; -1 until searched (above the smallest capacity)
	strict   bool  // a member link above the group's smallest capacity
	walked   int64 // Exact mode: its excess at the walk's shifts, if checked; else -1
	walkOK   bool  // it holds at the walk's shifts

	// Set by prepare, for the search.
	ready   bool
	trivial bool          // every shift is optimal: constrains nothing
	mod     int           // two jobs: the gcd of their periods
	rel     []bool        // two jobs: rel[(t_b - t_a) mod mod], at the optimum
	chk     *link.Checker // three or more jobs
	mods    []int         // per job of the constraint: its shift matters modulo this

	// Two jobs: rel as bits read forwards (bit i is rel[i mod mod]) and
	// backwards (bit i is rel[-i mod mod]), each over mod+128 bits, so that
	// filter reads any 64 consecutive classes from one offset below mod.
	fwd, rev []uint64
}

// constrain lists every group's constraints: its smallest capacity (the
// one Build optimized, at opt's excess) and each larger capacity among its
// member links (optimized here), skipping those the jobs' summed peaks
// fit. It then checks each at the walk's shifts.
func (a *assigner) constrain() error {
	a.consAt = make([]int, len(a.g.Groups)+1)
	a.cons = make([]constraint, 0, len(a.g.Groups))
	a.peaks = make([]int64, len(a.g.Groups))
	peak := make([]int32, a.g.Jobs)
	for j, js := range a.byJob {
		if len(js) > 0 {
			peak[j] = a.jobs[j].Peak()
		}
	}
	var caps []int32
	for gi, gr := range a.g.Groups {
		var peaks int64
		for i, j := range gr.Jobs {
			if gr.Profiles != nil {
				peaks += int64(gr.Profiles[i].Peak())
			} else {
				peaks += int64(peak[j])
			}
		}
		a.peaks[gi] = peaks
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
				target = -1 // searched when first needed
			}
			a.cons = append(a.cons, constraint{group: gi, jobs: gr.Jobs, capacity: c, target: target, strict: k > 0, walked: -1})
		}
		a.consAt[gi+1] = len(a.cons)
	}
	for i := range a.cons {
		c := &a.cons[i]
		if !c.strict && !a.outs[c.group].Constrained {
			// The walk placed every job of the group by its optimum.
			c.walkOK = true
			continue
		}
		ok, e, err := a.check(c, a.walked)
		if err != nil {
			return err
		}
		c.walkOK, c.walked = ok, e
	}
	return nil
}

// component is a connected set of constraining groups: its jobs in walk
// order and its constraints.
type component struct {
	jobs []int
	cons []int // indices into assigner.cons
	all  []constraint
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
	union, find := unionFind(a.g.Jobs)
	for _, c := range a.cons {
		union(c.jobs)
	}
	index := make([]int, a.g.Jobs) // root -> component
	for i := range index {
		index[i] = -1
	}
	var comps []component
	var jobs, cons []int // per component, its jobs then its constraints' counts
	for _, j := range a.order {
		if r := find(j); a.constrained(j) && index[r] < 0 {
			index[r] = len(comps)
			comps = append(comps, component{all: a.cons})
		}
	}
	jobs, cons = make([]int, len(comps)+1), make([]int, len(comps)+1)
	for _, j := range a.order {
		if a.constrained(j) {
			jobs[index[find(j)]+1]++
		}
	}
	for _, c := range a.cons {
		cons[index[find(c.jobs[0])]+1]++
	}
	flatJobs, flatCons := make([]int, 0, len(a.order)), make([]int, 0, len(a.cons))
	for k := range comps {
		jobs[k+1] += jobs[k]
		cons[k+1] += cons[k]
		comps[k].jobs = flatJobs[jobs[k]:jobs[k]:jobs[k+1]]
		comps[k].cons = flatCons[cons[k]:cons[k]:cons[k+1]]
	}
	for _, j := range a.order {
		if a.constrained(j) {
			c := &comps[index[find(j)]]
			c.jobs = append(c.jobs, j)
		}
	}
	for i, c := range a.cons {
		comp := &comps[index[find(c.jobs[0])]]
		comp.cons = append(comp.cons, i)
	}
	return comps
}

// constrained reports whether job j is in some constraint.
func (a *assigner) constrained(j int) bool {
	for _, gi := range a.byJob[j] {
		if a.consAt[gi+1] > a.consAt[gi] {
			return true
		}
	}
	return false
}

// unionFind returns a disjoint-set forest over n items: union joins a set
// of items, find returns an item's root.
func unionFind(n int) (union func(on []int), find func(int) int) {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union = func(on []int) {
		for _, j := range on[1:] {
			if ra, rb := find(j), find(on[0]); ra != rb {
				parent[max(ra, rb)] = min(ra, rb)
			}
		}
	}
	return union, find
}

// optimize sets c's target, if not yet known, by searching its link.
func (a *assigner) optimize(c *constraint) error {
	if c.target >= 0 {
		return nil
	}
	a.demands(c.group)
	res, err := a.w.Search(a.effort.ctx, link.Problem{Jobs: a.ps, Capacity: c.capacity}, a.lopt, nil)
	if err != nil {
		return fmt.Errorf("affinity: link of jobs %v at capacity %d: %w", c.jobs, c.capacity, err)
	}
	a.extra += res.Evaluated
	c.target = res.Excess
	return nil
}

// check reports whether constraint c holds at the job shifts t and, in
// Exact mode, the link's excess there (-1 in Paper mode).
func (a *assigner) check(c *constraint, t []int) (bool, int64, error) {
	if a.lopt.Mode == link.Exact {
		e, err := a.evaluate(c.group, c.capacity, t)
		if err != nil || e == 0 {
			return err == nil, e, err // no excess is optimal at any capacity
		}
		if err := a.optimize(c); err != nil {
			return false, 0, err
		}
		return e <= c.target, e, nil
	}
	chk := c.chk
	if chk == nil {
		chk = a.chk
		if err := a.reset(chk, c.group, c.capacity); err != nil {
			return false, 0, err
		}
	}
	a.sh = a.sh[:0]
	for _, j := range c.jobs {
		a.sh = append(a.sh, t[j])
	}
	before := chk.Evaluated()
	defer func() { a.effort.work += chk.Evaluated() - before }()
	if c.target < 0 && a.holdsOn(chk, a.sh, 0) {
		return true, -1, nil // no excess is optimal at any capacity
	}
	if err := a.optimize(c); err != nil {
		return false, 0, err
	}
	return a.holdsOn(chk, a.sh, c.target), -1, nil
}

// holdsOn reports whether a constraint holds at the shifts sh of its jobs
// when its own optimum has the given excess, with chk prepared for it. In
// Exact mode that is its excess; in Paper mode, whether sh is an optimal
// rotation (the first job at 0, the others on the 5-degree grid) plus a
// common offset o, o = sh[0] + n*T_0 for some n.
func (a *assigner) holdsOn(chk *link.Checker, sh []int, target int64) bool {
	if a.lopt.Mode == link.Exact {
		return chk.Excess(sh) <= target
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
		if ok && chk.Excess(rot) <= target {
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
	if err := a.optimize(c); err != nil {
		return err
	}
	if len(c.jobs) == 2 {
		if err := a.reset(a.chk, c.group, c.capacity); err != nil {
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
		c.fwd, c.rev = relBits(c.rel, 1), relBits(c.rel, -1)
		c.mods = []int{c.mod, c.mod}
		return nil
	}
	c.chk = new(link.Checker)
	if err := a.reset(c.chk, c.group, c.capacity); err != nil {
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

// relBits returns rel's classes as bits, bit i = rel[(dir*i) mod len(rel)]
// for i below len(rel)+128 (dir is 1 or -1).
func relBits(rel []bool, dir int) []uint64 {
	g := len(rel)
	b := make([]uint64, (g+128+63)/64)
	for i := range 64 * len(b) {
		if rel[circle.Mod(dir*i, g)] {
			b[i/64] |= 1 << (i % 64)
		}
	}
	return b
}
