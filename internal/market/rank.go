package market

import (
	"cmp"
	"context"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
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

// rankRounds reorders the plan in w.incX and returns the ranking cost.
func (w *Workspace) rankRounds(ctx context.Context, counts []int32) float64 {
	N, T := len(counts), w.cfg.T
	x := w.incX
	jobs := w.p.Jobs
	c := w.c[:N]
	for j := range c {
		c[j] = 0
		if counts[j] > 0 {
			c[j] = w.prio[j] / float64(counts[j])
		}
	}
	// Ranks.
	by := w.byPi[:0]
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
		w.pi[j] = int32(q)
	}
	w.byPi = by
	// 1. Rounds by weight.
	colw, perm := w.colw[:T], w.perm[:T]
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
	row := w.rowTmp[:T]
	for j := range N {
		xr := x[j*T : j*T+T]
		for t := range T {
			row[t] = xr[perm[t]]
		}
		copy(xr, row)
	}
	// 2. Moves and swaps between pairs of rounds, among the movable jobs.
	mov := by[:0]
	for _, j := range w.byPi[:N] {
		if counts[j] > 0 && int(counts[j]) < T {
			mov = append(mov, j)
		}
	}
	free := w.free[:T]
	for t := range T {
		free[t] = int32(w.M)
	}
	for j := range N {
		for t, in := range x[j*T : j*T+T] {
			if in {
				free[t] -= w.wid[j]
			}
		}
	}
	// The movable jobs by width class, each in rank order (swaps stay
	// within a class).
	K := len(w.cw)
	w.movStart = grow(w.movStart, K+1)
	clear(w.movStart)
	for _, j := range mov {
		w.movStart[w.cls[j]+1]++
	}
	for cl := 1; cl <= K; cl++ {
		w.movStart[cl] += w.movStart[cl-1]
	}
	w.movCls = grow(w.movCls, len(mov))
	fill := w.swapA[:0]
	fill = append(fill, w.movStart[:K]...)
	for _, j := range mov {
		w.movCls[fill[w.cls[j]]] = j
		fill[w.cls[j]]++
	}
	for pass := 0; pass < 4*T && len(mov) > 0; pass++ {
		if deadline.Done(ctx) {
			break
		}
		changed := false
		for a := 1; a < T; a++ {
			for b := 0; b < a; b++ {
				if w.improvePair(mov, b, a, K) {
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
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

// improvePair moves and swaps jobs between rounds b < a (see rankRounds).
func (w *Workspace) improvePair(mov []int32, b, a, K int) bool {
	T := w.cfg.T
	x, free := w.incX, w.free
	changed := false
	// Moves into b's idle GPUs, best rank first.
	if free[b] > 0 {
		for _, j := range mov {
			r := int(j) * T
			if x[r+a] && !x[r+b] && w.wid[j] <= free[b] {
				x[r+a], x[r+b] = false, true
				free[a] += w.wid[j]
				free[b] -= w.wid[j]
				changed = true
			}
		}
	}
	// Swaps within each width class: the best-ranked of a\b against the
	// worst-ranked of b\a, pairwise while that improves.
	for cl := 0; cl < K; cl++ {
		A, B := w.swapA[:0], w.swapB[:0]
		for _, j := range w.movCls[w.movStart[cl]:w.movStart[cl+1]] {
			r := int(j) * T
			if x[r+a] && !x[r+b] {
				A = append(A, j)
			} else if x[r+b] && !x[r+a] {
				B = append(B, j)
			}
		}
		for q := 0; q < len(A) && q < len(B); q++ {
			ja, ib := A[q], B[len(B)-1-q]
			if w.pi[ja] >= w.pi[ib] {
				break
			}
			ra, rb := int(ja)*T, int(ib)*T
			x[ra+a], x[ra+b] = false, true
			x[rb+b], x[rb+a] = false, true
			changed = true
		}
		w.swapA, w.swapB = A, B
	}
	return changed
}

// emit writes the plan's rounds (job indices in input order) and the
// work-conserving backfill: each round's idle GPUs go to jobs not in it, by
// remaining runtime desc (then ID asc), first fit, as construct_schedules does.
func (w *Workspace) emit(sol *Solution, backfill bool) {
	N, T := len(w.p.Jobs), w.cfg.T
	x := w.incX
	jobs := w.p.Jobs
	bf := w.bfOrder[:0]
	for j := range N {
		bf = append(bf, int32(j))
	}
	slices.SortFunc(bf, func(a, b int32) int {
		if jobs[a].Remaining != jobs[b].Remaining {
			return cmp.Compare(jobs[b].Remaining, jobs[a].Remaining)
		}
		return cmp.Compare(jobs[a].ID, jobs[b].ID)
	})
	w.bfOrder = bf
	planned, extra := w.plannedBuf[:0], w.extraBuf[:0]
	w.roundStart = append(w.roundStart[:0], 0)
	w.extraStart = append(w.extraStart[:0], 0)
	for t := range T {
		free := int32(w.M)
		for j := range N {
			if x[j*T+t] {
				planned = append(planned, j)
				free -= w.wid[j]
			}
		}
		for _, j := range bf {
			if free <= 0 || !backfill {
				break
			}
			if !x[int(j)*T+t] && w.wid[j] <= free {
				extra = append(extra, int(j))
				free -= w.wid[j]
			}
		}
		w.roundStart = append(w.roundStart, len(planned))
		w.extraStart = append(w.extraStart, len(extra))
	}
	w.plannedBuf, w.extraBuf = planned, extra
	sol.Rounds = sol.Rounds[:0]
	sol.Backfill = sol.Backfill[:0]
	for t := range T {
		sol.Rounds = append(sol.Rounds, planned[w.roundStart[t]:w.roundStart[t+1]:w.roundStart[t+1]])
		sol.Backfill = append(sol.Backfill, extra[w.extraStart[t]:w.extraStart[t+1]:w.extraStart[t+1]])
	}
}
