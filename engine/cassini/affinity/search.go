package affinity

import (
	"context"
	"math/bits"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
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

	// split's scratch: per job its part and the stamp of the split that
	// set it, a stack, and per depth the parts.
	label, stamps []int
	stamp         int
	stack         []int
	bufs          [][]int
	cuts          [][][]int
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
	var vars []int
	for _, j := range jobs {
		if s.mod[j] == 0 {
			continue // in trivial constraints only: keeps its walk shift
		}
		s.dom[j] = make([]uint64, (s.mod[j]+63)/64)
		for r := range s.mod[j] {
			s.dom[j][r/64] |= 1 << (r % 64)
		}
		vars = append(vars, j)
	}
	s.label, s.stamps = make([]int, a.g.Jobs), make([]int, a.g.Jobs)
	if !s.solve(vars, 0, true) {
		return false, nil
	}
	for _, j := range vars {
		a.shift[j] = s.t[j]
	}
	return true, nil
}

// solve places the jobs vars (not placed, in walk order) and reports
// whether it found shifts for all of them that satisfy every constraint;
// when it did not, none of them is left placed. The jobs fall into parts
// that no constraint with two of its jobs unplaced joins: given the jobs
// already placed, the parts are independent, so each is solved on its own
// (the first consistent assignment of each is the first of the whole), and
// one part with none fails them all without trying the others' shifts
// again. With hold set (nothing placed yet), each part holds its first
// job at its walk shift: a common shift of a part changes none of its
// constraints.
func (s *solver) solve(vars []int, depth int, hold bool) bool {
	if len(vars) == 0 {
		return true
	}
	parts := s.split(vars, depth)
	if len(parts) == 1 {
		return s.branch(vars, depth, hold)
	}
	mark := len(s.trail)
	for k, part := range parts {
		if !s.branch(part, depth, hold) {
			for _, done := range parts[:k] {
				for _, v := range done {
					s.unmark(v)
				}
			}
			s.restore(mark)
			return false
		}
	}
	return true
}

// branch places vars[0] at each shift of its domain in turn, from its walk
// shift upward (only that one if hold is set), and solves the rest.
func (s *solver) branch(vars []int, depth int, hold bool) bool {
	v := vars[0]
	pref, period, m := s.a.walked[v], s.a.jobs[v].Period, s.mod[v]
	// The shift classes r = (pref+d) mod m in order of d, only those in
	// v's domain (read again after each try, which restores it), found
	// by scanning its words rather than testing every class.
	p0 := pref % m
	tries := m
	if hold {
		tries = 1
	}
	for d := 0; d < tries; d++ {
		r := p0 + d
		if r >= m {
			r -= m
		}
		if dom := s.dom[v]; dom[r/64]&(1<<(r%64)) == 0 {
			next := -1
			if r >= p0 { // d's first stretch, classes p0 to m-1
				if next = nextIn(dom, r, m); next >= 0 {
					d += next - r
				} else if next = nextIn(dom, 0, p0); next >= 0 {
					d = m - p0 + next
				}
			} else if next = nextIn(dom, r, p0); next >= 0 {
				d += next - r
			}
			if next < 0 || d >= tries {
				break
			}
		}
		if !s.a.effort.spend(1) {
			return false
		}
		s.t[v] = (pref + d) % period
		mark := len(s.trail)
		if s.place(v) && s.solve(vars[1:], depth+1, false) {
			return true
		}
		s.unmark(v)
		s.restore(mark)
		if s.a.effort.stop != link.Optimal {
			return false
		}
	}
	return false
}

// nextIn returns the first r' in [r, hi) whose bit is set in dom, or -1.
func nextIn(dom []uint64, r, hi int) int {
	for r < hi {
		w := dom[r/64] >> (r % 64)
		if w != 0 {
			if r += bits.TrailingZeros64(w); r < hi {
				return r
			}
			return -1
		}
		r = (r/64 + 1) * 64
	}
	return -1
}

