package market

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// score is an objective value kept as its two terms, welfare W and makespan
// τ, so that comparisons do not lose the welfare part to the rounding of
// k·τ when k is large (notes 1.4: at k = 1e5 the objective is lexicographic).
type score struct{ w, tau float64 }

// value is W − k·τ.
func (a score) value(k float64) float64 { return a.w - float64(k*a.tau) }

// diff is a − b computed term by term.
func (a score) diff(b score, k float64) float64 {
	if a.tau == b.tau {
		return a.w - b.w
	}
	return (a.w - b.w) - float64(k*(a.tau-b.tau))
}

// marg is one marginal welfare gain: job j going from n−1 to n rounds.
type marg struct {
	d    float64
	j, n int32
}

// classes groups the jobs by width and sorts each class's marginals, once
// per path. Within a class the marginals are sorted by gain (desc), then by
// the job's rank, then n; since a job's gains are non-increasing in n, every
// prefix of the sorted list that respects the bounds is a prefix per job.
func (w *Workspace) classes(nj int) {
	T := w.cfg.T
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
	w.mg = grow(w.mg, int(w.cstart[K]))
	fill := w.cfill[:0]
	fill = append(fill, w.cstart[:K]...)
	w.cfill = fill
	for j := 0; j < nj; j++ {
		c := w.cls[j]
		row := j * (T + 1)
		for n := int32(1); n <= w.top[j]; n++ {
			w.mg[fill[c]] = marg{d: w.val[row+int(n)] - w.val[row+int(n)-1], j: int32(j), n: n}
			fill[c]++
		}
	}
	rank := w.rankPos
	for c := 0; c < K; c++ {
		slices.SortFunc(w.mg[w.cstart[c]:w.cstart[c+1]], func(a, b marg) int {
			if a.d > b.d {
				return -1
			}
			if a.d < b.d {
				return 1
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

// welfare returns W(τ) = max Σ_j val_j(n_j) subject to lo ≤ n ≤ hi,
// res_j(n_j) ≤ τ and Σ_j w_j·n_j ≤ M·T, and false when no counts satisfy
// the constraints. With counts != nil it also writes the maximizing counts.
//
// The knapsack is solved exactly by width class: within a class all items
// weigh the same, so the best use of m slots is the m largest marginal gains
// (a concave H_c(m), the gains being non-increasing per job); classes are
// combined by max-plus convolution with a concave kernel, whose argmax is
// monotone, in O(C log C) per class by divide and conquer.
func (w *Workspace) welfare(tau float64, lo, hi, counts []int32) (float64, bool) {
	used := w.forced(tau, lo, hi)
	if used < 0 || used > w.C {
		return 0, false
	}
	T := w.cfg.T
	base := 0.0
	for j := range lo {
		base += w.val[j*(T+1)+int(w.lam[j])]
	}
	capacity := w.C - used
	best, next := w.best[:capacity+1], w.next[:capacity+1]
	K := len(w.cw)
	for c := 0; c < K; c++ {
		wc := int(w.cw[c])
		h := w.buildH(c, capacity/wc, hi)
		mc := len(h) - 1
		w.mc[c] = int32(mc)
		if c == 0 {
			for b := range best {
				best[b] = h[min(b/wc, mc)]
			}
			continue
		}
		cv := convolver{in: best, out: next, arg: w.choice[c*(w.C+1) : c*(w.C+1)+capacity+1], h: h, mc: mc, s: wc}
		for r := 0; r < wc && r <= capacity; r++ {
			cv.r = r
			cv.rec(0, (capacity-r)/wc, 0, (capacity-r)/wc)
		}
		best, next = next, best
	}
	total := base
	if K > 0 {
		total += best[capacity]
	}
	if counts != nil {
		copy(counts, w.lam)
		b := capacity
		for c := K - 1; c >= 0; c-- {
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
	return total, true
}

// buildH fills w.h with H_c(m), m = 0..limit at most: the welfare of the m
// best optional increments of class c above the forced counts w.lam.
func (w *Workspace) buildH(c, limit int, hi []int32) []float64 {
	h := w.h[:1]
	h[0] = 0
	if limit == 0 {
		return h
	}
	for _, e := range w.mg[w.cstart[c]:w.cstart[c+1]] {
		if e.n > w.lam[e.j] && e.n <= hi[e.j] {
			h = append(h, h[len(h)-1]+e.d)
			if len(h) > limit {
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

// convolver computes out[r+s·i'] = max_{i≤i'} in[r+s·i] + h[min(i'−i, mc)]
// for one residue r. h is concave, so the leftmost argmax i is
// non-decreasing in i' and divide and conquer needs O(L log L) evaluations.
type convolver struct {
	in, out []float64
	arg     []int32
	h       []float64
	mc      int
	r, s    int
}

// rec fills out[l..r] knowing their argmaxes lie in [optl, optr].
func (c *convolver) rec(l, r, optl, optr int) {
	for l <= r {
		mid := (l + r) / 2
		hi := min(mid, optr)
		bv, bi := math.Inf(-1), optl
		for i := optl; i <= hi; i++ {
			v := c.in[c.r+c.s*i] + c.h[min(mid-i, c.mc)]
			if v > bv {
				bv, bi = v, i
			}
		}
		c.out[c.r+c.s*mid] = bv
		c.arg[c.r+c.s*mid] = int32(mid - bi)
		c.rec(l, mid-1, optl, bi)
		l, optl = mid+1, bi
	}
}

// relaxation is the outcome of one count relaxation.
type relaxation struct {
	feasible bool
	complete bool  // the τ search finished: best is the relaxation optimum
	best     score // the best counts found (written to the counts argument)
	bound    score // upper bound on the relaxation optimum
}

// relax solves the count relaxation (capacity aggregated over the window)
//
//	max Σ_j val_j(n_j) − k·max_j res_j(n_j)   s.t. lo ≤ n ≤ hi, Σ_j w_j·n_j ≤ M·T
//
// exactly: the optimal makespan τ* is one of the values res_j(n), W(τ) is
// non-decreasing, so the search over the sorted candidates starts at the
// least feasible τ and prunes any interval [τ_a, τ_b] with
// W(τ_b) − k·τ_a no better than the best found.
func (w *Workspace) relax(ctx context.Context, lo, hi, counts []int32) relaxation {
	T := w.cfg.T
	k := w.cfg.k
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
	wv := grow(w.wv, len(cand))
	w.wv = wv
	eval := func(i int) float64 {
		v, _ := w.welfare(cand[i], lo, hi, nil)
		wv[i] = v
		return v
	}
	eval(first)
	besti := first
	if last != first {
		eval(last)
		if (score{wv[last], cand[last]}).diff(score{wv[first], cand[first]}, k) > 0 {
			besti = last
		}
	}
	stack := w.stack[:0]
	if last-first > 1 {
		stack = append(stack, [2]int32{int32(first), int32(last)})
	}
	complete := true
	for len(stack) > 0 {
		iv := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ia, ib := int(iv[0]), int(iv[1])
		bestS := score{wv[besti], cand[besti]}
		if (score{wv[ib], cand[ia+1]}).diff(bestS, k) <= w.eps(bestS) {
			continue
		}
		if ctx.Err() != nil {
			stack = append(stack, iv)
			complete = false
			break
		}
		m := (ia + ib) / 2
		eval(m)
		if (score{wv[m], cand[m]}).diff(bestS, k) > 0 {
			besti = m
		}
		if ib-m > 1 {
			stack = append(stack, [2]int32{int32(m), int32(ib)})
		}
		if m-ia > 1 {
			stack = append(stack, [2]int32{int32(ia), int32(m)})
		}
	}
	w.welfare(cand[besti], lo, hi, counts)
	best := w.evalCounts(counts)
	res := relaxation{feasible: true, complete: complete, best: best, bound: best}
	for _, iv := range stack {
		if ub := (score{wv[iv[1]], cand[iv[0]+1]}); ub.diff(res.bound, k) > 0 {
			res.bound = ub
		}
	}
	w.stack = stack[:0]
	return res
}

// eps is the tolerance below which two objective values are the same: a few
// hundred ulps of the welfare term.
func (w *Workspace) eps(s score) float64 { return 1e-12 * (1 + math.Abs(s.w)) }

// evalCounts is the program's objective at the counts n.
func (w *Workspace) evalCounts(n []int32) score {
	T := w.cfg.T
	var s score
	for j, c := range n {
		s.w += w.val[j*(T+1)+int(c)]
		s.tau = max(s.tau, w.res[j*(T+1)+int(c)])
	}
	return s
}

func grow[S ~[]E, E any](s S, n int) S {
	if cap(s) < n {
		return make(S, n)
	}
	return s[:n]
}
