package market

import (
	"context"
	"math"
	"math/bits"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
)

// # The Lagrangian bound
//
// Dualizing n_j = Σ_t x_{j,t} with a price q_j per job splits the program
// into the jobs and the rounds: for any q,
//
//	OPT ≤ max_τ [ Σ_j max_{n ∈ [max(lo_j, λ_j(τ)), hi_j]} (G_j(n) − q_j·n) − k·τ ] + T·KS(q)
//
// where KS(q) = max_{S fits one round} Σ_{j∈S} q_j, which width classes make
// a small DP over the classes' slot counts (the best S takes each class's
// highest prices). With the configuration LP's duals as q this is the LP's
// bound (which the count relaxation's aggregate capacity does not see); the
// LP is solved in floating point, but the bound is valid for every q, and
// it is evaluated here exactly, on the solver's grid, with q_j rounded to
// it. So the count relaxation's W(τ) is replaced by min(W(τ), W_L(τ)) in the
// makespan search of every branch-and-bound node, which prunes the nodes
// that only the aggregate capacity let in.
//
// Everything is kept non-negative as in exact.go: with H_j = top_j,
//
//	W_L(τ) = Σ_j [G_j(m_j) + q_j·(H_j − m_j)] + T·KS(q) − Σ_j q_j·H_j,
//
// m_j being the best count in the job's box; the numbers have one limb
// more than the solve's (T·KS and Σ q_j·H_j stay below 2^30 times the
// largest marginal). It is used when the solve's layout is one tier (the
// terms' scales within 2^64 of each other); with priorities further apart
// the solver keeps the count relaxation alone.

// lagrange is the Lagrangian bound's state.
type lagrange struct {
	active bool
	// The bound works in one tier of the layout (exact.go): the only one,
	// or the last when the upper tiers' jobs are fixed at their best
	// values (lagrangeRoot); upper holds those tiers' constant welfare.
	tier  int32
	off   int32 // the tier's first limb in a number
	limbs int   // the tier's limbs: the width of a price
	upper []uint64
	wide  int // limbs of a wide number: the tier's limbs + 1
	// ps is the price set in use; sets holds n of them, each a valid
	// bound on its own, so a bound takes the least.
	ps     priceSet
	sets   [maxSets]priceSet
	n      int
	acc    []uint64 // wide scratch
	byPr   []int32  // the jobs by class, then price desc
	pre    []uint64 // per class: prefix sums of its prices (wide), at preOff
	preOff []int32
	dp     []uint64 // two rows of (M+1) wide numbers
	// the primal heuristic's scratch
	rounds                []int32 // T × K: the rounded patterns' slots
	cls                   []int32 // per class: its jobs, sorted by count desc
	clsStart              []int32
	slack                 []int32 // per class and k: s_c(k) − top_k(n)
	slackOff              []int32
	counts, posIn, hcount []int32
	hx                    []bool
	score                 []uint64
	blocked               []bool
	out, out2             []uint64 // numbers: lagWelfare's result in tauEval, its scratch
	// lagrangeFix's scratch
	events                     []event
	evReady                    bool // events holds the root box's (sweepEvents)
	least, surv, newLo, newHi  []int32
	sum, lhs, slack2, topSlack []uint64
	survSet                    []int32
	proven                     bool    // the fixing proved the incumbent optimal
	nodeLo, rootLo             []int32 // nodeLP's and lagrangeRoot's scratch
	fixed                      []bool  // per job: fixed at its best value (fixUpperTiers)
	tauFloor                   float64 // no plan has a makespan at or below it (lpAt)
	domJobs, domLast           []int32 // dominantJobs' scratch
	domRest, domD              []uint64
	qint, dpInt                []uint64 // farkas's scratch
}

// priceSet is one vector of prices with what the bound needs of it.
type priceSet struct {
	price []uint64 // N × limbs: q_j on the grid
	best  []int32  // per job: argmax over [0, top_j] of G_j(n) − q_j·n
	ks    []uint64 // T·KS(q), wide
	cq    []uint64 // Σ_j q_j·H_j, wide
}

// maxSets bounds the price sets kept: the root's LPs at a few makespans,
// and the last node's.
const maxSets = 4

