package candidate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
	"github.com/orrery/orrery/kernels"
)

// Aggregate turns a candidate's link scores into its score.
type Aggregate int

const (
	Mean Aggregate = iota // mean of the shared links' scores, as the paper (default)
	Min                   // the worst shared link's score
)

func (a Aggregate) String() string {
	switch a {
	case Mean:
		return "mean"
	case Min:
		return "min"
	}
	return fmt.Sprintf("Aggregate(%d)", int(a))
}

// ParseAggregate parses "mean" or "min"; "" is Mean.
func ParseAggregate(s string) (Aggregate, error) {
	switch s {
	case "", "mean":
		return Mean, nil
	case "min":
		return Min, nil
	}
	return 0, fmt.Errorf("%w: aggregate %q (want mean or min)", ErrInvalid, s)
}

// Sentinel errors.
var (
	ErrInvalid  = errors.New("candidate: invalid input")
	ErrInternal = errors.New("candidate: internal error") // a bug: please report it
	// ErrTimeLimit is the Err of a candidate the context's end left
	// unevaluated: Rank evaluates candidates in order, each whole, and
	// discards those it had no time to start. It is a link.ErrTimeLimit
	// too (errors.Is), as the Err of a candidate whose link search had no
	// first answer is.
	ErrTimeLimit error = lateError{}
)

// Link is a network link.
type Link struct {
	Capacity int32 // in demand units
}

// Candidate is one placement: Paths[j] lists the links job j crosses
// (indices into the links), nil for a job that crosses none.
type Candidate struct {
	Paths [][]int
	// Profiles optionally gives a job's demand link by link, where it
	// differs from its profile (an all-to-all across racks puts more on
	// the uplinks than on a server's link): Profiles[j][k] is job j's
	// demand on link Paths[j][k], a profile of job j's period. A nil
	// Profiles or Profiles[j], or a zero Profile, means the job's profile.
	Profiles [][]profile.Profile
}

// Options configure Rank. The zero value is the paper's metric (mean),
// the Resolve loop policy, exact link search, GOMAXPROCS workers and every
// job free (a full ranking).
type Options struct {
	Link      link.Options
	Loops     affinity.Policy
	Aggregate Aggregate
	Workers   int // 0 means runtime.GOMAXPROCS(0)

	// Fixed turns on incremental ranking (see Rank): one entry per job,
	// the shift in ticks the job keeps in every candidate (taken modulo its
	// period, the period rounded up to the candidate's grid where periods
	// are rounded), or -1 for a job the ranking places. A scheduler placing
	// new jobs beside running ones fixes the running ones at the shifts
	// their agents hold. It needs Exact link search and the Resolve or
	// Reoptimize policy (the two are the same here). nil: every job free.
	Fixed []int

	// Optima, with Fixed, also searches the own optimum (every job free)
	// of each shared link that needs one to say whether the fixed shifts
	// cost it score (LinkScore.Optimum and Held): the searches of the full
	// ranking, which incremental ranking otherwise skips. Without it those
	// links report Optimum -1.
	Optima bool
}

// LinkScore is one shared link of a candidate.
type LinkScore struct {
	Link   int   // index into the links
	Jobs   []int // jobs crossing it, increasing
	Score  float64
	Excess int64 // unit-ticks over the link's unified circle (or sample points)
	Points int
	Status link.Status // of the search that set these jobs' shifts

	// Incremental ranking (Options.Fixed) only, zero otherwise. Target is
	// the link's least excess with the fixed jobs held and its free jobs at
	// any shifts: Excess above it says the free jobs were held off it by
	// other links. Optimum is its own optimum with every job free, or -1
	// where not searched (Options.Optima). Held says Excess is above a known
	// Optimum: keeping the fixed shifts cost this link score.
	Target  int64
	Optimum int64
	Held    bool
}

// Status says how a candidate's evaluation ended: the worst status of its
// link searches (the same values as link.Status), or Discarded.
type Status int

const (
	Optimal   = Status(link.Optimal)   // every shared link's search was proven optimal
	Budget    = Status(link.Budget)    // a search stopped at its evaluation budget
	TimeLimit = Status(link.TimeLimit) // a search stopped when the context ended
	Discarded = TimeLimit + 1          // ruled out before scoring: Outcome.Err says why, Score is 0
)

func (s Status) String() string {
	if s == Discarded {
		return "discarded"
	}
	return link.Status(s).String()
}

// Outcome is one candidate's evaluation.
type Outcome struct {
	Score  float64     // aggregate of Links' scores; 1 with no shared link
	Links  []LinkScore // shared links, by link index
	Shifts []int       // per job, in ticks
	Grid   int         // 1, or the grid its jobs' periods were rounded up to (Options.Link.Circle.Round)
	Status Status      // Discarded, or the worst status of its link searches and its loop search

	// Err says why the candidate was discarded, or is nil: an
	// *affinity.LoopError or *affinity.InconsistentError (with link
	// indices into Rank's links), an error wrapping
	// circle.ErrPerimeterTooLarge (or link.ErrTooLarge) when a shared
	// link is past the link search's limits (link.Options.Fits) and
	// rounding is off, or one wrapping link.ErrTimeLimit when the context
	// ended before one of its link searches had a first evaluation.
	Err error
}

