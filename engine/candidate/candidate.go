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

// ErrInvalid reports a malformed ranking problem.
var ErrInvalid = errors.New("candidate: invalid input")

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

// Outcome is one candidate's evaluation.
type Outcome struct {
	Score  float64     // aggregate of Links' scores; 1 with no shared link
	Links  []LinkScore // shared links, by link index
	Shifts []int       // per job, in ticks
	Status link.Status // worst status of its link searches
	Err    error       // why the candidate was discarded: an *affinity.LoopError or *affinity.InconsistentError (link indices into Rank's links), or nil
}

// Ranking is the result of Rank.
type Ranking struct {
	Outcomes []Outcome // per candidate, in input order
	Order    []int     // kept candidates, best first (ties: input order)
	Best     int       // Order[0], or -1 if every candidate was discarded
	Grid     int       // period rounding grid (1: none)
	Periods  []int     // every job's period on that grid, in ticks
	Searches int       // distinct link problems solved
}

// problem is a distinct link problem: jobs and capacity.
type problem struct {
	jobs     []int
	capacity int32
	key      string
}

// Rank evaluates every candidate. jobs are the jobs' profiles, shared by all
// candidates. A deadline or cancellation of ctx is not an error: link
// searches return their best so far, and the outcomes say so in Status.
func Rank(ctx context.Context, jobs []profile.Profile, links []Link, cands []Candidate, opt Options) (Ranking, error) {
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

	// Shared links and merged graphs, per candidate.
	graphs := make([]affinity.Graph, len(cands))
	linkIndex := make([][]int, len(cands)) // candidate -> shared link -> link index
	r := Ranking{Outcomes: make([]Outcome, len(cands)), Best: -1, Grid: 1}
	var probs []problem
	index := map[string]int{}
	groupProb := make([][]int, len(cands)) // candidate -> group -> problem
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
		graphs[c], linkIndex[c] = g, shared.index
		for _, gr := range g.Groups {
			key := problemKey(gr.Jobs, gr.Capacity)
			id, ok := index[key]
			if !ok {
				id = len(probs)
				index[key] = id
				probs = append(probs, problem{gr.Jobs, gr.Capacity, key})
			}
			groupProb[c] = append(groupProb[c], id)
		}
	}
	r.Searches = len(probs)

	// One period grid for every job, so a job's period is the same on every
	// link and Algorithm 1's shifts stay consistent.
	lopt := opt.Link
	grid, err := commonGrid(jobs, probs, lopt.Circle)
	if err != nil {
		return Ranking{}, err
	}
	rounded := jobs
	if grid > 1 {
		rounded = make([]profile.Profile, len(jobs))
		for j, p := range jobs {
			rounded[j] = pad(p, (p.Period+grid-1)/grid*grid)
		}
	}
	r.Grid = grid
	r.Periods = make([]int, len(jobs))
	for j, p := range rounded {
		r.Periods[j] = p.Period
	}
	lopt.Circle.Round = false

	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	// Solve each distinct link problem once.
	optima := make([]affinity.Optimum, len(probs))
	status := make([]link.Status, len(probs))
	errs := make([]error, len(probs))
	parallel(workers, len(probs), func(w *link.Workspace, i int) {
		pr := probs[i]
		ps := make([]profile.Profile, len(pr.jobs))
		for k, j := range pr.jobs {
			ps[k] = rounded[j]
		}
		res, err := w.Search(ctx, link.Problem{Jobs: ps, Capacity: pr.capacity}, lopt, nil)
		if err != nil {
			errs[i] = fmt.Errorf("link problem (jobs %v, capacity %d): %w", pr.jobs, pr.capacity, err)
			return
		}
		optima[i] = affinity.Optimum{Shifts: res.Shifts, Excess: res.Excess}
		status[i] = res.Status
	})
	if err := errors.Join(errs...); err != nil {
		return Ranking{}, err
	}

	// Algorithm 1 per candidate.
	errs = make([]error, len(cands))
	parallel(workers, len(cands), func(w *link.Workspace, c int) {
		if r.Outcomes[c].Err != nil {
			return
		}
		g := graphs[c]
		opts := make([]affinity.Optimum, len(g.Groups))
		for i, id := range groupProb[c] {
			opts[i] = optima[id]
		}
		a, err := affinity.Assign(ctx, w, g, rounded, opts, lopt, opt.Loops)
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
	})
	if err := errors.Join(errs...); err != nil {
		return Ranking{}, err
	}

	for c, o := range r.Outcomes {
		if o.Err == nil {
			r.Order = append(r.Order, c)
		}
	}
	slices.SortStableFunc(r.Order, func(a, b int) int { return cmp.Compare(r.Outcomes[b].Score, r.Outcomes[a].Score) })
	if len(r.Order) > 0 {
		r.Best = r.Order[0]
	}
	return r, nil
}

// outcome collects a candidate's link scores, in link order.
func outcome(g affinity.Graph, a affinity.Assignment, linkIndex, probOf []int, status []link.Status, agg Aggregate) Outcome {
	o := Outcome{Shifts: a.Shifts, Score: 1, Status: link.Optimal}
	for gi, gr := range g.Groups {
		oc := a.Outcomes[gi]
		st := max(status[probOf[gi]], oc.Status)
		o.Status = max(o.Status, st)
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

func problemKey(jobs []int, capacity int32) string {
	var b strings.Builder
	for _, j := range jobs {
		b.WriteString(strconv.Itoa(j))
		b.WriteByte(',')
	}
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(int(capacity)))
	return b.String()
}

// commonGrid returns 1 if every link problem's perimeter fits the cap, else,
// when rounding is allowed, the smallest grid on which all of them fit.
func commonGrid(jobs []profile.Profile, probs []problem, co circle.Options) (int, error) {
	var periods []int
	fits := func(g int) error {
		for _, pr := range probs {
			periods = periods[:0]
			for _, j := range pr.jobs {
				periods = append(periods, (jobs[j].Period+g-1)/g*g)
			}
			if _, err := circle.Unify(periods, periods, circle.Options{MaxPerimeter: co.MaxPerimeter}); err != nil {
				return fmt.Errorf("link problem (jobs %v): %w", pr.jobs, err)
			}
		}
		return nil
	}
	err := fits(1)
	if err == nil || !co.Round {
		return 1, err
	}
	longest := 0
	for _, p := range jobs {
		longest = max(longest, p.Period)
	}
	for g := 2; g <= longest; g++ {
		if fits(g) == nil {
			return g, nil
		}
	}
	return 0, err
}

// pad extends p with idle ticks to the given period.
func pad(p profile.Profile, period int) profile.Profile {
	if period == p.Period {
		return p
	}
	d := make([]int32, period)
	copy(d, p.Demand)
	return profile.Profile{Period: period, Demand: d}
}

// parallel runs f(w, i) for i in [0, n) on up to workers goroutines, each
// with its own link workspace.
func parallel(workers, n int, f func(w *link.Workspace, i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		var w link.Workspace
		for i := range n {
			f(&w, i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w link.Workspace
			for i := range next {
				f(&w, i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