// lagrangeRoot runs when the root's counts do not pack: the configuration
// LP at the root's makespan tau, the primal heuristic on its pattern
// mixture, the prices of the Lagrangian bound and the root's fixing. It
// reports whether the bound is now in use (the root is then solved again,
// in the box the fixing left); lag.proven says the fixing proved the
// incumbent optimal.
func (w *Workspace) lagrangeRoot(ctx context.Context, tau float64) bool {
	w.lag.active, w.lag.proven = false, false
	w.lag.tauFloor = math.Inf(-1)
	if w.ex.coarse || len(w.p.Jobs) == 0 || len(w.ex.tiers) == 0 {
		return false
	}
	N := len(w.p.Jobs)
	last := int32(len(w.ex.tiers) - 1)
	if mt := w.ex.makespanTier; mt >= 0 && mt != last {
		return false
	}
	w.lag.tier, w.lag.off, w.lag.limbs = last, w.ex.tiers[last].off, int(w.ex.tiers[last].n)
	if !w.fixUpperTiers() {
		return false
	}
	hi := w.bb.baseHi[:N]
	w.lag.evReady = false
	cand := w.tauCandidates(w.bb.baseLo[:N], hi)
	// The rows the packing tests separated hold for every packing, and
	// their last basis is a start (lp.go's warm start).
	if !w.lpAt(ctx, tau, true) {
		// The root's makespan forces counts that do not pack even
		// fractionally: the least makespan whose counts the LP holds.
		a, b := 0, len(cand)-1
		for a < len(cand) && cand[a] <= tau {
			a++
		}
		if a > b || !w.lpAt(ctx, cand[b], false) {
			return false
		}
		for a < b && !deadline.Done(ctx) {
			if m := (a + b) / 2; w.lpAt(ctx, cand[m], false) {
				b = m
			} else {
				a = m + 1
			}
		}
		tau = cand[b]
		if !w.lpAt(ctx, tau, false) {
			return false
		}
	}
	lo := w.lag.rootLo
	w.lpRound(lo, hi)
	w.lag.n = 0
	w.lagrangeSetup(0)
	// The LP at one makespan prices the others poorly when the makespan
	// weighs little: the makespan whose bound is largest gets its own LP
	// (and prices), while a new one comes up.
	for tries := 0; tries < 2*maxSets; tries++ {
		top := w.sweep(cand)
		if top < 0 || w.lag.n == maxSets-1 || deadline.Done(ctx) {
			break
		}
		t := cand[top]
		if t == tau {
			break
		}
		tau = t
		if !w.lpAt(ctx, tau, true) {
			continue // tauFloor rose past it, or the LP gave up: sweep again
		}
		w.lpRound(lo, hi)
		w.lagrangeSetup(w.lag.n)
	}
	w.lag.proven = w.lagrangeFix(cand)
	return true
}

// lpAt solves the configuration LP for the root's box with the counts the
// makespan tau forces (in lag.rootLo). When the LP is infeasible and its
// duals certify exactly that those counts do not pack, no plan has a
// makespan ≤ tau (the forced counts only grow as tau falls): lag.tauFloor
// rises to tau, which the bound's makespan searches skip. With keepRows it
// keeps the rows separated so far and starts from the last basis.
func (w *Workspace) lpAt(ctx context.Context, tau float64, keepRows bool) bool {
	N := len(w.p.Jobs)
	lo, hi := w.lag.rootLo[:0], w.bb.baseHi[:N]
	for j := range N {
		lo = append(lo, max(w.bb.baseLo[j], w.lambda(j, w.bb.baseLo[j], hi[j], tau)))
	}
	w.lag.rootLo = lo
	start := lpRounds // a new set of rows: the first solve is cold
	if keepRows {
		start = lpAll
	}
	if w.solveLP(ctx, lo, hi, 6, keepRows, start) {
		return true
	}
	if tau > w.lag.tauFloor && w.farkas(lo) {
		w.lag.tauFloor = tau
	}
	return false
}

// lagrangeSetup turns the LP's duals into grid prices and computes T·KS(q),
// Σ q_j·H_j and each job's best count.
func (w *Workspace) lagrangeSetup(slot int) {
	lg, lp := &w.lag, &w.lp
	lg.ps = lg.sets[slot]
	defer func() {
		lg.sets[slot] = lg.ps
		lg.n = max(lg.n, slot+1)
	}()
	N, W := len(w.p.Jobs), lg.limbs
	lg.wide = W + 1
	WL := lg.wide
	e := w.ex.tiers[lg.tier].exp
	// A price may exceed every marginal (a job forced above its best
	// count); the cap keeps it within the tier's width: the sum of the
	// terms' scales (exact.go).
	maxPrice := w.tierScale()
	lg.ps.price = scratch.Resize(lg.ps.price, N*W)
	lg.ps.best = scratch.Resize(lg.ps.best, N)
	for j := range N {
		qy := 0.0
		for _, r := range lp.jobRows[lp.jobStart[j]:lp.jobStart[j+1]] {
			qy += max(0, lp.y[r])
		}
		q := min(float64(qy*lp.scale), maxPrice)
		toGrid(lg.ps.price[j*W:j*W+W], max(q, 0), e)
		// The best count: the last n whose marginal beats the price.
		n := int32(0)
		for n < w.tab.top[j] && w.ex.jobTier[j] == lg.tier && cmpNum(w.marginal(j, int(n+1)), lg.ps.price[j*W:j*W+W]) > 0 {
			n++
		}
		lg.ps.best[j] = n
	}
	lg.acc = scratch.Resize(lg.acc, 2*WL)
	lg.out = scratch.Resize(lg.out, w.ex.limbs)
	lg.out2 = scratch.Resize(lg.out2, w.ex.limbs)
	lg.ps.cq = scratch.Resize(lg.ps.cq, WL)
	clear(lg.ps.cq)
	for j := range N {
		mulAdd(lg.ps.cq, lg.ps.price[j*W:j*W+W], uint64(w.tab.top[j]))
	}
	w.knapsackValue()
	lg.active = true
}

