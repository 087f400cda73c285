package market

import (
	"cmp"
	"context"
	"math/bits"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
)

// marg is one marginal welfare gain: job j going from n−1 to n rounds. d
// is its value rounded to float64 (monotone in the exact value), the sort
// key; equal keys fall back to the exact grid values.
type marg struct {
	d    float64
	j, n int32
}

// classes groups the jobs by width.
func (w *Workspace) classes(nj int) {
	w.cw = w.cw[:0]
	for j := 0; j < nj; j++ {
		if !slices.Contains(w.cw, w.wid[j]) {
			w.cw = append(w.cw, w.wid[j])
		}
	}
	slices.Sort(w.cw)
	K := len(w.cw)
	w.cstart = grow(w.cstart, K+1)
	clear(w.cstart)
	for j := 0; j < nj; j++ {
		c, _ := slices.BinarySearch(w.cw, w.wid[j])
		w.cls[j] = int32(c)
		w.cstart[c+1] += w.top[j]
	}
	for c := 1; c <= K; c++ {
		w.cstart[c] += w.cstart[c-1]
	}
}

// sortMarginals lists and sorts each class's marginals, once per path.
// Within a class the marginals are sorted by gain (desc, exactly), then by
// the job's rank, then n; since a job's gains are non-increasing in n,
// every prefix of the sorted list that respects the bounds is a prefix per
// job.
func (w *Workspace) sortMarginals(nj int) {
	K := len(w.cw)
	w.mg = grow(w.mg, int(w.cstart[K]))
	fill := w.cfill[:0]
	fill = append(fill, w.cstart[:K]...)
	w.cfill = fill
	for j := 0; j < nj; j++ {
		c := w.cls[j]
		t := w.jt[j]
		for n := int32(1); n <= w.top[j]; n++ {
			d := 0.0
			if t >= 0 {
				var f fbuild
				f.tier(w.marginal(j, int(n)), w.tiers[t].exp)
				d = f.float()
			}
			w.mg[fill[c]] = marg{d: d, j: int32(j), n: n}
			fill[c]++
		}
	}
	rank := w.rankPos
	for c := 0; c < K; c++ {
		slices.SortFunc(w.mg[w.cstart[c]:w.cstart[c+1]], func(a, b marg) int {
			if a.d != b.d {
				if a.d > b.d {
					return -1
				}
				return 1
			}
			if e := w.cmpMarg(a, b); e != 0 {
				return -e
			}
			if a.j != b.j {
				return cmp.Compare(rank[a.j], rank[b.j])
			}
			return cmp.Compare(a.n, b.n)
		})
	}
	w.choice = grow(w.choice, K*(w.C+1))
	w.mc = grow(w.mc, K)
}

// cmpMarg compares two marginals exactly (their float keys being equal).
func (w *Workspace) cmpMarg(a, b marg) int {
	ta, tb := w.jt[a.j], w.jt[b.j]
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
		if w.res[row+int(n)] <= tau {
			return n
		}
	}
	return -1
}

