package affinity

import (
	"context"
	"math/bits"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/internal/deadline"
)

// checkEvery is how much work passes between context checks.
const checkEvery = 1 << 16

// effort is the consistency search's budget and context.
type effort struct {
	ctx          context.Context
	work, budget int64
	next         int64 // work at which to check the context next
	stop         link.Status
}

func newEffort(ctx context.Context, budget int64) effort {
	if budget == 0 {
		budget = link.DefaultBudget
	}
	return effort{ctx: ctx, budget: budget, next: checkEvery}
}

// spend adds n units of work and reports whether the search may go on.
func (e *effort) spend(n int64) bool {
	e.work += n
	if e.stop != link.Optimal {
		return false
	}
	if e.budget > 0 && e.work > e.budget {
		e.stop = link.Budget
		return false
	}
	if e.work >= e.next {
		e.next = e.work + checkEvery
		if deadline.Done(e.ctx) {
			e.stop = link.TimeLimit
			return false
		}
	}
	return true
}

// solver is a depth-first search with forward checking for shifts of a
// component's jobs that satisfy its constraints. A job's domain holds its
// shifts modulo mod[j], the least common multiple of the moduli its
// constraints tell shifts apart by; when a constraint has a single job left
// to place, that job's domain is filtered to the shifts that satisfy it.
type solver struct {
	a      *assigner
	cons   []*constraint
	consOf [][]int    // per job: indices into cons
	mod    []int      // per job
	dom    [][]uint64 // per job: bit r set if shift class r is allowed
	placed []bool
	open   []int // per constraint: jobs not yet placed
	t      []int // per job: its shift while placed
	trail  []saved
	words  []uint64 // saved domain words
	sh     []int
	scan   []int64
}

// saved is a domain as it was before a filter.
type saved struct{ job, at int }

// search looks for shifts of jobs (a component, in walk order) that satisfy
// every constraint in cs and writes them into a.shift. It reports whether
// it found them; when it did not, a.effort.stop says whether it proved
// there are none (Optimal) or stopped early.
func (a *assigner) search(jobs []int, cs []int) (bool, error) {
	s := &solver{a: a, consOf: make([][]int, a.g.Jobs), mod: make([]int, a.g.Jobs),
		dom: make([][]uint64, a.g.Jobs), placed: make([]bool, a.g.Jobs), t: make([]int, a.g.Jobs)}
	for _, i := range cs {
		c := &a.cons[i]
		if err := a.prepare(c); err != nil {
			return false, err
		}
		if c.trivial {
			continue
		}
		for k, j := range c.jobs {
			s.consOf[j] = append(s.consOf[j], len(s.cons))
			if s.mod[j] == 0 {
				s.mod[j] = 1
			}
			s.mod[j] = s.mod[j] / circle.GCD(s.mod[j], c.mods[k]) * c.mods[k]
		}
		s.open = append(s.open, len(c.jobs))
		s.cons = append(s.cons, c)
	}
	if a.effort.stop != link.Optimal {
		return false, nil
	}
	// Constraints that every shift satisfies may have split the component:
	// search each part on its own, its first job held.
	union, root := unionFind(a.g.Jobs)
	for _, c := range s.cons {
		union(c.jobs)
	}
	var parts [][]int
	index := map[int]int{}
	for _, j := range jobs {
		if s.mod[j] == 0 {
			continue // in trivial constraints only: keeps its walk shift
		}
		s.dom[j] = make([]uint64, (s.mod[j]+63)/64)
		for r := range s.mod[j] {
			s.dom[j][r/64] |= 1 << (r % 64)
		}
		k, ok := index[root(j)]
		if !ok {
			k = len(parts)
			index[root(j)] = k
			parts = append(parts, nil)
		}
		parts[k] = append(parts[k], j)
	}
	for _, part := range parts {
		if !s.dfs(part, 0) {
			return false, nil
		}
		for _, j := range part {
			a.shift[j] = s.t[j]
		}
	}
	return true, nil
}