// knapsackValue sets lg.ps.ks to T·KS(q): the DP over the classes' slot
// counts, each class taking its highest prices.
func (w *Workspace) knapsackValue() {
	lg := &w.lag
	N, W, WL := len(w.p.Jobs), lg.limbs, lg.wide
	K := len(w.ks.classWidth)
	M := w.p.GPUs
	by := scratch.Resize(lg.byPr, N)
	for j := range by {
		by[j] = int32(j)
	}
	slices.SortFunc(by, func(a, b int32) int {
		if ca, cb := w.ks.class[a], w.ks.class[b]; ca != cb {
			return int(ca - cb)
		}
		if c := cmpNum(lg.ps.price[int(b)*W:int(b)*W+W], lg.ps.price[int(a)*W:int(a)*W+W]); c != 0 {
			return c
		}
		return int(a - b)
	})
	lg.byPr = by
	// Prefix sums per class, capped at the slots a round can hold.
	lg.preOff = scratch.Resize(lg.preOff, K+1)
	size := 0
	start := 0
	for c := range K {
		lg.preOff[c] = int32(size)
		end := start
		for end < N && w.ks.class[by[end]] == int32(c) {
			end++
		}
		cap := min(end-start, M/int(w.ks.classWidth[c]))
		size += (cap + 1) * WL
		start = end
	}
	lg.preOff[K] = int32(size)
	lg.pre = scratch.Resize(lg.pre, size)
	clear(lg.pre)
	start = 0
	for c := range K {
		pre := lg.pre[lg.preOff[c]:lg.preOff[c+1]]
		n := len(pre)/WL - 1
		for a := 1; a <= n; a++ {
			copy(pre[a*WL:a*WL+WL], pre[(a-1)*WL:a*WL])
			j := int(by[start+a-1])
			addAt(pre[a*WL:a*WL+WL], 1, lg.ps.price[j*W:j*W+W])
		}
		for start < N && w.ks.class[by[start]] == int32(c) {
			start++
		}
	}
	lg.dp = scratch.Resize(lg.dp, 2*(M+1)*WL)
	cur, next := lg.dp[:(M+1)*WL], lg.dp[(M+1)*WL:]
	clear(cur)
	tmp := lg.acc[:WL]
	for c := range K {
		pre := lg.pre[lg.preOff[c]:lg.preOff[c+1]]
		n := len(pre)/WL - 1
		wc := int(w.ks.classWidth[c])
		for m := 0; m <= M; m++ {
			b := next[m*WL : m*WL+WL]
			copy(b, cur[m*WL:m*WL+WL])
			for a := 1; a <= n && a*wc <= m; a++ {
				add(tmp, cur[(m-a*wc)*WL:(m-a*wc)*WL+WL], pre[a*WL:a*WL+WL])
				if cmpNum(tmp, b) > 0 {
					copy(b, tmp)
				}
			}
		}
		cur, next = next, cur
	}
	lg.ps.ks = scratch.Resize(lg.ps.ks, WL)
	clear(lg.ps.ks)
	mulAdd(lg.ps.ks, cur[M*WL:M*WL+WL], uint64(w.cfg.T))
}

// lagWelfare writes to out (one number) the Lagrangian bound on the
// welfare of counts in [least, hi]: W_L, clamped at 0. It reports false
// when the bound does not fit a number (then it is no better than the
// aggregate one).
func (w *Workspace) lagWelfare(least, hi []int32, out []uint64) bool {
	lg := &w.lag
	found := false
	tmp := lg.out2
	for s := range lg.n {
		lg.ps = lg.sets[s]
		if w.lagWelfare1(least, hi, tmp) && (!found || cmpNum(tmp, out) < 0) {
			copy(out, tmp)
			found = true
		}
	}
	return found
}

// lagWelfare1 is lagWelfare for the price set in use.
func (w *Workspace) lagWelfare1(least, hi []int32, out []uint64) bool {
	lg := &w.lag
	W, WL := lg.limbs, lg.wide
	acc := lg.acc[:WL]
	copy(acc, lg.ps.ks)
	for j := range least {
		m := min(max(lg.ps.best[j], least[j]), hi[j])
		if w.ex.jobTier[j] == lg.tier {
			addAt(acc, 1, w.gain(j, int(m)))
		}
		mulAdd(acc, lg.ps.price[j*W:j*W+W], uint64(w.tab.top[j]-m))
	}
	copy(out, lg.upper)
	if cmpNum(acc, lg.ps.cq) <= 0 {
		return true
	}
	sub(acc, acc, lg.ps.cq)
	if acc[0] != 0 {
		return false
	}
	copy(out[lg.off:int(lg.off)+W], acc[1:])
	return true
}

// mulAdd adds x·m to the wide number z (x aligned to z's last limb).
func mulAdd(z, x []uint64, m uint64) {
	if m == 0 {
		return
	}
	var carry uint64
	i := len(z) - 1
	for q := len(x) - 1; q >= 0; q-- {
		hi, lo := bits.Mul64(x[q], m)
		var c uint64
		lo, c = bits.Add64(lo, carry, 0)
		hi += c
		z[i], c = bits.Add64(z[i], lo, 0)
		carry = hi + c
		i--
	}
	for ; i >= 0 && carry != 0; i-- {
		z[i], carry = bits.Add64(z[i], carry, 0)
	}
}

