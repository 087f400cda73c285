package market

import (
	"context"
	"math"

	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
)

// # The configuration LP
//
// The count relaxation aggregates capacity over the window; the round
// structure it forgets is what makes wide jobs hard. Rounds are
// interchangeable, so a plan is a multiset of T round patterns, a pattern p
// giving each width class c a number of slots p_c with Σ_c p_c·w_c ≤ M. By
// max-flow min-cut (jobs × rounds, one unit per pair), counts n fit the slots
// of class c in the rounds exactly when, for every set J of the class's
// jobs, Σ_{j∈J} n_j ≤ Σ_t min(a_{t,c}, |J|), where a_{t,c} is the class's
// slots in round t: the worst J of size k is the k jobs with the most rounds
// (Gale–Ryser). So the counts pack if and only if some multiset λ of T
// patterns satisfies
//
//	Σ_{j∈J} n_j ≤ Σ_p λ_p·min(p_c, |J|)   for every class c and J ⊆ c.
//
// With λ fractional this is the configuration LP (the convex hull of one
// round's feasible job sets, times T). Its linear relaxation of the welfare
// (the piecewise-linear V_j through its integer points) is solved here in
// floating point by a bounded revised simplex with a dense basis, the rows
// being the class totals plus the top-k rows that separation finds
// violated. Nothing exact depends on it: its duals become prices q_j on the
// solver's grid, and the Lagrangian bound they give is evaluated exactly
// (lagrange.go); its pattern mixture seeds a primal heuristic. Every
// product that is added to something is wrapped in float64() (no FMA), and
// every choice breaks ties by index, so the LP's path is the same on every
// host.

// cfgLP is the configuration LP's state.
type cfgLP struct {
	N, K, R, T int
	M          int32
	// Rows 0..R−2 bound a set J of one class's jobs; row R−1 is Σ λ = T.
	rowClass, rowSize []int32
	rowStart, members []int32 // J of row r: members[rowStart[r]:rowStart[r+1]]
	jobStart, jobRows []int32 // the rows holding job j: jobRows[jobStart[j]:jobStart[j+1]]
	big               []float64
	lo, hi            []int32
	slope             []float64 // job-major N×T: V_j(i) − V_j(i−1) at j·T+i−1, scaled
	scale             float64   // slopes are the grid values divided by scale
	mcost             float64   // the artificial column's cost per unit
	classCap          []int32   // per class: the most slots a pattern gives it
	classW            []int32   // per class: width

	// The basis: basis[l] is a column id (jobs 0..N−1, slacks N..N+R−2,
	// the artificial N+R−1, a pattern colPattern with its vector in
	// pat[l·K:]).
	basis []int32
	pos   []int32   // position in the basis of job, slack and artificial columns, or −1
	binv  []float64 // R×R, row l belongs to basis position l
	x     []float64 // values of jobs, slacks and the artificial
	seg   []int32   // per job: its breakpoint (nonbasic) or its segment's lower end (basic)
	pat   []int32   // R×K patterns held by the basis
	patX  []float64 // per basis position: λ of the pattern held there
	y     []float64 // duals
	q     []float64 // per job: Σ of its rows' duals (scaled)
	col   []float64 // scratch: a column
	alpha []float64 // scratch: B⁻¹·column
	rhs   []float64 // scratch
	enter []int32   // the entering pattern
	// pricing DP scratch
	fval   []float64 // per class: f_c(a), a = 0..cap, at fstart[c]
	fstart []int32
	dp     []float64
	dpArg  []int32
	// separation scratch
	sorted   []int32
	iters    int
	prevRows int // the rows before the last separation
	// ready: the state holds a basis of the current rows (or of a prefix
	// of them) from the last solve, which warm can start from.
	ready bool
	fac   []float64 // refactor's scratch: the basis matrix
}

const (
	colPattern = -1    // basis marker: a pattern column
	lpTol      = 1e-11 // the simplex's reduced-cost tolerance, relative to the column's cost and price
	lpAbsTol   = 1e-40 // and absolute (the costs are scaled to at most 1)
	lpPivTol   = 1e-9
)

// improves reports whether a reduced cost d = a − b (a job's slope against
// its price) is positive beyond the tolerance: relative, since priorities
// put slopes far apart within one LP.
func improves(d, a, b float64) bool {
	return d > float64(lpTol*max(math.Abs(a), math.Abs(b)))+lpAbsTol
}

// lpMul is a float64 product that the compiler may not fuse.
func lpMul(a, b float64) float64 { return float64(a * b) }

