package link

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/scratch"
	"github.com/orrery/orrery/kernels"
)

// classCost is what one residue's class evaluation costs, in kernel pair
// evaluations, per distinct demand it visits: the plan's exchange rate
// between the shared circle's scalar histogram walk and the dense circle's
// vector kernels. A step of the walk took 17 ns against 0.5 ns for a pair of
// the generic kernel and 0.025 ns for AVX-512 (three-job links, see the
// commit); the rate is a middle that must not depend on the CPU (the
// evaluations are part of the answer), and the shared layout with classes
// is taken mostly where the dense circle passes the cap.
const classCost = 32

// staticPasses is the most entries the static histogram may have for an
// evaluation without classes to run one kernel pass per entry rather than a
// histogram search per residue.
const staticPasses = 16

// mergeLimit bounds the entries one step of merging the static jobs'
// histograms may produce; a job past it keeps its own class, which an
// evaluation walks against the others (for two noisy jobs of 255 and 181
// distinct demands, merging sorts 46155 pairs, 260 us; the walk takes a few
// hundred steps).
const mergeLimit = 1 << 10

// classes holds a job's ticks grouped by residue modulo mod: class c is the
// ticks c, c+mod, c+2*mod, ..., and holds the distinct demands of those
// ticks in ascending order, with suffix sums, so that the excess of the
// class on top of any base is one binary search.
type classes struct {
	mod int
	off []int32 // class c is entries off[c] to off[c+1]
	val []int32 // distinct demands, ascending within a class
	cnt []int64 // ticks of the class with this demand or more
	sum []int64 // their summed demand
	pre []int64 // scratch of period
}

// buildScratch is the scratch of classes.build: one class as runs of
// equal demand, or its demands and the sort's scratch.
type buildScratch struct {
	runs []pairEntry
	vals []int32
	tmp  []int32
}

// sortDemands sorts demands (non-negative) in place, with tmp as scratch
// (returned, grown): a radix sort of two 16-bit passes for long classes,
// where it is several times faster than a comparison sort (a job of 2^24
// noisy ticks in one class: 1.5 s).
func sortDemands(v, tmp []int32) []int32 {
	if len(v) < 1<<12 {
		slices.Sort(v)
		return tmp
	}
	tmp = scratch.Resize(tmp, len(v))
	var count [1 << 16]int
	src, dst := v, tmp
	for shift := 0; shift < 32; shift += 16 {
		clear(count[:])
		for _, x := range src {
			count[uint32(x)>>shift&0xffff]++
		}
		at := 0
		for i, n := range count {
			count[i], at = at, at+n
		}
		for _, x := range src {
			k := uint32(x) >> shift & 0xffff
			dst[count[k]] = x
			count[k]++
		}
		src, dst = dst, src
	}
	return tmp // two passes: the sorted demands are back in v
}

// build groups jb's ticks (period ticks, zero-padded past its demand) by
// residue modulo mod. A class is read as runs of equal consecutive
// demands, which are sorted and merged: a profile quantized from phases
// has a few runs however long its period, so its classes cost a pass over
// the ticks and no sort of them.
func (c *classes) build(jb profile.Profile, period, mod int, b *buildScratch) {
	size := period / mod
	c.mod = mod
	if size == 1 {
		// One tick a class: the demand itself.
		c.off = scratch.Resize(c.off, mod+1)
		c.val, c.cnt, c.sum = scratch.Resize(c.val, mod), scratch.Resize(c.cnt, mod), scratch.Resize(c.sum, mod)
		for r := range mod {
			v := demandAt(jb, r)
			c.off[r], c.val[r], c.cnt[r], c.sum[r] = int32(r), v, 1, int64(v)
		}
		c.off[mod] = int32(mod)
		return
	}
	c.off = scratch.Resize(c.off, mod+1)[:1]
	c.off[0] = 0
	c.val, c.cnt, c.sum = c.val[:0], c.cnt[:0], c.sum[:0]
	for r := range mod {
		// The class as runs of equal consecutive demands, given up at a
		// quarter of its ticks.
		b.runs = b.runs[:0]
		noise := false
		for z := range size {
			v := demandAt(jb, r+z*mod)
			if n := len(b.runs); n > 0 && b.runs[n-1].v == v {
				b.runs[n-1].n++
				continue
			}
			if noise = 4*(len(b.runs)+1) > size; noise {
				break
			}
			b.runs = append(b.runs, pairEntry{v, 1})
		}
		if noise {
			// Noise: hardly any runs to merge; sorting the demands is faster.
			b.vals = scratch.Resize(b.vals, size)
			for z := range size {
				b.vals[z] = demandAt(jb, r+z*mod)
			}
			b.tmp = sortDemands(b.vals, b.tmp)
			b.runs = runsOf(b.runs[:0], b.vals)
		} else {
			sortPairs(b.runs)
		}
		c.appendPairs(b.runs) // merges equal demands
	}
}

