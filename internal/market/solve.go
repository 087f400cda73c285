package market

import (
	"cmp"
	"context"
	"slices"
	"strconv"
)

// Solution is a round plan for the window's T rounds.
//
// Slices point into the [Workspace] that produced the Solution and are
// overwritten by its next Solve.
type Solution struct {
	Status Status
	// Relaxed: the finish-time-fairness constraints could not all hold, so
	// the plan solves the relaxed program with priorities p_j.
	Relaxed bool
	// Objective of the program solved at the plan: Welfare − k·Makespan,
	// computed exactly (on the solver's grid, see the package doc) and
	// rounded to the nearest float64.
	Objective float64
	// Bound on the optimum of that program (= Objective when Optimal).
	Bound    float64
	Welfare  float64 // (1/(N·T))·Σ_j p_j·f(u_j), exact and rounded as Objective
	Makespan float64 // max_j max(0, R_j − D̄_j·y_j), seconds
	// RankCost is the re-ranking objective Σ_j p_j·(Σ_t t·x_{j,t})/n_j.
	RankCost float64
	Count    []int     // per job (input order): planned rounds n_j
	Epochs   []float64 // per job: planned epochs y_j
	Priority []float64 // per job: p_j (1 on the finish-time-fair path)
	// Rounds[t] lists the jobs (indices into Problem.Jobs, ascending) the
	// program runs in window round t, i.e. absolute round Problem.Round+t.
	Rounds [][]int
	// Backfill[t] lists the jobs added to round t by the work-conserving
	// backfill, in the order they were added.
	Backfill [][]int
	Nodes    int // branch-and-bound nodes solved
}

// Workspace holds every buffer a solve needs; reusing one makes steady-state
// solves allocation-free. A Workspace is not safe for concurrent use.
type Workspace struct {
	p   *Problem
	cfg config
	M   int
	C   int // min(M·T, Σ_j w_j·top_j): the GPU-rounds the DP tables span

	wid      []int32
	val, res []float64 // per job, n = 0..T (val: heuristics and the layout)
	top      []int32
	prio     []float64
	order    []int32 // packing order: width desc, p desc, R desc, ID asc
	rankPos  []int32 // position in order
	ids      []int32

	// exact arithmetic (exact.go): W limbs per number
	W            int
	tiers        []tier
	jt           []int32 // job → tier, −1 for a term that is always 0
	mt           int32   // the makespan term's tier, or −1
	coarse       bool
	full         []tier // a coarsened solve's full layout (reporting)
	fullJT       []int32
	fullMT       int32
	fullBuf      []uint64
	items        []item
	suf          []float64
	tauMax       float64
	goff         []int32  // job → offset of its grid table in gv
	gv           []uint64 // per job and n: G_j(n), then G_j(n) − G_j(n−1)
	c0w, mmax    []uint64 // Σ_j V_j(0) and M(τmax)
	scratch      []uint64 // the numbers below, one allocation
	relBS, relUB []uint64
	relBest      []uint64
	relBound     []uint64
	repS, gapTmp []uint64
	inc, open    []uint64
	bnd, fin     []uint64

	// relaxation
	cw, cls, cstart, cfill []int32
	mg                     []marg
	choice, mc, lam        []int32
	h, best, next, gath    []uint64
	cand                   []float64
	lastCap                int // capacity of the last welfare evaluation
	wv                     []uint64
	stack                  [][2]int32

	// packing
	free, ord, tmp          []int32
	x                       []bool // job-major N×T
	exactPack, unsure       bool
	dfsOrd, dfsPick, dfsGrp []int32
	budget                  int
	dfsKey                  []byte
	dfsRest                 []int
	dfsFree, dfsLeft        int
	dfsFail                 map[string]struct{}

	// search
	lo0, hi0, lo, hi, counts, incCounts, rep []int32
	repOrd, brJobs                           []int32
	brLoss                                   []float64
	incX                                     []bool
	nodes                                    []node
	ubs                                      []uint64 // node id → its upper bound
	heap                                     []int32
	nodesRun                                 int

	// ranking and output
	c, colw                []float64
	byPi, pi, perm, swapA  []int32
	swapB, bfOrder         []int32
	movCls, movStart       []int32 // movable jobs by class (rankRounds)
	rowTmp                 []bool
	plannedBuf, extraBuf   []int
	roundStart, extraStart []int
	sol                    Solution
}

// NewWorkspace returns an empty Workspace; buffers grow on first use.
func NewWorkspace() *Workspace { return &Workspace{} }

