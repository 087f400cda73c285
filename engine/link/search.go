package link

import (
	"math"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/profile"
	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/kernels"
)

// checkEvery is how many pair evaluations pass between context checks.
const checkEvery = 1 << 22

// fewShifts is the most candidate shifts a job may have for the search to
// score them one by one instead of with the across-shift kernel.
const fewShifts = 4

// candidates returns how many distinct shifts job j has.
func (w *Workspace) candidates(j int) int {
	t := w.periods[j]
	if w.mode == Paper {
		// Rotations m*5° with m*5° < 360°/r_j: m < 72*T_j/p.
		return int((int64(PaperAngles)*int64(t) + int64(w.p) - 1) / int64(w.p))
	}
	// Shifts matter modulo gcd(T_j, LCM of the other periods); see the
	// package documentation.
	l := 1
	for i, u := range w.periods {
		if i != j {
			l = l / circle.GCD(l, u) * u // divides the perimeter: no overflow
		}
	}
	if len(w.periods) == 1 {
		return t
	}
	return circle.GCD(t, l)
}

// shiftOf returns the time shift in ticks of job j's m-th candidate.
func (w *Workspace) shiftOf(m int) int {
	if w.mode == Paper {
		return int(int64(m) * int64(w.p) / PaperAngles)
	}
	return m
}

// demandAt returns job j's demand x ticks into its (rounded) period.
func demandAt(jb profile.Profile, x int) int32 {
	if x < len(jb.Demand) {
		return jb.Demand[x]
	}
	return 0 // padding added by period rounding
}

// minMass returns a lower bound on job j's demand summed over the points,
// whatever its shift.
func (w *Workspace) minMass(j int, jb profile.Profile) int64 {
	if w.mode == Exact {
		return int64(w.p/w.periods[j]) * jb.Mass()
	}
	best := int64(math.MaxInt64)
	for m := range w.ncand[j] {
		t := w.shiftOf(m)
		var s int64
		for _, x := range w.pts {
			s += int64(demandAt(jb, circle.Mod(x-t, w.periods[j])))
		}
		best = min(best, s)
	}
	return best
}

// addView adds job j delayed by t ticks to dst, over the points.
func (w *Workspace) addView(dst []int32, j, t int) {
	w.evals += int64(w.n)
	if w.mode == Exact {
		tile := w.tiles[j]
		p := w.p
		hi := dst[t:]
		for i, v := range tile[:p-t] {
			hi[i] += v
		}
		for i, v := range tile[p-t:] {
			dst[i] += v
		}
		return
	}
	jb, per := w.jobs[j], w.periods[j]
	for a, x := range w.pts {
		dst[a] += demandAt(jb, circle.Mod(x-t, per))
	}
}

// subView undoes addView.
func (w *Workspace) subView(dst []int32, j, t int) {
	if w.mode == Exact {
		tile := w.tiles[j]
		p := w.p
		hi := dst[t:]
		for i, v := range tile[:p-t] {
			hi[i] -= v
		}
		for i, v := range tile[p-t:] {
			dst[i] -= v
		}
		return
	}
	jb, per := w.jobs[j], w.periods[j]
	for a, x := range w.pts {
		dst[a] -= demandAt(jb, circle.Mod(x-t, per))
	}
}

// excessSlack returns the excess of base over the capacity and the capacity
// left unused, summed over the points.
func (w *Workspace) excessSlack(base []int32) (excess, slack int64) {
	c := w.capacity
	for _, v := range base {
		excess += int64(max(v-c, 0))
		slack += int64(max(c-v, 0))
	}
	return excess, slack
}

// evaluate returns the excess of the given shifts.
func (w *Workspace) evaluate(shifts []int) int64 {
	sum := w.sum
	clear(sum)
	for j, t := range shifts {
		w.addView(sum, j, t)
	}
	e, _ := w.excessSlack(sum)
	return e
}

// shiftExcess returns the excess of base plus job j delayed by m ticks
// (Exact mode), summed directly in two straight runs around the circle.
func (w *Workspace) shiftExcess(base []int32, j, m int) int64 {
	tile, p, c := w.tiles[j], w.p, w.capacity
	w.evals += int64(w.n)
	return kernels.Excess(base[m:], tile[:p-m], c) + kernels.Excess(base[:m], tile[p-m:], c)
}

// leaf writes into out[m] the excess of base plus job j at each of its
// candidate shifts and returns how many it computed: all of them, unless
// checked is set and the search must stop.
func (w *Workspace) leaf(base []int32, j int, out []int64, checked bool) int {
	nc := w.ncand[j]
	out = out[:nc]
	if w.mode == Exact && nc <= fewShifts {
		// A rotor would cost more to build than it saves: sum each shift
		// directly, in two straight runs around the circle.
		for m := range out {
			if checked && w.shouldStop() {
				return m
			}
			out[m] = w.shiftExcess(base, j, m)
		}
		return nc
	}
	if w.mode == Exact {
		chunk := max(1, checkEvery/w.n)
		for lo := 0; lo < nc; lo += chunk {
			if checked && w.shouldStop() {
				return lo
			}
			hi := min(nc, lo+chunk)
			kernels.Rotations(out[lo:hi], base, w.rotors[j], w.capacity, lo)
			w.evals += int64(hi-lo) * int64(w.n)
		}
		return nc
	}
	jb, per, c := w.jobs[j], w.periods[j], int64(w.capacity)
	for m := range out {
		t := w.shiftOf(m)
		var e int64
		for a, x := range w.pts {
			e += max(int64(base[a])+int64(demandAt(jb, circle.Mod(x-t, per)))-c, 0)
		}
		out[m] = e
	}
	w.evals += int64(nc) * int64(w.n)
	return nc
}

