package candidate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/orrery/orrery/engine/affinity"
	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
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
)

// Link is a network link.
type Link struct {
	Capacity int32 // in demand units
}

// Candidate is one placement: Paths[j] lists the links job j crosses
// (indices into the links), nil for a job that crosses none.
type Candidate struct {
	Paths [][]int
}

// Options configure Rank. The zero value is the paper's metric (mean),
// the Resolve loop policy, exact link search and GOMAXPROCS workers.
type Options struct {
	Link      link.Options
	Loops     affinity.Policy
	Aggregate Aggregate
	Workers   int // 0 means runtime.GOMAXPROCS(0)
}

// LinkScore is one shared link of a candidate.
type LinkScore struct {
	Link   int   // index into the links
	Jobs   []int // jobs crossing it, increasing
	Score  float64
	Excess int64 // unit-ticks over the link's unified circle (or sample points)
	Points int
	Status link.Status // of the search that set these jobs' shifts
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
	Status Status      // Discarded, or the worst status of its link searches

	// Err says why the candidate was discarded, or is nil: an
	// *affinity.LoopError or *affinity.InconsistentError (with link
	// indices into Rank's links), or an error wrapping
	// circle.ErrPerimeterTooLarge (or link.ErrTooLarge) when a shared
	// link's unified circle is past the cap and rounding is off.
	Err error
}

// Ranking is the result of Rank.
type Ranking struct {
	Outcomes []Outcome // per candidate, in input order
	Order    []int     // kept candidates, best first (ties: input order)
	Best     int       // Order[0], or -1 if every candidate was discarded
	Searches int       // distinct link problems
	Cached   int       // of which the Workspace's cache answered
}

// problem is a distinct link problem: jobs, capacity and period grid.
type problem struct {
	jobs     []int
	capacity int32
	grid     int
}

// Rank evaluates every candidate. jobs are the jobs' profiles, shared by all
// candidates. A deadline or cancellation of ctx is not an error: link
// searches return their best so far, and the outcomes say so in Status.
//
// When a candidate's shared link has a unified circle past the cap, the
// candidate is discarded, unless Options.Link.Circle.Round is set: then the
// periods of that candidate's jobs are rounded up to the smallest common
// grid on which every one of its links fits (Outcome.Grid), so each job has
// one period on every link and its shifts stay consistent.
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

	pool  sync.Pool // of *link.Workspace
	cache cache
}