// dfs places order[i:] and reports whether it found shifts for all of them
// that satisfy every constraint.
func (s *solver) dfs(order []int, i int) bool {
	if i == len(order) {
		return true
	}
	v := order[i]
	pref, period, m := s.a.walked[v], s.a.jobs[v].Period, s.mod[v]
	tries := m
	if i == 0 {
		tries = 1 // a common shift changes no constraint: hold the first job
	}
	for d := range tries {
		r := (pref + d) % m
		if s.dom[v][r/64]&(1<<(r%64)) == 0 {
			continue
		}
		if !s.a.effort.spend(1) {
			return false
		}
		s.t[v] = (pref + d) % period
		mark := len(s.trail)
		if s.place(v) && s.dfs(order, i+1) {
			return true
		}
		s.unplace(v, mark)
		if s.a.effort.stop != link.Optimal {
			return false
		}
	}
	return false
}

// place marks v placed and filters the domain of every job left alone in
// one of v's constraints. It reports false if a domain empties.
func (s *solver) place(v int) bool {
	s.placed[v] = true
	for _, ci := range s.consOf[v] {
		s.open[ci]--
	}
	for _, ci := range s.consOf[v] {
		if s.open[ci] != 1 {
			continue
		}
		c := s.cons[ci]
		last := -1
		for k, j := range c.jobs {
			if !s.placed[j] {
				last = k
			}
		}
		if !s.filter(c, last) {
			return false
		}
	}
	return true
}

// unplace undoes place(v) and every filter since mark.
func (s *solver) unplace(v, mark int) {
	s.placed[v] = false
	for _, ci := range s.consOf[v] {
		s.open[ci]++
	}
	for n := len(s.trail) - 1; n >= mark; n-- {
		e := s.trail[n]
		copy(s.dom[e.job], s.words[e.at:])
		s.words = s.words[:e.at]
	}
	s.trail = s.trail[:mark]
}

// filter keeps in the domain of c's k-th job the shifts at which c holds
// with its other jobs where they are placed, and reports whether any is
// left.
func (s *solver) filter(c *constraint, k int) bool {
	u := c.jobs[k]
	dom, m := s.dom[u], s.mod[u]
	s.trail = append(s.trail, saved{job: u, at: len(s.words)})
	s.words = append(s.words, dom...)
	if !s.a.effort.spend(int64(m)) {
		return false
	}
	keep := s.allowed(c, k)
	var any uint64
	for w := range dom {
		for x := dom[w]; x != 0; x &= x - 1 {
			r := w*64 + bits.TrailingZeros64(x)
			if !keep(r) {
				dom[w] &^= 1 << (r % 64)
			}
		}
		any |= dom[w]
	}
	return s.a.effort.spend(0) && any != 0
}

// allowed returns whether each shift class r of c's k-th job satisfies c,
// its other jobs placed.
func (s *solver) allowed(c *constraint, k int) func(r int) bool {
	if c.rel != nil {
		a, b := s.t[c.jobs[0]], s.t[c.jobs[1]]
		if k == 1 {
			return func(r int) bool { return c.rel[circle.Mod(r-a, c.mod)] }
		}
		return func(r int) bool { return c.rel[circle.Mod(b-r, c.mod)] }
	}
	s.sh = s.sh[:0]
	for _, j := range c.jobs {
		s.sh = append(s.sh, s.t[j])
	}
	if s.a.lopt.Mode == link.Exact {
		// One scan of the job's shifts, modulo c.mods[k].
		before := c.chk.Evaluated()
		s.scan = c.chk.Scan(s.scan, s.sh, k)
		s.a.effort.work += c.chk.Evaluated() - before
		return func(r int) bool { return s.scan[r%c.mods[k]] <= c.target }
	}
	return func(r int) bool {
		s.sh[k] = r
		before := c.chk.Evaluated()
		ok := s.a.holdsOn(c.chk, c, s.sh)
		s.a.effort.work += c.chk.Evaluated() - before
		return ok
	}
}
