package market

import (
	"cmp"
	"context"
	"math/bits"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
)

// Which rounds of the window a job gets does not change the program's
// objective (it depends on x only through the counts), so the authors'
// feasible path returns whatever the solver picked. orrery makes it a rule,
// the authors' re-ranking objective (rank_in_schedule_jobs, used on their
// relaxed path) applied on both paths:
//
//	minimize Σ_{j: n_j>0} p_j · (Σ_t t·x_{j,t}) / n_j
//
// (p_j = 1 on the finish-time-fair path), subject to the packing. The exact
// problem is a hard scheduling problem; rankRounds reaches a local optimum
// deterministically:
//
//  1. rounds are permuted by their total weight Σ_{j∈t} p_j/n_j, heaviest
//     first (optimal among permutations, by the rearrangement inequality);
//  2. then, over every pair of rounds b < a, a job moves from a to b where b
//     has room, and jobs of equal width swap between a and b, whenever that
//     brings a higher-ranked job earlier. Ranks order jobs by p_j/n_j desc,
//     then R_j desc, then ID asc, so ties in the objective follow "larger
//     remaining runtime first, then smaller ID". Every step lowers
//     Σ_j rank-weight·Σ_t t·x_{j,t}, so the loop ends.
//
// TestRankAgainstBruteForce measures it against the exact re-ranking on small
// instances.

// ranking is rankRounds' state.
type ranking struct {
	weight      []float64 // per job: p_j/n_j (0 for n_j = 0)
	byRank      []int32   // the jobs by rank, best first
	rankOf      []int32   // job → its rank
	roundWeight []float64 // per round: Σ_{j in t} p_j/n_j
	perm        []int32   // the rounds by weight, heaviest first
	row         []bool    // one job's row, permuted
	free        []int32   // per round: free GPUs
	// movable lists the jobs that can move (0 < n_j < T) by width class,
	// each class in rank order from movStart[class].
	movable, movStart []int32
	swapA, swapB      []int32 // improvePair's scratch: the swap candidates
	// The plan of the movable jobs as one bitset per round, twice: bit i
	// of inRank[t·words:] is mov[i] (rank order), bit i of inClass[t·words:]
	// is movable[i] (class order); posRank, posClass map a job to its bit.
	// improvePair finds a\b and b\a a word at a time instead of reading
	// every job's row.
	inRank, inClass   []uint64
	posRank, posClass []int32
	words             int
}

// output is the emitted plan's storage: Solution.Rounds and Backfill point
// into planned and extra.
type output struct {
	backfillOrder          []int32 // the jobs by remaining runtime desc, ID asc
	planned, extra         []int   // each round's planned and backfilled jobs, concatenated
	roundStart, extraStart []int   // where each round starts in planned, extra
}