// Rank is [Rank], reusing ws's link-search workspaces (and its cache).
func (ws *Workspace) Rank(ctx context.Context, jobs []profile.Profile, links []Link, cands []Candidate, opt Options) (Ranking, error) {
	for j, p := range jobs {
		if err := p.Validate(); err != nil {
			return Ranking{}, fmt.Errorf("%w: job %d: %w", ErrInvalid, j, err)
		}
	}
	for i, l := range links {
		if l.Capacity < 1 {
			return Ranking{}, fmt.Errorf("%w: link %d: capacity %d", ErrInvalid, i, l.Capacity)
		}
	}
	if len(cands) == 0 {
		return Ranking{}, fmt.Errorf("%w: no candidates", ErrInvalid)
	}
	if opt.Aggregate != Mean && opt.Aggregate != Min {
		return Ranking{}, fmt.Errorf("%w: aggregate %v", ErrInvalid, opt.Aggregate)
	}
	if opt.Loops != affinity.Resolve && opt.Loops != affinity.Paper && opt.Loops != affinity.Reoptimize {
		return Ranking{}, fmt.Errorf("%w: loop policy %v", ErrInvalid, opt.Loops)
	}

	// Shared links, merged graphs and period grids, per candidate.
	r := Ranking{Outcomes: make([]Outcome, len(cands)), Best: -1}
	graphs := make([]affinity.Graph, len(cands))
	linkIndex := make([][]int, len(cands)) // candidate -> shared link -> link index
	groupProb := make([][]int, len(cands)) // candidate -> group -> problem
	var probs []problem
	index := map[string]int{}
	for c, cand := range cands {
		shared, err := sharedLinks(len(jobs), links, cand)
		if err != nil {
			return Ranking{}, fmt.Errorf("candidate %d: %w", c, err)
		}
		g, err := affinity.Build(len(jobs), shared.links, opt.Loops)
		if err != nil {
			var le *affinity.LoopError
			if errors.As(err, &le) {
				r.Outcomes[c].Err = &affinity.LoopError{Job: le.Job, Link: shared.index[le.Link]}
				continue
			}
			return Ranking{}, fmt.Errorf("candidate %d: %w", c, err)
		}
		grid, err := gridOf(jobs, g.Groups, opt.Link)
		if err != nil {
			r.Outcomes[c].Err = err
			continue
		}
		graphs[c], linkIndex[c], r.Outcomes[c].Grid = g, shared.index, grid
		for _, gr := range g.Groups {
			key := problemKey(gr.Jobs, gr.Capacity, grid)
			id, ok := index[key]
			if !ok {
				id = len(probs)
				index[key] = id
				probs = append(probs, problem{gr.Jobs, gr.Capacity, grid})
			}
			groupProb[c] = append(groupProb[c], id)
		}
	}
	r.Searches = len(probs)

	lopt := opt.Link
	lopt.Circle.Round = false // periods are rounded here, one grid per candidate
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	// Solve each distinct link problem once.
	limit := ws.Cache
	optima := make([]affinity.Optimum, len(probs))
	status := make([]link.Status, len(probs))
	cached := make([]bool, len(probs))
	errs := make([]error, len(probs))
	perr := ws.parallel(workers, len(probs), func(w *link.Workspace, i int) {
		pr := probs[i]
		ps := make([]profile.Profile, len(pr.jobs))
		for k, j := range pr.jobs {
			ps[k] = pad(jobs[j], pr.grid)
		}
		var key uint64
		if limit > 0 {
			key = hashProblem(ps, pr.capacity, lopt)
			if e, ok := ws.cache.get(key, ps, pr.capacity, lopt); ok {
				optima[i] = affinity.Optimum{Shifts: e.shifts, Excess: e.excess}
				status[i], cached[i] = e.status, true
				return
			}
		}
		res, err := w.Search(ctx, link.Problem{Jobs: ps, Capacity: pr.capacity}, lopt, nil)
		if err != nil {
			errs[i] = fmt.Errorf("link problem (jobs %v, capacity %d): %w", pr.jobs, pr.capacity, err)
			return
		}
		optima[i] = affinity.Optimum{Shifts: res.Shifts, Excess: res.Excess}
		status[i] = res.Status
		ws.cache.put(key, limit, ps, pr.capacity, lopt, res)
	})
	if err := errors.Join(perr, errors.Join(errs...)); err != nil {
		return Ranking{}, err
	}
	for _, c := range cached {
		if c {
			r.Cached++
		}
	}

	// Algorithm 1 per candidate.
	errs = make([]error, len(cands))
	perr = ws.parallel(workers, len(cands), func(w *link.Workspace, c int) {
		if r.Outcomes[c].Err != nil {
			return
		}
		g, grid := graphs[c], r.Outcomes[c].Grid
		opts := make([]affinity.Optimum, len(g.Groups))
		for i, id := range groupProb[c] {
			opts[i] = optima[id]
		}
		ps := jobs
		if grid > 1 {
			ps = make([]profile.Profile, len(jobs))
			for j, p := range jobs {
				ps[j] = pad(p, grid)
			}
		}
		a, err := affinity.Assign(ctx, w, g, ps, opts, lopt, opt.Loops)
		if err != nil {
			var ie *affinity.InconsistentError
			if errors.As(err, &ie) {
				r.Outcomes[c].Err = &affinity.InconsistentError{Jobs: ie.Jobs, Link: linkIndex[c][ie.Link], Excess: ie.Excess, Optimum: ie.Optimum}
			} else {
				errs[c] = fmt.Errorf("candidate %d: %w", c, err)
			}
			return
		}
		r.Outcomes[c] = outcome(g, a, linkIndex[c], groupProb[c], status, opt.Aggregate)
		r.Outcomes[c].Grid = grid
	})
	if err := errors.Join(perr, errors.Join(errs...)); err != nil {
		return Ranking{}, err
	}

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
	return r, nil
}

