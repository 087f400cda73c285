package policy

import (
	"cmp"
	"fmt"
	"slices"
)

// DefaultAlloXAlpha is the fraction of the waiting jobs AlloX considers
// (the authors' "allox" is alpha 0.2).
const DefaultAlloXAlpha = 0.2

// AlloX is the authors' AlloX policy (scheduler/policies/allox.py, built by
// utils.get_policy as "allox" with alpha 0.2), for one worker type. At
// each allocation:
//
//   - a job allocated 1 in the previous allocation keeps it and its GPU
//     (only single-GPU jobs can reach 1: see below); the others are
//     candidates, and n is the cluster's GPUs less those kept;
//   - the candidates, longest waiting first (ties in arrival order), are
//     cut to the first max(⌊alpha·m⌋, n) of the m;
//   - each of those L jobs is matched to a distinct (worker w, position k)
//     of n workers and positions 1..L, at cost k·q_j + d_j with
//     q_j = rem_j/tput_j (its isolated remaining time; tput 0 counts as
//     1e-10) and d_j its time since arrival: position k from the end of a
//     worker's queue delays k jobs by q_j, so the matching minimizes the
//     total completion time (min-cost bipartite matching, solved exactly;
//     the authors call scipy's linear_sum_assignment, and the solver here
//     breaks ties as that one does: see assignment);
//   - the job that runs first on each worker (its highest position k) is
//     allocated 1/w_j, w_j its GPUs (as upstream, the matching ignores w_j:
//     a multi-GPU job matched to one worker gets 1/w_j of its demand);
//   - every other job keeps its previous allocation (0 for a new job):
//     a multi-GPU job allocated once keeps its 1/w_j until it finishes.
//
// The zero value is the authors' AlloX; it keeps the previous allocation,
// so use one per run.
type AlloX struct {
	// Alpha is the fraction of the candidates considered; 0 means 0.2.
	Alpha float64

	prev  map[int]float64
	cand  []int
	q, d  []float64
	as    assignment
	first []int // per worker: the row with the highest position, −1 if none
}

// Name returns "allox".
func (*AlloX) Name() string { return "allox" }

// Allocate implements [Allocator].
func (a *AlloX) Allocate(dst []float64, jobs []Demand, gpus int) error {
	if err := check(dst, jobs, gpus); err != nil {
		return err
	}
	alpha := a.Alpha
	if alpha == 0 {
		alpha = DefaultAlloXAlpha
	}
	if !(alpha > 0 && alpha <= 1) {
		return fmt.Errorf("%w: AlloX.Alpha = %v (want a fraction in (0, 1])", ErrInvalid, alpha)
	}
	if a.prev == nil {
		a.prev = map[int]float64{}
	}
	// Kept jobs and candidates, in input (arrival) order.
	a.cand = a.cand[:0]
	n := gpus
	for i := range jobs {
		if x, ok := a.prev[jobs[i].ID]; ok && x == 1 {
			n--
			continue
		}
		a.cand = append(a.cand, i)
	}
	m := len(a.cand)
	slices.SortStableFunc(a.cand, func(x, y int) int { return cmp.Compare(jobs[y].Elapsed, jobs[x].Elapsed) })
	L := min(m, max(int(alpha*float64(m)), n))
	a.cand = a.cand[:L]
	for i := range jobs {
		dst[i] = a.prev[jobs[i].ID] // 0 for a job not allocated before
	}
	if L > 0 && n > 0 {
		if err := a.match(dst, jobs, n, L); err != nil {
			return err
		}
	}
	clear(a.prev)
	for i := range jobs {
		a.prev[jobs[i].ID] = dst[i]
	}
	return nil
}

// match solves the matching of the L candidates to n workers × L
// positions and allocates the first job of each worker.
func (a *AlloX) match(dst []float64, jobs []Demand, n, L int) error {
	a.q, a.d = a.q[:0], a.d[:0]
	for _, i := range a.cand {
		tput := jobs[i].Throughput
		if tput == 0 {
			tput = 1e-10
		}
		a.q = append(a.q, jobs[i].Remaining/tput)
		a.d = append(a.d, jobs[i].Elapsed)
	}
	// Column c is position k = c/n + 1 on worker c%n; the cost is computed
	// as numpy does: (k·q) + d.
	cost := func(r, c int) float64 { return float64(float64(c/n+1)*a.q[r]) + a.d[r] }
	col, err := a.as.solve(L, n*L, cost)
	if err != nil {
		return fmt.Errorf("%w: AlloX matching: %w", ErrInvalid, err) // unreachable: finite costs
	}
	a.first = fill(a.first, n, -1)
	for r, c := range col {
		w := c % n
		if f := a.first[w]; f < 0 || c/n > col[f]/n {
			a.first[w] = r
		}
	}
	for _, r := range a.first {
		if r >= 0 {
			i := a.cand[r]
			dst[i] = 1 / float64(jobs[i].GPUs)
		}
	}
	return nil
}

// GandivaFair is the authors' Gandiva-Fair baseline
// (scheduler/policies/gandiva_fair_proportional.py, built by
// utils.get_policy as "gandiva_fair"): an equal split of the cluster's
// time, x_j = min(1, M/N) for each of the N jobs, whatever their GPU count
// (as upstream: Σ_j w_j·x_j may exceed M, and Gavel's rounds then run the
// jobs that fit, by priority). The zero value is ready.
type GandivaFair struct{}

// Name returns "gandiva_fair".
func (GandivaFair) Name() string { return "gandiva_fair" }

// Allocate implements [Allocator].
func (GandivaFair) Allocate(dst []float64, jobs []Demand, gpus int) error {
	if err := check(dst, jobs, gpus); err != nil {
		return err
	}
	// Upstream: x = M/N, divided by max(x, 1).
	x := float64(gpus) / float64(len(jobs))
	x /= max(x, 1)
	for i := range dst {
		dst[i] = x
	}
	return nil
}