// runsOf appends to dst the runs of equal values of vals, one tick each.
func runsOf(dst []pairEntry, vals []int32) []pairEntry {
	for _, v := range vals {
		if n := len(dst); n > 0 && dst[n-1].v == v {
			dst[n-1].n++
			continue
		}
		dst = append(dst, pairEntry{v, 1})
	}
	return dst
}

// sortPairs sorts entries by demand: by insertion when they are the few a
// class of a phase profile holds (no call per comparison), else by
// slices.SortFunc. Entries of equal demand are merged after, so their order
// does not matter.
func sortPairs(p []pairEntry) {
	if len(p) > 12 {
		slices.SortFunc(p, func(x, y pairEntry) int { return cmp.Compare(x.v, y.v) })
		return
	}
	for i := 1; i < len(p); i++ {
		x, j := p[i], i
		for ; j > 0 && p[j-1].v > x.v; j-- {
			p[j] = p[j-1]
		}
		p[j] = x
	}
}

// appendPairs appends a class of entries in ascending demand, merging
// equal demands (their counts summed).
func (c *classes) appendPairs(es []pairEntry) {
	start := len(c.val)
	c.val = slices.Grow(c.val, len(es))[:start+len(es)]
	c.cnt = slices.Grow(c.cnt, len(es))[:start+len(es)]
	n := start
	for _, e := range es {
		if n > start && c.val[n-1] == e.v {
			c.cnt[n-1] += e.n
			continue
		}
		c.val[n], c.cnt[n] = e.v, e.n
		n++
	}
	c.endClass(start, n)
}

// endClass closes the class of entries start to n (their counts in cnt):
// the counts become suffix counts, sums their demand.
func (c *classes) endClass(start, n int) {
	c.val, c.cnt = c.val[:n], c.cnt[:n]
	c.sum = slices.Grow(c.sum, n-start)[:n]
	var k, s int64
	for i := n - 1; i >= start; i-- {
		k += c.cnt[i]
		s += c.cnt[i] * int64(c.val[i])
		c.cnt[i], c.sum[i] = k, s
	}
	c.off = append(c.off, int32(n))
}

// count returns how many ticks entry i of its class (ending at hi) has.
func (c *classes) count(i, hi int) int64 {
	if i+1 < hi {
		return c.cnt[i] - c.cnt[i+1]
	}
	return c.cnt[i]
}

// trivial reports whether c is the histogram of nothing: one zero.
func (c *classes) trivial() bool { return len(c.val) == 1 && c.val[0] == 0 && c.cnt[0] == 1 }

// reset makes c the trivial histogram.
func (c *classes) reset() {
	c.mod = 1
	c.off = append(c.off[:0], 0, 1)
	c.val = append(c.val[:0], 0)
	c.cnt = append(c.cnt[:0], 1)
	c.sum = append(c.sum[:0], 0)
}

// pairEntry is one entry of a histogram being merged.
type pairEntry struct {
	v int32
	n int64
}

// merge convolves the single-class histogram c into w.static (the demand
// of both summed over every pair of their ticks). It reports false, leaving
// w.static unchanged, when the product would pass mergeLimit entries.
func (w *Workspace) merge(c *classes) bool {
	s := &w.static
	if len(s.val)*len(c.val) > mergeLimit {
		return false
	}
	w.pairs = w.pairs[:0]
	for i := range s.val {
		ni := s.count(i, len(s.val))
		for k := range c.val {
			w.pairs = append(w.pairs, pairEntry{s.val[i] + c.val[k], ni * c.count(k, len(c.val))})
		}
	}
	sortPairs(w.pairs)
	s.off = s.off[:1]
	s.val, s.cnt, s.sum = s.val[:0], s.cnt[:0], s.sum[:0]
	s.appendPairs(w.pairs) // merges equal values
	return true
}

// slot is one class structure active in an evaluation: job j's classes (or
// the static histogram, j = -1), delayed by shift ticks.
type slot struct {
	c     *classes
	j     int
	shift int
}

// activate lists the class structures an evaluation of the included jobs
// at the given shifts visits: the included inClasses jobs in plan order and,
// when withStatic is set and it is not trivial, the static histogram. It
// returns how many inClasses jobs it listed.
func (w *Workspace) activate(shifts []int, withStatic bool) int {
	w.act = w.act[:0]
	m := 0
	for _, j := range w.order {
		switch {
		case j >= 0 && w.in[j]:
			w.act = append(w.act, slot{c: &w.cls[j], j: j, shift: shifts[j]})
			m++
		case j < 0 && withStatic && !w.static.trivial():
			w.act = append(w.act, slot{c: &w.static, j: -1})
		}
	}
	return m
}

