package policy

// centre writes into x the analytic centre of the authors' constraints
// (cvxpy's get_base_constraints plus the program's lower bounds) on one
// worker type,
//
//	x_j ≥ 0, x_j ≥ lo_j, x_j ≤ 1, Σ_j w_j·x_j ≤ M,
//
// the maximizer of Σ_j [log x_j + log(x_j − lo_j) + log(1 − x_j)] +
// log(M − Σ_j w_j·x_j), each constraint with its own barrier term, as an
// interior-point solver sees them (x ≥ 0 is redundant for the set but not
// for its barrier). It stands for the point the authors' solvers return on
// a program whose objective is constant over the set: OSSP's feasibility
// program, the optimal face of Themis's min-max program. Jobs with
// lo_j ≥ 1 are fixed at 1, and jobs with w_j = 0 take no capacity; when the
// set has no interior in the capacity (Σ_j w_j·lo_j ≥ M within rounding)
// x = lo.
//
// The optimality conditions are 1/x_j + 1/(x_j−lo_j) − 1/(1−x_j) = w_j·ν
// with ν = 1/(M − Σ_j w_j·x_j): the left side decreases in x_j, so x_j(ν)
// is found by bisection and decreases in ν, and ν·(M − Σ_j w_j·x_j(ν))
// increases, so ν is found by bisection too, both to adjacent
// floating-point numbers.
func centre(x, lo []float64, w []int, M float64) {
	var base float64
	for j := range lo {
		base += float64(float64(w[j]) * min(max(lo[j], 0), 1))
	}
	fixed := func() {
		for j := range lo {
			x[j] = min(max(lo[j], 0), 1)
		}
	}
	if !(base < M) {
		fixed()
		return
	}
	slack := func(nu float64) float64 {
		var used float64
		for j := range lo {
			x[j] = boxPoint(lo[j], float64(float64(w[j])*nu))
			used += float64(float64(w[j]) * x[j])
		}
		return M - used
	}
	// h(ν) = ν·s(ν) − 1 is −1 at 0 and tends to +∞ (s → M − base > 0).
	a, b := 0.0, 1.0
	for float64(b*slack(b)) < 1 && b < 1e300 {
		a, b = b, 2*b
	}
	for {
		mid := a + float64((b-a)/2)
		if mid <= a || mid >= b {
			break
		}
		if float64(mid*slack(mid)) < 1 {
			a = mid
		} else {
			b = mid
		}
	}
	if s := slack(b); !(s > 0) {
		fixed() // rounding at a nearly empty interior: the lower bounds fit
	}
}

// boxPoint solves 1/x + 1/(x−l) − 1/(1−x) = c for x in (max(l, 0), 1) by
// bisection (the left side falls from +∞ to −∞); 1 if l ≥ 1.
func boxPoint(l, c float64) float64 {
	if l >= 1 {
		return 1
	}
	a, b := max(l, 0), 1.0
	for {
		m := a + float64((b-a)/2)
		if m <= a || m >= b {
			return m
		}
		if 1/m+1/(m-l)-1/(1-m) > c {
			a = m
		} else {
			b = m
		}
	}
}