// Ranking is the result of Rank.
type Ranking struct {
	Outcomes []Outcome // per candidate, in input order
	Order    []int     // kept candidates, best first (ties: input order)
	Best     int       // Order[0], or -1 if every candidate was discarded
	Searches int       // distinct link problems searched (or, every job fixed, evaluated)
	Cached   int       // of which the Workspace's cache answered
	// Fit counts the distinct link problems, of Searches, whose jobs'
	// summed peaks fit the link: no shift exceeds its capacity, so they
	// are answered without a search or the cache (excess 0, every job at
	// shift 0, the lexicographically smallest optimum: what the search
	// returns for them), and proven optimal.
	Fit int
}

// problem is a distinct link problem: jobs, capacity, period grid and, in
// incremental ranking, the jobs' fixed shifts.
type problem struct {
	jobs     []int
	profiles []profile.Profile // the jobs' demands on the link; nil: their profiles
	capacity int32
	grid     int
	fixed    []int   // per job of the problem: its shift on the grid, or -1; nil: all free
	how      solving // what solve does with it
}

// solving is what solve does with a link problem.
type solving uint8

const (
	searchFree  solving = iota // search it with every job free (job 0 at 0)
	fits                       // every job free, their summed peaks within the capacity: all at shift 0, excess 0
	searchFixed                // search it with its fixed jobs held
	evaluate                   // every job fixed: evaluate their shifts
	skipped                    // one free job: affinity.AssignFixed scans it itself
)

type lateError struct{}

func (lateError) Error() string {
	return "candidate: the time limit ended before the candidate was evaluated"
}
func (lateError) Is(target error) bool { return target == link.ErrTimeLimit }

// Rank evaluates every candidate. jobs are the jobs' profiles, shared by all
// candidates. A deadline or cancellation of ctx is not an error: link
// searches return their best so far, and the outcomes say so in Status;
// the candidates it ends before are discarded with ErrTimeLimit. Each
// candidate is evaluated whole (its link problems searched, then its
// shifts assigned) before the next one starts, so that at the deadline
// the candidates done are complete: the ranking is the best so far among
// the first ones, and the call returns within about one candidate's
// evaluation of the deadline.
//
// When a candidate's shared link is past the link search's limits (its
// shared circle past the cap; link.Options.Fits), the candidate is discarded, unless Options.Link.Circle.Round is set: then the
// periods of that candidate's jobs are rounded up to the smallest common
// grid on which every one of its links fits (Outcome.Grid), so each job has
// one period on every link and its shifts stay consistent.
//
// # Incremental ranking
//
// With Options.Fixed the jobs it fixes keep their shifts in every
// candidate, and the ranking places only the others, as a scheduler places
// a new job beside running ones whose agents hold their shifts. Each
// candidate's shifts are then affinity.AssignFixed's: the free jobs' shifts
// that maximize the candidate's score with the fixed ones held (its
// Aggregate: the mean link score, or the worst and then the mean), the
// lexicographically smallest among them, scores compared exactly. No
// candidate is discarded for a loop; each shared link says what the fixed
// shifts cost it (LinkScore.Target, Optimum and Held). The link problems
// are those the fixed jobs leave: a link of fixed jobs only is evaluated,
// a link with one free job is one scan of that job's shifts, and only links
// with two or more free jobs are searched (their fixed jobs held); like
// every link problem they are solved once for all the candidates and
// remembered by the Workspace's cache.
func Rank(ctx context.Context, jobs []profile.Profile, links []Link, cands []Candidate, opt Options) (Ranking, error) {
	var rk Workspace
	return rk.Rank(ctx, jobs, links, cands, opt)
}

// Workspace is [Rank] with memory: it keeps its link-search workspaces between
// calls, so a scheduler that ranks in a loop does not reallocate the
// unified circles every time. The zero value is ready; it is safe for
// concurrent use.
type Workspace struct {
	// Cache is how many link searches the Workspace remembers across calls
	// (0: none beyond the call). A scheduler that ranks at every arrival
	// sees mostly the same links with the same jobs again; remembered
	// searches answer them at once. Results are identical either way.
	Cache int

	// searchFits searches the problems that fit their link too (tests:
	// the answer without a search must be the search's).
	searchFits bool

	pool    sync.Pool // of *link.Workspace
	scratch sync.Pool // of *crossings
	cache   cache
	plans   uint64 // plan calls: a crossings' memo of checked profiles holds for one
}

// Rank is [Rank], reusing ws's link-search workspaces (and its cache).
func (ws *Workspace) Rank(ctx context.Context, jobs []profile.Profile, links []Link, cands []Candidate, opt Options) (Ranking, error) {
	if err := validate(jobs, links, cands, opt); err != nil {
		return Ranking{}, err
	}
	r := Ranking{Outcomes: make([]Outcome, len(cands)), Best: -1}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pl, err := ws.plan(ctx, jobs, links, cands, opt, r.Outcomes, workers)
	if err != nil {
		return Ranking{}, err
	}
	for _, pr := range pl.probs {
		if pr.how != skipped {
			r.Searches++
		}
		if pr.how == fits {
			r.Fit++
		}
	}
	lopt := opt.Link
	lopt.Circle.Round = false // periods are rounded here, one grid per candidate
	sol := ws.newSolved(jobs, pl.probs, lopt)
	if err := ws.assign(ctx, pl, sol, lopt, opt, workers, r.Outcomes); err != nil {
		return Ranking{}, err
	}
	r.Cached = sol.cachedCount()
	r.order()
	return r, nil
}