// unplaced returns the product of the class sizes of the class jobs the
// state does not hold. The excess of a state is counted over every tuple of
// every job's classes, as if the missing jobs were there with no demand, so
// that states with and without a job compare in one unit.
func (w *Workspace) unplaced() int64 {
	f := int64(1)
	for _, j := range w.order {
		if j >= 0 && !w.in[j] {
			f *= w.cls[j].size()
		}
	}
	return f
}

// circleExcess returns the excess over the circle of base (the onCircle
// jobs' demand) plus the included class jobs at the given shifts plus the
// static jobs.
func (w *Workspace) circleExcess(base []int32, shifts []int) int64 {
	return w.unplaced() * w.heldExcess(base, shifts)
}

// heldExcess is circleExcess over the tuples of the held jobs only.
func (w *Workspace) heldExcess(base []int32, shifts []int) int64 {
	if m := w.activate(shifts, false); m == 0 {
		if w.static.trivial() {
			e, _ := w.excessSlack(base)
			w.evals += int64(len(base))
			return e
		}
		if len(w.static.val) <= staticPasses {
			return w.staticExcess(base)
		}
	}
	w.activate(shifts, true)
	return w.perResidue(base)
}

// staticExcess returns the excess of base plus the static jobs: one kernel
// pass per distinct static demand below the capacity (a demand v adds
// max(b+v-C, 0) = max(b-(C-v), 0) at every tick), and a linear term for
// the rest.
func (w *Workspace) staticExcess(base []int32) int64 {
	s, c := &w.static, int64(w.capacity)
	var e, mass int64
	massDone := false
	for i, v := range s.val {
		n := s.count(i, len(s.val))
		if int64(v) < c {
			e += n * kernels.Excess(base, w.zero, int32(c-int64(v)))
			w.evals += int64(len(base))
			continue
		}
		if !massDone {
			for _, b := range base {
				mass += int64(b)
			}
			massDone = true
		}
		e += n * (mass + int64(len(base))*(int64(v)-c))
	}
	return e
}

// perResidue returns the excess of base plus the active class structures,
// residue by residue: at each one the jobs' classes are independent (see
// package circle), so the excess is a sum over the product of the classes.
func (w *Workspace) perResidue(base []int32) int64 {
	return w.residues(base, 0, nil)
}

// residues is perResidue with v added to every residue's base, writing
// each residue's excess into dst when it is not nil: the walk over the
// product of the active classes at each residue is the kernel
// kernels.Residues, which counts its evaluations.
func (w *Workspace) residues(base []int32, v int32, dst []int64) int64 {
	w.kc = w.kc[:0]
	for _, a := range w.act {
		c := a.c
		w.kc = append(w.kc, kernels.Classes{Off: c.off[:c.mod+1], Val: c.val, Cnt: c.cnt, Sum: c.sum, At: circle.Mod(-a.shift, c.mod)})
	}
	w.ks = scratch.Resize(w.ks, kernels.ResiduesScratch(len(w.kc)))
	e, evals := kernels.Residues(dst, w.kc, base, v, w.capacity, w.ks)
	w.evals += evals
	return e
}

// classCostOf estimates one evaluation's cost on the shared circle of n
// ticks, in kernel pair evaluations, from the mean distinct demands per
// class of each class structure.
func (w *Workspace) classCostOf() int64 {
	prod, largest := 1.0, 1.0
	slots := 0
	for _, j := range w.order {
		c := &w.static
		if j >= 0 {
			c = &w.cls[j]
		} else if c.trivial() {
			continue
		}
		d := float64(len(c.val)) / float64(c.mod)
		prod *= d
		largest = max(largest, d)
		slots++
	}
	if slots == 0 {
		return int64(w.n)
	}
	hasClasses := false
	for _, j := range w.order {
		hasClasses = hasClasses || j >= 0
	}
	if !hasClasses && len(w.static.val) <= staticPasses {
		return int64(w.n) * int64(len(w.static.val))
	}
	// The largest class is searched, not walked.
	per := prod / largest * float64(1+bits.Len(uint(largest)))
	cost := float64(w.n) * classCost * per
	if cost > 1<<62 {
		return 1 << 62
	}
	return int64(cost)
}

