package policy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/orrery/orrery/internal/eval/trace"
)

// Demand is one active job as Gavel's policies see it on a homogeneous
// cluster (one worker type). Allocators reject values outside the
// documented ranges with ErrInvalid.
type Demand struct {
	ID         int
	GPUs       int     // scale factor w, 1 ≤ w ≤ M
	Throughput float64 // iterations/s on its GPUs at the current batch size: 0 or in [trace.MinThroughput, trace.MaxThroughput]
	Remaining  float64 // iterations left, |Remaining| ≤ 1e18
	Elapsed    float64 // seconds since arrival (Gavel's times_since_start), in [0, 1e15]
	Weight     float64 // priority weight in [trace.MinPriority, trace.MaxPriority]; ≤ 0 means 1
}

func (d *Demand) weight() float64 {
	if d.Weight > 0 {
		return d.Weight
	}
	return 1
}

// Allocator computes Gavel's allocation: each job's time fraction
// x_j ∈ [0, 1] such that Σ_j w_j·x_j ≤ M. The authors' code solves these
// programs with cvxpy (ECOS or Gurobi); the allocators here solve them
// exactly, and where the program has several optima they return the
// canonical one their doc describes. An Allocator may keep state between
// calls (the finish-time-fairness policy does).
type Allocator interface {
	Name() string
	// Allocate writes x_j for jobs[j] into dst, which has len(jobs).
	Allocate(dst []float64, jobs []Demand, gpus int) error
}

func check(dst []float64, jobs []Demand, gpus int) error {
	if len(dst) != len(jobs) {
		return fmt.Errorf("%w: %d fractions for %d jobs", ErrInvalid, len(dst), len(jobs))
	}
	if gpus < 1 {
		return fmt.Errorf("%w: %d GPUs", ErrInvalid, gpus)
	}
	for i := range jobs {
		d := &jobs[i]
		bad := func(f string, v any) error {
			return fmt.Errorf("%w: jobs[%d] (ID %d) %s = %v", ErrInvalid, i, d.ID, f, v)
		}
		switch {
		case d.GPUs < 1 || d.GPUs > gpus:
			return bad("GPUs", d.GPUs)
		case !(d.Throughput == 0 || d.Throughput >= trace.MinThroughput && d.Throughput <= trace.MaxThroughput):
			return bad("Throughput", d.Throughput)
		case !(math.Abs(d.Remaining) <= 1e18):
			return bad("Remaining", d.Remaining)
		case !(d.Elapsed >= 0 && d.Elapsed <= 1e15):
			return bad("Elapsed", d.Elapsed)
		case !(d.Weight <= 0 || d.Weight >= trace.MinPriority && d.Weight <= trace.MaxPriority):
			return bad("Weight", d.Weight)
		}
	}
	return nil
}

// MaxMinFairness is Gavel's max_min_fairness policy (the authors'
// "Gavel" baseline): maximize min_j c_j·x_j with c_j = w_j/weight_j, subject
// to Σ_j w_j·x_j ≤ M and 0 ≤ x_j ≤ 1. (The policy replaces every
// throughput by 1; its _perf variant normalizes by the proportional-share
// throughput, which on one worker type gives the same c_j.) The program's
// optimum fixes only the smallest share; among its optima this returns the
// max-min fair (water-filling) one: x_j = min(1, t/c_j) with the level t
// that fills the cluster, found exactly by scanning the breakpoints c_j.
//
// The zero value is ready; it keeps scratch space, so that steady-state
// calls do not allocate.
type MaxMinFairness struct {
	idx []int
	suf []float64
}

// Name returns "max_min_fairness".
func (*MaxMinFairness) Name() string { return "max_min_fairness" }