// validate checks Rank's inputs.
func validate(jobs []profile.Profile, links []Link, cands []Candidate, opt Options) error {
	for j, p := range jobs {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: job %d: %w", ErrInvalid, j, err)
		}
	}
	for i, l := range links {
		if l.Capacity < 1 {
			return fmt.Errorf("%w: link %d: capacity %d", ErrInvalid, i, l.Capacity)
		}
	}
	if len(cands) == 0 {
		return fmt.Errorf("%w: no candidates", ErrInvalid)
	}
	if opt.Aggregate != Mean && opt.Aggregate != Min {
		return fmt.Errorf("%w: aggregate %v", ErrInvalid, opt.Aggregate)
	}
	if opt.Loops != affinity.Resolve && opt.Loops != affinity.Paper && opt.Loops != affinity.Reoptimize {
		return fmt.Errorf("%w: loop policy %v", ErrInvalid, opt.Loops)
	}
	if opt.Fixed != nil {
		if len(opt.Fixed) != len(jobs) {
			return fmt.Errorf("%w: %d fixed shifts for %d jobs", ErrInvalid, len(opt.Fixed), len(jobs))
		}
		for j, f := range opt.Fixed {
			if f < -1 {
				return fmt.Errorf("%w: job %d: fixed shift %d (want a shift, or -1 for a free job)", ErrInvalid, j, f)
			}
		}
		if opt.Link.Mode != link.Exact || opt.Loops == affinity.Paper {
			return fmt.Errorf("%w: incremental ranking (fixed shifts) needs Exact link search and the Resolve or Reoptimize policy, got %v and %v", ErrInvalid, opt.Link.Mode, opt.Loops)
		}
	}
	return nil
}

// planned is every candidate's merged affinity graph and the distinct link
// problems among them.
type planned struct {
	graphs    []affinity.Graph
	linkIndex [][]int // candidate -> shared link -> link index
	groupProb [][]int // candidate -> group -> problem
	ownProb   [][]int // incremental, with Optima: candidate -> group -> its problem with every job free, or -1
	probs     []problem
	next      []int // problem -> the previous problem of its hash, or -1 (add's chains)
}

// plan builds each candidate's shared links, merged graph and period grid,
// and lists the distinct link problems. A candidate ruled out here gets its
// reason in outs. Candidates are planned in parallel, then their problems
// numbered in candidate order.
func (ws *Workspace) plan(ctx context.Context, jobs []profile.Profile, links []Link, cands []Candidate, opt Options, outs []Outcome, workers int) (planned, error) {
	pl := planned{graphs: make([]affinity.Graph, len(cands)), linkIndex: make([][]int, len(cands)), groupProb: make([][]int, len(cands)), ownProb: make([][]int, len(cands))}
	peaks := make([]int32, len(jobs))
	for j, p := range jobs {
		peaks[j] = p.Peak()
	}
	probs := make([][]problem, len(cands)) // per candidate, per group
	errs := make([]error, len(cands))
	ws.plans++
	perr := ws.parallel(workers, len(cands), func(_ *link.Workspace, c int) {
		if deadline.Done(ctx) {
			outs[c].Err = ErrTimeLimit // no graph: no problem of its own
			return
		}
		x, _ := ws.scratch.Get().(*crossings)
		if x == nil {
			x = new(crossings)
		}
		defer ws.scratch.Put(x)
		if x.plan != ws.plans { // the memo holds within one call, whose inputs do not change
			x.plan = ws.plans
			clear(x.checked)
		}
		shared, err := sharedLinks(jobs, links, cands[c], x)
		if err != nil {
			errs[c] = fmt.Errorf("candidate %d: %w", c, err)
			return
		}
		g, err := affinity.Build(len(jobs), shared.links, opt.Loops)
		if err != nil {
			var le *affinity.LoopError
			if errors.As(err, &le) {
				outs[c].Err = &affinity.LoopError{Job: le.Job, Link: shared.index[le.Link]}
				return
			}
			errs[c] = fmt.Errorf("candidate %d: %w", c, err)
			return
		}
		grid, err := gridOf(jobs, peaks, g.Groups, opt.Link)
		if err != nil {
			outs[c].Err = err
			return
		}
		pl.graphs[c], pl.linkIndex[c], outs[c].Grid = g, shared.index, grid
		probs[c] = make([]problem, len(g.Groups))
		for i, gr := range g.Groups {
			pr := problem{jobs: gr.Jobs, profiles: gr.Profiles, capacity: gr.Capacity, grid: grid}
			if opt.Fixed != nil {
				pr.fixed, pr.how = fixedOf(jobs, opt.Fixed, gr.Jobs, grid)
			} else if !ws.searchFits && fitsLink(peaks, gr, opt.Link.Mode) {
				pr.how = fits
			}
			probs[c][i] = pr
		}
	})
	if perr != nil {
		return planned{}, perr
	}
	for _, err := range errs {
		if err != nil {
			return planned{}, err // the first candidate's
		}
	}
	groups := 0
	for c := range cands {
		groups += len(probs[c])
	}
	index := make(map[uint64]int, groups) // problem hash -> its last problem
	pl.probs, pl.next = make([]problem, 0, groups), make([]int, 0, groups)
	for c := range cands {
		pl.groupProb[c] = make([]int, 0, len(probs[c]))
		for _, pr := range probs[c] {
			pl.groupProb[c] = append(pl.groupProb[c], pl.add(index, pr))
			if opt.Fixed == nil || !opt.Optima {
				continue
			}
			own := -1 // with at most one fixed job the link's target is its own optimum
			if fixedCount(pr.fixed) >= 2 {
				own = pl.add(index, problem{jobs: pr.jobs, profiles: pr.profiles, capacity: pr.capacity, grid: pr.grid})
			}
			pl.ownProb[c] = append(pl.ownProb[c], own)
		}
	}
	return pl, nil
}

