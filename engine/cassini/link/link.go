package link

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
	"github.com/orrery/orrery/kernels"
)

// Mode selects the points and rotations the search considers.
type Mode int

const (
	Exact Mode = iota // every tick of the unified circle, every shift (default)
	Paper             // 72 angles and 5-degree rotations, as the paper
)

// PaperAngles is |A| in Paper mode: 5-degree steps.
const PaperAngles = 72

func (m Mode) String() string {
	switch m {
	case Exact:
		return "exact"
	case Paper:
		return "paper"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "exact" or "paper"; "" is Exact.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "exact":
		return Exact, nil
	case "paper":
		return Paper, nil
	}
	return 0, fmt.Errorf("%w: mode %q (want exact or paper)", ErrInvalidOption, s)
}

// Status says whether a result is proven optimal.
type Status int

const (
	Optimal   Status = iota // proven optimal
	Budget                  // best found when the evaluation budget ran out; Bound holds
	TimeLimit               // best found when the context ended; Bound holds
)

func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Budget:
		return "budget"
	case TimeLimit:
		return "time_limit"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// WatchedTicks is the size, in ticks of all the jobs' periods, from which
// a search watches its context while it lays out its circle (and fails
// with ErrTimeLimit when it ends there): a smaller setup costs well under
// a millisecond, so a small search always gets its first evaluation.
const WatchedTicks = 1 << 16

// MaxJobs is the most jobs one search takes (a link with more is
// ErrTooLarge): the shared circle and the bounds pair the jobs up, so a
// search costs at least the square of its jobs before its first
// evaluation.
const MaxJobs = 1024

// Defaults of the zero Options.
const (
	DefaultBudget   = 1 << 26 // pair evaluations (see Result.Evaluated)
	DefaultRestarts = 4
	DefaultMaxCells = 1 << 23 // jobs x ticks of the circle the search builds: 128 MiB of search state
)

// Options configure a search. The zero value is Exact mode, the default
// perimeter cap (circle.DefaultMaxPerimeter ticks of the shared circle, no
// rounding), DefaultBudget, DefaultRestarts, seed 0, the shared-circle
// search (Materialize false) and DefaultMaxCells.
type Options struct {
	Mode Mode

	// Circle caps the circle the search builds and opts in to period
	// rounding. In Exact mode the search runs on the shared circle
	// (circle.Reduce: Q residues, the LCM of the periods' pairwise gcds), or
	// on the whole unified circle when that is cheaper and within the cap;
	// the unified perimeter itself is bounded only so that the excess
	// summed over it fits an int64. Paper mode obeys the same limits.
	Circle circle.Options

	// Budget is the number of pair evaluations the search may spend. While
	// the exhaustive cost (nothing pruned) is within it, and within 64
	// rounds of coordinate descent, the search runs branch and bound
	// directly; past either, coordinate descent runs first, and the proof
	// stops when the budget is spent. 0 means DefaultBudget; negative, no
	// limit (the context still applies; the rule above then takes
	// DefaultBudget).
	Budget int64

	Restarts int    // coordinate-descent starts (the first is unshifted); 0 means DefaultRestarts
	Seed     uint64 // seed of the restarts' random starting shifts

	// Materialize runs the search as orrery did before the shared circle,
	// the baseline the benchmarks measure against: the cap bounds the
	// unified perimeter itself (circle.Unify), every job is tiled over it,
	// each free job tries its shifts modulo gcd(T_j, LCM of the others),
	// and there are no folds, frame or pair bounds. Results are the same
	// (both are exact) wherever both answer; only the work differs. false
	// (the zero value) is the shared-circle search.
	Materialize bool

	// MaxCells bounds jobs x ticks of the circle an Exact search builds: it
	// holds about four int32 per job and tick, so this is what bounds its
	// memory (16 bytes a cell). The search materializes the whole unified
	// circle only within it, and fails with ErrTooLarge when even the
	// shared circle passes it. 0 means DefaultMaxCells.
	MaxCells int
}

