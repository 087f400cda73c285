package market

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
)

// marg is one marginal welfare gain: job j going from n−1 to n rounds. d
// is its value rounded to float64 (monotone in the exact value), the sort
// key; equal keys fall back to the exact grid values.
type marg struct {
	d    float64
	j, n int32
}

// knapsack is the count relaxation's separable knapsack W(τ): the width
// classes, each class's marginal gains sorted, and the DP over capacity.
type knapsack struct {
	capacity   int     // C = min(M·T, Σ_j w_j·top_j): the GPU-rounds the DP spans
	classWidth []int32 // the distinct widths, ascending
	class      []int32 // job → its class
	// classStart[c] is where class c's marginals start in margs (the
	// classes in order, each with Σ top_j entries).
	classStart []int32
	fill       []int32 // sortMarginals' scratch: the next free slot per class
	margs      []marg
	margTmp    []marg // sortMarginals' scratch
	// choice[c·(C+1)+b] is the count class c takes at capacity b in the last
	// evaluation (for c ≥ 1; class 0 takes all it can).
	choice   []int32
	maxCount []int32  // per class: the largest count H_c was built for
	least    []int32  // per job: the least count meeting the makespan (forced)
	h        []uint64 // H_c(m), m = 0.., one number each (buildH)
	// row and next are the DP rows over capacity 0..C, one number per
	// cell; gathered holds one residue's cells of row, contiguously.
	row, next, gathered []uint64
	lastCap             int     // the capacity of the last evaluation
	step                []int32 // per class: the capacities it fills (cellSteps)
	// allCells fills every capacity of every class (tests: the cells
	// welfare reads must agree with it).
	allCells bool
}

// classes groups the jobs by width.
func (w *Workspace) classes(nj int) {
	ks := &w.ks
	ks.classWidth = ks.classWidth[:0]
	for j := 0; j < nj; j++ {
		if !slices.Contains(ks.classWidth, w.tab.width[j]) {
			ks.classWidth = append(ks.classWidth, w.tab.width[j])
		}
	}
	slices.Sort(ks.classWidth)
	K := len(ks.classWidth)
	ks.classStart = scratch.Resize(ks.classStart, K+1)
	clear(ks.classStart)
	for j := 0; j < nj; j++ {
		c, _ := slices.BinarySearch(ks.classWidth, w.tab.width[j])
		ks.class[j] = int32(c)
		ks.classStart[c+1] += w.tab.top[j]
	}
	for c := 1; c <= K; c++ {
		ks.classStart[c] += ks.classStart[c-1]
	}
}

// sortMarginals lists and sorts each class's marginals, once per path.
// Within a class the marginals are sorted by gain (desc, exactly), then by
// the job's rank, then n; since a job's gains are non-increasing in n,
// every prefix of the sorted list that respects the bounds is a prefix per
// job.
func (w *Workspace) sortMarginals(nj int) {
	ks := &w.ks
	K := len(ks.classWidth)
	ks.margs = scratch.Resize(ks.margs, int(ks.classStart[K]))
	fill := ks.fill[:0]
	fill = append(fill, ks.classStart[:K]...)
	ks.fill = fill
	for j := 0; j < nj; j++ {
		c := ks.class[j]
		t := w.ex.jobTier[j]
		for n := int32(1); n <= w.tab.top[j]; n++ {
			d := 0.0
			if t >= 0 {
				var f fbuild
				f.tier(w.marginal(j, int(n)), w.ex.tiers[t].exp)
				d = f.float()
			}
			ks.margs[fill[c]] = marg{d: d, j: int32(j), n: n}
			fill[c]++
		}
	}
	rank := w.tab.orderPos
	tie := func(a, b marg) int { // equal keys
		if e := w.cmpMarg(a, b); e != 0 {
			return -e
		}
		if a.j != b.j {
			return cmp.Compare(rank[a.j], rank[b.j])
		}
		return cmp.Compare(a.n, b.n)
	}
	ks.margTmp = scratch.Resize(ks.margTmp, len(ks.margs))
	for c := 0; c < K; c++ {
		a, b := ks.classStart[c], ks.classStart[c+1]
		sortGains(ks.margs[a:b], ks.margTmp[a:b], tie)
	}
	ks.choice = scratch.Resize(ks.choice, K*(ks.capacity+1))
	ks.maxCount = scratch.Resize(ks.maxCount, K)
}

