package affinity

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/orrery/orrery/engine/cassini/link"
)

// ErrScale rejects a graph whose links' scores AssignFixed cannot compare
// exactly: their points times capacities have no common multiple within 64
// bits, or the summed excess over it passes 128 bits.
var ErrScale = errors.New("affinity: the links' scores have no common denominator within 64 bits")

// u128 is an unsigned 128-bit integer: a sum of link excesses over the
// common denominator of their scores.
type u128 struct{ hi, lo uint64 }

var maxU128 = u128{math.MaxUint64, math.MaxUint64}

func wide(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

// plus returns a+b; the caller has ruled out overflow.
func (a u128) plus(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

func maxOf(a, b u128) u128 {
	if a.less(b) {
		return b
	}
	return a
}

// scale puts every term's excess over one denominator: term t's score is
// 1 - e/(points*capacity), so e*mult over D = lcm(points*capacity) orders
// the sums of terms exactly, each counted once per member link. It then
// sets the free jobs' costs from the terms where each is the only free
// job, and sums the constant terms.
func (h *holder) scale() error {
	d := uint64(1)
	for _, t := range h.terms {
		hi, pc := bits.Mul64(uint64(t.points), uint64(t.capacity))
		g := gcd64(d, pc)
		hi2, l := bits.Mul64(d/g, pc)
		if hi != 0 || hi2 != 0 {
			return fmt.Errorf("%w (jobs %v)", ErrScale, h.g.Groups[t.group].Jobs)
		}
		d = l
	}
	var total u128
	for ti := range h.terms {
		t := &h.terms[ti]
		t.mult = d / (uint64(t.points) * uint64(t.capacity))
		hi1, most := bits.Mul64(uint64(t.points), uint64(h.peaks[t.group]-int64(t.capacity)))
		if len(t.free) == 0 {
			hi1, most = 0, uint64(t.value) // a constant: its excess is known
		}
		hi2, weighted := bits.Mul64(most, t.weight)
		next := total.plus(wide(weighted, t.mult))
		if hi1 != 0 || hi2 != 0 || next.less(total) || next.hi >= 1<<63 {
			return fmt.Errorf("%w (jobs %v)", ErrScale, h.g.Groups[t.group].Jobs)
		}
		total = next
	}
	for vi := range h.vars {
		v := &h.vars[vi]
		v.sum, v.max = make([]u128, v.mod), make([]u128, v.mod)
	}
	for _, t := range h.terms {
		switch {
		case len(t.free) == 0:
			h.constSum = h.constSum.plus(wide(uint64(t.value)*t.weight, t.mult))
			h.constMax = maxOf(h.constMax, wide(uint64(t.value), t.mult))
		case t.scan != nil:
			v := &h.vars[h.varOf[h.g.Groups[t.group].Jobs[t.free[0]]]]
			v.add(t.scan, t.weight, t.mult, v.sum, v.max)
		}
	}
	return nil
}

// add adds to sum and max, per class of v, the cost of a term whose excess
// at v's candidate shift m is scan[m].
func (v *hvar) add(scan []int64, weight, mult uint64, sum, max []u128) {
	n := len(scan)
	for r := range v.mod {
		e := uint64(scan[r%n])
		sum[r] = sum[r].plus(wide(e*weight, mult))
		max[r] = maxOf(max[r], wide(e, mult))
	}
}

func gcd64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// hcomp is a connected set of free jobs: joined by the terms of two or
// more of them.
type hcomp struct {
	vars  []int // indices into holder.vars, increasing
	multi []int // its terms of two or more free jobs
	hold  bool  // no term of its jobs has a fixed job: hold the first at 0
}

// components splits the free jobs into connected sets, by their first job.
func (h *holder) components() []hcomp {
	union, find := unionFind(len(h.vars))
	loc := make([]int, 0, 8)
	for _, t := range h.terms {
		if t.chk == nil {
			continue
		}
		loc = loc[:0]
		for _, i := range t.free {
			loc = append(loc, h.varOf[h.g.Groups[t.group].Jobs[i]])
		}
		union(loc)
	}
	index := make([]int, len(h.vars))
	var comps []hcomp
	for vi := range h.vars {
		r := find(vi)
		if r == vi {
			index[r] = len(comps)
			comps = append(comps, hcomp{hold: true})
		}
		c := &comps[index[r]]
		c.vars = append(c.vars, vi)
	}
	for ti, t := range h.terms {
		if len(t.free) == 0 {
			continue
		}
		c := &comps[index[find(h.varOf[h.g.Groups[t.group].Jobs[t.free[0]]])]]
		if t.chk != nil {
			c.multi = append(c.multi, ti)
		}
		if h.nfixed[t.group] > 0 {
			c.hold = false
		}
	}
	return comps
}

// Search modes: the least worst term, or the least sum under a cap on the
// worst.
const (
	modeMax = iota
	modeSum
)

// solveAll settles every component and writes the free jobs' shifts.
func (h *holder) solveAll() {
	comps := h.components()
	worst := maxU128
	if h.f.Objective == WorstScore {
		worst = h.constMax
		for k := range comps {
			worst = maxOf(worst, h.solveComp(&comps[k], modeMax, maxU128))
		}
	}
	for k := range comps {
		h.solveComp(&comps[k], modeSum, worst)
	}
	for j := range h.g.Jobs {
		if !h.fixed[j] && h.varOf[j] < 0 {
			h.shift[j] = 0 // no link constrains it
		}
	}
}

// solveComp solves one component in the given mode and writes its jobs'
// shifts; it returns the best key found.
func (h *holder) solveComp(c *hcomp, mode int, limit u128) u128 {
	s := newBnb(h, c, mode, limit)
	walk, wk, wok := s.walkKey()
	rs, rm, ok := s.bound(0, u128{}, u128{})
	root := s.key(rs, rm)
	found := false
	if ok && (!wok || root != wk) {
		// First the consistent case: a vector at the root's bound.
		s.best = root
		s.dfs(0, u128{}, u128{})
		found = s.found
	}
	if !found && h.effort.stop == link.Optimal {
		s.best, s.found = maxU128, false
		if wok {
			s.best = wk
		}
		s.dfs(0, u128{}, u128{})
		found = s.found
	}
	best, key := s.bestR, s.best
	if !found {
		best, key = walk, wk // the search stopped first
	}
	for d, vi := range c.vars {
		h.shift[h.vars[vi].job] = best[d]
	}
	if h.effort.stop != link.Optimal {
		h.status = max(h.status, h.effort.stop)
		for _, vi := range c.vars {
			for _, gi := range h.byJob[h.vars[vi].job] {
				h.outs[gi].Status = max(h.outs[gi].Status, h.effort.stop)
			}
		}
	}
	return key
}

// bnb is the branch and bound over one component's shift classes.
type bnb struct {
	h      *holder
	c      *hcomp
	mode   int
	limit  u128    // modeSum: the worst term allowed
	vterms [][]int // per local var: local multi terms with it
	tvars  [][]int // per local multi term: the local var of each free job (t.free order)
	open   []int   // per local multi term: jobs not placed
	tsum   []u128  // per local multi term: its target, weighted
	tmax   []u128
	sum    [][]u128 // per local var: cost per class given the jobs placed
	max    [][]u128
	r      []int // per local var: its class while placed
	s      []int // per job: fixed shifts, and the placed jobs' classes
	saves  []costSave
	words  []u128
	scan   []int64

	best  u128
	found bool
	bestR []int
}

// costSave is a var's costs as they were before a scan added to them.
type costSave struct{ v, at int }

func newBnb(h *holder, c *hcomp, mode int, limit u128) *bnb {
	n := len(c.vars)
	s := &bnb{h: h, c: c, mode: mode, limit: limit,
		vterms: make([][]int, n), tvars: make([][]int, len(c.multi)), open: make([]int, len(c.multi)),
		tsum: make([]u128, len(c.multi)), tmax: make([]u128, len(c.multi)),
		sum: make([][]u128, n), max: make([][]u128, n), r: make([]int, n), bestR: make([]int, n),
		s: slices.Clone(h.base)}
	local := func(job int) int { return slices.Index(c.vars, h.varOf[job]) }
	for lt, ti := range c.multi {
		t := &h.terms[ti]
		gr := h.g.Groups[t.group]
		for _, i := range t.free {
			d := local(gr.Jobs[i])
			s.tvars[lt] = append(s.tvars[lt], d)
			s.vterms[d] = append(s.vterms[d], lt)
		}
		s.open[lt] = len(t.free)
		s.tsum[lt] = wide(uint64(t.target)*t.weight, t.mult)
		s.tmax[lt] = wide(uint64(t.target), t.mult)
	}
	for d, vi := range c.vars {
		s.sum[d], s.max[d] = slices.Clone(h.vars[vi].sum), slices.Clone(h.vars[vi].max)
	}
	return s
}

// key is what the mode minimizes.
func (s *bnb) key(sum, mx u128) u128 {
	if s.mode == modeMax {
		return mx
	}
	return sum
}

// walkKey returns the walk's classes of the component's jobs and their key,
// and whether they are within the limit.
func (s *bnb) walkKey() ([]int, u128, bool) {
	h := s.h
	r := make([]int, len(s.c.vars))
	sum, mx := u128{}, u128{}
	for d, vi := range s.c.vars {
		v := &h.vars[vi]
		r[d] = h.walked[v.job] % v.mod
		s.s[v.job] = r[d]
		sum, mx = sum.plus(v.sum[r[d]]), maxOf(mx, v.max[r[d]])
	}
	for _, ti := range s.c.multi {
		t := &h.terms[ti]
		e, _ := h.termValue(t, s.s)
		sum, mx = sum.plus(wide(uint64(e)*t.weight, t.mult)), maxOf(mx, wide(uint64(e), t.mult))
	}
	copy(s.s, h.base)
	return r, s.key(sum, mx), s.mode == modeMax || !s.limit.less(mx)
}

// bound returns lower bounds on the sum and the worst term of every
// completion of the jobs placed before local var from, given what they
// cost (sum, mx); false if none is within the limit.
func (s *bnb) bound(from int, sum, mx u128) (u128, u128, bool) {
	for d := from; d < len(s.c.vars); d++ {
		ms, mm, ok := s.cheapest(d)
		if !ok {
			return sum, mx, false
		}
		sum, mx = sum.plus(ms), maxOf(mx, mm)
	}
	for lt, n := range s.open {
		if n >= 2 {
			sum, mx = sum.plus(s.tsum[lt]), maxOf(mx, s.tmax[lt])
		}
	}
	return sum, mx, s.mode == modeMax || !s.limit.less(mx)
}

// cheapest returns local var d's least cost over its classes: in modeSum
// the least sum among the classes within the limit.
func (s *bnb) cheapest(d int) (u128, u128, bool) {
	sum, mx := s.sum[d], s.max[d]
	bs, bm, ok := maxU128, maxU128, false
	for r := range sum {
		if mx[r].less(bm) {
			bm = mx[r]
		}
		if s.mode == modeSum && s.limit.less(mx[r]) {
			continue
		}
		if sum[r].less(bs) {
			bs = sum[r]
		}
		ok = true
	}
	if s.mode == modeMax {
		return u128{}, bm, true
	}
	return bs, bm, ok
}

// prune reports whether a node whose completions have at least key k can
// be skipped: only a strictly better key, or the first to reach the
// incumbent's when that came from outside the search, may replace it.
func (s *bnb) prune(k u128) bool {
	return s.best.less(k) || k == s.best && s.found
}

// dfs places local var d and those after it; sum and mx are what the jobs
// placed cost.
func (s *bnb) dfs(d int, sum, mx u128) {
	if d == len(s.c.vars) {
		k := s.key(sum, mx)
		if k.less(s.best) || k == s.best && !s.found {
			s.best, s.found = k, true
			copy(s.bestR, s.r)
		}
		return
	}
	e := &s.h.effort
	rest, restMax, ok := s.bound(d+1, u128{}, u128{})
	if !ok {
		return
	}
	tries := len(s.sum[d])
	if s.c.hold && d == 0 {
		tries = 1
	}
	for r := range tries {
		if !e.spend(1) {
			return
		}
		cs, cm := sum.plus(s.sum[d][r]), maxOf(mx, s.max[d][r])
		if s.mode == modeSum && s.limit.less(cm) || s.prune(s.key(cs.plus(rest), maxOf(cm, restMax))) {
			continue
		}
		mark := len(s.saves)
		placed := s.place(d, r)
		if placed {
			if bs, bm, ok := s.bound(d+1, cs, cm); ok && !s.prune(s.key(bs, bm)) {
				s.dfs(d+1, cs, cm)
			}
		}
		s.unplace(d, mark)
		if e.stop != link.Optimal {
			return
		}
	}
}

// place puts local var d in class r and scans each of its terms left with
// one job unplaced into that job's costs. It reports false if the budget
// or the context stopped it.
func (s *bnb) place(d, r int) bool {
	h := s.h
	s.r[d] = r
	s.s[h.vars[s.c.vars[d]].job] = r
	for _, lt := range s.vterms[d] {
		s.open[lt]--
	}
	for _, lt := range s.vterms[d] {
		if s.open[lt] != 1 {
			continue
		}
		t := &h.terms[s.c.multi[lt]]
		k := slices.IndexFunc(s.tvars[lt], func(u int) bool { return u > d })
		u := s.tvars[lt][k]
		gr := h.g.Groups[t.group]
		before := t.chk.Evaluated()
		s.scan = t.chk.Scan(s.scan, h.gather(s.s, gr.Jobs), t.free[k])
		if !h.effort.spend(t.chk.Evaluated() - before) {
			return false
		}
		s.saves = append(s.saves, costSave{u, len(s.words)})
		s.words = append(append(s.words, s.sum[u]...), s.max[u]...)
		h.vars[s.c.vars[u]].add(s.scan, t.weight, t.mult, s.sum[u], s.max[u])
	}
	return true
}

// unplace undoes place(d, ·) and every cost change since mark.
func (s *bnb) unplace(d, mark int) {
	for _, lt := range s.vterms[d] {
		s.open[lt]++
	}
	s.s[s.h.vars[s.c.vars[d]].job] = 0
	for n := len(s.saves) - 1; n >= mark; n-- {
		sv := s.saves[n]
		m := len(s.sum[sv.v])
		copy(s.sum[sv.v], s.words[sv.at:sv.at+m])
		copy(s.max[sv.v], s.words[sv.at+m:sv.at+2*m])
		s.words = s.words[:sv.at]
	}
	s.saves = s.saves[:mark]
}