// CheckCells returns an ErrTooLarge error when an Exact search of jobs jobs
// on a circle of ticks ticks would pass the cell limit.
func (o Options) CheckCells(jobs, ticks int) error {
	if cells := int64(jobs) * int64(ticks); o.Mode == Exact && cells > int64(o.CellLimit()) {
		return fmt.Errorf("%w: %d jobs on a %d-tick circle are %d cells, more than %d (use coarser ticks, round periods, or raise MaxCells)",
			ErrTooLarge, jobs, ticks, cells, o.CellLimit())
	}
	return nil
}

// CellLimit returns o.MaxCells, or DefaultMaxCells when it is not set.
func (o Options) CellLimit() int {
	if o.MaxCells <= 0 {
		return DefaultMaxCells
	}
	return o.MaxCells
}

// Fits returns nil when jobs with these periods (ticks) and summed peak
// demand (units) fit a search under o without rounding, and otherwise the
// limit error the search would fail with (see IsLimit): what a caller that
// rounds periods itself, on a grid of its own, tests each grid with. It
// does not fold classes, so it may refuse a link whose classes would fold
// within the limits. The periods slice is used as scratch and left
// unchanged.
func (o Options) Fits(periods []int, peak int64) error {
	if len(periods) > MaxJobs {
		return tooMany(len(periods))
	}
	co := o.Circle
	co.Round = false
	co.MaxLCM = lcmLimit(co, peak)
	if o.Materialize {
		u, err := circle.Unify(periods, periods, co)
		if err != nil {
			return err
		}
		return o.CheckCells(len(periods), u.Perimeter)
	}
	u, err := circle.Reduce(periods, periods, co)
	if err != nil {
		return err
	}
	return o.CheckCells(len(periods), u.Shared)
}

func tooMany(k int) error {
	return fmt.Errorf("%w: %d jobs share the link, more than %d", ErrTooLarge, k, MaxJobs)
}

// Check returns nil when jobs with these periods (ticks) and summed peak
// demand (units) are within every size limit of a search under o,
// rounding the periods as o.Circle.Round allows, and otherwise the limit
// error the search would fail with (see IsLimit): what a caller that has
// only the periods and peaks (not the demands) checks before it builds
// the profiles. Like Fits it does not fold classes, so it may refuse a
// link whose classes would fold within the cell limit. It does not modify
// periods.
func (o Options) Check(periods []int, peak int64) error {
	k := len(periods)
	if k > MaxJobs {
		return tooMany(k)
	}
	if peak > kernels.MaxValue {
		return fmt.Errorf("%w: %d units", ErrDemandTooLarge, peak)
	}
	co := o.Circle
	co.MaxLCM = lcmLimit(co, peak)
	scratch := slices.Clone(periods)
	if o.Materialize {
		u, err := circle.Unify(scratch, scratch, co)
		if err != nil {
			return err
		}
		return o.CheckCells(k, u.Perimeter)
	}
	u, err := circle.Reduce(scratch, scratch, co)
	if err != nil {
		return err
	}
	return o.CheckCells(k, u.Shared)
}

// lcmLimit bounds the unified perimeter so that the excess summed over it,
// below peak units a tick, fits an int64.
func lcmLimit(co circle.Options, peak int64) int {
	l := int64(math.MaxInt64) / max(peak, 1)
	if l > int64(math.MaxInt) {
		l = math.MaxInt
	}
	return min(co.LCMCap(), int(l))
}

// Sentinel errors.
var (
	ErrNoJobs         = errors.New("link: no jobs")
	ErrCapacity       = errors.New("link: capacity must be in [1, kernels.MaxValue] units")
	ErrDemandTooLarge = errors.New("link: summed peak demand exceeds kernels.MaxValue units")
	ErrFixed          = errors.New("link: fixed shifts do not match the jobs")
	ErrInvalidOption  = errors.New("link: invalid option")
	ErrTooLarge       = errors.New("link: too many jobs, or jobs x ticks of the search's circle past the cell limit")
	// ErrTimeLimit: the context ended while the search laid out its
	// circle, before it had evaluated any shifts, so there is no best so
	// far to return. Once it has one, a search that runs out of time
	// returns it with status TimeLimit instead.
	ErrTimeLimit = errors.New("link: the context ended before the search's first evaluation")
)