// Allocate implements [Allocator].
func (mm *MaxMinFairness) Allocate(dst []float64, jobs []Demand, gpus int) error {
	if err := check(dst, jobs, gpus); err != nil {
		return err
	}
	c := func(i int) float64 { return float64(jobs[i].GPUs) / jobs[i].weight() }
	var total float64
	for i := range jobs {
		total += float64(jobs[i].GPUs)
	}
	if total <= float64(gpus) {
		for i := range dst {
			dst[i] = 1
		}
		return nil
	}
	// Jobs with c_j ≤ t are saturated (x = 1); the rest get t/c_j. In
	// c-order, with k jobs saturated the cluster holds
	// G(t) = Σ_{i<k} w_i + t·Σ_{i≥k} w_i/c_i, linear between breakpoints.
	n := len(jobs)
	mm.idx = slices.Grow(mm.idx[:0], n)[:n]
	idx := mm.idx
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(c(a), c(b)), cmp.Compare(a, b)) })
	mm.suf = slices.Grow(mm.suf[:0], n+1)[:n+1]
	suf := mm.suf
	suf[n] = 0
	for k := n - 1; k >= 0; k-- {
		suf[k] = suf[k+1] + float64(jobs[idx[k]].GPUs)/c(idx[k])
	}
	S, t, k := 0.0, 0.0, 0
	for k < n {
		t = (float64(gpus) - S) / suf[k]
		if t <= c(idx[k]) {
			break
		}
		for ck := c(idx[k]); k < n && c(idx[k]) == ck; k++ {
			S += float64(jobs[idx[k]].GPUs)
		}
	}
	if k == n {
		t = c(idx[n-1]) // unreachable: Σ w_j > M leaves a job unsaturated
	}
	for i := range jobs {
		dst[i] = min(1, t/c(i))
	}
	return nil
}

// FinishTimeFairness is Gavel's finish_time_fairness policy (the authors'
// "Themis" baseline): minimize max_j ρ_j with
//
//	ρ_j(x) = (elapsed_j + rem_j/(tput_j·x_j)) / (I_j + rem_j/iso_j)
//
// where iso_j = tput_j·min(1, M/(N·w_j)) is the throughput of an equal
// 1/N share and I_j accumulates, across calls, the isolated time of the
// progress made since the previous call (rem_prev − rem)/iso_prev. It is
// stateful: use one per run.
//
// The optimum fixes only the worst ρ; among the optima this returns the
// lexicographically fair one: every job at a common level ρ* unless even
// x_j = 1 leaves it above, with ρ* the smallest level whose demands
// Σ_j w_j·min(1, x_j(ρ*)) fit the cluster, found by bisection to adjacent
// floating-point numbers (the demand is monotone in ρ). As upstream, when
// some denominator is not positive (the program is not convex then and
// cvxpy raises DCPError) it returns the isolated allocation
// min(1, M/(N·w_j)) and keeps its state; it does the same when no level
// below 1e300 fits (a denominator within rounding of 0).
//
// Interior returns instead a point inside the optimal face, as the
// authors' solver (Gurobi's barrier, through cvxpy) does: with ρ* the
// min-max value (the worst job's ρ, often a job already at x = 1), every
// x with ρ_j(x_j) ≤ ρ*, 0 ≤ x_j ≤ 1 and Σ_j w_j·x_j ≤ M is optimal, and
// this returns the analytic centre of that set (see centre), so jobs
// below the worst ρ get more than the least they need. It stands for
// Gurobi's point, which is not available here: on the authors' 120-job
// trace it brings the makespan and average JCT to within 1.2% and 0.2%
// of their result files (canonical: 1.9% and 3.6% below), not the worst
// ρ (3.168, theirs 3.438, canonical 3.315).
type FinishTimeFairness struct {
	Interior bool

	cum, prevRem, prevIso map[int]float64
	iso, need, lo         []float64
	w                     []int
}

// Name returns "finish_time_fairness".
func (*FinishTimeFairness) Name() string { return "finish_time_fairness" }