// lpRound is the primal heuristic: the LP's pattern mixture rounded to T
// rounds (floors, then the largest remainders), each class's counts by the
// greedy on its slots (exact for one class: the slots make a polymatroid),
// with the lower bounds lo, packed class by class onto the rounds with the
// most free slots. A better plan becomes the incumbent.
// roundPatterns rounds the LP's pattern mixture to T rounds in lg.rounds:
// floors, then the largest remainders. It reports false when the LP used
// its artificial column.
func (w *Workspace) roundPatterns() bool {
	lp, lg := &w.lp, &w.lag
	N, T, K, R := len(w.p.Jobs), w.cfg.T, lp.K, lp.R
	art := int32(N + R - 1)
	if lp.pos[art] >= 0 && lp.x[art] > 1e-9 {
		return false
	}
	// Round the mixture.
	lg.rounds = scratch.Resize(lg.rounds, T*K)
	t := 0
	for l := range R {
		if lp.basis[l] != colPattern {
			continue
		}
		for f := int(math.Floor(lp.patX[l] + 1e-9)); f > 0 && t < T; f-- {
			copy(lg.rounds[t*K:t*K+K], lp.pat[l*K:l*K+K])
			t++
		}
	}
	for t < T {
		bl, bf := -1, -1.0
		for l := range R {
			if lp.basis[l] != colPattern {
				continue
			}
			if f := lp.patX[l] - math.Floor(lp.patX[l]+1e-9); f > bf {
				bl, bf = l, f
			}
		}
		if bl < 0 {
			clear(lg.rounds[t*K : T*K])
			break
		}
		copy(lg.rounds[t*K:t*K+K], lp.pat[bl*K:bl*K+K])
		lp.patX[bl] = math.Floor(lp.patX[bl] + 1e-9) // one remainder per pattern
		t++
	}
	return true
}

func (w *Workspace) lpRound(lo, hi []int32) {
	lg := &w.lag
	if !w.roundPatterns() || !w.classGreedy(lo, hi, true) {
		return
	}

	if !w.classPack() {
		return
	}
	s := lg.score[:w.ex.limbs]
	if w.evalCounts(lg.counts, s); cmpNum(s, w.inc.score) > 0 {
		copy(w.inc.counts, lg.counts)
		copy(w.inc.x, lg.hx)
		copy(w.inc.score, s)
	}
}

// classGreedy fills lg.counts: per class, the lower bounds, then the
// class's marginals in the solver's order (gain desc), each taken while
// every top-k of the class's counts stays within its slots
// s_c(k) = Σ_t min(a_{t,c}, k). It reports false when the lower bounds do
// not fit the slots.
func (w *Workspace) classGreedy(lo, hi []int32, fill bool) bool {
	lg := &w.lag
	N, T, K := len(w.p.Jobs), w.cfg.T, len(w.ks.classWidth)
	lg.counts = scratch.Resize(lg.counts, N)
	copy(lg.counts, lo[:N])
	lg.posIn = scratch.Resize(lg.posIn, N)
	lg.blocked = scratch.Resize(lg.blocked, N)
	clear(lg.blocked)
	// The class's jobs by count desc (then index), and the slacks.
	lg.cls = scratch.Resize(lg.cls, N)
	lg.clsStart = scratch.Resize(lg.clsStart, K+1)
	lg.slackOff = scratch.Resize(lg.slackOff, K+1)
	at := 0
	for c := range K {
		lg.clsStart[c] = int32(at)
		for j := range N {
			if w.ks.class[j] == int32(c) {
				lg.cls[at] = int32(j)
				at++
			}
		}
	}
	lg.clsStart[K] = int32(at)
	size := 0
	for c := range K {
		lg.slackOff[c] = int32(size)
		size += int(lg.clsStart[c+1]-lg.clsStart[c]) + 1
	}
	lg.slackOff[K] = int32(size)
	lg.slack = scratch.Resize(lg.slack, size)
	for c := range K {
		J := lg.cls[lg.clsStart[c]:lg.clsStart[c+1]]
		slices.SortFunc(J, func(a, b int32) int {
			if lg.counts[a] != lg.counts[b] {
				return int(lg.counts[b] - lg.counts[a])
			}
			return int(a - b)
		})
		for i, j := range J {
			lg.posIn[j] = int32(i)
		}
		sl := lg.slack[lg.slackOff[c]:lg.slackOff[c+1]]
		top := int32(0)
		sl[0] = 0
		for k := 1; k <= len(J); k++ {
			top += lg.counts[J[k-1]]
			s := int32(0)
			for t := range T {
				s += min(lg.rounds[t*K+c], int32(k))
			}
			sl[k] = s - top
			if sl[k] < 0 {
				return false
			}
		}
	}
	for c := 0; c < K && fill; c++ {
		for _, e := range w.ks.margs[w.ks.classStart[c]:w.ks.classStart[c+1]] {
			j := e.j
			if lg.blocked[j] || e.n != lg.counts[j]+1 || e.n > hi[j] {
				continue
			}
			w.classAdd(c, j)
		}
	}
	return true
}

// classAdd gives job j (class c) one more round if every top-k allows it.
func (w *Workspace) classAdd(c int, j int32) {
	lg := &w.lag
	J := lg.cls[lg.clsStart[c]:lg.clsStart[c+1]]
	sl := lg.slack[lg.slackOff[c]:lg.slackOff[c+1]]
	// j moves to the front of its run of equal counts, position p.
	p := int(lg.posIn[j])
	for p > 0 && lg.counts[J[p-1]] == lg.counts[j] {
		p--
	}
	for k := p + 1; k < len(sl); k++ {
		if sl[k] < 1 {
			lg.blocked[j] = true
			return
		}
	}
	for k := p + 1; k < len(sl); k++ {
		sl[k]--
	}
	o := int(lg.posIn[j])
	J[o], J[p] = J[p], J[o]
	lg.posIn[J[o]], lg.posIn[J[p]] = int32(o), int32(p)
	lg.counts[j]++
}