// IsLimit reports whether err from a search is a size limit (a unified
// circle past its cap, too many cells, a period or a demand too large)
// rather than a bad value: what a service reports as "limit exceeded".
func IsLimit(err error) bool {
	for _, l := range []error{circle.ErrPerimeterTooLarge, ErrTooLarge, ErrDemandTooLarge, profile.ErrPeriodTooLong, profile.ErrDemandTooLarge} {
		if errors.Is(err, l) {
			return true
		}
	}
	return false
}

// Problem is one link's optimization.
type Problem struct {
	Jobs     []profile.Profile
	Capacity int32 // in demand units

	// Fixed, if not nil, has one entry per job: a shift in ticks the job must
	// keep (taken modulo its period), or -1 for a job the search may shift.
	// With Fixed nil, job 0 is fixed at 0 and the others are free.
	Fixed []int
}

// Result is a search's outcome. Slices alias the caller's dst or the
// Workspace and stay valid until the Workspace's next call.
type Result struct {
	Score     float64 // score of Shifts
	Bound     float64 // upper bound on the optimal score; == Score when Optimal
	Unshifted float64 // score with every free job at shift 0
	Excess    int64   // sum of excess over the points, in unit-ticks
	Points    int     // |A|: the unified perimeter in Exact mode, 72 in Paper mode
	Shifts    []int   // one per job, in ticks, in [0, period)
	Status    Status
	Circle    circle.Unified // the periods searched: rounded when Circle.Rounded()

	// Unrounded scores Shifts on the jobs' own periods when the search ran
	// on rounded ones (Circle.Rounded()): Score, Excess and Bound above are
	// then for the rounded periods, which the time-shift agent makes true by
	// padding each iteration. Its Points is 0 when the periods were not
	// rounded, or when scoring the real periods would pass the cell limit or
	// the budget (or their excess would not fit an int64).
	Unrounded Unrounded

	// Evaluated counts the pair evaluations the search spent: one job's
	// demand added at one tick of the circle searched, one entry of a class
	// histogram visited, or one entry of a bound's table updated. The
	// bound of a search that stopped early and the unrounded score are not
	// counted.
	Evaluated int64
}

// Unrounded is a rounded search's shifts scored on the jobs' own periods:
// their excess over the Points of the real unified circle (Perimeter ticks;
// its every tick in Exact mode, 72 in Paper mode).
type Unrounded struct {
	Score     float64
	Excess    int64
	Points    int
	Perimeter int
}

// score converts an excess to a score.
func score(excess int64, points int, capacity int32) float64 {
	return 1 - float64(excess)/(float64(points)*float64(capacity))
}

// Job kinds on the circle an Exact search runs on (see plan.go).
const (
	onCircle  = iota // tiled over the circle, its shift a rotation
	inClasses        // its ticks grouped by residue modulo its candidate count
	inStatic         // one class (shift-free), merged into the static histogram
)