// forced sets w.lam to the least counts meeting makespan tau and returns
// the GPU-rounds they use, or −1 if some job cannot meet tau.
func (w *Workspace) forced(tau float64, lo, hi []int32) int {
	used := 0
	for j := range lo {
		n := w.lambda(j, lo[j], hi[j], tau)
		if n < 0 {
			return -1
		}
		w.lam[j] = n
		used += int(w.wid[j]) * int(n)
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
// monotone, in O(C log C) per class by divide and conquer.
func (w *Workspace) welfare(tau float64, lo, hi, counts []int32, total []uint64) bool {
	used := w.forced(tau, lo, hi)
	if used < 0 || used > w.C {
		return false
	}
	W := w.W
	clear(total)
	for j := range lo {
		w.addGain(total, j, int(w.lam[j]))
	}
	capacity := w.C - used
	best, next := w.best[:(capacity+1)*W], w.next[:(capacity+1)*W]
	K := len(w.cw)
	for c := 0; c < K; c++ {
		wc := int(w.cw[c])
		h := w.buildH(c, capacity/wc, hi)
		mc := len(h)/W - 1
		w.mc[c] = int32(mc)
		if c == 0 {
			for b := 0; b <= capacity; b++ {
				m := min(b/wc, mc)
				copy(best[b*W:b*W+W], h[m*W:m*W+W])
			}
			continue
		}
		cv := convolver{out: next, arg: w.choice[c*(w.C+1) : c*(w.C+1)+capacity+1], h: h, mc: mc, s: wc, W: W}
		for r := 0; r < wc && r <= capacity; r++ {
			// Gather the residue's cells: the scans below then run over
			// contiguous memory.
			L := (capacity - r) / wc
			g := w.gath[:(L+1)*W]
			for i := 0; i <= L; i++ {
				copy(g[i*W:i*W+W], best[(r+wc*i)*W:])
			}
			cv.in, cv.r = g, r
			cv.rec(0, L, 0, L)
		}
		best, next = next, best
	}
	if K > 0 {
		add(total, total, best[capacity*W:capacity*W+W])
	}
	w.lastCap = capacity
	if counts != nil {
		w.argmax(hi, counts)
	}
	return true
}

// argmax writes the counts attaining the last welfare evaluation's value
// (its forced counts, choices and capacity are still in the workspace).
func (w *Workspace) argmax(hi, counts []int32) {
	copy(counts, w.lam)
	b := w.lastCap
	for c := len(w.cw) - 1; c >= 0; c-- {
		wc := int(w.cw[c])
		var m int
		if c == 0 {
			m = b / wc
		} else {
			m = int(w.choice[c*(w.C+1)+b])
		}
		b -= m * wc
		w.take(c, min(m, int(w.mc[c])), hi, counts)
	}
}

// buildH fills w.h with H_c(m), m = 0..limit at most, one number each: the
// welfare of the m best optional increments of class c above the forced
// counts w.lam.
func (w *Workspace) buildH(c, limit int, hi []int32) []uint64 {
	W := w.W
	h := w.h[:W]
	clear(h)
	if limit == 0 {
		return h
	}
	for _, e := range w.mg[w.cstart[c]:w.cstart[c+1]] {
		if e.n > w.lam[e.j] && e.n <= hi[e.j] {
			k := len(h)
			h = append(h, h[k-W:k]...)
			if t := w.jt[e.j]; t >= 0 {
				addAt(h[k:], w.tiers[t].off, w.marginal(int(e.j), int(e.n)))
			}
			if len(h)/W > limit {
				break
			}
		}
	}
	w.h = h
	return h
}

// take adds class c's m best optional increments to counts.
func (w *Workspace) take(c, m int, hi, counts []int32) {
	for _, e := range w.mg[w.cstart[c]:w.cstart[c+1]] {
		if m == 0 {
			return
		}
		if e.n > w.lam[e.j] && e.n <= hi[e.j] {
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
	W       int
}

// rec fills out[l..r] knowing their argmaxes lie in [optl, optr].
func (c *convolver) rec(l, r, optl, optr int) {
	for l <= r {
		mid := (l + r) / 2
		hi := min(mid, optr)
		var bi int
		switch c.W {
		case 2:
			bi = c.best2(mid, optl, hi)
		case 3:
			bi = c.best3(mid, optl, hi)
		case 4:
			bi = c.best4(mid, optl, hi)
		default:
			bi = c.bestN(mid, optl, hi)
		}
		c.arg[c.r+c.s*mid] = int32(mid - bi)
		c.rec(l, mid-1, optl, bi)
		l, optl = mid+1, bi
	}
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
	T := w.cfg.T
	W := w.W
	floor, top := 0.0, 0.0
	for j := range lo {
		floor = max(floor, w.res[j*(T+1)+int(hi[j])])
		top = max(top, w.res[j*(T+1)+int(lo[j])])
	}
	cand := w.cand[:0]
	for j := range lo {
		row := j * (T + 1)
		for n := lo[j]; n <= hi[j]; n++ {
			if v := w.res[row+int(n)]; v >= floor && v <= top {
				cand = append(cand, v)
			}
		}
	}
	if len(cand) == 0 {
		cand = append(cand, floor)
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	w.cand = cand
	// Least feasible τ: aggregate capacity is monotone in τ.
	if u := w.forced(cand[len(cand)-1], lo, hi); u < 0 || u > w.C {
		return relaxation{}
	}
	a, b := 0, len(cand)-1
	for a < b {
		m := (a + b) / 2
		if u := w.forced(cand[m], lo, hi); u >= 0 && u <= w.C {
			b = m
		} else {
			a = m + 1
		}
	}
	first, last := a, len(cand)-1
	wv := grow(w.wv, len(cand)*W)
	w.wv = wv
	lastEval := -1
	eval := func(i int) {
		w.welfare(cand[i], lo, hi, nil, wv[i*W:i*W+W])
		lastEval = i
	}
	// sc(iw, it): the score of W(cand[iw]) with makespan cand[it].
	sc := func(z []uint64, iw, it int) []uint64 {
		w.mkInto(z, cand[it])
		add(z, z, wv[iw*W:iw*W+W])
		return z
	}
	bs, ub := w.relBS[:W], w.relUB[:W]
	// The least feasible τ is evaluated last: it wins most often, and the
	// last evaluation's choices give the counts without a rerun.
	if last != first {
		eval(last)
	}
	eval(first)
	besti := first
	if last != first && cmpNum(sc(ub, last, last), sc(bs, first, first)) > 0 {
		besti = last
	}
	sc(bs, besti, besti)
	stack := w.stack[:0]
	if last-first > 1 {
		stack = append(stack, [2]int32{int32(first), int32(last)})
	}
	complete := true
	for len(stack) > 0 {
		iv := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ia, ib := int(iv[0]), int(iv[1])
		if cmpNum(sc(ub, ib, ia+1), bs) <= 0 {
			continue
		}
		if deadline.Done(ctx) {
			stack = append(stack, iv)
			complete = false
			break
		}
		m := (ia + ib) / 2
		eval(m)
		if cmpNum(sc(ub, m, m), bs) > 0 {
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
	if lastEval == besti {
		w.argmax(hi, counts)
	} else {
		w.welfare(cand[besti], lo, hi, counts, ub)
	}
	res := relaxation{feasible: true, complete: complete, best: w.relBest[:W], bound: w.relBound[:W]}
	res.tau = w.evalCounts(counts, res.best)
	copy(res.bound, res.best)
	for _, iv := range stack {
		if cmpNum(sc(ub, int(iv[1]), int(iv[0])+1), res.bound) > 0 {
			copy(res.bound, ub)
		}
	}
	w.stack = stack[:0]
	return res
}

// evalCounts sets z to the score of the counts n (gains form, exact.go)
// and returns their makespan.
func (w *Workspace) evalCounts(n []int32, z []uint64) float64 {
	T := w.cfg.T
	tau := 0.0
	for j, c := range n {
		tau = max(tau, w.res[j*(T+1)+int(c)])
	}
	w.mkInto(z, tau)
	for j, c := range n {
		w.addGain(z, j, int(c))
	}
	return tau
}

func grow[S ~[]E, E any](s S, n int) S {
	if cap(s) < n {
		return make(S, n)
	}
	return s[:n]
}