// classPack assigns each class's counts to the rounds' slots: the jobs by
// count desc, each on the rounds with the most slots left (then the
// earliest), the Gale–Ryser construction, into lg.hx.
func (w *Workspace) classPack() bool {
	lg := &w.lag
	N, T, K := len(w.p.Jobs), w.cfg.T, len(w.ks.classWidth)
	lg.hx = scratch.Resize(lg.hx, N*T)
	clear(lg.hx)
	lg.hcount = scratch.Resize(lg.hcount, T)
	lg.score = scratch.Resize(lg.score, w.ex.limbs)
	left, ord := lg.hcount[:T], w.pk.byFree[:T]
	for c := range K {
		for t := range T {
			left[t] = lg.rounds[t*K+c]
			ord[t] = int32(t)
		}
		for _, j := range lg.cls[lg.clsStart[c]:lg.clsStart[c+1]] {
			slices.SortFunc(ord, func(a, b int32) int {
				if left[a] != left[b] {
					return int(left[b] - left[a])
				}
				return int(a - b)
			})
			for _, t := range ord[:lg.counts[j]] {
				if left[t] <= 0 {
					return false
				}
				left[t]--
				lg.hx[int(j)*T+int(t)] = true
			}
		}
	}
	return true
}

// event is the makespan at which a job's least count drops to n.
type event struct {
	tau float64
	j   int32
	n   int32
}

// maxSlices bounds the makespans the root's fixing examines one by one.
const maxSlices = 16

// sweep finds the makespan candidates (of the root's box) whose Lagrangian
// bound, the least over the price sets, beats the incumbent: a plan better
// than the incumbent has one of them as its makespan. Each job's least
// count changes at most top_j times along the ascending candidates, so the
// sums of the jobs' terms are kept up to date event by event. It returns
// the survivors' indices (in lg.surv, with lg.survSet the set of the least
// bound at each) and the one whose bound is largest, or −1.
func (w *Workspace) sweep(cand []float64) int {
	lg := &w.lag
	N, WL := len(w.p.Jobs), lg.wide
	lo, hi := w.bb.baseLo[:N], w.bb.baseHi[:N]
	if !lg.evReady {
		w.sweepEvents(lo, hi)
	}
	ev := lg.events
	least := scratch.Resize(lg.least, N)
	lg.least = least
	for j := range least {
		least[j] = hi[j] + 1 // not yet feasible
	}
	missing := N
	sums := scratch.Resize(lg.sum, maxSets*WL)
	lg.sum = sums
	clear(sums)
	phi := lg.acc[WL : 2*WL]
	lhs := scratch.Resize(lg.lhs, 4*WL)
	lg.lhs = lhs
	slack, best := lhs[2*WL:3*WL], lhs[3*WL:4*WL]
	surv, survSet := lg.surv[:0], lg.survSet[:0]
	top, e := -1, 0
	for i, tau := range cand {
		for ; e < len(ev) && ev[e].tau <= tau; e++ {
			j, n := int(ev[e].j), ev[e].n
			for s := range lg.n {
				lg.ps = lg.sets[s]
				sum := sums[s*WL : s*WL+WL]
				if least[j] <= hi[j] {
					w.lagPhi(phi, j, least[j], hi[j])
					sub(sum, sum, phi)
				}
				w.lagPhi(phi, j, n, hi[j])
				add(sum, sum, phi)
			}
			if least[j] > hi[j] {
				missing--
			}
			least[j] = n
		}
		if missing > 0 || tau <= lg.tauFloor {
			continue
		}
		in, arg := true, 0
		for s := range lg.n {
			lg.ps = lg.sets[s]
			if !w.sliceSlack(slack, sums[s*WL:s*WL+WL], tau) {
				in = false
				break
			}
			if s == 0 || cmpNum(slack, best) < 0 {
				copy(best, slack)
				arg = s
			}
		}
		if in {
			if top < 0 || cmpNum(best, lg.topSlack) > 0 {
				top = len(surv)
				lg.topSlack = append(lg.topSlack[:0], best...)
			}
			surv, survSet = append(surv, int32(i)), append(survSet, int32(arg))
		}
	}
	lg.surv, lg.survSet = surv, survSet
	if top >= 0 {
		return int(surv[top])
	}
	return -1
}

// sweepEvents lists the events of the box [lo, hi] for sweep: least_j
// becomes n once τ ≥ res_j(n); ascending τ, then n descending, so that the
// smallest n wins among equal thresholds. The root's sweeps share one box,
// so the list is built once (lg.evReady).
func (w *Workspace) sweepEvents(lo, hi []int32) {
	lg, T := &w.lag, w.cfg.T
	ev := lg.events[:0]
	for j := range lo {
		row := j * (T + 1)
		for n := hi[j]; n >= lo[j]; n-- {
			ev = append(ev, event{tau: w.tab.res[row+int(n)], j: int32(j), n: n})
		}
	}
	slices.SortFunc(ev, func(a, b event) int {
		if a.tau != b.tau {
			if a.tau < b.tau {
				return -1
			}
			return 1
		}
		if a.j != b.j {
			return int(a.j - b.j)
		}
		return int(b.n - a.n)
	})
	lg.events = ev
	lg.evReady = true
}