// Workspace holds a search's buffers. It is not safe for concurrent use;
// use one per goroutine. The zero value is ready.
type Workspace struct {
	checker *Checker // Checker's, created on first use

	opt      Options
	mode     Mode
	p        int   // unified perimeter
	q        int   // shared circle of the periods (circle.Unified.Shared)
	grid     int   // period rounding grid, 1 if none
	n        int   // ticks of the circle searched (Exact), or 72 points (Paper)
	points   int   // |A| of the score: p in Exact mode, 72 in Paper mode
	capacity int32 //
	periods  []int // rounded periods
	jobs     []profile.Profile
	kind     []uint8   // Exact: per job, onCircle, inClasses or inStatic
	tiles    [][]int32 // Exact: demand of onCircle jobs tiled over the circle
	cls      []classes // Exact: classes of inClasses and inStatic jobs
	static   classes   // Exact: histogram of the inStatic jobs' summed demand
	order    []int     // Exact: inClasses jobs, by increasing distinct demands per class
	in       []bool    // Exact: jobs whose demand the current partial state holds
	act      []slot    // Exact: scratch, the classes active in one evaluation

	// Exact: scratch of the walk, the active classes as kernels.Residues
	// reads them and its own scratch.
	kc []kernels.Classes
	ks []int64

	pairs    []pairEntry  // scratch of merge and foldInto
	scratch  buildScratch // of classes.build
	ecost    int64        // Exact: one evaluation's cost in pair evaluations
	mu       int64        // Exact: the excess is mu times the excess summed over the circle searched
	mods     []int        // Exact: per job, the modulus its shift matters by
	twin     []int        // Exact: per free job, an earlier free job with the same profile, or -1
	hashes   []uint64     // scratch of twins
	dense    bool         // Exact: the layout is the whole unified circle
	pat      []pattern    // Exact: run patterns of the free jobs, built on use
	ents     []runEntry   // scratch of patterns
	phi0     []int64      // scratch of runLeaf
	phiv     []int64
	psi      []int64
	pre2     []int64
	cands    []int   // scratch of freeMods
	per      []int   // scratch of fold
	fail     []int32 // scratch of classes.period
	pre      []int64 // scratch of period
	spare    []classes
	pts      []int     // Paper: sample ticks
	free     []int     // free jobs in input order
	descent  bool      // tests: descend before every proof, as before descends
	ncand    []int     // candidates per job
	masses   []int64   // lower bound on each job's demand mass over the points
	rotors   [][]int32 // Exact: rotor of each free onCircle job
	bases    [][]int32 // per depth: fixed demand plus jobs placed above
	out      []int64
	tmp      []int64 // scratch of the static leaf
	sum      []int32 // scratch for evaluate and descend
	zero     []int32 // n zeros: the second operand of a one-array excess
	base0    []int32 // the fixed jobs' demand: bases[0], or a job's tile
	pcg      rand.PCG
	cur      []int // shift of every job
	best     []int
	bestCost int64
	evals    int64
	budget   int64
	stop     Status // why the search stopped early, or Optimal
	ctx      context.Context
	check    int64      // evaluation count at which to check the context next
	sub      *Workspace // unrounded scores
	watch    bool       // the setup is large enough to watch the context (late)
	layout   int        // tests: 0 chooses by cost, layoutShared or layoutDense forces one
	every    bool       // Evaluate: every entry of Problem.Fixed is a shift
}

// Layouts a test may force (Workspace.layout).
const (
	layoutShared = 1 // the shared circle, whatever the cost
	layoutDense  = 2 // the whole unified circle whenever it is within the limits
)

// Search solves pr and writes the shifts into dst (grown if needed).
// A deadline or cancellation of ctx is not an error once the search has
// its first evaluation (the shifts of the fixed frame, all free jobs at
// 0): the best shifts found so far come back with status TimeLimit. If ctx
// ends before that, while the circle is being laid out, Search fails with
// an error wrapping ErrTimeLimit.
func (w *Workspace) Search(ctx context.Context, pr Problem, opt Options, dst []int) (Result, error) {
	if err := w.setup(ctx, pr, opt); err != nil {
		return Result{}, err
	}
	k := len(pr.Jobs)
	copy(w.best, w.cur)
	unshifted := w.solve()
	res := Result{
		Excess:    w.mu * w.bestCost,
		Points:    w.points,
		Status:    w.stop,
		Circle:    circle.Unified{Perimeter: w.p, Periods: w.periods, Grid: w.grid, Shared: w.q},
		Unshifted: score(w.mu*unshifted, w.points, w.capacity),
		Evaluated: w.evals,
	}
	res.Score = score(res.Excess, w.points, w.capacity)
	res.Bound = res.Score
	if w.stop != Optimal {
		res.Bound = score(w.mu*w.rootBound(), w.points, w.capacity)
	}
	if w.grid > 1 && !w.opt.Materialize {
		res.Unrounded = w.unrounded(pr)
	}
	if cap(dst) < k {
		dst = make([]int, k)
	}
	dst = dst[:k]
	copy(dst, w.best)
	res.Shifts = dst
	return res, nil
}