// Solve plans with a fresh Workspace. See [Workspace.Solve].
func Solve(ctx context.Context, p *Problem) (*Solution, error) {
	return NewWorkspace().Solve(ctx, p)
}

// Check reports the error Solve would give for p, without solving: nil
// exactly when Solve returns a plan.
func (w *Workspace) Check(p *Problem) error {
	if err := p.validate(&w.cfg); err != nil {
		return err
	}
	w.p = p
	return w.setup()
}

// Solve validates p and solves its round program (see the package doc):
// first with the finish-time-fairness constraints, and if those cannot all
// hold, the relaxed program with priorities. The plan is then ranked and
// backfilled.
//
// When ctx ends, Solve returns the best plan found so far with status
// Feasible and a bound; it fails only on invalid input (a *[FieldError]).
// The returned Solution is owned by w.
func (w *Workspace) Solve(ctx context.Context, p *Problem) (*Solution, error) {
	if err := w.Check(p); err != nil {
		return nil, err
	}
	N := len(p.Jobs)
	sol := &w.sol
	*sol = Solution{Rounds: sol.Rounds[:0], Backfill: sol.Backfill[:0],
		Count: grow(sol.Count, N), Epochs: grow(sol.Epochs, N), Priority: grow(sol.Priority, N)}

	// First attempt: finish-time-fairness constraints as lower bounds.
	for j := range w.prio {
		w.prio[j] = 1
	}
	w.prepare()
	fair := w.ftfLower(p, w.lo0)
	if fair {
		fair = w.demand(w.lo0) <= w.C
	}
	if fair {
		switch r, _ := w.packCounts(w.lo0); r {
		case unpackable:
			fair = false
		case undecided:
			fair, w.unsure = false, true
		}
	}
	if !fair {
		if w.cfg.noRelax {
			sol.Status = Infeasible
			clear(w.incCounts)
			clear(w.incX)
			w.finish(sol, nil, nil)
			return sol, nil
		}
		sol.Relaxed = true
		w.priorities(p, w.prio)
		w.prepare()
		clear(w.lo0)
		w.pack(w.lo0)
	}
	w.exactTables()
	copy(w.incCounts, w.lo0)
	copy(w.incX, w.x)
	w.evalCounts(w.lo0, w.inc)
	status := w.search(ctx, w.bnd)
	if w.unsure || w.coarse {
		status = Feasible
	}
	sol.Status = status
	sol.Nodes = w.nodesRun
	sol.RankCost = w.rankRounds(ctx, w.incCounts)
	w.finish(sol, w.inc, w.bnd)
	return sol, nil
}

// finish fills sol's numbers and rounds from the incumbent with score s and
// the bound (both nil: the empty plan of an infeasible program). Objective,
// Bound and Welfare are the exact values on the grid, correctly rounded.
func (w *Workspace) finish(sol *Solution, s, bound []uint64) {
	if s != nil {
		tmp := w.fin[:w.W]
		sol.Objective = w.objective(s, tmp)
		sol.Bound = w.objective(bound, tmp)
		copy(tmp, w.c0w)
		for j, n := range w.incCounts {
			if t := w.jt[j]; t >= 0 {
				subAt(tmp, w.tiers[t].off, w.gain(j, int(n)))
			}
		}
		sol.Welfare = neg(w.real(tmp))
		T := w.cfg.T
		for j, n := range w.incCounts {
			sol.Makespan = max(sol.Makespan, w.res[j*(T+1)+int(n)])
		}
		if w.coarse { // the coarse grid rounded terms off: value the plan finely
			sol.Welfare, sol.Objective = w.fullValue(w.incCounts, sol.Makespan)
		}
	}
	for j := range w.p.Jobs {
		n := w.incCounts[j]
		sol.Count[j] = int(n)
		job := &w.p.Jobs[j]
		sol.Epochs[j] = min(float64(n)*w.cfg.delta/job.MeanEpoch, float64(job.Epochs-job.Progress))
		sol.Priority[j] = w.prio[j]
	}
	w.emit(sol, sol.Status != Infeasible)
}

