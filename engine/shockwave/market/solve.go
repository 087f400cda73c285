package market

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
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
//
// Its parts follow the phases of a solve (see the package doc); each is
// declared in the file that implements its phase.
type Workspace struct {
	p   *Problem
	ctx context.Context // the solve's, for the phases that take no context argument
	cfg config          // p.Config, resolved

	tab tables      // value.go: per-job value tables, widths, priorities, order
	ex  exactArith  // exact.go: the tier layout of exact numbers, grid tables
	ks  knapsack    // relax.go: width classes, sorted marginals, DP rows
	tau tauSearch   // relax.go: the count relaxation's makespan search
	lp  cfgLP       // lp.go: the configuration LP (floating point, a guide)
	lag lagrange    // lagrange.go: the exact Lagrangian bound from its duals
	pk  packing     // pack.go: the greedy's free GPUs and the assignment
	dfs packSearch  // pack.go: the exact packing search
	bb  branchBound // search.go: the branch and bound on packing covers
	inc incumbent   // search.go: the best plan found so far
	rk  ranking     // rank.go: the re-ranking of the plan's rounds
	out output      // rank.go: the plan's rounds and the backfill
	sol Solution
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

// WatchedCells is the size, in value cells (jobs × (rounds + 1)), from
// which Solve (and package round's prediction) watch the context while
// they build a first plan. A smaller problem gets its first plan however
// short the limit: it costs about 0.1 ms natively (a millisecond in a
// WebAssembly host). It was 1 << 16, whose first plan cost 5 to 30 ms
// past a limit (issue 29).
const WatchedCells = 1 << 12

// Solve validates p and solves its round program (see the package doc):
// first with the finish-time-fairness constraints, and if those cannot all
// hold, the relaxed program with priorities. The plan is then ranked and
// backfilled.
//
// When ctx ends, Solve returns the best plan found so far with status
// Feasible and a bound; it fails only on invalid input (a *[FieldError]),
// and with ErrTimeLimit when ctx ends before it has a first plan (the
// context is checked between the steps that build its tables, each
// linear in the jobs times the rounds, for problems of WatchedCells cells
// or more; smaller ones always get their first plan, which costs them a
// millisecond or so). The returned Solution is owned by w.
func (w *Workspace) Solve(ctx context.Context, p *Problem) (*Solution, error) {
	if err := w.Check(p); err != nil {
		return nil, err
	}
	late := func() bool { return int64(len(p.Jobs))*int64(w.cfg.T+1) >= WatchedCells && deadline.Done(ctx) }
	if late() {
		return nil, ErrTimeLimit
	}
	w.ctx = ctx
	defer func() { w.ctx = nil }()
	N := len(p.Jobs)
	sol := &w.sol
	*sol = Solution{Rounds: sol.Rounds[:0], Backfill: sol.Backfill[:0],
		Count: scratch.Resize(sol.Count, N), Epochs: scratch.Resize(sol.Epochs, N), Priority: scratch.Resize(sol.Priority, N)}
	if !w.fairAttempt() {
		if w.cfg.noRelax {
			sol.Status = Infeasible
			clear(w.inc.counts)
			clear(w.inc.x)
			w.finish(sol, nil, nil)
			return sol, nil
		}
		if late() {
			return nil, ErrTimeLimit
		}
		sol.Relaxed = true
		w.relaxedPath()
	}
	if late() || !w.exactTables(late) {
		return nil, ErrTimeLimit
	}
	copy(w.inc.counts, w.bb.baseLo)
	copy(w.inc.x, w.pk.x)
	w.evalCounts(w.bb.baseLo, w.inc.score)
	w.bb.pathLo = append(w.bb.pathLo[:0], w.bb.baseLo...)
	w.lag.active, w.lag.proven = false, false
	status := w.search(ctx, w.bb.bound)
	if w.pk.unsure || w.ex.coarse {
		status = Feasible
	}
	sol.Status = status
	sol.Nodes = w.bb.processed
	sol.RankCost = w.rankRounds(ctx, w.inc.counts)
	w.finish(sol, w.inc.score, w.bb.bound)
	return sol, nil
}

// fairAttempt prepares the first attempt, with the finish-time-fairness
// constraints as lower bounds on the counts, and reports whether they can
// all hold: the bounds exist, fit the aggregate capacity and pack (then
// w.pk.x holds their packing).
func (w *Workspace) fairAttempt() bool {
	for j := range w.tab.prio {
		w.tab.prio[j] = 1
	}
	lo := w.bb.baseLo
	// A target no count meets (as in most of the authors' re-plans) needs
	// only the residuals to show: the rest of the tables are the relaxed
	// path's.
	if w.residuals(w.p); !w.ftfLower(w.p, lo) {
		return false
	}
	w.prepare()
	if !w.ftfLower(w.p, lo) || w.demand(lo) > w.ks.capacity {
		return false
	}
	switch r, _ := w.packCounts(lo); r {
	case unpackable:
		return false
	case undecided:
		w.pk.unsure = true
		return false
	}
	return true
}

// relaxedPath prepares the relaxed program: priorities instead of the
// finish-time-fairness constraints, no lower bounds, and the empty packing.
func (w *Workspace) relaxedPath() {
	w.priorities(w.p, w.tab.prio)
	w.prepare()
	clear(w.bb.baseLo)
	w.pack(w.bb.baseLo)
}

// finish fills sol's numbers and rounds from the incumbent with score s and
// the bound (both nil: the empty plan of an infeasible program). Objective,
// Bound and Welfare are the exact values on the grid, correctly rounded.
func (w *Workspace) finish(sol *Solution, s, bound []uint64) {
	counts := w.inc.counts
	if s != nil {
		tmp := w.ex.tmp[:w.ex.limbs]
		sol.Objective = w.objective(s, tmp)
		sol.Bound = w.objective(bound, tmp)
		copy(tmp, w.ex.c0)
		for j, n := range counts {
			if t := w.ex.jobTier[j]; t >= 0 {
				subAt(tmp, w.ex.tiers[t].off, w.gain(j, int(n)))
			}
		}
		sol.Welfare = neg(w.real(tmp))
		T := w.cfg.T
		for j, n := range counts {
			sol.Makespan = max(sol.Makespan, w.tab.res[j*(T+1)+int(n)])
		}
		if w.ex.coarse { // the coarse grid rounded terms off: value the plan finely
			sol.Welfare, sol.Objective = w.fullValue(counts, sol.Makespan)
		}
	}
	for j := range w.p.Jobs {
		n := counts[j]
		sol.Count[j] = int(n)
		job := &w.p.Jobs[j]
		sol.Epochs[j] = min(float64(n)*w.cfg.delta/job.MeanEpoch, float64(job.Epochs-job.Progress))
		sol.Priority[j] = w.tab.prio[j]
	}
	w.emit(sol, sol.Status != Infeasible)
}

// setup sizes the buffers for p and checks that IDs are unique.
func (w *Workspace) setup() error {
	p := w.p
	N, T := len(p.Jobs), w.cfg.T
	w.pk.unsure = false
	w.lag.active = false
	w.lag.fixed = w.lag.fixed[:0]
	w.lp.rowClass = w.lp.rowClass[:0] // rows are separated anew for each problem
	w.lp.ready = false                // and no basis carries over (warm)
	w.dfs.left = solveBudget
	tab := &w.tab
	tab.width = scratch.Resize(tab.width, N)
	for j := range p.Jobs {
		tab.width[j] = int32(p.Jobs[j].GPUs)
	}
	if err := w.uniqueIDs(); err != nil {
		return err
	}
	tab.val = scratch.Resize(tab.val, N*(T+1))
	tab.res = scratch.Resize(tab.res, N*(T+1))
	for _, s := range []*[]int32{&tab.top, &tab.order, &tab.orderPos, &w.ks.class, &w.ks.least,
		&w.bb.baseLo, &w.bb.baseHi, &w.bb.lo, &w.bb.hi, &w.bb.counts, &w.bb.repCounts, &w.bb.repOrder,
		&w.bb.branchJobs, &w.inc.counts, &w.rk.byRank, &w.rk.rankOf, &w.rk.swapA, &w.rk.swapB, &w.out.backfillOrder} {
		*s = scratch.Resize(*s, N)
	}
	tab.prio = scratch.Resize(tab.prio, N)
	w.rk.weight = scratch.Resize(w.rk.weight, N)
	w.bb.branchLoss = scratch.Resize(w.bb.branchLoss, N)
	for _, s := range []*[]int32{&w.pk.free, &w.pk.byFree, &w.pk.merged, &w.rk.free, &w.rk.perm} {
		*s = scratch.Resize(*s, T)
	}
	w.rk.roundWeight = scratch.Resize(w.rk.roundWeight, T)
	w.rk.row = scratch.Resize(w.rk.row, T)
	w.pk.x = scratch.Resize(w.pk.x, N*T)
	w.inc.x = scratch.Resize(w.inc.x, N*T)
	w.ex.jobTier = scratch.Resize(w.ex.jobTier, N)
	w.ex.gainOff = scratch.Resize(w.ex.gainOff, N)
	return nil
}

// uniqueIDs reports the later of two jobs sharing an ID.
func (w *Workspace) uniqueIDs() error {
	jobs := w.p.Jobs
	ids := scratch.Resize(w.tab.byID, len(jobs))
	w.tab.byID = ids
	for j := range ids {
		ids[j] = int32(j)
	}
	slices.SortFunc(ids, func(a, b int32) int { return cmp.Compare(jobs[a].ID, jobs[b].ID) })
	for q := 1; q < len(ids); q++ {
		if a, b := ids[q-1], ids[q]; jobs[a].ID == jobs[b].ID {
			return w.p.jobInvalid(int(max(a, b)), "ID", "%d is also the ID of the job at index %d", jobs[b].ID, min(a, b))
		}
	}
	return nil
}

// numbers sizes the workspace's scratch numbers for w.ex.limbs limbs, all
// in one allocation.
func (w *Workspace) numbers() {
	W := w.ex.limbs
	all := []*[]uint64{&w.tau.best, &w.tau.probe, &w.tau.found, &w.tau.bound,
		&w.bb.repScore, &w.bb.gapTmp, &w.inc.score, &w.bb.open, &w.bb.bound, &w.ex.tmp, &w.ex.c0, &w.ex.mmax}
	w.ex.scratch = scratch.Resize(w.ex.scratch, len(all)*W)
	clear(w.ex.scratch)
	for i, p := range all {
		*p = w.ex.scratch[i*W : (i+1)*W : (i+1)*W]
	}
	if cap(w.ks.h) < W {
		w.ks.h = make([]uint64, W, 64*W)
	}
}

// demand is Σ_j w_j·n_j, the GPU-rounds of round counts n.
func (w *Workspace) demand(n []int32) int {
	d := 0
	for j, t := range n[:len(w.p.Jobs)] {
		d += int(w.tab.width[j]) * int(t)
	}
	return d
}

// prepare computes the value tables, the job order and the width classes
// for the current priorities, and the base bounds [0, top]: what the first
// attempt's packing test needs.
func (w *Workspace) prepare() {
	p, tab := w.p, &w.tab
	w.tables(p, tab.prio)
	// Capacity no job can use is not worth a DP cell: the aggregate
	// capacity is at most what all jobs could use.
	w.ks.capacity = p.GPUs * w.cfg.T
	if demand := w.demand(tab.top); demand < w.ks.capacity {
		w.ks.capacity = demand
	}
	ord := tab.order
	for j := range ord {
		ord[j] = int32(j)
	}
	jobs, prio := p.Jobs, tab.prio
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
		tab.orderPos[j] = int32(q)
	}
	w.classes(len(jobs))
	w.pk.exact = exactPacking(w.ks.classWidth, int32(p.GPUs))
	copy(w.bb.baseHi, tab.top)
	clear(w.bb.baseLo)
	w.bb.floor = math.Inf(-1)
}

// exactTables builds, for the path taken, the exact arithmetic's layout and
// grid tables (exact.go), the sorted marginals and the DP rows. It stops
// between them, reporting false, when late says the time is up.
func (w *Workspace) exactTables(late func() bool) bool {
	w.layout()
	w.numbers()
	if late() {
		return false
	}
	w.grid()
	if late() {
		return false
	}
	w.sortMarginals(len(w.p.Jobs))
	if late() {
		return false
	}
	n := (w.ks.capacity + 1) * w.ex.limbs
	w.ks.row = scratch.Resize(w.ks.row, n)
	w.ks.next = scratch.Resize(w.ks.next, n)
	w.ks.gathered = scratch.Resize(w.ks.gathered, n)
	return true
}