// lagrangeFix is reduced-cost fixing at the root, exact on the grid. If no
// makespan survives the sweep, the incumbent is optimal (it returns true).
// Otherwise every count v of job j that no surviving τ lets beat the
// incumbent, i.e. with φ_j(v) + (bound − incumbent) ≤ the job's best term
// at τ, is cut from the root's box, and the box's lower bounds become the
// least counts of the largest surviving τ.
func (w *Workspace) lagrangeFix(cand []float64) bool {
	lg := &w.lag
	N := len(w.p.Jobs)
	lo, hi := w.bb.baseLo[:N], w.bb.baseHi[:N]
	surv := lg.surv
	if len(surv) == 0 {
		return true
	}
	if len(surv) > maxSlices {
		top := cand[surv[len(surv)-1]]
		for j := range N {
			lo[j] = max(lo[j], w.lambda(j, lo[j], hi[j], top))
		}
		return false
	}
	w.fixBoxes(cand, surv)
	return false
}

// lagPhi sets z (wide) to the job's best term over [a, b]:
// G_j(m) + q_j·(H_j − m) at m, its best count clamped to [a, b].
func (w *Workspace) lagPhi(z []uint64, j int, a, b int32) {
	w.lagTerm(z, j, min(max(w.lag.ps.best[j], a), b))
}

// lagTerm sets z (wide) to φ_j(v) = G_j(v) + q_j·(H_j − v).
func (w *Workspace) lagTerm(z []uint64, j int, v int32) {
	W := w.lag.limbs
	clear(z)
	if w.ex.jobTier[j] == w.lag.tier {
		addAt(z, 1, w.gain(j, int(v)))
	}
	mulAdd(z, w.lag.ps.price[j*W:j*W+W], uint64(w.tab.top[j]-v))
}

// sliceSlack sets z (wide) to the amount by which the Lagrangian bound of
// makespan τ, with job terms summing to sum, exceeds the incumbent, and
// reports whether it does.
func (w *Workspace) sliceSlack(z, sum []uint64, tau float64) bool {
	lg := &w.lag
	W, WL, off := lg.limbs, lg.wide, int(lg.off)
	rhs := lg.lhs[WL : 2*WL]
	add(z, sum, lg.ps.ks)
	// The upper tiers of the incumbent are the fixed jobs' best values
	// (lagrangeRoot), so the bound and the incumbent compare in the tier.
	mk := w.tau.probe[:w.ex.limbs]
	w.mkInto(mk, tau)
	addAt(z, 1, mk[off:off+W])
	clear(rhs)
	copy(rhs[1:], w.inc.score[off:off+W])
	add(rhs, rhs, lg.ps.cq)
	if cmpNum(z, rhs) <= 0 {
		return false
	}
	sub(z, z, rhs)
	return true
}

// fixBoxes narrows the root's box to the counts that some surviving
// makespan lets beat the incumbent (see lagrangeFix).
func (w *Workspace) fixBoxes(cand []float64, surv []int32) {
	lg := &w.lag
	N, WL := len(w.p.Jobs), lg.wide
	lo, hi := w.bb.baseLo[:N], w.bb.baseHi[:N]
	newLo, newHi := scratch.Resize(lg.newLo, N), scratch.Resize(lg.newHi, N)
	lg.newLo, lg.newHi = newLo, newHi
	for j := range N {
		newLo[j], newHi[j] = hi[j]+1, lo[j]-1
	}
	least := lg.least
	slack := scratch.Resize(lg.slack2, WL)
	lg.slack2 = slack
	sum := lg.sum
	phi, best, tmp := lg.acc[WL:2*WL], lg.lhs[:WL], lg.lhs[WL:2*WL]
	for q, i := range surv {
		tau := cand[i]
		lg.ps = lg.sets[lg.survSet[q]]
		sum = sum[:WL]
		clear(sum)
		for j := range N {
			least[j] = w.lambda(j, lo[j], hi[j], tau)
			w.lagPhi(phi, j, least[j], hi[j])
			add(sum, sum, phi)
		}
		w.sliceSlack(slack, sum, tau)
		for j := range N {
			w.lagPhi(best, j, least[j], hi[j])
			for v := least[j]; v <= hi[j]; v++ {
				if v >= newLo[j] && v <= newHi[j] {
					continue
				}
				w.lagTerm(phi, j, v)
				add(tmp, phi, slack)
				if cmpNum(tmp, best) > 0 {
					newLo[j], newHi[j] = min(newLo[j], v), max(newHi[j], v)
				}
			}
		}
	}
	copy(lo, newLo)
	copy(hi, newHi)
}

// nodeResult is the outcome of a node's configuration LP.
type nodeResult uint8

const (
	lpNone   nodeResult = iota // no LP point, and no certificate: the prices stay
	lpSolved                   // solved: new prices, perhaps a new incumbent
	lpCut                      // certified: no plan of the node has a makespan ≤ tau
)