// sortGains sorts ms by key d descending, equal keys by tie: a stable
// radix sort on the keys' bits, then each run of equal keys by tie. The
// order is the comparison sort's (d, then tie, is a total order). tmp is
// scratch of ms's length.
func sortGains(ms, tmp []marg, tie func(a, b marg) int) {
	if len(ms) < 2 {
		return
	}
	// key is d's bits, flipped so that ascending keys are descending
	// floats (−0 read as +0, as == does).
	key := func(d float64) uint64 {
		if d == 0 {
			d = 0
		}
		u := math.Float64bits(d)
		if u>>63 == 0 {
			return ^(u | 1<<63)
		}
		return u
	}
	var counts [8][256]int
	for _, m := range ms {
		k := key(m.d)
		for b := range 8 {
			counts[b][byte(k>>(8*b))]++
		}
	}
	src, dst := ms, tmp
	for b := range 8 {
		c := &counts[b]
		if c[byte(key(ms[0].d)>>(8*b))] == len(ms) {
			continue // every key has this byte
		}
		sum := 0
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		for _, m := range src {
			d := byte(key(m.d) >> (8 * b))
			dst[c[d]] = m
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ms[0] {
		copy(ms, src)
	}
	for i := 0; i < len(ms); {
		e := i + 1
		for e < len(ms) && ms[e].d == ms[i].d {
			e++
		}
		if e-i > 1 {
			slices.SortFunc(ms[i:e], tie)
		}
		i = e
	}
}

// cmpMarg compares two marginals exactly (their float keys being equal).
func (w *Workspace) cmpMarg(a, b marg) int {
	ta, tb := w.ex.jobTier[a.j], w.ex.jobTier[b.j]
	if ta == tb {
		if ta < 0 {
			return 0
		}
		return cmpNum(w.marginal(int(a.j), int(a.n)), w.marginal(int(b.j), int(b.n)))
	}
	za := ta < 0 || isZero(w.marginal(int(a.j), int(a.n)))
	zb := tb < 0 || isZero(w.marginal(int(b.j), int(b.n)))
	switch {
	case za && zb:
		return 0
	case za:
		return -1
	case zb:
		return 1
	}
	return cmp.Compare(tb, ta) // a positive term of a more significant tier is larger
}

func isZero(x []uint64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// lambda returns the least n in [lo, hi] with res_j(n) ≤ tau, or −1.
func (w *Workspace) lambda(j int, lo, hi int32, tau float64) int32 {
	row := j * (w.cfg.T + 1)
	for n := lo; n <= hi; n++ {
		if w.tab.res[row+int(n)] <= tau {
			return n
		}
	}
	return -1
}

// forced sets w.ks.least to the least counts meeting makespan tau and returns
// the GPU-rounds they use, or −1 if some job cannot meet tau.
func (w *Workspace) forced(tau float64, lo, hi []int32) int {
	if tau <= w.bb.floor || (w.lag.active && tau <= w.lag.tauFloor) {
		return -1 // certified: the counts that makespan forces do not pack
	}
	used := 0
	for j := range lo {
		n := w.lambda(j, lo[j], hi[j], tau)
		if n < 0 {
			return -1
		}
		w.ks.least[j] = n
		used += int(w.tab.width[j]) * int(n)
	}
	return used
}

// welfare sets total to W(τ) = max Σ_j G_j(n_j) subject to lo ≤ n ≤ hi,
// res_j(n_j) ≤ τ and Σ_j w_j·n_j ≤ M·T (exact, on the grid), and returns
// false when no counts satisfy the constraints. With counts != nil it also
// writes the maximizing counts.
//
// The knapsack is solved exactly by width class: within a class all items
// weigh the same, so the best use of m slots is the m largest marginal gains
// (a concave H_c(m), the gains being non-increasing per job); classes are
// combined by max-plus convolution with a concave kernel, whose argmax is
// monotone, in O(C log C) per class by divide and conquer, at only the
// capacities the later classes read (cellSteps).
func (w *Workspace) welfare(tau float64, lo, hi, counts []int32, total []uint64) bool {
	ks := &w.ks
	used := w.forced(tau, lo, hi)
	if used < 0 || used > ks.capacity {
		return false
	}
	W := w.ex.limbs
	clear(total)
	for j := range lo {
		w.addGain(total, j, int(ks.least[j]))
	}
	capacity := ks.capacity - used
	best, next := ks.row[:(capacity+1)*W], ks.next[:(capacity+1)*W]
	K := len(ks.classWidth)
	w.cellSteps()
	for c := 0; c < K; c++ {
		wc := int(ks.classWidth[c])
		h := w.buildH(c, capacity/wc, hi)
		mc := len(h)/W - 1
		ks.maxCount[c] = int32(mc)
		if c == 0 {
			for b := 0; b <= capacity; b++ {
				m := min(b/wc, mc)
				copy(best[b*W:b*W+W], h[m*W:m*W+W])
			}
			continue
		}
		at := c * (ks.capacity + 1) // class c's choices
		cv := convolver{out: next, arg: ks.choice[at : at+capacity+1], h: h, mc: mc, s: wc, W: W}
		for r := 0; r < wc && r <= capacity; r++ {
			L := (capacity - r) / wc
			m0, p, ok := cellRows(capacity-r, wc, int(ks.step[c]), L)
			if !ok {
				continue
			}
			// Gather the residue's cells up to the last one filled: the
			// scans below then run over contiguous memory.
			last := m0 + p*((L-m0)/p)
			g := ks.gathered[:(last+1)*W]
			for i := 0; i <= last; i++ {
				copy(g[i*W:i*W+W], best[(r+wc*i)*W:])
			}
			cv.in, cv.r, cv.m0, cv.p = g, r, m0, p
			cv.rec(0, (last-m0)/p, 0, last)
		}
		best, next = next, best
	}
	if K > 0 {
		add(total, total, best[capacity*W:capacity*W+W])
	}
	ks.lastCap = capacity
	if counts != nil {
		w.argmax(hi, counts)
	}
	return true
}

// argmax writes the counts attaining the last welfare evaluation's value
// (its forced counts, choices and capacity are still in the workspace).
func (w *Workspace) argmax(hi, counts []int32) {
	ks := &w.ks
	copy(counts, ks.least)
	b := ks.lastCap
	for c := len(ks.classWidth) - 1; c >= 0; c-- {
		wc := int(ks.classWidth[c])
		var m int
		if c == 0 {
			m = b / wc
		} else {
			m = int(ks.choice[c*(ks.capacity+1)+b])
		}
		b -= m * wc
		w.take(c, min(m, int(ks.maxCount[c])), hi, counts)
	}
}

// buildH fills w.ks.h with H_c(m), m = 0..limit at most, one number each: the
// welfare of the m best optional increments of class c above the forced
// counts w.ks.least.
func (w *Workspace) buildH(c, limit int, hi []int32) []uint64 {
	ks := &w.ks
	W := w.ex.limbs
	h := ks.h[:W]
	clear(h)
	if limit == 0 {
		return h
	}
	for _, e := range ks.margs[ks.classStart[c]:ks.classStart[c+1]] {
		if e.n > ks.least[e.j] && e.n <= hi[e.j] {
			k := len(h)
			h = append(h, h[k-W:k]...)
			if t := w.ex.jobTier[e.j]; t >= 0 {
				addAt(h[k:], w.ex.tiers[t].off, w.marginal(int(e.j), int(e.n)))
			}
			if len(h)/W > limit {
				break
			}
		}
	}
	ks.h = h
	return h
}

// take adds class c's m best optional increments to counts.
func (w *Workspace) take(c, m int, hi, counts []int32) {
	ks := &w.ks
	for _, e := range ks.margs[ks.classStart[c]:ks.classStart[c+1]] {
		if m == 0 {
			return
		}
		if e.n > ks.least[e.j] && e.n <= hi[e.j] {
			counts[e.j]++
			m--
		}
	}
}

// convolver computes out[r+s·i'] = max_{i≤i'} in[i] + h[min(i'−i, mc)] for
// one residue r, on numbers of W limbs; in holds the previous row's cells
// r+s·i, gathered.
type convolver struct {
	in, out []uint64
	arg     []int32
	h       []uint64
	mc      int
	r, s    int
	m0, p   int // the cells filled: r+s·(m0+p·k)
	W       int
}

// rec fills the cells m0+p·k, k in [l, r], knowing their argmaxes lie in
// [optl, optr]: the leftmost argmax is monotone in the cell (h is
// concave), in any subset of the cells.
func (c *convolver) rec(l, r, optl, optr int) {
	for l <= r {
		k := (l + r) / 2
		mid := c.m0 + c.p*k
		bi := c.best(mid, optl, min(mid, optr))
		c.arg[c.r+c.s*mid] = int32(mid - bi)
		c.rec(l, k-1, optl, bi)
		l, optl = k+1, bi
	}
}

// cellSteps sets w.ks.step: class c fills only the capacities ≡ the
// evaluation's capacity modulo step[c] (0: that capacity alone), the ones
// the classes after it read: the last class is read at the capacity (the
// value and argmax's first step), and class c+1, filling capacities b ≡
// capacity (mod s), reads class c at b − w_{c+1}·i, all ≡ capacity modulo
// gcd(w_{c+1}, s). With allCells every class fills every capacity.
func (w *Workspace) cellSteps() {
	ks := &w.ks
	K := len(ks.classWidth)
	ks.step = scratch.Resize(ks.step, K)
	s := int32(0)
	for c := K - 1; c >= 0; c-- {
		if ks.allCells {
			s = 1
		}
		ks.step[c] = s
		s = gcd32(ks.classWidth[c], s)
	}
}

func gcd32(a, b int32) int32 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// cellRows returns the cells of one residue a class fills: the counts
// mid in [0, L] with w·mid ≡ d (mod s) (s = 0: w·mid = d) are m0, m0+p,
// …; ok is false when there are none.
func cellRows(d, w, s, L int) (m0, p int, ok bool) {
	if s == 0 {
		return L, 1, d == w*L
	}
	g := int(gcd32(int32(w), int32(s)))
	if d%g != 0 {
		return 0, 0, false
	}
	p = s / g
	m0 = (d / g % p) * modInverse(w/g%p, p) % p
	return m0, p, m0 <= L
}

// modInverse returns x in [0, m) with a·x ≡ 1 (mod m), for a and m
// coprime (0 when m = 1).
func modInverse(a, m int) int {
	if m == 1 {
		return 0
	}
	r0, r1, x0, x1 := m, a, 0, 1
	for r1 != 0 {
		q := r0 / r1
		r0, r1 = r1, r0-q*r1
		x0, x1 = x1, x0-q*x1
	}
	return (x0%m + m) % m
}

// best writes out[r+s·mid] = max over i in [lo, hi] of
// in[i] + h[min(mid−i, mc)] and returns the leftmost argmax.
func (c *convolver) best(mid, lo, hi int) int {
	switch c.W {
	case 2:
		return c.best2(mid, lo, hi)
	case 3:
		return c.best3(mid, lo, hi)
	case 4:
		return c.best4(mid, lo, hi)
	}
	return c.bestN(mid, lo, hi)
}

// best2 writes out[r+s·mid] = max over i in [lo, hi] of
// in[i] + h[min(mid−i, mc)] and returns the leftmost argmax, for numbers of
// two limbs.
func (c *convolver) best2(mid, lo, hi int) int {
	in, h := c.in, c.h
	var b0, b1 uint64
	bi := -1
	for i := lo; i <= hi; i++ {
		x := 2 * i
		k := 2 * min(mid-i, c.mc)
		v1, cy := bits.Add64(in[x+1], h[k+1], 0)
		v0, _ := bits.Add64(in[x], h[k], cy)
		if bi < 0 || v0 > b0 || (v0 == b0 && v1 > b1) {
			b0, b1, bi = v0, v1, i
		}
	}
	o := 2 * (c.r + c.s*mid)
	c.out[o], c.out[o+1] = b0, b1
	return bi
}

// best3 is best2 for three limbs.
func (c *convolver) best3(mid, lo, hi int) int {
	in, h := c.in, c.h
	var b0, b1, b2 uint64
	bi := -1
	for i := lo; i <= hi; i++ {
		x := 3 * i
		k := 3 * min(mid-i, c.mc)
		v2, cy := bits.Add64(in[x+2], h[k+2], 0)
		v1, cy := bits.Add64(in[x+1], h[k+1], cy)
		v0, _ := bits.Add64(in[x], h[k], cy)
		if bi < 0 || v0 > b0 || (v0 == b0 && (v1 > b1 || (v1 == b1 && v2 > b2))) {
			b0, b1, b2, bi = v0, v1, v2, i
		}
	}
	o := 3 * (c.r + c.s*mid)
	c.out[o], c.out[o+1], c.out[o+2] = b0, b1, b2
	return bi
}

// best4 is best2 for four limbs.
func (c *convolver) best4(mid, lo, hi int) int {
	in, h := c.in, c.h
	var b0, b1, b2, b3 uint64
	bi := -1
	for i := lo; i <= hi; i++ {
		x := 4 * i
		k := 4 * min(mid-i, c.mc)
		v3, cy := bits.Add64(in[x+3], h[k+3], 0)
		v2, cy := bits.Add64(in[x+2], h[k+2], cy)
		v1, cy := bits.Add64(in[x+1], h[k+1], cy)
		v0, _ := bits.Add64(in[x], h[k], cy)
		if bi < 0 || v0 > b0 || (v0 == b0 && (v1 > b1 || (v1 == b1 && (v2 > b2 || (v2 == b2 && v3 > b3))))) {
			b0, b1, b2, b3, bi = v0, v1, v2, v3, i
		}
	}
	o := 4 * (c.r + c.s*mid)
	c.out[o], c.out[o+1], c.out[o+2], c.out[o+3] = b0, b1, b2, b3
	return bi
}

// bestN is best2 for any number of limbs.
func (c *convolver) bestN(mid, lo, hi int) int {
	W := c.W
	var t, bv [maxLimbs]uint64
	bi := -1
	for i := lo; i <= hi; i++ {
		x := c.in[i*W:][:W]
		k := min(mid-i, c.mc) * W
		y := c.h[k:][:W]
		var cy uint64
		for q := W - 1; q >= 0; q-- {
			t[q], cy = bits.Add64(x[q], y[q], cy)
		}
		if bi < 0 || cmpNum(t[:W], bv[:W]) > 0 {
			bv, bi = t, i
		}
	}
	copy(c.out[(c.r+c.s*mid)*W:], bv[:W])
	return bi
}

// tauSearch is the count relaxation's search over makespan candidates.
type tauSearch struct {
	cand  []float64  // the candidates τ, ascending
	wval  []uint64   // W(cand[i]), one number each, as evaluated
	stack [][2]int32 // candidate intervals still to split
	// lastEval is the candidate the last welfare evaluation was for: its
	// choices are still in the knapsack.
	lastEval int
	best     []uint64 // the best score so far
	probe    []uint64 // a score or bound being compared
	found    []uint64 // the score of the counts returned (relaxation.best)
	bound    []uint64 // the bound returned (relaxation.bound)
}

// relaxation is the outcome of one count relaxation.
type relaxation struct {
	feasible bool
	complete bool     // the τ search finished: best is the relaxation optimum
	best     []uint64 // score of the best counts found (written to the counts argument)
	tau      float64  // their makespan
	bound    []uint64 // upper bound on the relaxation optimum's score
}

// relax solves the count relaxation (capacity aggregated over the window)
//
//	max Σ_j val_j(n_j) − k·max_j res_j(n_j)   s.t. lo ≤ n ≤ hi, Σ_j w_j·n_j ≤ M·T
//
// exactly: the optimal makespan τ* is one of the values res_j(n), W(τ) is
// non-decreasing, so the search over the sorted candidates starts at the
// least feasible τ and prunes any interval [τ_a, τ_b] whose bound
// W(τ_b) − k·τ_a is no better than the best found. Scores are compared
// exactly on the grid (exact.go).
func (w *Workspace) relax(ctx context.Context, lo, hi, counts []int32) relaxation {
	W := w.ex.limbs
	cand := w.tauCandidates(lo, hi)
	first, ok := w.leastFeasible(cand, lo, hi)
	if !ok {
		return relaxation{}
	}
	besti, complete := w.searchTau(ctx, first, lo, hi)
	probe := w.tau.probe[:W]
	if w.tau.lastEval == besti {
		w.argmax(hi, counts)
	} else {
		w.welfare(cand[besti], lo, hi, counts, probe)
	}
	res := relaxation{feasible: true, complete: complete, best: w.tau.found[:W], bound: w.tau.bound[:W]}
	res.tau = w.evalCounts(counts, res.best)
	// The bound: the best score of the search (the counts found, unless
	// the Lagrangian bound is below their aggregate value), or what an
	// interval left unsplit (the context ended) could still hold.
	copy(res.bound, w.tau.best[:W])
	if !w.lag.active && cmpNum(res.best, res.bound) > 0 {
		copy(res.bound, res.best)
	}
	for _, iv := range w.tau.stack {
		if cmpNum(w.tauScore(probe, int(iv[1]), int(iv[0])+1), res.bound) > 0 {
			copy(res.bound, probe)
		}
	}
	w.tau.stack = w.tau.stack[:0]
	return res
}

// tauCandidates lists the makespans the optimum can have, ascending and
// distinct: the values res_j(n), lo_j ≤ n ≤ hi_j, between the least
// makespan reachable (every job at hi) and the largest one needed (every
// job at lo).
func (w *Workspace) tauCandidates(lo, hi []int32) []float64 {
	T, res := w.cfg.T, w.tab.res
	floor, top := 0.0, 0.0
	for j := range lo {
		floor = max(floor, res[j*(T+1)+int(hi[j])])
		top = max(top, res[j*(T+1)+int(lo[j])])
	}
	cand := w.tau.cand[:0]
	for j := range lo {
		row := j * (T + 1)
		for n := lo[j]; n <= hi[j]; n++ {
			if v := res[row+int(n)]; v >= floor && v <= top {
				cand = append(cand, v)
			}
		}
	}
	if len(cand) == 0 {
		cand = append(cand, floor)
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	w.tau.cand = cand
	return cand
}

// leastFeasible returns the index of the least candidate whose forced
// counts fit the aggregate capacity (which is monotone in τ), or false
// when none does.
func (w *Workspace) leastFeasible(cand []float64, lo, hi []int32) (int, bool) {
	if u := w.forced(cand[len(cand)-1], lo, hi); u < 0 || u > w.ks.capacity {
		return 0, false
	}
	a, b := 0, len(cand)-1
	for a < b {
		m := (a + b) / 2
		if u := w.forced(cand[m], lo, hi); u >= 0 && u <= w.ks.capacity {
			b = m
		} else {
			a = m + 1
		}
	}
	return a, true
}

// searchTau finds the best candidate from cand[first] on: W is
// non-decreasing, so an interval [a, b] of candidates is split only while
// its bound W(τ_b) − k·τ_{a+1} beats the best score. It returns the best
// candidate's index and whether the search finished (false: the context
// ended, and w.tau.stack holds the intervals left).
func (w *Workspace) searchTau(ctx context.Context, first int, lo, hi []int32) (int, bool) {
	W := w.ex.limbs
	last := len(w.tau.cand) - 1
	w.tau.wval = scratch.Resize(w.tau.wval, len(w.tau.cand)*W)
	w.tau.lastEval = -1
	bs, ub := w.tau.best[:W], w.tau.probe[:W]
	// The least feasible τ is evaluated last: it wins most often, and the
	// last evaluation's choices give the counts without a rerun.
	if last != first {
		w.tauEval(last, lo, hi)
	}
	w.tauEval(first, lo, hi)
	besti := first
	if last != first && cmpNum(w.tauScore(ub, last, last), w.tauScore(bs, first, first)) > 0 {
		besti = last
	}
	w.tauScore(bs, besti, besti)
	stack := w.tau.stack[:0]
	if last-first > 1 {
		stack = append(stack, [2]int32{int32(first), int32(last)})
	}
	complete := true
	for len(stack) > 0 {
		iv := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ia, ib := int(iv[0]), int(iv[1])
		if cmpNum(w.tauScore(ub, ib, ia+1), bs) <= 0 {
			continue
		}
		if deadline.Done(ctx) {
			stack = append(stack, iv)
			complete = false
			break
		}
		m := (ia + ib) / 2
		w.tauEval(m, lo, hi)
		if cmpNum(w.tauScore(ub, m, m), bs) > 0 {
			besti = m
			copy(bs, ub)
		}
		if ib-m > 1 {
			stack = append(stack, [2]int32{int32(m), int32(ib)})
		}
		if m-ia > 1 {
			stack = append(stack, [2]int32{int32(ia), int32(m)})
		}
	}
	w.tau.stack = stack
	return besti, complete
}

// tauEval evaluates W(cand[i]) into its slot of w.tau.wval.
func (w *Workspace) tauEval(i int, lo, hi []int32) {
	W := w.ex.limbs
	slot := w.tau.wval[i*W : i*W+W]
	ok := w.welfare(w.tau.cand[i], lo, hi, nil, slot)
	w.tau.lastEval = i
	// The Lagrangian bound, where it is tighter (lagrange.go): W is then
	// an upper bound on the welfare, not the relaxation's optimum.
	if ok && w.lag.active && w.lagWelfare(w.ks.least, hi, w.lag.out) && cmpNum(w.lag.out, slot) < 0 {
		copy(slot, w.lag.out)
	}
}

// tauScore sets z to the score of W(cand[iw]) with makespan cand[it].
func (w *Workspace) tauScore(z []uint64, iw, it int) []uint64 {
	W := w.ex.limbs
	w.mkInto(z, w.tau.cand[it])
	add(z, z, w.tau.wval[iw*W:iw*W+W])
	return z
}

// evalCounts sets z to the score of the counts n (gains form, exact.go)
// and returns their makespan.
func (w *Workspace) evalCounts(n []int32, z []uint64) float64 {
	T := w.cfg.T
	tau := 0.0
	for j, c := range n {
		tau = max(tau, w.tab.res[j*(T+1)+int(c)])
	}
	w.mkInto(z, tau)
	for j, c := range n {
		w.addGain(z, j, int(c))
	}
	return tau
}