// add returns the index of problem pr among the distinct ones, adding it.
func (pl *planned) add(index map[uint64]int, pr problem) int {
	h := problemHash(pr)
	last, ok := index[h]
	if ok {
		for id := last; id >= 0; id = pl.next[id] {
			if sameProblem(pl.probs[id], pr) {
				return id
			}
		}
	} else {
		last = -1
	}
	id := len(pl.probs)
	index[h] = id
	pl.probs = append(pl.probs, pr)
	pl.next = append(pl.next, last)
	return id
}

// fixedOf returns the fixed shifts of the jobs on of a link problem, on
// the grid, and how the problem is solved: nil and searchFree when all are
// free.
func fixedOf(jobs []profile.Profile, fixed []int, on []int, grid int) ([]int, solving) {
	fx := make([]int, len(on))
	free := 0
	for i, j := range on {
		fx[i] = -1
		if f := fixed[j]; f >= 0 {
			fx[i] = f % roundUp(jobs[j].Period, grid)
		} else {
			free++
		}
	}
	switch free {
	case 0:
		return fx, evaluate
	case 1:
		return fx, skipped
	case len(on):
		return nil, searchFree
	}
	return fx, searchFixed
}

// fitsLink reports whether the jobs of gr fit its capacity at any shifts:
// their summed peaks (on the link: its per-link demands where it has them)
// are within it. A capacity or mode the link search would refuse is left
// to it, so that the error is the same.
func fitsLink(peaks []int32, gr affinity.Group, mode link.Mode) bool {
	if gr.Capacity > kernels.MaxValue || mode != link.Exact && mode != link.Paper {
		return false
	}
	var sum int64
	for k, j := range gr.Jobs {
		p := peaks[j]
		if gr.Profiles != nil {
			p = gr.Profiles[k].Peak()
		}
		sum += int64(p)
	}
	return sum <= int64(gr.Capacity)
}

// fixedCount returns the fixed jobs of a problem's fixed shifts.
func fixedCount(fx []int) int {
	n := 0
	for _, f := range fx {
		if f >= 0 {
			n++
		}
	}
	return n
}

// solved is every distinct link problem's own optimum, searched on
// first need (once, whichever candidate needs it first: a search is a
// pure function of its problem, so the results do not depend on which).
type solved struct {
	jobs   []profile.Profile
	probs  []problem
	lopt   link.Options
	limit  int // ws.Cache
	zeros  []int
	once   []sync.Once
	optima []affinity.Optimum
	status []link.Status
	late   []error // the search ran out of time before its first evaluation (link.ErrTimeLimit)
	errs   []error // the search failed
	cached []bool  // answered by the cache
}

func (ws *Workspace) newSolved(jobs []profile.Profile, probs []problem, lopt link.Options) *solved {
	n := len(probs)
	most := 0
	for _, pr := range probs {
		if pr.how == fits {
			most = max(most, len(pr.jobs))
		}
	}
	return &solved{jobs: jobs, probs: probs, lopt: lopt, limit: ws.Cache,
		zeros: make([]int, most), // the shifts of every fitting problem, shared: optima are read only
		once:  make([]sync.Once, n), optima: make([]affinity.Optimum, n), status: make([]link.Status, n),
		late: make([]error, n), errs: make([]error, n), cached: make([]bool, n)}
}

func (sol *solved) cachedCount() int {
	n := 0
	for _, c := range sol.cached {
		if c {
			n++
		}
	}
	return n
}