// unrounded scores the best shifts of a search on rounded periods on the
// jobs' own periods: one evaluation, on a circle of its own, skipped when
// it would pass the cell limit or the budget.
func (w *Workspace) unrounded(pr Problem) Unrounded {
	if w.sub == nil {
		w.sub = new(Workspace)
	}
	s := w.sub
	s.layout = w.layout
	opt := w.opt
	opt.Circle.Round = false
	opt.Circle.MaxPerimeter = math.MaxInt // the cell limit bounds it
	if err := s.setup(w.ctx, Problem{Jobs: pr.Jobs, Capacity: pr.Capacity, Fixed: w.best}, opt); err != nil {
		return Unrounded{}
	}
	if s.mode == Exact && w.budget > 0 && s.ecost > w.budget {
		return Unrounded{}
	}
	e := s.mu * s.evaluate(s.cur)
	return Unrounded{Score: score(e, s.points, s.capacity), Excess: e, Points: s.points, Perimeter: s.p}
}

// solve runs the search set up in w, leaves the best shifts in best and
// their excess in bestCost, and returns the excess of the unshifted jobs.
func (w *Workspace) solve() int64 {
	unshifted := int64(-1)
	if len(w.free) == 1 {
		// One scan of the free job's shifts, shift 0 among them, is the
		// whole search: no incumbent needed.
		w.bestCost = math.MaxInt64
		j := w.free[0]
		if w.mode == Exact && w.budget > 0 && w.scanCost(j) > w.budget {
			w.setBase0()
			unshifted = w.strided(j)
		} else if n := w.branch(); n > 0 {
			unshifted = w.out[0]
		}
		if w.bestCost == math.MaxInt64 { // stopped before any shift
			w.bestCost = w.evaluate(w.best)
		}
	} else {
		unshifted = w.evaluate(w.cur)
		w.bestCost = unshifted
		if len(w.free) > 1 {
			if w.descends() {
				w.descend() // a strong incumbent makes the bounds prune
			}
			w.branch()
		}
	}
	if unshifted < 0 {
		unshifted = w.evaluate(w.cur)
	}
	return unshifted
}

// Evaluate returns the excess and number of points of the given shifts
// (one per job, in ticks, any integer) on pr's unified circle. pr.Fixed is
// ignored.
func (w *Workspace) Evaluate(pr Problem, opt Options, shifts []int) (excess int64, points int, err error) {
	if len(shifts) != len(pr.Jobs) {
		return 0, 0, fmt.Errorf("%w: %d shifts for %d jobs", ErrFixed, len(shifts), len(pr.Jobs))
	}
	// Every entry is a shift here, negative ones too (in Problem.Fixed a
	// negative entry means a free job).
	pr.Fixed = shifts
	w.every = true
	err = w.setup(context.Background(), pr, opt)
	w.every = false
	if err != nil {
		return 0, 0, err
	}
	return w.mu * w.evaluate(w.cur), w.points, nil
}

// resizeRows returns s as k rows of length n, each resized as
// scratch.Resize does.
func resizeRows[T any](s [][]T, k, n int) [][]T {
	s = scratch.Resize(s, k)
	for i := range s {
		s[i] = scratch.Resize(s[i], n)
	}
	return s
}