// shouldStop reports whether the budget or the context ends the search, and
// records why.
func (w *Workspace) shouldStop() bool {
	if w.stop != Optimal {
		return true
	}
	if w.budget > 0 && w.evals > w.budget {
		w.stop = Budget
		return true
	}
	if w.evals >= w.check {
		w.check = w.evals + checkEvery
		if deadline.Done(w.ctx) {
			w.stop = TimeLimit
			return true
		}
	}
	return false
}

// offer records cur, with job j at shift t, if it beats the incumbent:
// lower excess, or equal excess and lexicographically smaller shifts.
func (w *Workspace) offer(cost int64, j, t int) {
	if cost > w.bestCost {
		return
	}
	if cost == w.bestCost && !w.lexLess(j, t) {
		return
	}
	w.bestCost = cost
	copy(w.best, w.cur)
	w.best[j] = t
}

// lexLess reports whether cur with job j at t is lexicographically smaller
// than best.
func (w *Workspace) lexLess(j, t int) bool {
	for i, v := range w.cur {
		if i == j {
			v = t
		}
		if v != w.best[i] {
			return v < w.best[i]
		}
	}
	return false
}

// prefixCmp compares cur with best over the free jobs up to depth d.
func (w *Workspace) prefixCmp(d int) int {
	for _, j := range w.free[:d+1] {
		if w.cur[j] != w.best[j] {
			if w.cur[j] < w.best[j] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// restMass returns the minimal demand mass of the free jobs from depth d on.
func (w *Workspace) restMass(d int) int64 {
	var m int64
	for _, j := range w.free[d:] {
		m += w.masses[j]
	}
	return m
}

// lowerBound bounds the excess of any completion of a node whose placed
// demand is base and whose free jobs from depth d on are still unplaced:
// demand added where the capacity has room costs nothing at best, and the
// rest costs one for one.
func (w *Workspace) lowerBound(base []int32, d int) int64 {
	e, slack := w.excessSlack(base)
	w.evals += int64(w.n)
	return e + max(0, w.restMass(d)-slack)
}

// prune reports whether a node at depth d with lower bound lb cannot beat
// the incumbent: a worse excess, or an equal one on a lexicographically
// larger prefix.
func (w *Workspace) prune(lb int64, d int) bool {
	return lb > w.bestCost || (lb == w.bestCost && w.prefixCmp(d) > 0)
}

// marginalBound bounds the excess of any completion of a node whose placed
// demand is base and whose free jobs from depth d on are unplaced. The
// excess is a sum of convex functions of the demand, so adding a job costs at
// least as much on a larger base (increasing differences):
//
//	E(S + r_1 + ... + r_m) >= E(S) + sum_i (E(S + r_i) - E(S))
//	                       >= E(S) + sum_i min_t (E(S + r_i(t)) - E(S))
//
// Each minimum is one kernel scan of job r_i's shifts. It stops early once
// the bound exceeds the incumbent.
func (w *Workspace) marginalBound(base []int32, d int, checked bool) int64 {
	e0, _ := w.excessSlack(base)
	lb := e0
	for _, r := range w.free[d:] {
		n := w.leaf(base, r, w.out, checked)
		if n < w.ncand[r] {
			continue // stopped: a partial minimum bounds nothing
		}
		best := int64(math.MaxInt64)
		for _, c := range w.out[:n] {
			best = min(best, c)
		}
		lb += best - e0
		if lb > w.bestCost {
			break
		}
	}
	return lb
}

// setBase0 sets base0 to the demand of the jobs that are not free. A single
// fixed job at shift 0 is its own tile, which is then used as it is.
func (w *Workspace) setBase0() {
	if w.mode == Exact && len(w.free) == len(w.jobs)-1 {
		for j := range w.jobs {
			if !w.isFree(j) && w.cur[j] == 0 {
				w.base0 = w.tiles[j]
				return
			}
		}
	}
	w.base0 = w.bases[0]
	clear(w.base0)
	for j := range w.jobs {
		if !w.isFree(j) {
			w.addView(w.base0, j, w.cur[j])
		}
	}
}

func (w *Workspace) isFree(j int) bool {
	for _, f := range w.free {
		if f == j {
			return true
		}
	}
	return false
}

// branch runs the depth-first branch and bound from the incumbent and
// returns how many candidates the last leaf scanned.
func (w *Workspace) branch() int {
	w.setBase0()
	n := w.dfs(0)
	// Leave cur as the free jobs' zero shifts, its value between searches.
	for _, j := range w.free {
		w.cur[j] = 0
	}
	return n
}

// dfs explores the free job at depth d over bases[d] (base0 at the root).
// It returns how many candidates the last leaf it scanned computed, or -1
// once the search must stop.
func (w *Workspace) dfs(d int) int {
	j, base := w.free[d], w.bases[d]
	if d == 0 {
		base = w.base0
	}
	if d == len(w.free)-1 {
		n := w.leaf(base, j, w.out, true)
		for m, cost := range w.out[:n] {
			w.offer(cost, j, w.shiftOf(m))
		}
		if n < w.ncand[j] {
			return -1
		}
		return n
	}
	next := w.bases[d+1]
	n := 0
	for m := range w.ncand[j] {
		t := w.shiftOf(m)
		w.cur[j] = t
		copy(next, base)
		w.addView(next, j, t)
		if w.prune(w.lowerBound(next, d+1), d) {
			continue
		}
		if d+2 < len(w.free) && w.prune(w.marginalBound(next, d+1, true), d) {
			continue
		}
		if n = w.dfs(d + 1); n < 0 || w.shouldStop() {
			return -1
		}
	}
	return n
}

// descend runs coordinate descent from several starts to find a good
// incumbent before a search too large to finish within the budget.
func (w *Workspace) descend() {
	restarts := w.opt.Restarts
	if restarts <= 0 {
		restarts = DefaultRestarts
	}
	sum := w.sum
	for r := range restarts {
		w.pcg.Seed(w.opt.Seed, uint64(r))
		for _, j := range w.free {
			w.cur[j] = 0
			if r > 0 {
				w.cur[j] = w.shiftOf(int(w.pcg.Uint64() % uint64(w.ncand[j])))
			}
		}
		clear(sum)
		for j, t := range w.cur {
			w.addView(sum, j, t)
		}
		cost, _ := w.excessSlack(sum)
		for improved := true; improved; {
			improved = false
			for _, j := range w.free {
				w.subView(sum, j, w.cur[j])
				n := w.leaf(sum, j, w.out, true)
				bm, bc := -1, cost
				for m, c := range w.out[:n] {
					if c < bc {
						bm, bc = m, c
					}
				}
				if bm >= 0 {
					w.cur[j], cost, improved = w.shiftOf(bm), bc, true
				}
				w.addView(sum, j, w.cur[j])
				if w.stop != Optimal {
					break
				}
			}
			if w.stop != Optimal {
				break
			}
		}
		w.offer(cost, w.free[0], w.cur[w.free[0]])
		if w.stop != Optimal {
			return
		}
	}
}

// rootBound returns a lower bound on the optimal excess: the root's mass
// bound and, unless the context has ended, its marginal bound.
func (w *Workspace) rootBound() int64 {
	w.setBase0()
	base := w.base0
	lb := w.lowerBound(base, 0)
	if w.stop == TimeLimit {
		return min(lb, w.bestCost)
	}
	// The marginal bound costs one scan of every free job's shifts. Spend
	// at most the budget on it once more, and keep watching the context.
	var cost int64
	for _, j := range w.free {
		cost += int64(w.n) * int64(w.ncand[j])
	}
	if w.budget > 0 && cost > w.budget {
		return min(lb, w.bestCost)
	}
	stop, budget := w.stop, w.budget
	w.stop = Optimal
	if budget > 0 {
		w.budget = w.evals + cost + 1
	}
	m := w.marginalBound(base, 0, true)
	w.stop, w.budget = stop, budget
	return min(max(lb, m), w.bestCost)
}

// strided searches a single free job whose full scan would cost more than
// the budget: every stride-th shift first, with half the budget, then a
// refinement around the best of them with the rest (the excess is periodic
// in the shift, modulo nc). It returns the excess at shift 0.
func (w *Workspace) strided(j int) int64 {
	nc := w.ncand[j]
	stride := int((int64(w.n)*int64(nc) + w.budget/2 - 1) / max(w.budget/2, 1))
	stride = max(stride, 2)
	one := func(m int) int64 { return w.shiftExcess(w.base0, j, m) }
	unshifted := one(0)
	w.offer(unshifted, j, 0)
	for m := stride; m < nc && !w.shouldStop(); m += stride {
		w.offer(one(m), j, m)
	}
	if w.stop != TimeLimit {
		w.stop = Optimal // the coarse pass spends half the budget; refine with the rest
		// Halve the step around the best shift so far (two shifts a level,
		// which reaches into a narrow optimum the coarse grid straddled),
		// then score the shifts nearest the best one with what is left.
		try := func(m int) {
			if m = circle.Mod(m, nc); !w.shouldStop() {
				w.offer(one(m), j, m)
			}
		}
		for d := stride / 2; d >= 1 && !w.shouldStop(); d /= 2 {
			c := w.best[j]
			try(c - d)
			try(c + d)
		}
		center := w.best[j]
		for d := 1; d < stride && !w.shouldStop(); d++ {
			try(center - d)
			try(center + d)
		}
	}
	if w.stop == Optimal {
		w.stop = Budget // not every shift was scored
	}
	return unshifted
}