// split groups vars (in walk order) into the parts that constraints with
// two or more unplaced jobs join, each in walk order, the parts in the
// order of their first job. The parts live in a buffer of the given depth.
func (s *solver) split(vars []int, depth int) [][]int {
	for len(s.bufs) <= depth {
		s.bufs = append(s.bufs, nil)
		s.cuts = append(s.cuts, nil)
	}
	s.stamp++
	n := 0 // parts
	for _, v := range vars {
		if s.seen(v) {
			continue
		}
		// Label v's part by a walk over its open constraints.
		s.mark(v, n)
		s.stack = append(s.stack[:0], v)
		for len(s.stack) > 0 {
			u := s.stack[len(s.stack)-1]
			s.stack = s.stack[:len(s.stack)-1]
			for _, ci := range s.consOf[u] {
				if s.open[ci] < 2 {
					continue
				}
				for _, x := range s.cons[ci].jobs {
					if !s.placed[x] && !s.seen(x) {
						s.mark(x, n)
						s.stack = append(s.stack, x)
					}
				}
			}
		}
		n++
	}
	buf, cuts := s.bufs[depth][:0], s.cuts[depth][:0]
	if n == 1 {
		cuts = append(cuts, vars)
	} else {
		for k := range n {
			start := len(buf)
			for _, v := range vars {
				if s.label[v] == k {
					buf = append(buf, v)
				}
			}
			cuts = append(cuts, buf[start:len(buf):len(buf)])
		}
	}
	s.bufs[depth], s.cuts[depth] = buf, cuts
	return cuts
}

func (s *solver) mark(v, part int) { s.label[v], s.stamps[v] = part, s.stamp }
func (s *solver) seen(v int) bool  { return s.stamps[v] == s.stamp }

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

// unmark undoes place(v) but for its filters.
func (s *solver) unmark(v int) {
	s.placed[v] = false
	for _, ci := range s.consOf[v] {
		s.open[ci]++
	}
}

// restore undoes every filter since mark.
func (s *solver) restore(mark int) {
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
	switch {
	case c.rel != nil:
		// Shift class r is allowed if rel[(r - t_a) mod g] (k = 1) or
		// rel[(t_b - r) mod g] = rel[-(r - t_b) mod g] (k = 0): 64
		// classes at a time from the forward or backward bits.
		g := c.mod
		bits, off := c.fwd, circle.Mod(-s.t[c.jobs[0]], g)
		if k == 0 {
			bits, off = c.rev, circle.Mod(-s.t[c.jobs[1]], g)
		}
		for w := range dom {
			keep := window(bits, off)
			if n := m - 64*w; n < 64 {
				keep &= 1<<n - 1
			}
			dom[w] &= keep
			if off += 64; off >= g {
				off %= g
			}
		}
	case s.a.lopt.Mode == link.Exact:
		// One scan of the job's shifts; class r is scan entry r mod mods[k].
		s.gatherPlaced(c)
		before := c.chk.Evaluated()
		s.scan = c.chk.Scan(s.scan, s.sh, k)
		s.a.effort.work += c.chk.Evaluated() - before
		at, n := 0, c.mods[k]
		keepWhere(dom, m, func() bool {
			ok := s.scan[at] <= c.target
			if at++; at == n {
				at = 0
			}
			return ok
		})
	default:
		s.gatherPlaced(c)
		before := c.chk.Evaluated()
		for w := range dom {
			for x := dom[w]; x != 0; x &= x - 1 {
				b := bits.TrailingZeros64(x)
				if s.sh[k] = w*64 + b; !s.a.holdsOn(c.chk, s.sh, c.target) {
					dom[w] &^= 1 << b
				}
			}
		}
		s.a.effort.work += c.chk.Evaluated() - before
	}
	var any uint64
	for _, x := range dom {
		any |= x
	}
	return s.a.effort.spend(0) && any != 0
}

// window returns bits off to off+63 of b (off+64 < 64*len(b)).
func window(b []uint64, off int) uint64 {
	w, sh := off/64, off%64
	x := b[w] >> sh
	if sh != 0 {
		x |= b[w+1] << (64 - sh)
	}
	return x
}

// keepWhere clears bit r of dom, for r in [0, m) in increasing order, where
// the r-th call of ok returns false.
func keepWhere(dom []uint64, m int, ok func() bool) {
	for w := range dom {
		var keep uint64
		for b := range min(64, m-64*w) {
			if ok() {
				keep |= 1 << b
			}
		}
		dom[w] &= keep
	}
}

// gatherPlaced sets s.sh to the shifts of c's jobs.
func (s *solver) gatherPlaced(c *constraint) {
	s.sh = s.sh[:0]
	for _, j := range c.jobs {
		s.sh = append(s.sh, s.t[j])
	}
}