// lpSetup loads the problem's jobs into the LP: the box [lo, hi], the
// slopes of the welfare, the classes' caps, and the class rows.
func (w *Workspace) lpSetup(lo, hi []int32, keepRows bool) {
	lp := &w.lp
	N, T := len(w.p.Jobs), w.cfg.T
	lp.N, lp.T, lp.M = N, T, int32(w.p.GPUs)
	lp.K = len(w.ks.classWidth)
	lp.lo = append(lp.lo[:0], lo[:N]...)
	lp.hi = append(lp.hi[:0], hi[:N]...)
	lp.slope = scratch.Resize(lp.slope, N*T)
	smax := 0.0
	for j := range N {
		row := j * (T + 1)
		// Only the bound's tier varies (lagrange.go): the upper tiers'
		// jobs are fixed at their best values, worth nothing more here.
		in := w.ex.jobTier[j] == w.lag.tier && !(j < len(w.lag.fixed) && w.lag.fixed[j])
		for i := 1; i <= T; i++ {
			d := 0.0
			if in {
				d = w.tab.val[row+i] - w.tab.val[row+i-1]
			}
			lp.slope[j*T+i-1] = d
			smax = max(smax, d)
		}
	}
	if smax == 0 {
		smax = 1
	}
	lp.scale = smax
	total := 0.0
	for j := range N {
		for i := 1; i <= T; i++ {
			lp.slope[j*T+i-1] /= smax
			if i > int(lo[j]) && i <= int(hi[j]) {
				total += lp.slope[j*T+i-1]
			}
		}
	}
	lp.mcost = float64(1e3*(total+1)) + 1
	lp.classW = append(lp.classW[:0], w.ks.classWidth...)
	lp.classCap = scratch.Resize(lp.classCap, lp.K)
	clear(lp.classCap)
	for j := range N {
		lp.classCap[w.ks.class[j]]++
	}
	for c := range lp.K {
		lp.classCap[c] = min(lp.classCap[c], lp.M/lp.classW[c])
	}
	if keepRows && len(lp.rowClass) >= lp.K {
		return
	}
	// The class rows.
	lp.ready = false
	lp.rowClass, lp.rowSize = lp.rowClass[:0], lp.rowSize[:0]
	lp.rowStart, lp.members = append(lp.rowStart[:0], 0), lp.members[:0]
	for c := range lp.K {
		size := int32(0)
		for j := range N {
			if w.ks.class[j] == int32(c) {
				lp.members = append(lp.members, int32(j))
				size++
			}
		}
		lp.rowClass = append(lp.rowClass, int32(c))
		lp.rowSize = append(lp.rowSize, size)
		lp.rowStart = append(lp.rowStart, int32(len(lp.members)))
	}
}

// lpAddRow adds the row bounding the jobs J (all of class c).
func (lp *cfgLP) addRow(c int32, J []int32) {
	lp.members = append(lp.members, J...)
	lp.rowClass = append(lp.rowClass, c)
	lp.rowSize = append(lp.rowSize, int32(len(J)))
	lp.rowStart = append(lp.rowStart, int32(len(lp.members)))
}

// start sets up the initial basis: every slack and the artificial column,
// which supplies every row; the jobs at their lower bounds.
func (lp *cfgLP) start() {
	N := lp.N
	lp.index()
	R := lp.R
	lp.basis = scratch.Resize(lp.basis, R)
	lp.pos = scratch.Resize(lp.pos, N+R)
	lp.x = scratch.Resize(lp.x, N+R)
	lp.seg = scratch.Resize(lp.seg, N)
	lp.binv = scratch.Resize(lp.binv, R*R)
	lp.pat = scratch.Resize(lp.pat, R*lp.K)
	lp.patX = scratch.Resize(lp.patX, R)
	for j := range N {
		lp.pos[j] = -1
		lp.x[j] = float64(lp.lo[j])
		lp.seg[j] = lp.lo[j]
	}
	clear(lp.binv)
	for l := range R {
		lp.basis[l] = int32(N + l)
		lp.pos[N+l] = int32(l)
		lp.binv[l*R+l] = 1
	}
	for r := 0; r < R-1; r++ {
		lp.binv[r*R+R-1] = lp.big[r]
	}
	lp.nonbasicRHS()
	lp.values()
}

// index sets R from the rows and builds what the basis does not hold: the
// rows of each job, the artificial column's entries and the scratch.
func (lp *cfgLP) index() {
	N := lp.N
	R := len(lp.rowClass) + 1
	lp.R = R
	// The rows of each job.
	lp.jobStart = scratch.Resize(lp.jobStart, N+1)
	clear(lp.jobStart)
	for r := 0; r < R-1; r++ {
		for _, j := range lp.members[lp.rowStart[r]:lp.rowStart[r+1]] {
			lp.jobStart[j+1]++
		}
	}
	for j := 1; j <= N; j++ {
		lp.jobStart[j] += lp.jobStart[j-1]
	}
	lp.jobRows = scratch.Resize(lp.jobRows, int(lp.jobStart[N]))
	fill := scratch.Resize(lp.sorted, N)
	lp.sorted = fill
	copy(fill, lp.jobStart[:N])
	for r := 0; r < R-1; r++ {
		for _, j := range lp.members[lp.rowStart[r]:lp.rowStart[r+1]] {
			lp.jobRows[fill[j]] = int32(r)
			fill[j]++
		}
	}
	lp.big = scratch.Resize(lp.big, R-1)
	for r := 0; r < R-1; r++ {
		s := 1.0
		for _, j := range lp.members[lp.rowStart[r]:lp.rowStart[r+1]] {
			s += float64(lp.hi[j])
		}
		lp.big[r] = s
	}
	lp.y = scratch.Resize(lp.y, R)
	lp.q = scratch.Resize(lp.q, N)
	lp.col = scratch.Resize(lp.col, R)
	lp.alpha = scratch.Resize(lp.alpha, R)
	lp.rhs = scratch.Resize(lp.rhs, R)
	lp.enter = scratch.Resize(lp.enter, lp.K)
}