// rankRounds reorders the plan in w.inc.x and returns the ranking cost.
func (w *Workspace) rankRounds(ctx context.Context, counts []int32) float64 {
	T := w.cfg.T
	w.rankJobs(counts)
	// 1. Rounds by weight.
	w.permuteRounds()
	// 2. Moves and swaps between pairs of rounds, among the movable jobs.
	mov := w.movableJobs(counts)
	K := len(w.ks.classWidth)
	for pass := 0; pass < 4*T && len(mov) > 0; pass++ {
		if deadline.Done(ctx) {
			break
		}
		changed := false
		for a := 1; a < T; a++ {
			for b := 0; b < a; b++ {
				if w.improvePair(b, a, K) {
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	return w.rankCost()
}

// rankJobs sets each job's weight p_j/n_j and ranks the jobs by weight
// desc, then R_j desc, then ID asc.
func (w *Workspace) rankJobs(counts []int32) {
	N := len(counts)
	jobs := w.p.Jobs
	c := w.rk.weight[:N]
	for j := range c {
		c[j] = 0
		if counts[j] > 0 {
			c[j] = w.tab.prio[j] / float64(counts[j])
		}
	}
	by := w.rk.byRank[:0]
	for j := range N {
		by = append(by, int32(j))
	}
	slices.SortFunc(by, func(a, b int32) int {
		if c[a] != c[b] {
			return cmp.Compare(c[b], c[a])
		}
		if jobs[a].Remaining != jobs[b].Remaining {
			return cmp.Compare(jobs[b].Remaining, jobs[a].Remaining)
		}
		return cmp.Compare(jobs[a].ID, jobs[b].ID)
	})
	for q, j := range by {
		w.rk.rankOf[j] = int32(q)
	}
	w.rk.byRank = by
}

// permuteRounds sorts the plan's rounds by weight Σ_{j∈t} p_j/n_j,
// heaviest first (stable).
func (w *Workspace) permuteRounds() {
	T, N := w.cfg.T, len(w.p.Jobs)
	x, c := w.inc.x, w.rk.weight
	colw, perm := w.rk.roundWeight[:T], w.rk.perm[:T]
	for t := range T {
		colw[t], perm[t] = 0, int32(t)
	}
	for j := range N {
		if c[j] == 0 {
			continue
		}
		for t, in := range x[j*T : j*T+T] {
			if in {
				colw[t] += c[j]
			}
		}
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(colw[b], colw[a]) })
	row := w.rk.row[:T]
	for j := range N {
		xr := x[j*T : j*T+T]
		for t := range T {
			row[t] = xr[perm[t]]
		}
		copy(xr, row)
	}
}

// movableJobs returns the jobs that can change rounds (0 < n_j < T) in
// rank order, filtered in place in w.rk.byRank, and sets up what
// improvePair reads: each round's free GPUs and the movable jobs by width
// class, each class in rank order (swaps stay within a class).
func (w *Workspace) movableJobs(counts []int32) []int32 {
	T, N := w.cfg.T, len(counts)
	x := w.inc.x
	mov := w.rk.byRank[:0]
	for _, j := range w.rk.byRank[:N] {
		if counts[j] > 0 && int(counts[j]) < T {
			mov = append(mov, j)
		}
	}
	free := w.rk.free[:T]
	for t := range T {
		free[t] = int32(w.p.GPUs)
	}
	for j := range N {
		for t, in := range x[j*T : j*T+T] {
			if in {
				free[t] -= w.tab.width[j]
			}
		}
	}
	K := len(w.ks.classWidth)
	start := scratch.Resize(w.rk.movStart, K+1)
	w.rk.movStart = start
	clear(start)
	for _, j := range mov {
		start[w.ks.class[j]+1]++
	}
	for cl := 1; cl <= K; cl++ {
		start[cl] += start[cl-1]
	}
	w.rk.movable = scratch.Resize(w.rk.movable, len(mov))
	fill := append(w.rk.swapA[:0], start[:K]...)
	for _, j := range mov {
		w.rk.movable[fill[w.ks.class[j]]] = j
		fill[w.ks.class[j]]++
	}
	w.rk.swapA = fill
	w.planBits(mov)
	return mov
}

// planBits builds the movable jobs' bitsets of the plan (see ranking).
func (w *Workspace) planBits(mov []int32) {
	rk := &w.rk
	T, N := w.cfg.T, len(w.p.Jobs)
	W := (len(mov) + 63) / 64
	rk.words = W
	rk.inRank = scratch.Resize(rk.inRank, T*W)
	rk.inClass = scratch.Resize(rk.inClass, T*W)
	clear(rk.inRank)
	clear(rk.inClass)
	rk.posRank = scratch.Resize(rk.posRank, N)
	rk.posClass = scratch.Resize(rk.posClass, N)
	for i, j := range rk.movable[:len(mov)] {
		rk.posClass[j] = int32(i)
	}
	x := w.inc.x
	for i, j := range mov {
		rk.posRank[j] = int32(i)
		c := int(rk.posClass[j])
		for t, in := range x[int(j)*T : int(j)*T+T] {
			if in {
				rk.inRank[t*W+i/64] |= 1 << (i % 64)
				rk.inClass[t*W+c/64] |= 1 << (c % 64)
			}
		}
	}
}

// rankCost is the re-ranking objective Σ_j (p_j/n_j)·Σ_t t·x_{j,t} of the
// plan in w.inc.x.
func (w *Workspace) rankCost() float64 {
	T, N := w.cfg.T, len(w.p.Jobs)
	x, c := w.inc.x, w.rk.weight
	cost := 0.0
	for j := range N {
		if c[j] == 0 {
			continue
		}
		s := 0
		for t, in := range x[j*T : j*T+T] {
			if in {
				s += t
			}
		}
		cost += float64(c[j] * float64(s))
	}
	return cost
}

// improvePair moves and swaps jobs between rounds b < a (see rankRounds):
// moves into b's idle GPUs, best rank first; then, within each width class,
// swaps of the best-ranked of a\b against the worst-ranked of b\a,
// pairwise while that brings a better-ranked job earlier.
func (w *Workspace) improvePair(b, a, K int) bool {
	rk := &w.rk
	W := rk.words
	changed := false
	if rk.free[b] > 0 {
		ra, rb := rk.inRank[a*W:a*W+W], rk.inRank[b*W:b*W+W]
		for i := 0; i < W && rk.free[b] > 0; i++ {
			for m := ra[i] &^ rb[i]; m != 0 && rk.free[b] > 0; m &= m - 1 {
				j := rk.byRank[i*64+bits.TrailingZeros64(m)] // mov, in rank order
				if w.tab.width[j] <= rk.free[b] {
					w.moveJob(j, a, b)
					rk.free[a] += w.tab.width[j]
					rk.free[b] -= w.tab.width[j]
					changed = true
				}
			}
		}
	}
	ca, cb := rk.inClass[a*W:a*W+W], rk.inClass[b*W:b*W+W]
	for cl := 0; cl < K; cl++ {
		// Within a class, bits are in rank order: the q-th of a\b swaps
		// with the q-th from the end of b\a while it sits before it.
		A, B := rk.swapA[:0], rk.swapB[:0]
		lo, hi := int(rk.movStart[cl]), int(rk.movStart[cl+1])-1
		for lo <= hi {
			pa := nextBit(ca, cb, lo, hi)
			if pa < 0 {
				break
			}
			pb := prevBit(cb, ca, pa+1, hi)
			if pb < 0 {
				break
			}
			A, B = append(A, rk.movable[pa]), append(B, rk.movable[pb])
			lo, hi = pa+1, pb-1
		}
		for q := range A {
			w.moveJob(A[q], a, b)
			w.moveJob(B[q], b, a)
		}
		changed = changed || len(A) > 0
		rk.swapA, rk.swapB = A, B
	}
	return changed
}

// moveJob moves job j (movable) from round from to round to, in the plan
// and in both bitsets.
func (w *Workspace) moveJob(j int32, from, to int) {
	rk := &w.rk
	T, W := w.cfg.T, rk.words
	w.inc.x[int(j)*T+from], w.inc.x[int(j)*T+to] = false, true
	for _, s := range [2]struct {
		set []uint64
		pos int32
	}{{rk.inRank, rk.posRank[j]}, {rk.inClass, rk.posClass[j]}} {
		word, bit := int(s.pos)/64, uint64(1)<<(s.pos%64)
		s.set[from*W+word] &^= bit
		s.set[to*W+word] |= bit
	}
}

// nextBit returns the first position in [lo, hi] set in x and clear in
// y, or −1.
func nextBit(x, y []uint64, lo, hi int) int {
	for i := lo / 64; i <= hi/64; i++ {
		m := x[i] &^ y[i]
		if i == lo/64 {
			m &= ^uint64(0) << (lo % 64)
		}
		if m == 0 {
			continue
		}
		if p := i*64 + bits.TrailingZeros64(m); p <= hi {
			return p
		}
		return -1
	}
	return -1
}

// prevBit returns the last position in [lo, hi] set in x and clear in y,
// or −1.
func prevBit(x, y []uint64, lo, hi int) int {
	if hi < lo {
		return -1
	}
	for i := hi / 64; i >= lo/64; i-- {
		m := x[i] &^ y[i]
		if i == hi/64 {
			m &= ^uint64(0) >> (63 - hi%64)
		}
		if m == 0 {
			continue
		}
		if p := i*64 + 63 - bits.LeadingZeros64(m); p >= lo {
			return p
		}
		return -1
	}
	return -1
}

// emit writes the plan's rounds (job indices in input order) and the
// work-conserving backfill: each round's idle GPUs go to jobs not in it, by
// remaining runtime desc (then ID asc), first fit, as construct_schedules does.
func (w *Workspace) emit(sol *Solution, backfill bool) {
	N, T := len(w.p.Jobs), w.cfg.T
	x := w.inc.x
	jobs := w.p.Jobs
	bf := w.out.backfillOrder[:0]
	for j := range N {
		bf = append(bf, int32(j))
	}
	slices.SortFunc(bf, func(a, b int32) int {
		if jobs[a].Remaining != jobs[b].Remaining {
			return cmp.Compare(jobs[b].Remaining, jobs[a].Remaining)
		}
		return cmp.Compare(jobs[a].ID, jobs[b].ID)
	})
	w.out.backfillOrder = bf
	planned, extra := w.out.planned[:0], w.out.extra[:0]
	w.out.roundStart = append(w.out.roundStart[:0], 0)
	w.out.extraStart = append(w.out.extraStart[:0], 0)
	for t := range T {
		free := int32(w.p.GPUs)
		for j := range N {
			if x[j*T+t] {
				planned = append(planned, j)
				free -= w.tab.width[j]
			}
		}
		for _, j := range bf {
			if free <= 0 || !backfill {
				break
			}
			if !x[int(j)*T+t] && w.tab.width[j] <= free {
				extra = append(extra, int(j))
				free -= w.tab.width[j]
			}
		}
		w.out.roundStart = append(w.out.roundStart, len(planned))
		w.out.extraStart = append(w.out.extraStart, len(extra))
	}
	w.out.planned, w.out.extra = planned, extra
	sol.Rounds = sol.Rounds[:0]
	sol.Backfill = sol.Backfill[:0]
	for t := range T {
		sol.Rounds = append(sol.Rounds, planned[w.out.roundStart[t]:w.out.roundStart[t+1]:w.out.roundStart[t+1]])
		sol.Backfill = append(sol.Backfill, extra[w.out.extraStart[t]:w.out.extraStart[t+1]:w.out.extraStart[t+1]])
	}
}