// Allocate implements [Allocator].
func (f *FinishTimeFairness) Allocate(dst []float64, jobs []Demand, gpus int) error {
	if err := check(dst, jobs, gpus); err != nil {
		return err
	}
	if f.cum == nil {
		f.cum, f.prevRem, f.prevIso = map[int]float64{}, map[int]float64{}, map[int]float64{}
	}
	n := len(jobs)
	M := float64(gpus)
	f.iso = slices.Grow(f.iso[:0], n)[:n]
	f.need = slices.Grow(f.need[:0], n)[:n] // b_j, the isolated-time denominator
	convex := true
	for i := range jobs {
		d := &jobs[i]
		f.iso[i] = d.Throughput * min(1, M/(float64(n)*float64(d.GPUs)))
		if prev, ok := f.prevRem[d.ID]; ok && f.prevIso[d.ID] > 0 {
			f.cum[d.ID] += (prev - d.Remaining) / f.prevIso[d.ID]
		}
		b := f.cum[d.ID] + d.Remaining/f.iso[i]
		if !(b > 0) || math.IsInf(b, 0) {
			convex = false
		}
		f.need[i] = b
	}
	if !convex {
		for i := range jobs {
			dst[i] = min(1, M/(float64(n)*float64(jobs[i].GPUs)))
		}
		return nil
	}
	clear(f.prevRem)
	clear(f.prevIso)
	for i := range jobs {
		f.prevRem[jobs[i].ID], f.prevIso[jobs[i].ID] = jobs[i].Remaining, f.iso[i]
	}
	// x_j(ρ) = rem_j / (tput_j·(ρ·b_j − a_j)), 1 where that is ≥ 1 or
	// undefined; jobs with nothing left need nothing.
	x := func(i int, rho float64) float64 {
		d := &jobs[i]
		if d.Remaining <= 0 {
			return 0
		}
		den := d.Throughput * (float64(rho*f.need[i]) - d.Elapsed)
		if !(den > 0) {
			return 1
		}
		return min(1, d.Remaining/den)
	}
	demand := func(rho float64) float64 {
		var s float64
		for i := range jobs {
			s += float64(float64(jobs[i].GPUs) * x(i, rho))
		}
		return s
	}
	// At ρ = 0 every job saturates; double until the demands fit (they
	// vanish as ρ grows). Past 1e300 the instance is numerically degenerate
	// (a denominator near 0): fall back as above.
	lo, hi := 0.0, 1.0
	if demand(lo) <= M {
		for i := range jobs {
			dst[i] = x(i, lo)
		}
		f.interior(dst, jobs, gpus, x)
		return nil
	}
	for demand(hi) > M {
		if hi > 1e300 {
			for i := range jobs {
				dst[i] = min(1, M/(float64(n)*float64(jobs[i].GPUs)))
			}
			return nil
		}
		lo, hi = hi, 2*hi
	}
	for {
		mid := lo + float64((hi-lo)/2)
		if mid <= lo || mid >= hi {
			break
		}
		if demand(mid) > M {
			lo = mid
		} else {
			hi = mid
		}
	}
	for i := range jobs {
		dst[i] = x(i, hi)
	}
	f.interior(dst, jobs, gpus, x)
	return nil
}

// interior replaces the canonical optimum in dst by the analytic centre of
// the optimal face when f.Interior is set; x(i, ρ) is the least fraction
// that brings job i to ρ (1 if none does).
func (f *FinishTimeFairness) interior(dst []float64, jobs []Demand, gpus int, x func(int, float64) float64) {
	if !f.Interior {
		return
	}
	rho := 0.0 // the min-max value: the worst ρ at the canonical optimum
	for i := range jobs {
		d := &jobs[i]
		if d.Remaining > 0 && d.Throughput > 0 && dst[i] > 0 {
			r := (d.Elapsed + d.Remaining/float64(d.Throughput*dst[i])) / f.need[i]
			if !math.IsInf(r, 0) {
				rho = max(rho, r)
			}
		}
	}
	n := len(jobs)
	f.lo = slices.Grow(f.lo[:0], n)[:n]
	f.w = slices.Grow(f.w[:0], n)[:n]
	for i := range jobs {
		f.lo[i], f.w[i] = x(i, rho), jobs[i].GPUs
	}
	centre(dst, f.lo, f.w, float64(gpus))
}