// need searches problem i unless it has been, with w, through the cache.
func (ws *Workspace) need(ctx context.Context, w *link.Workspace, sol *solved, i int) {
	sol.once[i].Do(func() {
		pr := sol.probs[i]
		switch pr.how {
		case skipped:
			return
		case fits:
			k := len(pr.jobs)
			sol.optima[i] = affinity.Optimum{Shifts: sol.zeros[:k:k]}
			sol.status[i] = link.Optimal
			return
		}
		if deadline.Done(ctx) {
			// Not even its circle laid out: a search would spend that
			// (a millisecond or more) past the deadline for nothing.
			sol.late[i] = fmt.Errorf("link problem (jobs %v, capacity %d, fixed %v): %w", pr.jobs, pr.capacity, pr.fixed, ErrTimeLimit)
			return
		}
		ps := make([]profile.Profile, len(pr.jobs))
		for k, j := range pr.jobs {
			ps[k] = sol.jobs[j]
			if pr.profiles != nil {
				ps[k] = pr.profiles[k]
			}
			ps[k] = pad(ps[k], pr.grid)
		}
		var key uint64
		if sol.limit > 0 {
			key = ws.cache.hash(ps, pr.capacity, sol.lopt, pr.fixed)
			if e, ok := ws.cache.get(key, ps, pr.capacity, sol.lopt, pr.fixed); ok {
				sol.optima[i] = affinity.Optimum{Shifts: e.shifts, Excess: e.excess}
				sol.status[i], sol.cached[i] = e.status, true
				return
			}
		}
		res, err := solveOne(ctx, w, pr, ps, sol.lopt)
		if errors.Is(err, link.ErrTimeLimit) {
			sol.late[i] = fmt.Errorf("link problem (jobs %v, capacity %d, fixed %v): %w", pr.jobs, pr.capacity, pr.fixed, err)
			return
		}
		if err != nil {
			sol.errs[i] = fmt.Errorf("link problem (jobs %v, capacity %d, fixed %v): %w", pr.jobs, pr.capacity, pr.fixed, err)
			return
		}
		sol.optima[i] = affinity.Optimum{Shifts: res.Shifts, Excess: res.Excess}
		sol.status[i] = res.Status
		ws.cache.put(key, sol.limit, ps, pr.capacity, sol.lopt, pr.fixed, res)
	})
}

// solveOne searches (or, every job fixed, evaluates) one link problem
// whose demands on the grid are ps.
func solveOne(ctx context.Context, w *link.Workspace, pr problem, ps []profile.Profile, lopt link.Options) (link.Result, error) {
	if pr.how != evaluate {
		return w.Search(ctx, link.Problem{Jobs: ps, Capacity: pr.capacity, Fixed: pr.fixed}, lopt, nil)
	}
	e, n, err := w.Evaluate(link.Problem{Jobs: ps, Capacity: pr.capacity}, lopt, pr.fixed)
	return link.Result{Shifts: slices.Clone(pr.fixed), Excess: e, Points: n}, err
}

