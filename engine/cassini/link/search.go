package link

import (
	"math"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/kernels"
)

// checkEvery is how many pair evaluations pass between context checks.
const checkEvery = 1 << 22

// fewShifts is the most candidate shifts a job may have for the search to
// score them one by one instead of with the across-shift kernel.
const fewShifts = 4

// candidates returns how many distinct rotations job j has in Paper mode:
// m*5° with m*5° < 360°/r_j, that is m < 72*T_j/p. (Exact mode's come from
// the plan.)
func (w *Workspace) candidates(j int) int {
	return int((int64(PaperAngles)*int64(w.periods[j])-1)/int64(w.p)) + 1
}

// shiftOf returns the time shift in ticks of job j's m-th candidate.
func (w *Workspace) shiftOf(m int) int {
	if w.mode == Paper {
		return paperTick(m, w.p)
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
		if !w.trivial() {
			return 0 // not used: the mass bound needs every job tiled
		}
		// One period of the tile, times its repeats.
		per := w.mods[j]
		if w.dense {
			per = w.periods[j]
		}
		return int64(w.n/per) * w.mass(w.tiles[j][:per])
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

// addView adds job j delayed by t ticks to dst, over the points. A job in
// classes or in the static histogram has no view: its demand enters each
// evaluation through its classes.
func (w *Workspace) addView(dst []int32, j, t int) {
	if w.mode == Exact {
		if w.kind[j] != onCircle {
			return
		}
		w.evals += int64(w.n)
		n := w.n
		kernels.AddRotated(dst[:n], w.tiles[j][:n], t%n) // a tile's period divides n
		return
	}
	w.evals += int64(w.n)
	jb, per := w.jobs[j], w.periods[j]
	for a, x := range w.pts {
		dst[a] += demandAt(jb, circle.Mod(x-t, per))
	}
}

// subView undoes addView.
func (w *Workspace) subView(dst []int32, j, t int) {
	if w.mode == Exact {
		if w.kind[j] != onCircle {
			return
		}
		tile := w.tiles[j]
		n := w.n
		t %= n
		hi := dst[t:]
		for i, v := range tile[:n-t] {
			hi[i] -= v
		}
		for i, v := range tile[n-t:] {
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
	return kernels.ExcessSlack(base, w.capacity)
}

// evaluate returns the excess of the given shifts.
func (w *Workspace) evaluate(shifts []int) int64 {
	sum := w.sum
	clear(sum)
	for j, t := range shifts {
		w.addView(sum, j, t)
	}
	return w.stateExcess(sum, shifts)
}

// stateExcess returns the excess of a search state: base holds its tiled
// jobs, w.in says which class jobs it holds, shifts their shifts.
func (w *Workspace) stateExcess(base []int32, shifts []int) int64 {
	if w.trivial() {
		e, _ := w.excessSlack(base)
		return e
	}
	return w.circleExcess(base, shifts)
}

// shiftExcess returns the excess of base plus job j delayed by m ticks
// (a tiled job on a circle without classes), summed directly in two
// straight runs around the circle, once per static demand.
func (w *Workspace) shiftExcess(base []int32, j, m int) int64 {
	tile, n := w.tiles[j], w.n
	if w.static.trivial() {
		w.evals += int64(n)
		c := w.capacity
		return kernels.Excess(base[m:], tile[:n-m], c) + kernels.Excess(base[:m], tile[n-m:], c)
	}
	s, c := &w.static, int64(w.capacity)
	var e int64
	mass := int64(-1)
	for i, v := range s.val {
		cnt := s.count(i, len(s.val))
		if int64(v) < c {
			t := int32(c - int64(v))
			w.evals += int64(n)
			e += cnt * (kernels.Excess(base[m:], tile[:n-m], t) + kernels.Excess(base[:m], tile[n-m:], t))
			continue
		}
		if mass < 0 {
			mass = w.mass(base) + w.mass(tile)
		}
		e += cnt * (mass + int64(n)*(int64(v)-c))
	}
	return e
}

func (w *Workspace) mass(a []int32) int64 {
	var s int64
	for _, v := range a {
		s += int64(v)
	}
	return s
}

// shiftCost returns the excess of base plus job j delayed by m ticks, with
// the class jobs w.in holds (j among them) at their shifts in w.cur.
func (w *Workspace) shiftCost(base []int32, j, m int) int64 {
	if w.kind[j] == onCircle && w.noClasses(j) {
		return w.unplaced() * w.shiftExcess(base, j, m)
	}
	old, was := w.cur[j], w.in[j]
	w.cur[j], w.in[j] = m, true
	var e int64
	if w.kind[j] == onCircle {
		sum := w.sum
		copy(sum, base)
		w.addView(sum, j, m)
		e = w.circleExcess(sum, w.cur)
	} else {
		e = w.circleExcess(base, w.cur)
	}
	w.cur[j], w.in[j] = old, was
	return e
}

// noClasses reports whether no class job other than j is in the state and
// the static histogram is small enough for one kernel pass per entry.
func (w *Workspace) noClasses(j int) bool {
	for _, i := range w.order {
		if i >= 0 && i != j && w.in[i] {
			return false
		}
	}
	return len(w.static.val) <= staticPasses
}

// scanCost returns the pair evaluations of scoring every shift of job j.
func (w *Workspace) scanCost(j int) int64 {
	if w.mode == Paper {
		return int64(w.n) * int64(w.ncand[j])
	}
	if w.useRuns(j, 0) {
		return w.runCost(j, 0)
	}
	return w.ecost * int64(w.ncand[j])
}

// leaf writes into out[m] the excess of base plus job j at each of its
// candidate shifts and returns how many it computed: all of them, unless
// checked is set and the search must stop.
func (w *Workspace) leaf(base []int32, j int, out []int64, checked bool) int {
	return w.leafFrom(base, j, 0, out, checked)
}

// leafFrom is leaf over candidates from0.. only, written from out[0].
func (w *Workspace) leafFrom(base []int32, j, from0 int, out []int64, checked bool) int {
	nc := w.ncand[j] - from0
	out = out[:nc]
	if w.mode == Paper {
		return w.paperLeaf(base, j, out)
	}
	if w.useRuns(j, from0) {
		if checked && w.shouldStop() {
			return 0
		}
		w.runLeaf(base, j, from0, out)
		return nc
	}
	if w.kind[j] != onCircle || !w.noClasses(j) || w.ncand[j] <= fewShifts {
		// Score each shift directly: a class evaluation, or, with few
		// shifts, two straight runs around the circle (a rotor would cost
		// more to build than it saves).
		for m := range out {
			if checked && w.shouldStop() {
				return m
			}
			out[m] = w.shiftCost(base, j, from0+m)
		}
		return nc
	}
	chunk := max(1, checkEvery/w.n)
	for lo := 0; lo < nc; lo += chunk {
		if checked && w.shouldStop() {
			return lo
		}
		hi := min(nc, lo+chunk)
		w.rotations(out[lo:hi], base, j, from0+lo)
	}
	if f := w.unplaced(); f != 1 {
		for m := range out {
			out[m] *= f
		}
	}
	return nc
}

// rotations scores shifts s0.. of tiled job j over base with the
// across-shift kernel, once per static demand below the capacity.
func (w *Workspace) rotations(out []int64, base []int32, j, s0 int) {
	n := int64(w.n)
	if w.static.trivial() {
		kernels.Rotations(out, base, w.rotors[j], w.capacity, s0)
		w.evals += int64(len(out)) * n
		return
	}
	clear(out)
	s, c := &w.static, int64(w.capacity)
	tmp := w.tmp[:len(out)]
	var linear int64
	mass := int64(-1)
	for i, v := range s.val {
		cnt := s.count(i, len(s.val))
		if int64(v) < c {
			kernels.Rotations(tmp, base, w.rotors[j], int32(c-int64(v)), s0)
			w.evals += int64(len(out)) * n
			for m, e := range tmp {
				out[m] += cnt * e
			}
			continue
		}
		if mass < 0 {
			mass = w.mass(base) + w.mass(w.tiles[j])
		}
		linear += cnt * (mass + n*(int64(v)-c))
	}
	for m := range out {
		out[m] += linear
	}
}

// paperLeaf is leaf in Paper mode.
func (w *Workspace) paperLeaf(base []int32, j int, out []int64) int {
	jb, per, c := w.jobs[j], w.periods[j], int64(w.capacity)
	for m := range out {
		t := w.shiftOf(m)
		var e int64
		for a, x := range w.pts {
			e += max(int64(base[a])+int64(demandAt(jb, circle.Mod(x-t, per)))-c, 0)
		}
		out[m] = e
	}
	w.evals += int64(len(out)) * int64(w.n)
	return len(out)
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

// place sets next to base plus job j delayed by t ticks and returns the
// node's lower bound (see lowerBound) when the search has no classes (ok):
// a tiled job in one kernel pass, which sums what the bound needs as it
// adds.
func (w *Workspace) place(next, base []int32, j, t, d int) (lb int64, ok bool) {
	if w.mode != Exact || w.kind[j] != onCircle {
		copy(next, base)
		w.addView(next, j, t)
		if !w.trivial() {
			return 0, false
		}
		return w.lowerBound(next, d), true
	}
	n := w.n
	e, slack := kernels.Place(next[:n], base[:n], w.tiles[j][:n], t%n, w.capacity)
	w.evals += int64(n)
	if !w.trivial() {
		return 0, false
	}
	w.evals += int64(n)
	return e + max(0, w.restMass(d)-slack), true
}

// lowerBound bounds the excess of any completion of a node whose placed
// demand is base and whose free jobs from depth d on are still unplaced:
// demand added where the capacity has room costs nothing at best, and the
// rest costs one for one. Only for a search without classes.
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
// demand is base (and the class jobs w.in holds) and whose free jobs from
// depth d on are unplaced. The excess is a sum of convex functions of the
// demand, so adding a job costs at least as much on a larger base
// (increasing differences):
//
//	E(S + r_1 + ... + r_m) >= E(S) + sum_i (E(S + r_i) - E(S))
//	                       >= E(S) + sum_i min_t (E(S + r_i(t)) - E(S))
//
// Each minimum is one scan of job r_i's shifts. It stops early once the
// bound exceeds the incumbent.
func (w *Workspace) marginalBound(base []int32, d int, checked bool) int64 {
	e0 := w.stateExcess(base, w.cur)
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

// setBase0 sets base0 to the demand of the tiled jobs that are not free. A
// single fixed job at shift 0 is its own tile, which is then used as it is.
func (w *Workspace) setBase0() {
	if w.mode == Exact && len(w.free) == len(w.jobs)-1 {
		for j := range w.jobs {
			if !w.isFree(j) && w.cur[j] == 0 && w.kind[j] == onCircle {
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

// hold marks the free jobs from depth d on as not in the state (on), or
// every job as in it again (off).
func (w *Workspace) hold(d int, on bool) {
	if w.mode != Exact {
		return
	}
	if !on {
		for j := range w.in {
			w.in[j] = true
		}
		return
	}
	for _, j := range w.free[d:] {
		w.in[j] = false
	}
}

// branch runs the depth-first branch and bound from the incumbent and
// returns how many candidates the last leaf scanned.
func (w *Workspace) branch() int {
	w.setBase0()
	w.hold(0, true)
	n := w.dfs(0)
	w.hold(0, false)
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
		return w.leafLevel(base, d)
	}
	next := w.bases[d+1]
	n := 0
	for m := w.from(j); m < w.ncand[j]; m++ {
		t := w.shiftOf(m)
		w.cur[j] = t
		w.in[j] = true
		if lb, ok := w.place(next, base, j, t, d+1); ok && w.prune(lb, d) {
			w.in[j] = false
			continue
		}
		if d+2 < len(w.free) && w.prune(w.marginalBound(next, d+1, true), d) {
			w.in[j] = false
			continue
		}
		n = w.dfs(d + 1)
		w.in[j] = false
		if n < 0 || w.shouldStop() {
			return -1
		}
	}
	return n
}

// leafLevel scores the last free job's shifts at depth d over base and
// offers them.
func (w *Workspace) leafLevel(base []int32, d int) int {
	j := w.free[d]
	lo := w.from(j)
	n := lo + w.leafFrom(base, j, lo, w.out[lo:], true)
	// offer refuses a cost above the incumbent's, which only falls: test
	// it here, in a loop that reads nothing else.
	out := w.out[lo:n]
	for m := kernels.Below(out, w.bestCost); m < len(out); m += 1 + kernels.Below(out[m+1:], w.bestCost) {
		w.offer(out[m], j, w.shiftOf(lo+m))
	}
	if n < w.ncand[j] {
		return -1
	}
	return n
}

// proofRounds is the most an unpruned proof may cost, in rounds of the
// descent (one scan of every free job's shifts per restart), for a search
// to prove directly from the unshifted incumbent instead of descending
// first. TestDescentRule is the ablation: of its 120 links (three to five
// on/off, equal-period, harmonic, noisy and identical jobs; Exact and
// Paper modes) the 35 it proves directly spend 1.50x to 8.94x fewer
// evaluations (median 4.95x) for the same answers; with no such limit it
// proves 57 directly, and two (harmonic periods) spend up to 1.77x more.
const proofRounds = 64

// descends reports whether coordinate descent should supply the branch
// and bound's incumbent. It does unless the proof, were nothing pruned,
// would cost at most proofRounds rounds of the descent and fit in the
// budget (DefaultBudget without one): then it proves directly, and since a
// proof ends at the lexicographically smallest optimum whatever its
// incumbent, the answer is the same, for less (three jobs of 180, 200 and
// 240 ticks: 920 evaluations instead of 9720, 8800 of them the descent's).
func (w *Workspace) descends() bool {
	if w.descent {
		return true
	}
	restarts := w.opt.Restarts
	if restarts <= 0 {
		restarts = DefaultRestarts
	}
	var round int64
	for _, j := range w.free {
		round = satAdd(round, w.scanCost(j))
	}
	limit := satMul(satMul(round, int64(restarts)), proofRounds)
	if w.budget > 0 {
		limit = min(limit, w.budget)
	} else {
		limit = min(limit, DefaultBudget)
	}
	return w.exhaustive(limit) > limit
}

// exhaustive returns the pair evaluations of the branch and bound with
// nothing pruned, or a value past limit once it passes limit: every node
// of each free job but the last places it and bounds the result (two
// passes over the circle, and a scan of every job below where the marginal
// bound runs), and every leaf scans the last free job's shifts.
func (w *Workspace) exhaustive(limit int64) int64 {
	last := len(w.free) - 1
	nodes, total := int64(1), int64(0)
	for d, j := range w.free {
		nodes = satMul(nodes, int64(w.ncand[j]))
		if d == last {
			return satAdd(total, satMul(nodes, w.scanCost(j)))
		}
		per := 2 * int64(w.n)
		if d+2 < len(w.free) {
			if w.mode == Exact {
				per = satAdd(per, w.ecost) // the state's own excess (Paper's is one of the passes)
			}
			for _, r := range w.free[d+1:] {
				per = satAdd(per, w.scanCost(r))
			}
		}
		if total = satAdd(total, satMul(nodes, per)); total > limit {
			return total
		}
	}
	return total
}

// satAdd and satMul are a+b and a*b for a, b >= 0, saturating at
// math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
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
		cost := w.stateExcess(sum, w.cur)
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
// bound (without classes) and, unless the context has ended, its marginal
// bound.
func (w *Workspace) rootBound() int64 {
	w.setBase0()
	base := w.base0
	w.hold(0, true)
	defer w.hold(0, false)
	var lb int64
	if w.trivial() {
		lb = w.lowerBound(base, 0)
	}
	if w.stop == TimeLimit {
		return min(lb, w.bestCost)
	}
	// The marginal bound costs one scan of every free job's shifts. Spend
	// at most the budget on it once more, and keep watching the context.
	var cost int64
	for _, j := range w.free {
		cost += w.scanCost(j)
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
	per := max(w.scanCost(j)/int64(nc), 1)
	stride := int((per*int64(nc) + w.budget/2 - 1) / max(w.budget/2, 1))
	stride = max(stride, 2)
	one := func(m int) int64 { return w.shiftCost(w.base0, j, m) }
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