// MinTotalDuration is Gavel's min_total_duration policy (the authors'
// "OSSP" baseline): the smallest T such that every job can finish within T,
// x_j ≥ rem_j/(tput_j·T), x_j ≤ 1, Σ_j w_j·x_j ≤ M. The authors find T by
// bisection in [100 s, 10⁶ s] to 5% and take whatever feasible point the
// solver returns for a constant objective; here T is exact,
// T* = max(max_j rem_j/tput_j, Σ_j w_j·rem_j/tput_j / M), and the point is
// the smallest one, x_j = rem_j/(tput_j·T*): every job paced to finish at
// T*. Jobs with no throughput get 0 (upstream's search never ends).
//
// Bisect finds T as the authors do: bisection of [100 s, 10⁶ s] while the
// bracket is wider than 5% (then [10⁶, 10⁷] and so on while nothing is
// feasible), T the last feasible midpoint, up to 5% above T*. Interior
// returns the analytic centre of the feasible set at T,
// {x : rem_j/(tput_j·T) ≤ x_j ≤ 1, Σ_j w_j·x_j ≤ M} (see centre), standing
// for the interior point the authors' ECOS returns for their constant
// objective: a job gets more than it needs to finish by T wherever the
// cluster has room. ECOS's own point is not the centre: on lower bounds
// (0.3, 0.2, 0.1), widths (1, 1, 2) and 2 GPUs, ECOSolveR 0.5 returns
// (0.477, 0.443, 0.414), near the least-squares point of the constraints
// it starts from, (0.481, 0.448, 0.463); the centre is (0.565, 0.505,
// 0.311). Bisect
// alone changes nothing in a replay (it scales every pace by the same
// factor, and Gavel's priorities are ratios).
type MinTotalDuration struct {
	Bisect, Interior bool

	lo []float64
	w  []int
}

// Name returns "min_total_duration".
func (*MinTotalDuration) Name() string { return "min_total_duration" }

// Allocate implements [Allocator].
func (m *MinTotalDuration) Allocate(dst []float64, jobs []Demand, gpus int) error {
	if err := check(dst, jobs, gpus); err != nil {
		return err
	}
	var T, work float64
	for i := range jobs {
		d := &jobs[i]
		dst[i] = 0
		if d.Throughput > 0 && d.Remaining > 0 {
			iso := d.Remaining / d.Throughput
			T = max(T, iso)
			work += float64(float64(d.GPUs) * iso)
		}
	}
	T = max(T, work/float64(gpus))
	if T == 0 {
		return nil
	}
	if m.Bisect {
		T = authorsMakespan(T)
	}
	for i := range jobs {
		d := &jobs[i]
		if d.Throughput > 0 && d.Remaining > 0 {
			dst[i] = min(1, d.Remaining/d.Throughput/T)
		}
	}
	if m.Interior {
		n := len(jobs)
		m.lo = slices.Grow(m.lo[:0], n)[:n]
		m.w = slices.Grow(m.w[:0], n)[:n]
		for i := range jobs {
			m.lo[i], m.w[i] = dst[i], jobs[i].GPUs
			if jobs[i].Throughput <= 0 {
				m.lo[i], m.w[i] = 1, 0 // set to 0 below: no progress to pace
			}
		}
		centre(dst, m.lo, m.w, float64(gpus))
		for i := range jobs {
			if jobs[i].Throughput <= 0 {
				dst[i] = 0
			}
		}
	}
	return nil
}

// authorsMakespan replays the authors' search for the makespan
// (min_total_duration.py) given the least feasible one, tStar: a midpoint
// T is feasible exactly when T ≥ tStar.
func authorsMakespan(tStar float64) float64 {
	if !(tStar < 1e300) {
		return tStar
	}
	maxT, minT, lastMax := 1e6, 100.0, 1e6
	for found := math.NaN(); ; {
		for float64(1.05*minT) < maxT {
			T := (minT + maxT) / 2
			if T >= tStar {
				found, maxT = T, T
			} else {
				minT = T
			}
		}
		if !math.IsNaN(found) {
			return found
		}
		maxT, minT, lastMax = lastMax*10, lastMax, lastMax*10
	}
}