// colVec writes column k (a pattern: vector p) into out.
func (lp *cfgLP) colVec(k int32, p []int32, out []float64) {
	R, N := lp.R, int32(lp.N)
	clear(out[:R])
	switch {
	case k == colPattern:
		for r := 0; r < R-1; r++ {
			out[r] = -float64(min(p[lp.rowClass[r]], lp.rowSize[r]))
		}
		out[R-1] = 1
	case k < N:
		for _, r := range lp.jobRows[lp.jobStart[k]:lp.jobStart[k+1]] {
			out[r] = 1
		}
	case k == N+int32(R)-1:
		for r := 0; r < R-1; r++ {
			out[r] = -lp.big[r]
		}
		out[R-1] = 1
	default:
		out[k-N] = 1
	}
}

// cost is the objective coefficient of basic column k at position l.
func (lp *cfgLP) cost(k int32) float64 {
	N := int32(lp.N)
	switch {
	case k == colPattern:
		return 0
	case k < N:
		return lp.slope[int(k)*lp.T+int(lp.seg[k])]
	case k == N+int32(lp.R)-1:
		return -lp.mcost
	}
	return 0
}

// nonbasicRHS sets lp.rhs to b − N·x_N (start's basis).
func (lp *cfgLP) nonbasicRHS() {
	R := lp.R
	rhs := lp.rhs[:R]
	clear(rhs)
	rhs[R-1] = float64(lp.T)
	for j := range lp.N {
		if lp.pos[j] >= 0 || lp.x[j] == 0 {
			continue
		}
		lp.shiftRHS(j, lp.x[j])
	}
}

// shiftRHS updates lp.rhs for nonbasic job j's value rising by dx. A
// nonbasic job sits at a breakpoint, an integer, so every entry of rhs is
// an integer and the updates are exact: rhs is what summing b − N·x_N
// anew would give, bit for bit.
func (lp *cfgLP) shiftRHS(j int, dx float64) {
	for _, r := range lp.jobRows[lp.jobStart[j]:lp.jobStart[j+1]] {
		lp.rhs[r] -= dx
	}
}

// values recomputes the basic variables: x_B = B⁻¹·(b − N·x_N), with
// b − N·x_N kept in lp.rhs (nonbasicRHS, shiftRHS).
func (lp *cfgLP) values() {
	R := lp.R
	rhs := lp.rhs[:R]
	for l := range R {
		v := 0.0
		row := lp.binv[l*R : l*R+R]
		for i, b := range rhs {
			v += lpMul(row[i], b)
		}
		if k := lp.basis[l]; k == colPattern {
			lp.patX[l] = v
		} else {
			lp.x[k] = v
		}
	}
}

// duals computes y = c_B·B⁻¹ and each job's price q_j.
func (lp *cfgLP) duals() {
	R := lp.R
	y := lp.y[:R]
	clear(y)
	for l := range R {
		c := lp.cost(lp.basis[l])
		if c == 0 {
			continue
		}
		row := lp.binv[l*R : l*R+R]
		for i := range y {
			y[i] += lpMul(c, row[i])
		}
	}
	for j := range lp.N {
		s := 0.0
		for _, r := range lp.jobRows[lp.jobStart[j]:lp.jobStart[j+1]] {
			s += y[r]
		}
		lp.q[j] = s
	}
}