// setup validates pr and prepares every buffer.
func (w *Workspace) setup(ctx context.Context, pr Problem, opt Options) error {
	k := len(pr.Jobs)
	if k == 0 {
		return ErrNoJobs
	}
	if k > MaxJobs {
		return tooMany(k)
	}
	if pr.Capacity < 1 || pr.Capacity > kernels.MaxValue {
		return fmt.Errorf("%w: got %d", ErrCapacity, pr.Capacity)
	}
	if opt.Mode != Exact && opt.Mode != Paper {
		return fmt.Errorf("%w: mode %d", ErrInvalidOption, opt.Mode)
	}
	if pr.Fixed != nil && len(pr.Fixed) != k {
		return fmt.Errorf("%w: %d entries for %d jobs", ErrFixed, len(pr.Fixed), k)
	}
	var peaks int64
	ticks := 0
	w.periods = scratch.Resize(w.periods, k)
	for j, jb := range pr.Jobs {
		if err := jb.Validate(); err != nil {
			return fmt.Errorf("job %d: %w", j, err)
		}
		peaks += int64(jb.Peak())
		w.periods[j] = jb.Period
		ticks += jb.Period
	}
	w.watch = ticks >= WatchedTicks
	if peaks > kernels.MaxValue {
		return fmt.Errorf("%w: %d units", ErrDemandTooLarge, peaks)
	}
	co := opt.Circle
	co.MaxLCM = lcmLimit(co, peaks)
	var u circle.Unified
	var err error
	if opt.Materialize {
		u, err = circle.Unify(w.periods, w.periods, co)
		if err == nil {
			err = opt.CheckCells(k, u.Perimeter)
		}
	} else {
		u, err = circle.Reduce(w.periods, w.periods, co)
	}
	if err != nil {
		return err
	}
	w.grid = u.Grid
	w.opt, w.mode, w.capacity, w.jobs, w.ctx = opt, opt.Mode, pr.Capacity, pr.Jobs, ctx
	if err := w.prepare(u, pr.Fixed); err != nil {
		return err
	}
	if w.stop == TimeLimit {
		return ErrTimeLimit
	}
	return nil
}

// late reports whether the search's context has ended, reading the clock,
// and then records TimeLimit: what the steps of a search that its
// evaluation count does not measure (laying out the circle, building run
// patterns) check before they start. Searches of jobs of fewer than
// WatchedTicks ticks in all are not watched there (their setup costs well
// under a millisecond): they always get their first evaluation.
func (w *Workspace) late() bool {
	if w.stop == TimeLimit {
		return true
	}
	if w.watch && w.ctx != nil && deadline.Done(w.ctx) {
		w.stop = TimeLimit
		return true
	}
	return false
}

