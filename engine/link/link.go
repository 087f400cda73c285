package link

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/profile"
	"github.com/orrery/orrery/internal/kernels"
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

// Defaults of the zero Options.
const (
	DefaultBudget   = 1 << 26 // pair evaluations (one job's demand added at one point)
	DefaultRestarts = 4
	DefaultMaxCells = 1 << 23 // jobs x perimeter: 128 MiB of search state
)

// Options configure a search. The zero value is Exact mode, the default
// perimeter cap, DefaultBudget and DefaultRestarts.
type Options struct {
	Mode   Mode
	Circle circle.Options // perimeter cap and opt-in period rounding

	// Budget is the number of pair evaluations the search may spend. While
	// the exhaustive cost is within it the search runs branch and bound
	// directly; past it, coordinate descent runs first and the proof stops
	// when the budget is spent. 0 means DefaultBudget; negative, no limit
	// (the context still applies).
	Budget int64

	Restarts int    // coordinate-descent starts (the first is unshifted); 0 means DefaultRestarts
	Seed     uint64 // seed of the restarts' random starting shifts

	// MaxCells bounds jobs x perimeter in Exact mode: the search holds
	// about four int32 per job and tick of the unified circle, so this is
	// what bounds its memory (16 bytes a cell). 0 means DefaultMaxCells.
	MaxCells int
}