// priceJobs returns the nonbasic job, slack or artificial column with the
// largest reduced cost, its direction (+1 up, −1 down) and the reduced cost.
func (lp *cfgLP) priceJobs(bland bool) (int32, int, float64) {
	best, bestDir, bestD := int32(-1), 0, lpTol
	if bland {
		// Bland's rule against cycling: the first improving column.
		for j := range lp.N {
			if lp.pos[j] >= 0 {
				continue
			}
			v := lp.seg[j]
			if v < lp.hi[j] {
				if s := lp.slope[j*lp.T+int(v)]; improves(s-lp.q[j], s, lp.q[j]) {
					return int32(j), 1, s - lp.q[j]
				}
			}
			if v > lp.lo[j] {
				if s := lp.slope[j*lp.T+int(v)-1]; improves(lp.q[j]-s, s, lp.q[j]) {
					return int32(j), -1, lp.q[j] - s
				}
			}
		}
		N := int32(lp.N)
		for r := 0; r < lp.R-1; r++ {
			if lp.pos[N+int32(r)] < 0 && -lp.y[r] > lpAbsTol {
				return N + int32(r), 1, -lp.y[r]
			}
		}
		return -1, 0, 0
	}
	T := lp.T
	for j := range lp.N {
		if lp.pos[j] >= 0 {
			continue
		}
		// Dantzig's rule on reduced costs relative to the column's scale
		// (a cheap job's best move must not drown under an expensive
		// job's round-off).
		v := lp.seg[j]
		if v < lp.hi[j] {
			s := lp.slope[j*T+int(v)]
			// d > lpAbsTol first: improves implies it, and most jobs fail it.
			if d := s - lp.q[j]; d > lpAbsTol && improves(d, s, lp.q[j]) {
				if r := d / max(math.Abs(s), math.Abs(lp.q[j])); r > bestD {
					best, bestDir, bestD = int32(j), 1, r
				}
			}
		}
		if v > lp.lo[j] {
			s := lp.slope[j*T+int(v)-1]
			if d := lp.q[j] - s; d > lpAbsTol && improves(d, s, lp.q[j]) {
				if r := d / max(math.Abs(s), math.Abs(lp.q[j])); r > bestD {
					best, bestDir, bestD = int32(j), -1, r
				}
			}
		}
	}
	N, R := int32(lp.N), lp.R
	for r := 0; r < R-1; r++ {
		if lp.pos[N+int32(r)] < 0 {
			if d := -lp.y[r]; d > lpAbsTol && best < 0 {
				best, bestDir, bestD = N+int32(r), 1, d
			}
		}
	}
	return best, bestDir, bestD
}

// pricePatterns finds the pattern with the largest reduced cost
// Σ_r y_r·min(p_c, |J_r|) − y_{R−1} by a DP over classes and GPUs, into
// lp.enter.
func (lp *cfgLP) pricePatterns() float64 {
	K, M, R := lp.K, int(lp.M), lp.R
	lp.fstart = scratch.Resize(lp.fstart, K+1)
	n := 0
	for c := range K {
		lp.fstart[c] = int32(n)
		n += int(lp.classCap[c]) + 1
	}
	lp.fstart[K] = int32(n)
	lp.fval = scratch.Resize(lp.fval, n)
	clear(lp.fval)
	for r := 0; r < R-1; r++ {
		c := lp.rowClass[r]
		f := lp.fval[lp.fstart[c]:lp.fstart[c+1]]
		for a := range f {
			f[a] += lpMul(lp.y[r], float64(min(int32(a), lp.rowSize[r])))
		}
	}
	lp.dp = scratch.Resize(lp.dp, (K+1)*(M+1))
	lp.dpArg = scratch.Resize(lp.dpArg, K*(M+1))
	dp := lp.dp
	clear(dp[:M+1])
	for c := range K {
		prev, cur := dp[c*(M+1):(c+1)*(M+1)], dp[(c+1)*(M+1):(c+2)*(M+1)]
		f := lp.fval[lp.fstart[c]:lp.fstart[c+1]]
		wc := int(lp.classW[c])
		arg := lp.dpArg[c*(M+1) : (c+1)*(M+1)]
		for m := 0; m <= M; m++ {
			b, ba := prev[m]+f[0], int32(0)
			for a := 1; a < len(f) && a*wc <= m; a++ {
				if v := prev[m-a*wc] + f[a]; v > b {
					b, ba = v, int32(a)
				}
			}
			cur[m], arg[m] = b, ba
		}
	}
	m := M
	for c := K - 1; c >= 0; c-- {
		a := lp.dpArg[c*(M+1)+m]
		lp.enter[c] = a
		m -= int(a) * int(lp.classW[c])
	}
	return dp[K*(M+1)+M] - lp.y[R-1]
}