// nodeLP re-solves the configuration LP for a branch-and-bound node's box
// (the makespan at most tau), keeping the rows separated so far (valid for
// every packing), runs the primal heuristic on it and makes its duals the
// prices. When the LP has no point, its duals may certify exactly that the
// counts tau forces do not pack (farkas): no plan of the node then has a
// makespan at or below tau (lpCut, the node's floor rises to tau). At or
// below the node's floor that is known already, so the LP is not solved:
// the forced counts only grow as tau falls or the box shrinks, and the
// certificate's Σ_j q_j·n_j > T·KS(q) holds for larger counts too (q ≥ 0).
func (w *Workspace) nodeLP(ctx context.Context, lo, hi []int32, tau float64) nodeResult {
	if tau <= w.bb.floor {
		return lpNone
	}
	N := len(lo)
	nlo := scratch.Resize(w.lag.nodeLo, N)
	w.lag.nodeLo = nlo
	for j := range nlo {
		nlo[j] = max(lo[j], w.lambda(j, lo[j], hi[j], tau))
		if w.lambda(j, lo[j], hi[j], tau) < 0 {
			return lpNone
		}
	}
	if !w.lpHolds(ctx, nlo) {
		if w.farkas(nlo) {
			return lpCut
		}
		return lpNone
	}
	if !w.solveLP(ctx, nlo, hi, 2, true, lpAll) {
		return lpNone
	}
	w.lpRound(nlo, hi)
	w.lagrangeSetup(min(w.lag.n, maxSets-1))
	return lpSolved
}

// lpHolds reports whether the configuration LP has a point with counts
// at least lo, the test the node LP fails in most nodes. The LP's feasible
// counts are closed under decrease, so this is the node LP's feasibility;
// it is decided at the box [lo, lo], where every job is fixed and the
// simplex only drives the artificial column out (a phase 1, a few
// iterations), instead of optimizing the welfare alongside. Counts the
// greedy packs need no LP.
func (w *Workspace) lpHolds(ctx context.Context, lo []int32) bool {
	if ok, _ := w.pack(lo); ok {
		return true
	}
	return w.solveLP(ctx, lo, lo, 0, true, lpCold)
}

// lpPack decides whether counts pack through the configuration LP with
// every count fixed: a rounded pattern mixture that takes them packs them
// (into w.pk.x); an infeasible LP whose duals, as integer prices q, give
// Σ_j q_j·n_j > T·KS(q) certifies exactly that they do not (every packing
// has Σ_j q_j·n_j = Σ_t q(S_t) ≤ T·KS(q)). Otherwise it is undecided.
func (w *Workspace) lpPack(ctx context.Context, counts []int32) packResult {
	if ctx == nil { // a packing outside a solve (tests)
		ctx = context.Background()
	}
	if !w.solveLP(ctx, counts, counts, 3, true, lpCold) {
		if w.farkas(counts) {
			return unpackable
		}
		return undecided
	}
	if w.roundPatterns() && w.classGreedy(counts, counts, false) && w.classPack() {
		copy(w.pk.x, w.lag.hx)
		return packed
	}
	return undecided
}