// outcome collects a candidate's link scores, in link order.
func outcome(g affinity.Graph, a affinity.Assignment, linkIndex, probOf []int, status []link.Status, agg Aggregate) Outcome {
	o := Outcome{Shifts: a.Shifts, Score: 1, Status: Optimal}
	for gi, gr := range g.Groups {
		oc := a.Outcomes[gi]
		st := max(status[probOf[gi]], oc.Status)
		o.Status = max(o.Status, Status(st))
		for k, li := range gr.Links {
			o.Links = append(o.Links, LinkScore{Link: linkIndex[li], Jobs: gr.Jobs, Score: oc.Scores[k], Excess: oc.Excess[k], Points: oc.Points, Status: st})
		}
	}
	slices.SortFunc(o.Links, func(x, y LinkScore) int { return cmp.Compare(x.Link, y.Link) })
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

func sharedLinks(njobs int, links []Link, cand Candidate) (shared, error) {
	if len(cand.Paths) > njobs {
		return shared{}, fmt.Errorf("%w: paths for %d jobs, there are %d", ErrInvalid, len(cand.Paths), njobs)
	}
	on := make([][]int, len(links))
	for j, path := range cand.Paths {
		for k, li := range path {
			if li < 0 || li >= len(links) {
				return shared{}, fmt.Errorf("%w: job %d crosses link %d, there are %d", ErrInvalid, j, li, len(links))
			}
			if slices.Contains(path[:k], li) {
				return shared{}, fmt.Errorf("%w: job %d crosses link %d twice", ErrInvalid, j, li)
			}
			on[li] = append(on[li], j) // j increases: sorted
		}
	}
	var s shared
	for li, js := range on {
		if len(js) > 1 {
			s.links = append(s.links, affinity.Link{Jobs: js, Capacity: links[li].Capacity})
			s.index = append(s.index, li)
		}
	}
	return s, nil
}

func problemKey(jobs []int, capacity int32, grid int) string {
	var b strings.Builder
	for _, j := range jobs {
		b.WriteString(strconv.Itoa(j))
		b.WriteByte(',')
	}
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(int(capacity)))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(grid))
	return b.String()
}

// gridOf returns 1 if every group's unified circle fits the cap, else, when
// rounding is allowed, the smallest grid on which all of them fit.
func gridOf(jobs []profile.Profile, groups []affinity.Group, lo link.Options) (int, error) {
	co := lo.Circle
	var periods []int
	fits := func(g int) error {
		for _, gr := range groups {
			periods = periods[:0]
			for _, j := range gr.Jobs {
				periods = append(periods, roundUp(jobs[j].Period, g))
			}
			u, err := circle.Unify(periods, periods, circle.Options{MaxPerimeter: co.MaxPerimeter})
			if err != nil {
				return fmt.Errorf("jobs %v: %w", gr.Jobs, err)
			}
			if err := lo.CheckCells(len(periods), u.Perimeter); err != nil {
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
	// Rounding only lengthens periods: no grid fits if the longest period
	// is past the cap, and grids past the cap never fit.
	limit := co.PerimeterCap()
	if longest > limit {
		return 0, err
	}
	for g := 2; g <= longest; g++ {
		if fits(g) == nil {
			return g, nil
		}
	}
	return 0, err
}

func roundUp(t, g int) int { return (t + g - 1) / g * g }

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