// solve runs the simplex from the current basis to optimality (or the
// iteration limit, or the context's end). It reports false when the LP is
// infeasible (the artificial column stays in use).
func (lp *cfgLP) solve(ctx context.Context) bool {
	R, N := lp.R, int32(lp.N)
	limit := 20*(lp.N+R) + 2000
	degenerate := 0
	dualsOK := false // y and q are the basis's: a bound flip keeps them
	for it := 0; it < limit; it++ {
		if it&63 == 63 && deadline.Done(ctx) {
			break
		}
		lp.iters++
		if !dualsOK {
			lp.duals()
		}
		dualsOK = false
		k, dir, _ := lp.priceJobs(degenerate > 50)
		var pvec []int32
		if k < 0 {
			// The artificial column, if it left, never returns: its cost
			// outweighs anything it could supply.
			if d := lp.pricePatterns(); !improves(d, lp.y[R-1], d+lp.y[R-1]) {
				break
			}
			k, dir, pvec = colPattern, 1, lp.enter
		}
		lp.colVec(k, pvec, lp.col)
		lp.ftran()
		t, leave := lp.ratio(dir, degenerate > 50)
		own := math.Inf(1)
		if k >= 0 && k < N {
			own = lp.ownStep(int(k), dir)
		}
		if own <= t {
			// A bound flip: the job moves to a breakpoint, the basis stays.
			old := lp.x[k]
			lp.x[k] += float64(float64(dir) * own)
			lp.seg[k] = int32(math.Round(lp.x[k]))
			lp.x[k] = float64(lp.seg[k])
			lp.shiftRHS(int(k), lp.x[k]-old)
			lp.values()
			degenerate = 0
			dualsOK = true // the basis and its costs are unchanged
			continue
		}
		if leave < 0 {
			break // unbounded: cannot happen (every column is bounded through Σλ = T)
		}
		if t == 0 {
			degenerate++
		} else {
			degenerate = 0
		}
		lp.pivot(k, dir, t, leave, pvec, !(float64(dir)*lp.alpha[leave] > 0))
	}
	art := N + int32(R) - 1
	return lp.pos[art] < 0 || lp.x[art] <= 1e-9
}

// ratio returns the largest step of the entering column (direction dir)
// that keeps every basic variable within its bounds, and the basis
// position that reaches its bound first (ties: the largest |α|, then the
// smallest position), or −1 if none limits it.
func (lp *cfgLP) ratio(dir int, bland bool) (float64, int) {
	t, leave, la := math.Inf(1), -1, 0.0
	N := int32(lp.N)
	for l := range lp.R {
		a := float64(dir) * lp.alpha[l]
		if math.Abs(a) <= lpPivTol {
			continue
		}
		k := lp.basis[l]
		var v, lower, upper float64
		upper = math.Inf(1)
		switch {
		case k == colPattern:
			v = lp.patX[l]
		case k < N:
			v = lp.x[k]
			lower, upper = float64(lp.seg[k]), float64(lp.seg[k]+1)
		default:
			v = lp.x[k]
		}
		// The basic variable changes by −a per unit step.
		var lim float64
		if a > 0 {
			lim = max(0, v-lower) / a
		} else {
			if math.IsInf(upper, 1) {
				continue
			}
			lim = max(0, upper-v) / -a
		}
		better := lim < t || (lim == t && math.Abs(a) > la)
		if bland && lim == t && leave >= 0 {
			// Bland: among ties, the smallest column index leaves.
			better = lp.colIndex(l) < lp.colIndex(leave)
		}
		if better {
			t, leave, la = lim, l, math.Abs(a)
		}
	}
	return t, leave
}

// colIndex orders the basis's columns for Bland's rule: jobs, slacks and
// the artificial by id, patterns after them by position.
func (lp *cfgLP) colIndex(l int) int {
	if k := lp.basis[l]; k != colPattern {
		return int(k)
	}
	return lp.N + lp.R + l
}

// ownStep is how far the entering job can move in direction dir before its
// reduced cost stops being positive (through as many breakpoints as that
// allows) or its box ends.
func (lp *cfgLP) ownStep(j, dir int) float64 {
	T, v := lp.T, int(lp.seg[j])
	q := lp.q[j]
	steps := 0
	if dir > 0 {
		for v+steps < int(lp.hi[j]) {
			if s := lp.slope[j*T+v+steps]; !improves(s-q, s, q) {
				break
			}
			steps++
		}
	} else {
		for v-steps > int(lp.lo[j]) {
			if s := lp.slope[j*T+v-steps-1]; !improves(q-s, s, q) {
				break
			}
			steps++
		}
	}
	return float64(steps)
}

// pivot brings column k (direction dir, step t) into basis position
// leave; the leaving variable goes to the bound it reached, its upper one
// when up (a job's segment's end).
func (lp *cfgLP) pivot(k int32, dir int, t float64, leave int, pvec []int32, up bool) {
	R, N, K := lp.R, int32(lp.N), lp.K
	out := lp.basis[leave]
	switch {
	case out == colPattern:
	case out < N:
		if !up {
			lp.x[out] = float64(lp.seg[out])
		} else {
			lp.seg[out]++
			lp.x[out] = float64(lp.seg[out])
		}
		lp.pos[out] = -1
		lp.shiftRHS(int(out), lp.x[out])
	default:
		lp.x[out] = 0
		lp.pos[out] = -1
	}
	// The entering variable's segment (a job), its position.
	if k >= 0 && k < N {
		lp.shiftRHS(int(k), -lp.x[k]) // basic now
		nx := lp.x[k] + float64(float64(dir)*t)
		s := int32(math.Floor(nx + 1e-9))
		if dir < 0 {
			s = int32(math.Ceil(nx-1e-9)) - 1
		}
		lp.seg[k] = min(max(s, lp.lo[k]), lp.hi[k]-1)
		lp.x[k] = nx
		lp.pos[k] = int32(leave)
	} else if k >= 0 {
		lp.pos[k] = int32(leave)
	} else {
		copy(lp.pat[leave*K:leave*K+K], pvec)
	}
	lp.basis[leave] = k
	// B⁻¹ ← E·B⁻¹, pivoting on α_leave.
	piv := lp.alpha[leave]
	prow := lp.binv[leave*R : leave*R+R]
	for i := range prow {
		prow[i] /= piv
	}
	for l := range R {
		if l == leave || lp.alpha[l] == 0 {
			continue
		}
		f := lp.alpha[l]
		row := lp.binv[l*R : l*R+R]
		for i := range row {
			row[i] -= lpMul(f, prow[i])
		}
	}
	lp.values()
}