// assign evaluates every candidate still in the running, in order and in
// parallel: it searches the candidate's link problems not searched yet,
// then runs Algorithm 1 on it, and writes its outcome. A candidate not
// started when ctx ends is discarded with ErrTimeLimit. A link problem
// that fails fails the ranking (the first such problem's error, in
// problem order, as when every problem was searched first).
func (ws *Workspace) assign(ctx context.Context, pl planned, sol *solved, lopt link.Options, opt Options, workers int, outs []Outcome) error {
	jobs := sol.jobs
	errs := make([]error, len(outs))
	perr := ws.parallel(workers, len(outs), func(w *link.Workspace, c int) {
		if outs[c].Err != nil {
			return
		}
		if deadline.Done(ctx) {
			outs[c].Err = ErrTimeLimit
			return
		}
		for _, id := range pl.groupProb[c] {
			ws.need(ctx, w, sol, id)
		}
		for _, id := range pl.ownProb[c] {
			if id >= 0 {
				ws.need(ctx, w, sol, id)
			}
		}
		for _, id := range pl.groupProb[c] {
			if sol.errs[id] != nil {
				return // the ranking fails
			}
			if err := sol.late[id]; err != nil {
				outs[c].Err = err // no optimum to start from: discarded, as the time limit left it
				return
			}
		}
		for _, id := range pl.ownProb[c] {
			if id >= 0 && sol.errs[id] != nil {
				return
			}
		}
		g, grid := pl.graphs[c], outs[c].Grid
		if opt.Fixed == nil && pl.allFit(c) {
			outs[c] = fitted(jobs, g, grid, pl.linkIndex[c], lopt.Mode)
			return
		}
		opts := make([]affinity.Optimum, len(g.Groups))
		for i, id := range pl.groupProb[c] {
			opts[i] = sol.optima[id]
		}
		ps := jobs
		if grid > 1 {
			ps, g = padGraph(jobs, g, grid)
		}
		var a affinity.Assignment
		var err error
		if opt.Fixed != nil {
			a, err = assignFixed(ctx, w, g, ps, pl, sol, c, lopt, opt)
			if errors.Is(err, affinity.ErrScale) {
				outs[c].Err = err
				return
			}
		} else {
			a, err = affinity.Assign(ctx, w, g, ps, opts, lopt, opt.Loops)
		}
		if err != nil {
			var ie *affinity.InconsistentError
			if errors.As(err, &ie) {
				e := *ie
				e.Link = pl.linkIndex[c][ie.Link]
				outs[c].Err = &e
			} else if errors.Is(err, link.ErrTimeLimit) {
				outs[c].Err = err
			} else {
				errs[c] = fmt.Errorf("candidate %d: %w", c, err)
			}
			return
		}
		outs[c] = outcome(g, a, pl.linkIndex[c], pl.groupProb[c], sol.status, opt.Aggregate)
		outs[c].Grid = grid
	})
	if err := errors.Join(perr, errors.Join(sol.errs...)); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// allFit reports whether every shared link of candidate c fits (its
// problem's how is fits).
func (pl *planned) allFit(c int) bool {
	for _, id := range pl.groupProb[c] {
		if pl.probs[id].how != fits {
			return false
		}
	}
	return true
}

// fitted is the outcome of a candidate whose every shared link fits: no
// shift exceeds any of them, so Algorithm 1's walk from the links' optima
// (every job at 0) leaves every job at 0, no group constrains another, and
// every link scores 1 with excess 0 over its unified circle (or its 72
// sample points): what affinity.Assign returns for it, without the walk.
func fitted(jobs []profile.Profile, g affinity.Graph, grid int, linkIndex []int, mode link.Mode) Outcome {
	o := Outcome{Shifts: make([]int, len(jobs)), Score: 1, Status: Optimal, Grid: grid}
	if len(g.Links) > 0 {
		o.Links = make([]LinkScore, len(g.Links))
	}
	for _, gr := range g.Groups {
		points := link.PaperAngles
		if mode == link.Exact {
			points = 1
			for _, j := range gr.Jobs {
				t := roundUp(jobs[j].Period, grid)
				points = points / circle.GCD(points, t) * t
			}
		}
		for _, li := range gr.Links {
			o.Links[li] = LinkScore{Link: linkIndex[li], Jobs: gr.Jobs, Score: 1, Points: points, Status: link.Optimal}
		}
	}
	return o
}

// assignFixed runs affinity.AssignFixed on candidate c, handing it the
// link problems solved for every candidate.
func assignFixed(ctx context.Context, w *link.Workspace, g affinity.Graph, ps []profile.Profile, pl planned, sol *solved, c int, lopt link.Options, opt Options) (affinity.Assignment, error) {
	f := affinity.Fixed{Shifts: opt.Fixed, Best: make([]affinity.Optimum, len(g.Groups)), Optima: opt.Optima}
	if opt.Aggregate == Min {
		f.Objective = affinity.WorstScore
	}
	for i, id := range pl.groupProb[c] {
		if pl.probs[id].how != skipped {
			f.Best[i] = sol.optima[id]
		}
	}
	if opt.Optima {
		f.Own = make([]affinity.Optimum, len(g.Groups))
		for i, id := range pl.ownProb[c] {
			if id >= 0 {
				f.Own[i] = sol.optima[id]
			}
		}
	}
	return affinity.AssignFixed(ctx, w, g, ps, f, lopt)
}

// order marks discarded candidates and sorts the rest, best first (ties:
// input order).
func (r *Ranking) order() {
	for c := range r.Outcomes {
		o := &r.Outcomes[c]
		if o.Err != nil {
			o.Status, o.Score = Discarded, 0
			continue
		}
		r.Order = append(r.Order, c)
	}
	slices.SortStableFunc(r.Order, func(a, b int) int { return cmp.Compare(r.Outcomes[b].Score, r.Outcomes[a].Score) })
	if len(r.Order) > 0 {
		r.Best = r.Order[0]
	}
}

// outcome collects a candidate's link scores, in link order: the shared
// links are in link order (sharedLinks), and each is a member of one group.
func outcome(g affinity.Graph, a affinity.Assignment, linkIndex, probOf []int, status []link.Status, agg Aggregate) Outcome {
	o := Outcome{Shifts: a.Shifts, Score: 1, Status: Status(a.Status)}
	if len(g.Links) > 0 {
		o.Links = make([]LinkScore, len(g.Links))
	}
	for gi, gr := range g.Groups {
		oc := a.Outcomes[gi]
		st := max(status[probOf[gi]], oc.Status)
		o.Status = max(o.Status, Status(st))
		for k, li := range gr.Links {
			ls := LinkScore{Link: linkIndex[li], Jobs: gr.Jobs, Score: oc.Scores[k], Excess: oc.Excess[k], Points: oc.Points, Status: st}
			if oc.Target != nil {
				ls.Target, ls.Optimum = oc.Target[k], oc.Optimum[k]
				ls.Held = ls.Optimum >= 0 && ls.Excess > ls.Optimum
			}
			o.Links[li] = ls
		}
	}
	if len(o.Links) > 0 {
		var sum float64
		worst := o.Links[0].Score
		for _, l := range o.Links {
			sum += l.Score
			worst = min(worst, l.Score)
		}
		o.Score = sum / float64(len(o.Links))
		if agg == Min {
			o.Score = worst
		}
	}
	return o
}

// shared is a candidate's links that carry two or more jobs.
type shared struct {
	links []affinity.Link
	index []int // shared link -> link index
}

// crossings is sharedLinks' scratch, reused from candidate to candidate.
type crossings struct {
	start []int32 // link -> its first entry (links' entries are laid out in link order)
	fill  []int32 // link -> its next entry to fill
	own   []bool  // link -> some job's demand there is not its own profile

	// checked memoizes, for one plan call, the per-link profiles already
	// validated and compared with their job's own: candidates of one
	// ranking usually share most of them (the running jobs' demands), and
	// validating each one in every candidate was most of a ranking's time
	// in the cluster simulation.
	checked map[demandKey]checkedDemand
	plan    uint64 // the plan call checked is for
}

// demandKey names a demand by its storage: the same slice of the same
// array (Validate reads nothing else of a profile but its period).
type demandKey struct {
	first  *int32
	n      int
	period int
}

// checkedDemand is a validated per-link demand and whether it equals own,
// its job's profile's demand (named as a demandKey).
type checkedDemand struct {
	own  demandKey
	same bool
}

func keyOf(p profile.Profile) demandKey {
	if len(p.Demand) == 0 {
		return demandKey{period: p.Period}
	}
	return demandKey{&p.Demand[0], len(p.Demand), p.Period}
}

// check validates the per-link demand d of a job whose own profile is own
// and reports whether their demands are equal, once per plan call for each
// demand's storage.
func (x *crossings) check(d, own profile.Profile) (same bool, err error) {
	k, ok := keyOf(d), keyOf(own)
	if c, hit := x.checked[k]; hit && k.first != nil {
		if c.own == ok {
			return c.same, nil
		}
		same = slices.Equal(d.Demand, own.Demand)
		x.checked[k] = checkedDemand{ok, same}
		return same, nil
	}
	if err := d.Validate(); err != nil {
		return false, err
	}
	same = slices.Equal(d.Demand, own.Demand)
	if k.first != nil {
		if x.checked == nil {
			x.checked = map[demandKey]checkedDemand{}
		}
		x.checked[k] = checkedDemand{ok, same}
	}
	return same, nil
}

// sharedLinks lists cand's shared links. Every path entry is visited twice,
// once to count the jobs per link and once to lay them out, so a candidate
// costs its paths' length whatever the number of links.
func sharedLinks(jobs []profile.Profile, links []Link, cand Candidate, x *crossings) (shared, error) {
	njobs := len(jobs)
	if len(cand.Paths) > njobs {
		return shared{}, fmt.Errorf("%w: paths for %d jobs, there are %d", ErrInvalid, len(cand.Paths), njobs)
	}
	if len(cand.Profiles) > len(cand.Paths) {
		return shared{}, fmt.Errorf("%w: per-link profiles for %d jobs, paths for %d", ErrInvalid, len(cand.Profiles), len(cand.Paths))
	}
	x.start = scratch.Resize(x.start, len(links)+1)
	clear(x.start)
	total := 0
	for j, path := range cand.Paths {
		var per []profile.Profile
		if j < len(cand.Profiles) && cand.Profiles[j] != nil {
			per = cand.Profiles[j]
			if len(per) != len(path) {
				return shared{}, fmt.Errorf("%w: job %d: %d per-link profiles for %d links", ErrInvalid, j, len(per), len(path))
			}
		}
		for k, li := range path {
			if li < 0 || li >= len(links) {
				return shared{}, fmt.Errorf("%w: job %d crosses link %d, there are %d", ErrInvalid, j, li, len(links))
			}
			if per != nil && per[k].Period != 0 {
				if per[k].Period != jobs[j].Period {
					return shared{}, fmt.Errorf("%w: job %d: its profile on link %d has period %d, its own %d", ErrInvalid, j, li, per[k].Period, jobs[j].Period)
				}
				if _, err := x.check(per[k], jobs[j]); err != nil {
					return shared{}, fmt.Errorf("%w: job %d: its profile on link %d: %w", ErrInvalid, j, li, err)
				}
			}
			x.start[li+1]++
		}
		total += len(path)
	}
	for li := range links {
		x.start[li+1] += x.start[li]
	}
	// One array per candidate: its graph keeps the links' job lists.
	on := make([]int, total)
	custom := cand.Profiles != nil
	var dem []profile.Profile
	if custom {
		dem = make([]profile.Profile, total)
		x.own = scratch.Resize(x.own, len(links))
		clear(x.own)
	}
	x.fill = scratch.Resize(x.fill, len(links))
	copy(x.fill, x.start)
	for j, path := range cand.Paths {
		var per []profile.Profile
		if custom && j < len(cand.Profiles) {
			per = cand.Profiles[j]
		}
		for k, li := range path {
			at := x.fill[li]
			if at > x.start[li] && on[at-1] == j {
				return shared{}, fmt.Errorf("%w: job %d crosses link %d twice", ErrInvalid, j, li)
			}
			on[at] = j // j increases: sorted
			if custom {
				d := jobs[j]
				if per != nil && per[k].Period != 0 {
					d = per[k]
					same, _ := x.check(d, jobs[j]) // validated in the first pass: a memo hit
					x.own[li] = x.own[li] || !same
				}
				dem[at] = d
			}
			x.fill[li]++
		}
	}
	n := 0
	for li := range links {
		if x.start[li+1]-x.start[li] >= 2 {
			n++
		}
	}
	s := shared{links: make([]affinity.Link, 0, n), index: make([]int, 0, n)}
	for li := range links {
		from, to := x.start[li], x.start[li+1]
		if to-from >= 2 {
			l := affinity.Link{Jobs: on[from:to:to], Capacity: links[li].Capacity}
			if custom && x.own[li] {
				l.Profiles = dem[from:to:to]
			}
			s.links = append(s.links, l)
			s.index = append(s.index, li)
		}
	}
	return s, nil
}

// problemHash hashes a link problem's jobs, fixed shifts, per-link
// demands, capacity and grid: the index of add, whose chains compare the
// problems themselves, so a collision costs a comparison, never a merge.
func problemHash(pr problem) uint64 {
	h := uint64(len(pr.jobs))
	mix := func(v uint64) { h = (h ^ v) * 0x9e3779b97f4a7c15; h ^= h >> 29 }
	for _, j := range pr.jobs {
		mix(uint64(j))
	}
	if pr.fixed != nil {
		mix(1)
		for _, f := range pr.fixed {
			mix(uint64(f))
		}
	}
	if pr.profiles != nil {
		mix(2)
		for _, p := range pr.profiles {
			for _, d := range p.Demand {
				mix(uint64(uint32(d)))
			}
		}
	}
	mix(uint64(uint32(pr.capacity)))
	mix(uint64(pr.grid))
	return h
}

// sameProblem reports whether a and b are the same link problem: the same
// jobs with the same fixed shifts and demands (both given per link or both
// not), capacity and grid.
func sameProblem(a, b problem) bool {
	if a.capacity != b.capacity || a.grid != b.grid || !slices.Equal(a.jobs, b.jobs) ||
		(a.fixed == nil) != (b.fixed == nil) || !slices.Equal(a.fixed, b.fixed) || (a.profiles == nil) != (b.profiles == nil) {
		return false
	}
	for k := range a.profiles {
		if !slices.Equal(a.profiles[k].Demand, b.profiles[k].Demand) {
			return false
		}
	}
	return true
}

// gridOf returns 1 if every group fits a link search without rounding
// (link.Options.Fits), else, when rounding is allowed, the smallest grid on
// which all of them fit.
func gridOf(jobs []profile.Profile, peaks []int32, groups []affinity.Group, lo link.Options) (int, error) {
	co := lo.Circle
	var periods []int
	fits := func(g int) error {
		for _, gr := range groups {
			periods = periods[:0]
			var peak int64
			for _, j := range gr.Jobs {
				periods = append(periods, roundUp(jobs[j].Period, g))
				peak += int64(peaks[j])
			}
			if err := lo.Fits(periods, peak); err != nil {
				return fmt.Errorf("jobs %v: %w", gr.Jobs, err)
			}
		}
		return nil
	}
	err := fits(1)
	if err == nil || !co.Round {
		return 1, err
	}
	longest := 0
	for _, gr := range groups {
		for _, j := range gr.Jobs {
			longest = max(longest, jobs[j].Period)
		}
	}
	// A group's jobs (two or more) share at least the grid, so grids past
	// the cap never fit; at the longest period all periods are one.
	for g := 2; g <= min(longest, co.PerimeterCap()); g++ {
		if fits(g) == nil {
			return g, nil
		}
	}
	return 0, err
}

func roundUp(t, g int) int { return (t + g - 1) / g * g }

// padGraph pads the jobs' profiles, and the links' and groups' per-link
// demands, to the grid.
func padGraph(jobs []profile.Profile, g affinity.Graph, grid int) ([]profile.Profile, affinity.Graph) {
	ps := make([]profile.Profile, len(jobs))
	for j, p := range jobs {
		ps[j] = pad(p, grid)
	}
	padAll := func(in []profile.Profile) []profile.Profile {
		if in == nil {
			return nil
		}
		out := make([]profile.Profile, len(in))
		for k, p := range in {
			out[k] = pad(p, grid)
		}
		return out
	}
	g.Groups = slices.Clone(g.Groups)
	for i, gr := range g.Groups {
		g.Groups[i].Profiles = padAll(gr.Profiles)
	}
	g.Links = slices.Clone(g.Links)
	for i, l := range g.Links {
		g.Links[i].Profiles = padAll(l.Profiles)
	}
	return ps, g
}

// pad extends p with idle ticks to a whole multiple of grid.
func pad(p profile.Profile, grid int) profile.Profile {
	period := roundUp(p.Period, grid)
	if period == p.Period {
		return p
	}
	d := make([]int32, period)
	copy(d, p.Demand)
	return profile.Profile{Period: period, Demand: d}
}

// parallel runs f(w, i) for i in [0, n) on up to workers goroutines, each
// with a link workspace from the pool. A panic in f (a bug) comes back as an
// error instead of killing the process from a goroutine no caller can
// recover in.
func (ws *Workspace) parallel(workers, n int, f func(w *link.Workspace, i int)) (err error) {
	get := func() *link.Workspace {
		if w, ok := ws.pool.Get().(*link.Workspace); ok {
			return w
		}
		return new(link.Workspace)
	}
	var mu sync.Mutex
	run := func(w *link.Workspace, i int) {
		defer func() {
			if p := recover(); p != nil {
				mu.Lock()
				err = errors.Join(err, fmt.Errorf("%w: panic in task %d: %v", ErrInternal, i, p))
				mu.Unlock()
			}
		}()
		f(w, i)
	}
	workers = min(workers, n)
	if workers <= 1 {
		w := get()
		for i := range n {
			run(w, i)
		}
		ws.pool.Put(w)
		return err
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := get()
			for i := range next {
				run(w, i)
			}
			ws.pool.Put(w)
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return err
}