// setup sizes the buffers for p and checks that IDs are unique.
func (w *Workspace) setup() error {
	p := w.p
	N, T := len(p.Jobs), w.cfg.T
	w.M = p.GPUs
	w.unsure = false
	w.dfsLeft = solveBudget
	w.wid = grow(w.wid, N)
	for j := range p.Jobs {
		w.wid[j] = int32(p.Jobs[j].GPUs)
	}
	w.ids = grow(w.ids, N)
	for j := range w.ids {
		w.ids[j] = int32(j)
	}
	slices.SortFunc(w.ids, func(a, b int32) int { return cmp.Compare(p.Jobs[a].ID, p.Jobs[b].ID) })
	for q := 1; q < N; q++ {
		if a, b := w.ids[q-1], w.ids[q]; p.Jobs[a].ID == p.Jobs[b].ID {
			return invalid(jobField(int(max(a, b)), "id"), "%d is also the ID of jobs[%s]", p.Jobs[b].ID, strconv.Itoa(int(min(a, b))))
		}
	}
	w.val = grow(w.val, N*(T+1))
	w.res = grow(w.res, N*(T+1))
	for _, s := range []*[]int32{&w.top, &w.order, &w.rankPos, &w.cls, &w.lam, &w.lo0, &w.hi0, &w.lo, &w.hi,
		&w.counts, &w.incCounts, &w.rep, &w.repOrd, &w.brJobs, &w.byPi, &w.pi, &w.swapA, &w.swapB, &w.bfOrder} {
		*s = grow(*s, N)
	}
	w.prio = grow(w.prio, N)
	w.c = grow(w.c, N)
	w.brLoss = grow(w.brLoss, N)
	for _, s := range []*[]int32{&w.free, &w.ord, &w.tmp, &w.perm} {
		*s = grow(*s, T)
	}
	w.colw = grow(w.colw, T)
	w.rowTmp = grow(w.rowTmp, T)
	w.x = grow(w.x, N*T)
	w.incX = grow(w.incX, N*T)
	w.jt = grow(w.jt, N)
	w.goff = grow(w.goff, N)
	return nil
}

// numbers sizes the workspace's scratch numbers for w.W limbs.
func (w *Workspace) numbers() {
	W := w.W
	all := []*[]uint64{&w.relBS, &w.relUB, &w.relBest, &w.relBound,
		&w.repS, &w.gapTmp, &w.inc, &w.open, &w.bnd, &w.fin, &w.c0w, &w.mmax}
	w.scratch = grow(w.scratch, len(all)*W)
	clear(w.scratch)
	for i, p := range all {
		*p = w.scratch[i*W : (i+1)*W : (i+1)*W]
	}
	if cap(w.h) < W {
		w.h = make([]uint64, W, 64*W)
	}
}

// demand is Σ_j w_j·n_j, the GPU-rounds of round counts n.
func (w *Workspace) demand(n []int32) int {
	d := 0
	for j, t := range n[:len(w.p.Jobs)] {
		d += int(w.wid[j]) * int(t)
	}
	return d
}

// prepare computes the value tables, the job order and the width classes
// for the current priorities, and the base bounds [0, top]: what the first
// attempt's packing test needs.
func (w *Workspace) prepare() {
	p := w.p
	w.tables(p, w.prio)
	// Capacity no job can use is not worth a DP cell: the aggregate
	// capacity is at most what all jobs could use.
	w.C = w.M * w.cfg.T
	if demand := w.demand(w.top); demand < w.C {
		w.C = demand
	}
	ord := w.order
	for j := range ord {
		ord[j] = int32(j)
	}
	jobs, prio := p.Jobs, w.prio
	slices.SortFunc(ord, func(a, b int32) int {
		ja, jb := &jobs[a], &jobs[b]
		switch {
		case ja.GPUs != jb.GPUs:
			return cmp.Compare(jb.GPUs, ja.GPUs)
		case prio[a] != prio[b]:
			return cmp.Compare(prio[b], prio[a])
		case ja.Remaining != jb.Remaining:
			return cmp.Compare(jb.Remaining, ja.Remaining)
		}
		return cmp.Compare(ja.ID, jb.ID)
	})
	for q, j := range ord {
		w.rankPos[j] = int32(q)
	}
	w.classes(len(jobs))
	w.exactPack = exactPacking(w.cw, int32(w.M))
	copy(w.hi0, w.top)
	clear(w.lo0)
}

// exactTables builds, for the path taken, the exact arithmetic's layout and
// grid tables (exact.go), the sorted marginals and the DP rows.
func (w *Workspace) exactTables() {
	w.layout()
	w.numbers()
	w.grid()
	w.sortMarginals(len(w.p.Jobs))
	w.best = grow(w.best, (w.C+1)*w.W)
	w.next = grow(w.next, (w.C+1)*w.W)
	w.gath = grow(w.gath, (w.C+1)*w.W)
}