// supply is Σ_p λ_p·min(p_c, k) over the basis's patterns.
func (lp *cfgLP) supply(c int32, k int32) float64 {
	s := 0.0
	for l := range lp.R {
		if lp.basis[l] == colPattern && lp.patX[l] > 0 {
			s += lpMul(lp.patX[l], float64(min(lp.pat[l*lp.K+int(c)], k)))
		}
	}
	return s
}

// separate adds, for each class, the most violated top-k row (the k jobs
// with the most rounds against the patterns' min(p_c, k)), at most maxNew in
// all; it returns how many it added.
func (lp *cfgLP) separate(class []int32, maxNew int) int {
	added := 0
	for c := int32(0); c < int32(lp.K) && added < maxNew; c++ {
		J := lp.sorted[:0]
		for j := range lp.N {
			if class[j] == c {
				J = append(J, int32(j))
			}
		}
		// Jobs by value desc, index asc (insertion sort: classes are
		// small where this matters, and the order is deterministic).
		for i := 1; i < len(J); i++ {
			v := J[i]
			h := i
			for h > 0 && (lp.x[J[h-1]] < lp.x[v] || (lp.x[J[h-1]] == lp.x[v] && J[h-1] > v)) {
				J[h] = J[h-1]
				h--
			}
			J[h] = v
		}
		lp.sorted = J
		top := 0.0
		bestK, bestViol := -1, 1e-7
		for k := 1; k < len(J); k++ {
			top += lp.x[J[k-1]]
			if viol := top - lp.supply(c, int32(k)); viol > bestViol {
				bestK, bestViol = k, viol
			}
		}
		if bestK > 0 && !lp.hasRow(c, J[:bestK]) {
			lp.addRow(c, J[:bestK])
			added++
		}
	}
	return added
}