// CheckCells returns an ErrTooLarge error when an Exact search of jobs jobs
// on a unified circle of perimeter ticks would pass the cell limit.
func (o Options) CheckCells(jobs, perimeter int) error {
	if cells := int64(jobs) * int64(perimeter); o.Mode == Exact && cells > int64(o.CellLimit()) {
		return fmt.Errorf("%w: %d jobs on a %d-tick circle are %d cells, more than %d (use coarser ticks, round periods, or raise MaxCells)",
			ErrTooLarge, jobs, perimeter, cells, o.CellLimit())
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

// Sentinel errors.
var (
	ErrNoJobs         = errors.New("link: no jobs")
	ErrCapacity       = errors.New("link: capacity must be in [1, kernels.MaxValue] units")
	ErrDemandTooLarge = errors.New("link: summed peak demand exceeds kernels.MaxValue units")
	ErrFixed          = errors.New("link: fixed shifts do not match the jobs")
	ErrInvalidOption  = errors.New("link: invalid option")
	ErrTooLarge       = errors.New("link: jobs x perimeter exceeds the cell limit")
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
	Points    int     // |A|: the perimeter in Exact mode, 72 in Paper mode
	Shifts    []int   // one per job, in ticks, in [0, period)
	Status    Status
	Circle    circle.Unified
	Evaluated int64 // pair evaluations spent
}

// score converts an excess to a score.
func score(excess int64, points int, capacity int32) float64 {
	return 1 - float64(excess)/(float64(points)*float64(capacity))
}

// Workspace holds a search's buffers. It is not safe for concurrent use;
// use one per goroutine. The zero value is ready.
type Workspace struct {
	opt      Options
	mode     Mode
	p        int   // perimeter
	grid     int   // period rounding grid, 1 if none
	n        int   // points
	capacity int32 //
	periods  []int // rounded periods
	jobs     []profile.Profile
	tiles    [][]int32 // Exact: demand tiled over the circle
	pts      []int     // Paper: sample ticks
	free     []int     // free jobs in input order
	ncand    []int     // candidates per job
	masses   []int64   // lower bound on each job's demand mass over the points
	rotors   [][]int32 // Exact: rotor of each free job
	bases    [][]int32 // per depth: fixed demand plus jobs placed above
	out      []int64
	sum      []int32 // scratch for evaluate and descend
	base0    []int32 // the fixed jobs' demand: bases[0], or a job's tile
	pcg      rand.PCG
	cur      []int // shift of every job
	best     []int
	bestCost int64
	evals    int64
	budget   int64
	stop     Status // why the search stopped early, or Optimal
	ctx      context.Context
	check    int64 // evaluation count at which to check the context next
}

// Search solves pr and writes the shifts into dst (grown if needed).
// A deadline or cancellation of ctx is not an error: the best shifts found
// so far come back with status TimeLimit.
func (w *Workspace) Search(ctx context.Context, pr Problem, opt Options, dst []int) (Result, error) {
	if err := w.setup(ctx, pr, opt); err != nil {
		return Result{}, err
	}
	k := len(pr.Jobs)
	copy(w.best, w.cur)
	unshifted := int64(-1)
	if len(w.free) == 1 {
		// One scan of the free job's shifts, shift 0 among them, is the
		// whole search: no incumbent needed.
		w.bestCost = math.MaxInt64
		j := w.free[0]
		if w.mode == Exact && w.budget > 0 && int64(w.n)*int64(w.ncand[j]) > w.budget {
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
			w.descend() // a strong incumbent makes the bounds prune
			w.branch()
		}
	}
	if unshifted < 0 {
		unshifted = w.evaluate(w.cur)
	}
	res := Result{
		Excess:    w.bestCost,
		Points:    w.n,
		Status:    w.stop,
		Circle:    circle.Unified{Perimeter: w.p, Periods: w.periods, Grid: w.grid},
		Evaluated: w.evals,
		Unshifted: score(unshifted, w.n, w.capacity),
		Score:     score(w.bestCost, w.n, w.capacity),
	}
	res.Bound = res.Score
	if w.stop != Optimal {
		res.Bound = score(w.rootBound(), w.n, w.capacity)
	}
	if cap(dst) < k {
		dst = make([]int, k)
	}
	dst = dst[:k]
	copy(dst, w.best)
	res.Shifts = dst
	return res, nil
}

// Evaluate returns the excess and number of points of the given shifts
// (one per job, in ticks, any integer) on pr's unified circle. pr.Fixed is
// ignored.
func (w *Workspace) Evaluate(pr Problem, opt Options, shifts []int) (excess int64, points int, err error) {
	if len(shifts) != len(pr.Jobs) {
		return 0, 0, fmt.Errorf("%w: %d shifts for %d jobs", ErrFixed, len(shifts), len(pr.Jobs))
	}
	pr.Fixed = shifts
	if err := w.setup(context.Background(), pr, opt); err != nil {
		return 0, 0, err
	}
	return w.evaluate(w.cur), w.n, nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func grow2[T any](s [][]T, k, n int) [][]T {
	if cap(s) < k {
		s = append(s[:cap(s)], make([][]T, k-cap(s))...)
	}
	s = s[:k]
	for i := range s {
		s[i] = grow(s[i], n)
	}
	return s
}

// setup validates pr and prepares every buffer.
func (w *Workspace) setup(ctx context.Context, pr Problem, opt Options) error {
	k := len(pr.Jobs)
	if k == 0 {
		return ErrNoJobs
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
	w.periods = grow(w.periods, k)
	for j, jb := range pr.Jobs {
		if err := jb.Validate(); err != nil {
			return fmt.Errorf("job %d: %w", j, err)
		}
		peaks += int64(jb.Peak())
		w.periods[j] = jb.Period
	}
	if peaks > kernels.MaxValue {
		return fmt.Errorf("%w: %d units", ErrDemandTooLarge, peaks)
	}
	u, err := circle.Unify(w.periods, w.periods, opt.Circle)
	if err != nil {
		return err
	}
	w.periods, w.p, w.grid = u.Periods, u.Perimeter, u.Grid
	if err := opt.CheckCells(k, w.p); err != nil {
		return err
	}
	w.opt, w.mode, w.capacity, w.jobs, w.ctx = opt, opt.Mode, pr.Capacity, pr.Jobs, ctx
	w.evals, w.check, w.stop = 0, checkEvery, Optimal
	w.budget = opt.Budget
	if w.budget == 0 {
		w.budget = DefaultBudget
	}

	// Points and per-job data.
	if w.mode == Exact {
		w.n = w.p
		w.tiles = grow2(w.tiles, k, w.p)
		for j, jb := range pr.Jobs {
			w.tiles[j] = circle.Tile(w.tiles[j], jb.Demand, w.periods[j], w.p)
		}
	} else {
		w.n = PaperAngles
		w.pts = grow(w.pts, PaperAngles)
		for a := range w.pts {
			w.pts[a] = int(int64(a) * int64(w.p) / PaperAngles)
		}
	}

	// Free jobs, fixed shifts, candidate counts.
	w.cur, w.best = grow(w.cur, k), grow(w.best, k)
	w.free = w.free[:0]
	for j := range pr.Jobs {
		switch {
		case pr.Fixed == nil && j == 0:
			w.cur[j] = 0
		case pr.Fixed == nil || pr.Fixed[j] < 0:
			w.cur[j] = 0
			w.free = append(w.free, j)
		default:
			w.cur[j] = circle.Mod(pr.Fixed[j], w.periods[j])
		}
	}
	if pr.Fixed != nil && len(w.free) == k {
		// Nothing pins the frame: fix the first job, as above.
		w.free = w.free[1:]
	}
	w.ncand = grow(w.ncand, k)
	for j := range pr.Jobs {
		w.ncand[j] = w.candidates(j)
	}
	w.masses = grow(w.masses, k)
	for j, jb := range pr.Jobs {
		w.masses[j] = w.minMass(j, jb)
	}
	if w.mode == Exact {
		w.rotors = grow2(w.rotors, k, 0)
		for _, j := range w.free {
			if w.ncand[j] > fewShifts {
				w.rotors[j] = kernels.PrepareRotor(w.rotors[j][:0], w.tiles[j])
			}
		}
	}
	w.bases = grow2(w.bases, max(len(w.free), 1), w.n)
	maxc := 0
	for _, j := range w.free {
		maxc = max(maxc, w.ncand[j])
	}
	w.out = grow(w.out, maxc)
	w.sum = grow(w.sum, w.n)
	return nil
}