// farkas reports whether the LP's duals, scaled to integers, prove that
// counts do not pack (see lpPack). The arithmetic is exact: prices below
// 2^30, so Σ_j q_j·n_j < 2^60.
func (w *Workspace) farkas(counts []int32) bool {
	lp, lg := &w.lp, &w.lag
	N, T, K, M := len(w.p.Jobs), uint64(w.cfg.T), len(w.ks.classWidth), w.p.GPUs
	qmax := 0.0
	for j := range N {
		s := 0.0
		for _, r := range lp.jobRows[lp.jobStart[j]:lp.jobStart[j+1]] {
			s += max(0, lp.y[r])
		}
		lp.q[j] = s
		qmax = max(qmax, s)
	}
	if !(qmax > 0) || math.IsInf(qmax, 0) {
		return false
	}
	qi := scratch.Resize(lg.qint, N)
	lg.qint = qi
	demand := uint64(0)
	for j := range N {
		qi[j] = uint64(math.Floor(float64(lp.q[j] / qmax * (1 << 30))))
		demand += qi[j] * uint64(counts[j])
	}
	// KS over integer prices: per class the highest prices, a DP over GPUs.
	by := scratch.Resize(lg.byPr, N)
	for j := range by {
		by[j] = int32(j)
	}
	slices.SortFunc(by, func(a, b int32) int {
		if ca, cb := w.ks.class[a], w.ks.class[b]; ca != cb {
			return int(ca - cb)
		}
		if qi[a] != qi[b] {
			if qi[a] > qi[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	lg.byPr = by
	dp := scratch.Resize(lg.dpInt, 2*(M+1))
	lg.dpInt = dp
	cur, next := dp[:M+1], dp[M+1:]
	clear(cur)
	start := 0
	for c := range K {
		end := start
		for end < N && w.ks.class[by[end]] == int32(c) {
			end++
		}
		wc := int(w.ks.classWidth[c])
		for m := 0; m <= M; m++ {
			b, pre := cur[m], uint64(0)
			for a := 1; start+a-1 < end && a*wc <= m; a++ {
				pre += qi[by[start+a-1]]
				b = max(b, cur[m-a*wc]+pre)
			}
			next[m] = b
		}
		cur, next = next, cur
		start = end
	}
	return demand > T*cur[M]
}

// tierScale is the sum of the scales of the bound's tier's terms (its
// jobs' |V_j(0)| and the makespan term's when it is there): every value of
// the tier, a price among them, fits its width.
func (w *Workspace) tierScale() float64 {
	T, s := w.cfg.T, 0.0
	for j := range w.p.Jobs {
		if w.ex.jobTier[j] == w.lag.tier {
			s -= w.tab.val[j*(T+1)]
		}
	}
	if w.ex.makespanTier == w.lag.tier {
		s += float64(w.cfg.k * w.ex.tauMax)
	}
	return s
}

// fixUpperTiers fixes the jobs whose value outweighs everything else, so
// that the bound, its LP and its fixing see only the jobs left (a float LP
// cannot resolve terms 1e16 apart). Those are the jobs of the tiers above
// the bound's (one unit of a tier outweighs all the tiers below, exact.go),
// and the jobs of its tier whose least positive marginal exceeds all that
// the other jobs and the makespan term can add (dominantJobs). A plan with
// one of them short of its best value then loses to any plan that has them
// all there; so when their least counts at those values pack, that packing
// becomes the incumbent if it is better and those counts become the root's
// lower bounds; lg.upper holds the upper tiers' welfare. It reports false
// when they do not pack (the bound is then not used).
func (w *Workspace) fixUpperTiers() bool {
	lg := &w.lag
	W, N := w.ex.limbs, len(w.p.Jobs)
	lg.upper = scratch.Resize(lg.upper, W)
	clear(lg.upper)
	lg.fixed = scratch.Resize(lg.fixed, N)
	clear(lg.fixed)
	hi := w.bb.baseHi[:N]
	some := false
	for j := range N {
		if t := w.ex.jobTier[j]; t >= 0 && t != lg.tier {
			lg.fixed[j], some = true, true
			addAt(lg.upper, w.ex.tiers[t].off, w.gain(j, int(hi[j])))
		}
	}
	if w.dominantJobs() {
		if w.fixAt() {
			return true
		}
		// They do not all fit together: the upper tiers' jobs alone.
		for j := range N {
			lg.fixed[j] = w.ex.jobTier[j] >= 0 && w.ex.jobTier[j] != lg.tier
		}
	}
	if !some {
		return true
	}
	return w.fixAt()
}

// fixAt raises the root's lower bounds of the jobs lg.fixed marks to the
// least counts at their best values, if those pack (see fixUpperTiers).
func (w *Workspace) fixAt() bool {
	lg := &w.lag
	W, N := w.ex.limbs, len(w.p.Jobs)
	lo, hi := w.bb.baseLo[:N], w.bb.baseHi[:N]
	fix := w.bb.repCounts[:N]
	copy(fix, lo)
	for j := range N {
		if !lg.fixed[j] {
			continue
		}
		top := w.gain(j, int(hi[j]))
		for fix[j] < hi[j] && cmpNum(w.gain(j, int(fix[j])), top) != 0 {
			fix[j]++
		}
	}
	if r, _ := w.packCounts(fix); r != packed {
		return false
	}
	s := w.bb.repScore[:W]
	if w.evalCounts(fix, s); cmpNum(s, w.inc.score) > 0 {
		w.setIncumbent(fix, s)
	}
	copy(lo, fix)
	return true
}

// dominantJobs marks in lg.fixed the jobs of the bound's tier whose least
// positive marginal (on the grid) exceeds the largest value all the other
// jobs of the tier and the makespan term can have together: the jobs by
// that marginal, descending, the longest prefix that qualifies. It reports
// whether it marked any.
func (w *Workspace) dominantJobs() bool {
	lg := &w.lag
	N, L, off := len(w.p.Jobs), lg.limbs, int(lg.off)
	hi := w.bb.baseHi[:N]
	cand := lg.domJobs[:0]
	lg.domLast = scratch.Resize(lg.domLast, N)
	for j := range N {
		if w.ex.jobTier[j] != lg.tier {
			continue
		}
		n := hi[j]
		for n > 0 && isZero(w.marginal(j, int(n))) {
			n--
		}
		if n > 0 {
			lg.domLast[j] = n
			cand = append(cand, int32(j))
		}
	}
	lg.domJobs = cand
	if len(cand) < 2 {
		return false
	}
	slices.SortFunc(cand, func(a, b int32) int {
		if c := cmpNum(w.marginal(int(b), int(lg.domLast[b])), w.marginal(int(a), int(lg.domLast[a]))); c != 0 {
			return c
		}
		return int(a - b)
	})
	// rest: what the jobs after the prefix and the makespan term can add.
	rest := scratch.Resize(lg.domRest, L+1)
	lg.domRest = rest
	clear(rest)
	for _, j := range cand {
		addAt(rest, 1, w.gain(int(j), int(hi[j])))
	}
	if w.ex.makespanTier == lg.tier {
		addAt(rest, 1, w.ex.mmax[off:off+L])
	}
	d := scratch.Resize(lg.domD, L+1)
	lg.domD = d
	k := 0
	for q, j := range cand[:len(cand)-1] {
		subAt(rest, 1, w.gain(int(j), int(hi[j])))
		clear(d)
		addAt(d, 1, w.marginal(int(j), int(lg.domLast[j])))
		if cmpNum(d, rest) > 0 {
			k = q + 1
		}
	}
	for _, j := range cand[:k] {
		lg.fixed[j] = true
	}
	return k > 0
}