// hasRow reports whether a row bounds exactly the jobs J (any order).
func (lp *cfgLP) hasRow(c int32, J []int32) bool {
	for r := range lp.rowClass {
		if lp.rowClass[r] != c || int(lp.rowSize[r]) != len(J) {
			continue
		}
		same := true
		for _, j := range lp.members[lp.rowStart[r]:lp.rowStart[r+1]] {
			found := false
			for _, i := range J {
				if i == j {
					found = true
					break
				}
			}
			if !found {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// maxLPRows bounds the rows the separation may add.
const maxLPRows = 48

// lpStart says which of solveLP's solves start from the last basis (warm)
// rather than the slack basis.
type lpStart uint8

const (
	lpCold   lpStart = iota // none
	lpRounds                // the separation rounds after the first
	lpAll                   // every one, the first from the last solve's basis
)

// solveLP solves the configuration LP over the box [lo, hi] with up to
// rounds of top-k separation, starting each solve as start says; it
// reports whether the LP is feasible. The packing test (lpPack) keeps the
// slack basis throughout: its LPs are short, and the vertex it rounds
// into a packing is then the one it always was.
func (w *Workspace) solveLP(ctx context.Context, lo, hi []int32, rounds int, keepRows bool, start lpStart) bool {
	w.lpSetup(lo, hi, keepRows)
	lp := &w.lp
	lp.iters = 0
	for round := 0; ; round++ {
		if !(start == lpAll || start == lpRounds && round > 0) || !lp.warm() {
			lp.start()
		}
		lp.ready = true
		if !lp.solve(ctx) {
			if round == 0 {
				return false
			}
			// The new rows stalled the simplex (or made the LP infeasible,
			// which a valid row cannot on a feasible one): back to the
			// rows of the last solved round, whose solution stands.
			lp.dropRows(lp.prevRows)
			lp.start()
			return lp.solve(ctx)
		}
		if round == rounds || len(lp.rowClass) >= maxLPRows || deadline.Done(ctx) {
			return true
		}
		lp.prevRows = len(lp.rowClass)
		if lp.separate(w.ks.class, maxLPRows-len(lp.rowClass)) == 0 {
			return true
		}
	}
}

// # The warm start
//
// A solve after a change of rows (separation) or of the box (the root's
// LPs at other makespans, a node's LP after its feasibility test) starts
// from the last solve's basis instead of the slack basis. The new rows'
// slacks join the basis; nonbasic jobs move into the new box (a job's
// nonbasic value is a breakpoint, so it stays one); B⁻¹ is computed anew
// from the basis's columns (no drift from the updates). The basis may then
// be primal infeasible (a violated new row's slack is negative, a basic
// job lies outside its segment or is fixed by the box), and a dual simplex
// drives each such variable to its bound, taking the entering column
// (jobs, slacks, the artificial) by the least ratio of reduced cost to
// pivot-row entry; the primal simplex then goes on as from any feasible
// basis, with the patterns priced as always. The optimum is the same LP's
// (TestLPWarmStartMatchesCold), and nothing exact depends on the LP
// anyway (the header above), so the warm start needs no proof of its own,
// only a fallback: a basis that is singular or that the dual simplex
// cannot repair within dualLimit iterations is dropped for the slack
// basis.

// warm prepares the solve from the last basis (see above); it reports
// false when the slack basis must be used instead.
func (lp *cfgLP) warm() bool {
	N, R0 := lp.N, lp.R
	if !lp.ready || len(lp.rowClass)+1 < R0 {
		return false
	}
	artPos, artX := lp.pos[N+R0-1], lp.x[N+R0-1]
	lp.index()
	R := lp.R
	lp.basis = keep(lp.basis, R)
	lp.pos = keep(lp.pos, N+R)
	lp.x = keep(lp.x, N+R)
	lp.pat = keep(lp.pat, R*lp.K)
	lp.patX = keep(lp.patX, R)
	lp.binv = scratch.Resize(lp.binv, R*R)
	// The artificial's id moves past the new slacks, which are basic.
	art := int32(N + R - 1)
	for l := range R0 {
		if lp.basis[l] == int32(N+R0-1) {
			lp.basis[l] = art
		}
	}
	lp.pos[art], lp.x[art] = artPos, artX
	for r := R0 - 1; r < R-1; r++ {
		l := R0 + r - (R0 - 1)
		lp.basis[l] = int32(N + r)
		lp.pos[N+r] = int32(l)
	}
	for j := range N {
		if lp.pos[j] < 0 {
			lp.seg[j] = min(max(lp.seg[j], lp.lo[j]), lp.hi[j])
			lp.x[j] = float64(lp.seg[j])
		} else if lp.lo[j] == lp.hi[j] {
			// A basic job the box fixes leaves first (infeasible), to its
			// value: its segment ends (or, at 0, starts) there.
			lp.seg[j] = max(lp.lo[j]-1, 0)
		} else {
			lp.seg[j] = min(max(lp.seg[j], lp.lo[j]), lp.hi[j]-1)
		}
	}
	if !lp.refactor() {
		return false
	}
	lp.nonbasicRHS()
	lp.values()
	return lp.dualPhase()
}

// keep resizes s to n, keeping its contents.
func keep[S ~[]E, E any](s S, n int) S {
	if cap(s) >= n {
		return s[:n]
	}
	t := make(S, n)
	copy(t, s)
	return t
}

// refactor computes B⁻¹ from the basis's columns by Gauss–Jordan
// elimination with partial pivoting (ties: the first row); it reports
// false when the basis is singular.
func (lp *cfgLP) refactor() bool {
	R, K := lp.R, lp.K
	a := scratch.Resize(lp.fac, R*R)
	lp.fac = a
	inv := lp.binv[:R*R]
	for l := range R {
		lp.colVec(lp.basis[l], lp.pat[l*K:l*K+K], lp.col)
		for r := range R {
			a[r*R+l] = lp.col[r]
		}
	}
	clear(inv)
	for r := range R {
		inv[r*R+r] = 1
	}
	for c := range R {
		p, best := -1, 1e-9
		for r := c; r < R; r++ {
			if v := math.Abs(a[r*R+c]); v > best {
				p, best = r, v
			}
		}
		if p < 0 {
			return false
		}
		if p != c {
			for i := range R {
				a[p*R+i], a[c*R+i] = a[c*R+i], a[p*R+i]
				inv[p*R+i], inv[c*R+i] = inv[c*R+i], inv[p*R+i]
			}
		}
		piv := a[c*R+c]
		for i := range R {
			a[c*R+i] /= piv
			inv[c*R+i] /= piv
		}
		for r := range R {
			f := a[r*R+c]
			if r == c || f == 0 {
				continue
			}
			for i := range R {
				a[r*R+i] -= lpMul(f, a[c*R+i])
				inv[r*R+i] -= lpMul(f, inv[c*R+i])
			}
		}
	}
	return true
}

// dualLimit bounds the dual simplex's iterations of one warm start.
const dualLimit = 100

// dualPhase runs the dual simplex until the basis is primal feasible (it
// reports true) or it cannot go on.
func (lp *cfgLP) dualPhase() bool {
	for range dualLimit {
		l, want, up := lp.infeasible()
		if l < 0 {
			return true
		}
		lp.iters++
		lp.duals()
		k, dir := lp.dualEnter(l, want)
		if k < 0 {
			return false
		}
		bound := lp.lower(l)
		if up {
			bound++
		}
		lp.colVec(k, nil, lp.col)
		lp.ftran()
		t := (lp.basicValue(l) - bound) / (float64(dir) * lp.alpha[l])
		if !(t >= 0) || math.IsInf(t, 0) {
			return false
		}
		lp.pivot(k, dir, t, l, nil, up)
	}
	return false
}

// infeasible returns the basis position whose variable lies furthest
// outside its bounds (ties: the first), the way it must move (+1 up, −1
// down) and whether to its upper bound (a job's segment's end); −1 when
// none is outside by more than the tolerance. A basic job the box fixes
// must leave first, to its value (which the box holds).
func (lp *cfgLP) infeasible() (int, float64, bool) {
	best, want, up, worst := -1, 0.0, false, 1e-9
	N := int32(lp.N)
	for l := range lp.R {
		v, lower := lp.basicValue(l), lp.lower(l)
		k := lp.basis[l]
		if k >= 0 && k < N && lp.lo[k] == lp.hi[k] {
			if v < float64(lp.lo[k]) {
				return l, 1, lp.lo[k] > 0
			}
			return l, -1, lp.lo[k] > 0
		}
		if d := lower - v; d > worst {
			best, want, up, worst = l, 1, false, d
		}
		if k >= 0 && k < N {
			if d := v - float64(lp.seg[k]+1); d > worst {
				best, want, up, worst = l, -1, true, d
			}
		}
	}
	return best, want, up
}

// basicValue is the value of the variable at basis position l.
func (lp *cfgLP) basicValue(l int) float64 {
	if k := lp.basis[l]; k != colPattern {
		return lp.x[k]
	}
	return lp.patX[l]
}

// lower is the lower bound of the variable at basis position l: its
// segment's start for a job, 0 otherwise.
func (lp *cfgLP) lower(l int) float64 {
	if k := lp.basis[l]; k >= 0 && k < int32(lp.N) {
		return float64(lp.seg[k])
	}
	return 0
}

// ftran sets lp.alpha = B⁻¹·lp.col.
func (lp *cfgLP) ftran() {
	R := lp.R
	for l := range R {
		s := 0.0
		row := lp.binv[l*R : l*R+R]
		for i, v := range lp.col[:R] {
			if v != 0 {
				s += lpMul(row[i], v)
			}
		}
		lp.alpha[l] = s
	}
}

// dualEnter is the dual ratio test for the variable at basis position l,
// which must move the way want says (+1 up, −1 down) to leave: among the
// nonbasic moves that push it so, the one whose reduced cost reaches zero
// first, relative to the pivot row's entry (ties: the larger entry, then
// the first column). The artificial column is a candidate too (its cost
// makes it the last resort); the patterns outside the basis are not (the
// primal simplex prices them after). It returns the column and its
// direction, or −1.
func (lp *cfgLP) dualEnter(l int, want float64) (int32, int) {
	R, N, T := lp.R, lp.N, lp.T
	rho := lp.binv[l*R : l*R+R]
	best, bestDir, bestT, bestA := int32(-1), 0, math.Inf(1), 0.0
	// The basic variable changes by −α·dir per unit of the entering move.
	consider := func(k int32, dir int, a, d float64) {
		g := -a * float64(dir) * want // > 0: the move pushes the right way
		if g <= lpPivTol {
			return
		}
		t := max(0, -d) / g
		if t < bestT || (t == bestT && g > bestA) {
			best, bestDir, bestT, bestA = k, dir, t, g
		}
	}
	for j := range N {
		if lp.pos[j] >= 0 {
			continue
		}
		a := 0.0
		for _, r := range lp.jobRows[lp.jobStart[j]:lp.jobStart[j+1]] {
			a += rho[r]
		}
		v := lp.seg[j]
		if v < lp.hi[j] {
			consider(int32(j), 1, a, lp.slope[j*T+int(v)]-lp.q[j])
		}
		if v > lp.lo[j] {
			consider(int32(j), -1, a, lp.q[j]-lp.slope[j*T+int(v)-1])
		}
	}
	for r := 0; r < R-1; r++ {
		if k := int32(N + r); lp.pos[k] < 0 {
			consider(k, 1, rho[r], -lp.y[r])
		}
	}
	if art := int32(N + R - 1); lp.pos[art] < 0 {
		a, ya := rho[R-1], lp.y[R-1]
		for r := 0; r < R-1; r++ {
			a -= lpMul(lp.big[r], rho[r])
			ya -= lpMul(lp.big[r], lp.y[r])
		}
		consider(art, 1, a, -lp.mcost-ya)
	}
	return best, bestDir
}

// dropRows keeps the first n rows.
func (lp *cfgLP) dropRows(n int) {
	lp.members = lp.members[:lp.rowStart[n]]
	lp.rowClass, lp.rowSize, lp.rowStart = lp.rowClass[:n], lp.rowSize[:n], lp.rowStart[:n+1]
}
