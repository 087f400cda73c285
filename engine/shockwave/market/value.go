package market

// tables are the per-job data every phase of a solve reads, for the
// priorities of the path taken.
type tables struct {
	width []int32   // w_j, the job's GPUs
	prio  []float64 // p_j (1 on the finish-time-fair path)
	// val and res hold, for job j and count n = 0..T at j·(T+1)+n, the
	// job's welfare term and its residual runtime (see [Workspace.tables]).
	val, res []float64
	top      []int32 // per job: the count past which its tables stay constant
	order    []int32 // the packing order: width desc, p desc, R desc, ID asc
	orderPos []int32 // job → its position in order
	byID     []int32 // the jobs sorted by ID (the duplicate check's scratch)
}

// curve is the utility curve f of the welfare term at normalized progress u
// in [0, 1].
func (c *config) curve(u float64) float64 {
	if c.log == ExactLog {
		e := c.logZero
		if u >= e {
			return detLog(u)
		}
		return detLog(e) + u/e - 1 // the tangent at ε: concave, C¹
	}
	bp, lg := c.bp, c.bpLogs
	i := 1
	for i < len(bp)-1 && u > bp[i] {
		i++
	}
	if u == bp[i] {
		// Exactly the breakpoint's log (the chord formula may miss it by an
		// ulp): f(1) = 0, so a finished job weighs nothing whatever its p_j.
		return lg[i]
	}
	return lg[i-1] + float64((u-bp[i-1])*(lg[i]-lg[i-1]))/(bp[i]-bp[i-1])
}

// tables fills, for every job j and every count n = 0..T of planned rounds,
//
//	y   = min(n·Δ/D̄_j, E_j − F_j)           planned epochs (constraint 2 tight)
//	val = p_j·f((F_j + y)/E_j) / (N·T)       the job's welfare term
//	res = max(0, R_j − D̄_j·y)                its residual runtime after the window
//
// and top_j, the counts past which nothing changes (the job is done).
// Constraint 2 is tight at an optimum because both terms of the objective
// are non-decreasing in y_j, so the program depends on x only through n_j.
func (w *Workspace) tables(p *Problem, prio []float64) {
	w.residuals(p)
	T := w.cfg.T
	nt := float64(len(p.Jobs)) * float64(T)
	val := w.tab.val
	for j := range p.Jobs {
		job := &p.Jobs[j]
		rem := float64(job.Epochs - job.Progress)
		row := j * (T + 1)
		for n := 0; n <= T; n++ {
			y := min(float64(n)*w.cfg.delta/job.MeanEpoch, rem)
			u := (float64(job.Progress) + y) / float64(job.Epochs)
			val[row+n] = min(float64(prio[j]*w.cfg.curve(u))/nt, 0) // f ≤ 0; no round-off above
		}
		// Marginals must be non-negative and non-increasing (f is concave
		// and non-decreasing); round-off could break that by an ulp.
		for n := 1; n <= T; n++ {
			if val[row+n] < val[row+n-1] {
				val[row+n] = val[row+n-1]
			}
		}
		for n := 2; n <= T; n++ {
			d0 := val[row+n-1] - val[row+n-2]
			if val[row+n]-val[row+n-1] > d0 {
				val[row+n] = val[row+n-1] + d0
			}
		}
	}
}

// residuals fills the tables' res and top, which do not depend on the
// priorities (see [Workspace.tables]).
func (w *Workspace) residuals(p *Problem) {
	T := w.cfg.T
	res, top := w.tab.res, w.tab.top
	for j := range p.Jobs {
		job := &p.Jobs[j]
		rem := float64(job.Epochs - job.Progress)
		row := j * (T + 1)
		top[j] = int32(T)
		for n := 0; n <= T; n++ {
			y := float64(n) * w.cfg.delta / job.MeanEpoch
			if y >= rem {
				y = rem
				if int32(n) < top[j] {
					top[j] = int32(n)
				}
			}
			res[row+n] = max(0, job.Remaining-float64(job.MeanEpoch*y))
		}
	}
}

// priorities fills prio with the relaxed path's weights (the authors'
// relax_finish_time_constraints): with the projected finish-time fairness
// ρ̂_j = (Δ·r + R_j/s)/FT*_j and s = min(1, M/N),
//
//	p_j = ρ̂_j^λ    if ρ̂_j > ρ_max
//	p_j = ρ̂_j^100  if also R_j < Δ (about to finish)
//	p_j = 1        otherwise
//
// capped at MaxPriority.
func (w *Workspace) priorities(p *Problem, prio []float64) {
	s := share(p.GPUs, len(p.Jobs))
	now := float64(w.cfg.delta * float64(p.Round)) // float64(): no FMA with the sum below
	for j := range p.Jobs {
		job := &p.Jobs[j]
		rho := (now + job.Remaining/s) / job.FairFinish
		pr := 1.0
		if rho > w.cfg.rhoMax {
			pr = detPow(rho, w.cfg.lambda)
			if job.Remaining < w.cfg.delta {
				pr = detPow(rho, w.cfg.urgent)
			}
		}
		if !(pr <= MaxPriority) {
			pr = MaxPriority
		}
		prio[j] = pr
	}
}

// share is the authors' future share min(1, M/N).
func share(gpus, jobs int) float64 {
	if jobs == 0 {
		return 1
	}
	return min(1, float64(gpus)/float64(jobs))
}

// ftfLower fills lo with the finish-time-fairness lower bounds of the first
// attempt: the least n with τ_end + res_j(n)/s ≤ ρ_max·FT*_j, where
// τ_end = Δ·(r+T). It reports false when some job cannot meet its target
// even with every round it can use.
func (w *Workspace) ftfLower(p *Problem, lo []int32) bool {
	T := w.cfg.T
	s := share(p.GPUs, len(p.Jobs))
	end := float64(w.cfg.delta * float64(p.Round+T)) // float64(): no FMA with the sum below
	for j := range p.Jobs {
		target := p.Jobs[j].FairFinish * w.cfg.rhoMax
		row := j * (T + 1)
		lo[j] = -1
		for n := int32(0); n <= w.tab.top[j]; n++ {
			if end+w.tab.res[row+int(n)]/s <= target {
				lo[j] = n
				break
			}
		}
		if lo[j] < 0 {
			return false
		}
	}
	return true
}