// MaxSumThroughput is Gavel's max_sum_throughput_perf policy (the authors'
// "MST" baseline): maximize Σ_j tput_j·x_j (iterations per second, summed
// across models as upstream does) subject to Σ_j w_j·x_j ≤ M, 0 ≤ x_j ≤ 1.
// It is a fractional knapsack, solved exactly by taking jobs in decreasing
// tput_j/w_j; ties go to the smaller job ID, and at most one job gets a
// fraction strictly between 0 and 1. The zero value is ready.
//
// Interior returns instead the optimum an interior-point solver such as
// the authors' ECOS returns, which decides their MST replays: the jobs tied
// at the marginal throughput per GPU share the GPUs left evenly (the centre
// of the optimal face), and every job left out gets a tiny positive
// fraction, 10⁻¹²/(λ·w_j − tput_j) with λ the marginal throughput per GPU,
// where ECOS stops at about 10⁻¹⁰-10⁻⁹ in the same order (measured with
// ECOS on small instances). Those fractions are far below any allocated
// job's but not 0, so Gavel's priorities x_j/share rank the left-out jobs
// by throughput per GPU and time received rather than by deficit.
type MaxSumThroughput struct {
	Interior bool

	idx []int
}

// Name returns "max_sum_throughput_perf".
func (*MaxSumThroughput) Name() string { return "max_sum_throughput_perf" }

// Allocate implements [Allocator].
func (ms *MaxSumThroughput) Allocate(dst []float64, jobs []Demand, gpus int) error {
	if err := check(dst, jobs, gpus); err != nil {
		return err
	}
	ms.idx = slices.Grow(ms.idx[:0], len(jobs))[:len(jobs)]
	idx := ms.idx
	for i := range idx {
		idx[i] = i
		dst[i] = 0
	}
	dens := func(i int) float64 { return jobs[i].Throughput / float64(jobs[i].GPUs) }
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(dens(b), dens(a)), cmp.Compare(jobs[a].ID, jobs[b].ID))
	})
	if ms.Interior {
		ms.interior(dst, jobs, gpus, dens)
		return nil
	}
	left := float64(gpus)
	for _, i := range idx {
		if left <= 0 || jobs[i].Throughput <= 0 {
			break
		}
		w := float64(jobs[i].GPUs)
		dst[i] = min(1, left/w)
		left -= float64(dst[i] * w)
	}
	return nil
}

// interior fills dst with the interior-point optimum (see Interior), idx
// sorted by decreasing throughput per GPU.
func (ms *MaxSumThroughput) interior(dst []float64, jobs []Demand, gpus int, dens func(int) float64) {
	idx := ms.idx
	left := float64(gpus)
	k := 0
	for ; k < len(idx) && jobs[idx[k]].Throughput > 0; k++ {
		// The whole group of equal density fits: every member gets 1.
		g, sw := k, 0.0
		for g < len(idx) && dens(idx[g]) == dens(idx[k]) {
			sw += float64(jobs[idx[g]].GPUs)
			g++
		}
		if sw > left {
			break
		}
		for _, i := range idx[k:g] {
			dst[i] = 1
		}
		left -= sw
		k = g - 1
	}
	if k == len(idx) || jobs[idx[k]].Throughput <= 0 {
		return
	}
	lambda := dens(idx[k])
	if left <= 0 && k > 0 {
		// No GPU left for the marginal group: the solver's price lies
		// strictly between it and the last group in, and it is left out
		// with the others.
		lambda = (lambda + dens(idx[k-1])) / 2
		ms.leftOut(dst, jobs, idx[k:], lambda)
		return
	}
	// The marginal group shares what is left evenly.
	g, sw := k, 0.0
	for g < len(idx) && dens(idx[g]) == lambda {
		sw += float64(jobs[idx[g]].GPUs)
		g++
	}
	for _, i := range idx[k:g] {
		dst[i] = left / sw
	}
	ms.leftOut(dst, jobs, idx[g:], lambda)
}

// leftOut gives the jobs left out of an interior-point optimum at price
// lambda their tiny fractions 10⁻¹²/(λ·w_j − tput_j).
func (*MaxSumThroughput) leftOut(dst []float64, jobs []Demand, idx []int, lambda float64) {
	for _, i := range idx {
		if s := float64(lambda*float64(jobs[i].GPUs)) - jobs[i].Throughput; s > 0 && jobs[i].Throughput > 0 {
			dst[i] = 1e-12 / s
		}
	}
}