// prepare builds the search state of w.jobs on the circle u (periods
// already validated and rounded) with the given fixed shifts.
func (w *Workspace) prepare(u circle.Unified, fixed []int) error {
	k := len(w.jobs)
	w.periods, w.p, w.q = u.Periods, u.Perimeter, u.Shared
	w.evals, w.check, w.stop = 0, checkEvery, Optimal
	w.budget = w.opt.Budget
	if w.budget == 0 {
		w.budget = DefaultBudget
	}

	w.in = scratch.Resize(w.in, k)
	for j := range w.in {
		w.in[j] = true
	}
	// Free jobs and fixed shifts.
	w.cur, w.best = scratch.Resize(w.cur, k), scratch.Resize(w.best, k)
	w.free = w.free[:0]
	for j := range w.jobs {
		switch {
		case fixed == nil && j == 0:
			w.cur[j] = 0
		case fixed == nil || fixed[j] < 0 && !w.every:
			w.cur[j] = 0
			w.free = append(w.free, j)
		default:
			w.cur[j] = circle.Mod(fixed[j], w.periods[j])
		}
	}
	if fixed != nil && len(w.free) == k {
		// Nothing pins the frame: fix the first job, as above.
		w.free = w.free[1:]
	}

	// Points, per-job data and candidates.
	w.ncand = scratch.Resize(w.ncand, k)
	if w.mode == Exact {
		w.kind = scratch.Resize(w.kind, k)
		if err := w.plan(u); err != nil {
			return err
		}
		switch {
		case k == 1:
			w.ncand[0] = w.periods[0]
		case w.opt.Materialize || len(w.free) == 0:
			copy(w.ncand, w.mods)
		default:
			copy(w.ncand, w.freeMods(func(j int) int { return w.mods[j] }))
		}
		// Static jobs have one shift, 0, and their demand is in every
		// state of the search already.
		keep := w.free[:0]
		for _, j := range w.free {
			if w.kind[j] != inStatic {
				keep = append(keep, j)
			}
		}
		w.free = keep
		w.twins()
		w.resetPatterns()
	} else {
		w.n, w.points, w.mu = PaperAngles, PaperAngles, 1
		w.pts = scratch.Resize(w.pts, PaperAngles)
		for a := range w.pts {
			w.pts[a] = paperTick(a, w.p)
		}
		for j := range w.jobs {
			w.ncand[j] = w.candidates(j)
		}
	}
	// The mass bound sums free jobs only (restMass).
	if w.late() {
		return nil
	}
	w.masses = scratch.Resize(w.masses, k)
	for _, j := range w.free {
		w.masses[j] = w.minMass(j, w.jobs[j])
	}
	if w.mode == Exact {
		w.rotors = resizeRows(w.rotors, k, 0)
		for _, j := range w.free {
			if w.kind[j] == onCircle && w.ncand[j] > fewShifts {
				if w.late() {
					return nil
				}
				w.rotors[j] = kernels.PrepareRotor(w.rotors[j][:0], w.tiles[j])
			}
		}
	}
	w.bases = resizeRows(w.bases, max(len(w.free), 1), w.n)
	maxc := 0
	for _, j := range w.free {
		maxc = max(maxc, w.ncand[j])
	}
	w.out = scratch.Resize(w.out, maxc)
	w.tmp = scratch.Resize(w.tmp, maxc)
	w.sum = scratch.Resize(w.sum, w.n)
	return nil
}

// twins records, for each free job, the last earlier free job with the same
// period and demand: swapping two such jobs' shifts changes no excess, so
// the lexicographically smallest optimum delays the later one at least as
// much (a smaller shift at the earlier job would be smaller). Materialize
// keeps the search as it was.
func (w *Workspace) twins() {
	w.twin = scratch.Resize(w.twin, len(w.jobs))
	for j := range w.twin {
		w.twin[j] = -1
	}
	if w.opt.Materialize {
		return
	}
	// By a hash of period and demand, so that the free jobs are compared
	// with the earlier ones that may be their twins, not with all of them.
	w.hashes = scratch.Resize(w.hashes, len(w.jobs))
	for _, j := range w.free {
		w.hashes[j] = profileHash(w.periods[j], w.jobs[j].Demand)
	}
	for d, j := range w.free {
		for _, e := range slices.Backward(w.free[:d]) {
			a, b := w.jobs[e], w.jobs[j]
			if w.hashes[e] == w.hashes[j] && w.periods[e] == w.periods[j] && slices.Equal(a.Demand, b.Demand) {
				w.twin[j] = e
				break
			}
		}
	}
}

// profileHash is FNV-1a over a job's period and demand.
func profileHash(period int, demand []int32) uint64 {
	h := uint64(14695981039346656037)
	mix := func(x uint64) {
		h ^= x
		h *= 1099511628211
	}
	mix(uint64(period))
	for _, v := range demand {
		mix(uint64(uint32(v)))
	}
	return h
}

// from returns the first candidate free job j may take given the shifts of
// the jobs placed before it (see twins).
func (w *Workspace) from(j int) int {
	if w.mode != Exact {
		return 0
	}
	if e := w.twin[j]; e >= 0 {
		return w.cur[e]
	}
	return 0
}

// paperTick returns floor(a*p/72) without overflow.
func paperTick(a, p int) int {
	return p/PaperAngles*a + p%PaperAngles*a/PaperAngles
}