// equal reports whether classes a and b hold the same demands and counts.
func (c *classes) equal(a, b int) bool {
	if c.single() {
		return c.val[a] == c.val[b] // every class of c holds the same count
	}
	la, lb := int(c.off[a]), int(c.off[b])
	n := int(c.off[a+1]) - la
	if int(c.off[b+1])-lb != n {
		return false
	}
	for i := range n {
		if c.val[la+i] != c.val[lb+i] || c.cnt[la+i] != c.cnt[lb+i] {
			return false
		}
	}
	return true
}

// period returns the least p dividing c.mod with class i equal to class
// i+p for every i (prefix function of the class sequence; fail is scratch).
func (c *classes) period(fail []int32) ([]int32, int) {
	m := c.mod
	if m == 1 {
		return fail, 1
	}
	fail = scratch.Resize(fail, m)
	fail[0] = 0
	if c.single() {
		var p int
		c.pre, p = period(c.val, c.pre)
		return fail, p
	}
	for i := 1; i < m; i++ {
		f := int(fail[i-1])
		for f > 0 && !c.equal(i, f) {
			f = int(fail[f-1])
		}
		if c.equal(i, f) {
			f++
		}
		fail[i] = int32(f)
	}
	if p := m - int(fail[m-1]); m%p == 0 {
		return fail, p
	}
	return fail, m
}

// period is classes.period for classes of one demand each: the least p
// dividing len(v) with v[i] = v[i+p]. Each divisor is tried in ascending
// order, first by its sum (a period's sum times the repeats is the total,
// from the prefix sums in pre) and only then tick by tick, so a profile
// that does not repeat costs one pass.
func period(v []int32, pre []int64) ([]int64, int) {
	m := len(v)
	pre = scratch.Resize(pre, m+1)
	pre[0] = 0
	for i, x := range v {
		pre[i+1] = pre[i] + int64(x)
	}
	try := func(p int) bool {
		if p == m || pre[p]*int64(m/p) != pre[m] {
			return false
		}
		for i, x := range v[p:] {
			if x != v[i] {
				return false
			}
		}
		return true
	}
	d := 1
	for ; d*d <= m; d++ {
		if m%d == 0 && try(d) {
			return pre, d
		}
	}
	for d--; d >= 1; d-- {
		if m%d == 0 && m/d != d && try(m/d) {
			return pre, m / d
		}
	}
	return pre, m
}

// size returns the ticks (weighted) of one class; every class of c has as
// many.
func (c *classes) size() int64 { return c.cnt[c.off[0]] }

// single reports whether every class holds one distinct demand.
func (c *classes) single() bool { return len(c.val) == c.mod }

// foldInto writes into dst the classes of c, whose classes repeat with
// period p, modulo r (r divides p): class ρ of dst merges the classes
// i < p of c with i ≡ ρ (mod r).
func (w *Workspace) foldInto(dst, c *classes, p, r int) {
	dst.mod = r
	dst.off = append(dst.off[:0], 0)
	dst.val, dst.cnt, dst.sum = dst.val[:0], dst.cnt[:0], dst.sum[:0]
	for rho := range r {
		w.pairs = w.pairs[:0]
		for i := rho; i < p; i += r {
			lo, hi := int(c.off[i]), int(c.off[i+1])
			for e := lo; e < hi; e++ {
				w.pairs = append(w.pairs, pairEntry{c.val[e], c.count(e, hi)})
			}
		}
		sortPairs(w.pairs)
		dst.appendPairs(w.pairs)
	}
}

// fold shrinks the shared circle of n residues, on which job j's classes
// are modulo cls[j].mod, by the periods of the classes themselves (see the
// package documentation), until no class sequence repeats within its
// modulus. It returns the circle and the multiplier: the excess over the
// unified circle is mu times the excess summed over the circle's residues
// and the tuples of the classes there.
func (w *Workspace) fold(n int) (int, int64) {
	k := len(w.jobs)
	mu := int64(1)
	w.per = scratch.Resize(w.per, k)
	if len(w.spare) < k {
		w.spare = append(w.spare, make([]classes, k-len(w.spare))...)
	}
	for {
		changed := false
		for j := range k {
			w.fail, w.per[j] = w.cls[j].period(w.fail)
			changed = changed || w.per[j] != w.cls[j].mod
		}
		if !changed {
			return n, mu
		}
		q, l := 1, 1
		for i, a := range w.per {
			l = l / circle.GCD(l, a) * a
			for _, b := range w.per[i+1:] {
				d := circle.GCD(a, b)
				q = q / circle.GCD(q, d) * d
			}
		}
		mu *= int64(n / l)
		for j := range k {
			if r := circle.GCD(w.per[j], q); r != w.cls[j].mod {
				w.foldInto(&w.spare[j], &w.cls[j], w.per[j], r)
				w.cls[j], w.spare[j] = w.spare[j], w.cls[j]
			}
		}
		n = q
	}
}
