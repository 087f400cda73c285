package affinity

import (
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// Objective is what [AssignFixed] maximizes over the free jobs' shifts.
type Objective int

const (
	MeanScore  Objective = iota // the mean of the member links' scores (default)
	WorstScore                  // the worst member link's score, then the mean
)

func (o Objective) String() string {
	switch o {
	case MeanScore:
		return "mean"
	case WorstScore:
		return "worst"
	}
	return fmt.Sprintf("Objective(%d)", int(o))
}

// Fixed says which jobs keep their shifts in [AssignFixed], and hands it what
// its caller knows of the groups already (a ranker solves each distinct link
// problem once for all its candidates). Only Shifts is required.
type Fixed struct {
	// Shifts has one entry per job: the shift in ticks the job keeps (taken
	// modulo its period), or -1 for a free job.
	Shifts []int

	// Best optionally gives, per group, its best at its smallest capacity
	// with its fixed jobs held: the link search of its jobs with
	// link.Problem.Fixed set from Shifts (Optimum.Shifts of every job of
	// the group, the fixed ones at their shifts), or, for a group whose
	// jobs are all fixed, their excess there (Shifts the fixed shifts). A
	// nil Best, or an entry with nil Shifts, is searched here. Groups with a
	// single free job are scanned here whatever Best says.
	Best []Optimum

	// Own optionally gives, per group, its own optimum at its smallest
	// capacity with every job free (Assign's opt); entries with nil Shifts
	// are unknown.
	Own []Optimum

	// Optima searches the own optimum (every job free) of each link that
	// needs one to say whether the fixed shifts cost it score: its group
	// holds two or more fixed jobs, its excess at the final shifts is above
	// zero, and Own does not give it. Without Optima those links report
	// Outcome.Optimum -1: these are the searches of a full re-ranking,
	// which holding the fixed jobs exists to skip.
	Optima bool

	Objective Objective
}

// AssignFixed is Algorithm 1 for a graph some of whose jobs keep the shifts
// they have: the incremental placement of new jobs beside running ones that
// must not move. jobs and w are as for [Assign]; lopt must be Exact mode.
//
// # Semantics
//
// The fixed jobs keep their shifts (f.Shifts, modulo each period). The
// free jobs' shifts maximize the score of the graph's member links given
// the fixed ones: with MeanScore the mean over every member link of
// 1 - excess/(points*capacity), its score at its own capacity on its
// unified circle; with WorstScore the worst link's score and, among the
// shift vectors that tie on it, the mean. Among the maximizers the
// lexicographically smallest vector of free shifts wins (jobs in index
// order, each shift in [0, T_j)); a free job that no link constrains gets
// shift 0. Scores are compared exactly, as fractions over a common
// denominator in 128-bit integers: the result is exact and deterministic.
// (A graph whose links' points times capacities have no common multiple
// within 64 bits is refused with an error wrapping link.ErrTooLarge.)
//
// A link's Target (Outcome.Target) is the least excess it can have with the
// fixed jobs held and its free jobs at any shifts: its own optimum when it
// holds at most one fixed job (a common delay of its jobs changes nothing),
// possibly more with two or more. When some shift vector puts every link at
// its Target, the maximizers are exactly those vectors, for either
// objective; otherwise the links left above it trade score, and the best
// trade wins. No placement is rejected: the loop policies of [Assign] do
// not apply. Outcome.Optimum is each link's own optimum with every job
// free, where known (see Fixed.Optima): Excess above it is what holding the
// fixed jobs cost the link.
//
// # Algorithm
//
// Algorithm 1's walk starts at the fixed jobs, which it never moves:
// reaching a group from job j places each of its free jobs k not yet
// placed at t_k = t_j - w(j,l) + w(l,k), the weights being the group's best
// shifts with its fixed jobs held (so a free job reached from a fixed one
// takes its shift in that optimum); free jobs no fixed job reaches are
// walked from their lowest job, at shift 0. The walk's shifts are the
// search's first incumbent. Each link capacity its jobs' summed peaks
// exceed is a term of the objective: a term of fixed jobs only is a
// constant; one of a single free job is one scan of that job's shifts with
// the others held; one of several free jobs joins them into a connected
// component. Each component is solved by depth-first branch and bound over
// its jobs' shift classes (a shift matters only modulo the number of
// classes its links tell apart), jobs in index order, classes upward, the
// bound being the exact part of the terms already decided plus, for each
// job left, its cheapest class given the jobs placed, plus the Target of
// each term with two or more jobs left. It runs first with the bound at
// the root as the incumbent (the search for a vector that puts every term
// at its bound: the consistent case), then, if none exists, with the
// walk's. WorstScore solves every component for its least worst term
// first, then each for the mean under the worst of them all. A component
// whose links involve no fixed job holds its first job at 0 (a common
// delay changes none of its links, and the lexicographically smallest
// maximizer starts at 0).
//
// The search spends at most lopt.Budget units of Assignment.Evaluated
// (link.DefaultBudget when 0, no limit when negative) and watches ctx; when
// it stops first the best shifts found come back, with that status in the
// Assignment and the Outcomes of the groups concerned.
func AssignFixed(ctx context.Context, w *link.Workspace, g Graph, jobs []profile.Profile, f Fixed, lopt link.Options) (Assignment, error) {
	if err := validateFixed(g, jobs, f, lopt); err != nil {
		return Assignment{}, err
	}
	lopt.Circle.Round = false
	h := newHolder(ctx, w, g, jobs, f, lopt)
	if err := h.setup(); err != nil {
		return Assignment{}, err
	}
	h.walkFixed()
	if err := h.scale(); err != nil {
		return Assignment{}, err
	}
	h.solveAll()
	if err := h.score(); err != nil {
		return Assignment{}, err
	}
	return Assignment{Shifts: h.shift, Outcomes: h.outs, Status: h.status, Evaluated: h.effort.work + h.extra}, nil
}

// validateFixed checks AssignFixed's inputs.
func validateFixed(g Graph, jobs []profile.Profile, f Fixed, lopt link.Options) error {
	if lopt.Mode != link.Exact {
		return fmt.Errorf("%w: fixed shifts need Exact link mode, got %v", ErrInvalid, lopt.Mode)
	}
	if f.Objective != MeanScore && f.Objective != WorstScore {
		return fmt.Errorf("%w: objective %v", ErrInvalid, f.Objective)
	}
	if len(f.Shifts) != g.Jobs {
		return fmt.Errorf("%w: %d fixed shifts for %d jobs", ErrInvalid, len(f.Shifts), g.Jobs)
	}
	for j, s := range f.Shifts {
		if s < -1 {
			return fmt.Errorf("%w: job %d: fixed shift %d (want a shift, or -1 for a free job)", ErrInvalid, j, s)
		}
	}
	for _, opts := range [][]Optimum{f.Best, f.Own} {
		if opts != nil && len(opts) != len(g.Groups) {
			return fmt.Errorf("%w: %d optima for %d groups", ErrInvalid, len(opts), len(g.Groups))
		}
	}
	for gi, gr := range g.Groups {
		for _, known := range [][]Optimum{f.Best, f.Own} {
			if known != nil && known[gi].Shifts != nil && len(known[gi].Shifts) != len(gr.Jobs) {
				return fmt.Errorf("%w: group %d has %d jobs, its optimum %d shifts", ErrInvalid, gi, len(gr.Jobs), len(known[gi].Shifts))
			}
		}
	}
	return validateGraph(g, jobs)
}

// holder is one AssignFixed call's state.
type holder struct {
	*assigner
	f       Fixed
	fixed   []bool  // per job
	base    []int   // per job: its fixed shift within its period, 0 if free
	nfixed  []int   // per group: its fixed jobs
	terms   []hterm // group by group, each group's by increasing capacity
	termsAt []int   // group gi's terms are terms[termsAt[gi]:termsAt[gi+1]]
	hs      [][]int // per group: the shifts of its jobs the walk places by
	vars    []hvar  // free jobs in some term, increasing
	varOf   []int   // per job: index into vars, or -1

	constSum, constMax u128 // the terms of fixed jobs only
}

// hterm is one link capacity of a group that its jobs' summed peaks exceed:
// a term of the objective.
type hterm struct {
	group    int
	capacity int32
	weight   uint64 // member links at this capacity
	free     []int  // positions in the group's jobs of its free jobs
	target   int64  // least excess with the fixed jobs held
	value    int64  // fixed jobs only: the excess
	points   int
	status   link.Status
	mult     uint64 // the common denominator over points*capacity

	scan []int64 // one free job: its excess at each candidate shift, the others held

	chk  *link.Checker // two or more free jobs
	mods []int         // two or more free jobs: per position, the candidate shifts
}

// hvar is a free job in some term: its shift classes, the terms of two or
// more free jobs it is in, and its cost per class from the terms where it is
// the only free job.
type hvar struct {
	job   int
	mod   int
	terms []int
	sum   []u128
	max   []u128
}

func newHolder(ctx context.Context, w *link.Workspace, g Graph, jobs []profile.Profile, f Fixed, lopt link.Options) *holder {
	h := &holder{assigner: newAssigner(ctx, w, g, jobs, nil, lopt), f: f,
		fixed: make([]bool, g.Jobs), base: make([]int, g.Jobs), nfixed: make([]int, len(g.Groups)),
		termsAt: make([]int, len(g.Groups)+1), hs: make([][]int, len(g.Groups)), varOf: make([]int, g.Jobs)}
	for j, s := range f.Shifts {
		h.varOf[j] = -1
		if s >= 0 {
			h.fixed[j], h.base[j] = true, circle.Mod(s, jobs[j].Period)
		}
	}
	for gi, gr := range g.Groups {
		for _, j := range gr.Jobs {
			if h.fixed[j] {
				h.nfixed[gi]++
			}
		}
	}
	return h
}

// known returns opts[gi] if it is given.
func known(opts []Optimum, gi int) (Optimum, bool) {
	if opts == nil || opts[gi].Shifts == nil {
		return Optimum{}, false
	}
	return opts[gi], true
}

// setup lists every group's terms with their targets, and the free jobs in
// them. A group of fixed jobs only whose excess the caller knows costs no
// pass over its jobs' demands: its smallest capacity is a term if that
// excess is above zero, and each larger capacity one while its excess is.
func (h *holder) setup() error {
	peak := make([]int32, h.g.Jobs) // 0: not computed yet
	h.peaks = make([]int64, len(h.g.Groups))
	var caps []int32
	for gi, gr := range h.g.Groups {
		caps = caps[:0]
		for _, li := range gr.Links {
			caps = append(caps, h.g.Links[li].Capacity)
		}
		slices.Sort(caps)
		var free []int
		for i, j := range gr.Jobs {
			if !h.fixed[j] {
				free = append(free, i)
			}
		}
		b, known := known(h.f.Best, gi)
		constant := len(free) == 0 && known
		if !constant {
			h.peaks[gi] = h.groupPeak(gi, peak)
		}
		if len(free) > 0 {
			h.hs[gi] = slices.Clone(h.gather(h.base, gr.Jobs))
		}
		for k := 0; k < len(caps); {
			c, n := caps[k], 0
			for ; k < len(caps) && caps[k] == c; k++ {
				n++
			}
			first := len(h.terms) == h.termsAt[gi]
			if !constant && h.peaks[gi] <= int64(c) || constant && first && b.Excess == 0 {
				break // never exceeded, nor at larger capacities
			}
			t := hterm{group: gi, capacity: c, weight: uint64(n), free: free, points: points(h.jobs, gr.Jobs, link.Exact)}
			if err := h.target(&t, first); err != nil {
				return err
			}
			if constant && t.value == 0 {
				break // nor at larger capacities
			}
			h.terms = append(h.terms, t)
		}
		h.termsAt[gi+1] = len(h.terms)
	}
	return h.listVars()
}

// groupPeak returns group gi's jobs' summed peak demands there, computing
// the jobs' peaks (in peak, 0 until then) as needed.
func (h *holder) groupPeak(gi int, peak []int32) int64 {
	gr := h.g.Groups[gi]
	var sum int64
	for i, j := range gr.Jobs {
		if gr.Profiles != nil {
			sum += int64(gr.Profiles[i].Peak())
			continue
		}
		if peak[j] == 0 {
			peak[j] = max(h.jobs[j].Peak(), 0) // an idle job's 0 is recomputed: cheap enough
		}
		sum += int64(peak[j])
	}
	return sum
}

// target sets t's target (and its constant, scan or checker), and, for the
// group's smallest capacity (first), the shifts the walk places its jobs by.
func (h *holder) target(t *hterm, first bool) error {
	gi, c := t.group, t.capacity
	gr := h.g.Groups[gi]
	switch len(t.free) {
	case 0:
		if b, ok := known(h.f.Best, gi); ok && first {
			t.value = b.Excess
		} else {
			e, err := h.evaluate(gi, c, h.base)
			if err != nil {
				return err
			}
			t.value = e
		}
		t.target = t.value
	case 1:
		if err := h.reset(h.chk, gi, c); err != nil {
			return err
		}
		before := h.chk.Evaluated()
		t.scan = slices.Clone(h.chk.Scan(nil, h.gather(h.base, gr.Jobs), t.free[0]))
		h.effort.work += h.chk.Evaluated() - before
		t.target = slices.Min(t.scan)
		if first {
			h.hs[gi][t.free[0]] = slices.Index(t.scan, t.target)
		}
	default:
		b, ok := known(h.f.Best, gi)
		if !ok || !first {
			res, err := h.searchHeld(gi, c)
			if err != nil {
				return err
			}
			b, t.status = Optimum{Shifts: slices.Clone(res.Shifts), Excess: res.Excess}, res.Status
		}
		t.target = b.Excess
		if first {
			copy(h.hs[gi], b.Shifts)
		}
		t.chk = new(link.Checker)
		if err := h.reset(t.chk, gi, c); err != nil {
			return err
		}
		t.mods = make([]int, len(gr.Jobs))
		for i := range t.mods {
			t.mods[i] = t.chk.Candidates(i)
		}
	}
	return nil
}

// searchHeld searches group gi at capacity c with its fixed jobs held.
func (h *holder) searchHeld(gi int, c int32) (link.Result, error) {
	gr := h.g.Groups[gi]
	h.demands(gi)
	fixed := make([]int, len(gr.Jobs))
	for i, j := range gr.Jobs {
		fixed[i] = -1
		if h.fixed[j] {
			fixed[i] = h.base[j]
		}
	}
	res, err := h.w.Search(h.effort.ctx, link.Problem{Jobs: h.ps, Capacity: c, Fixed: fixed}, h.lopt, nil)
	if err != nil {
		return link.Result{}, fmt.Errorf("affinity: link of jobs %v at capacity %d, fixed %v: %w", gr.Jobs, c, fixed, err)
	}
	h.extra += res.Evaluated
	return res, nil
}

// listVars numbers the free jobs of the terms, in job order, with their
// shift classes: the least common multiple of the candidate shifts of each
// of their terms.
func (h *holder) listVars() error {
	for _, t := range h.terms {
		for _, i := range t.free {
			h.varOf[h.g.Groups[t.group].Jobs[i]] = -2 // numbered below
		}
	}
	for j, v := range h.varOf {
		if v == -2 {
			h.varOf[j] = len(h.vars)
			h.vars = append(h.vars, hvar{job: j, mod: 1})
		}
	}
	for ti, t := range h.terms {
		for _, i := range t.free {
			v := &h.vars[h.varOf[h.g.Groups[t.group].Jobs[i]]]
			m := len(t.scan)
			if t.chk != nil {
				m = t.mods[i]
				v.terms = append(v.terms, ti)
			}
			v.mod = v.mod / circle.GCD(v.mod, m) * m
		}
	}
	return nil
}

// walkFixed is Algorithm 1's walk from the fixed jobs, which it never
// moves, by each group's shifts with its fixed jobs held; free jobs no fixed
// job reaches are walked from their lowest job, at 0. It sets walked and
// shift (the fixed shifts, the free jobs' walk shifts) and each group's
// Constrained.
func (h *holder) walkFixed() {
	placed := make([]bool, h.g.Jobs)
	done := make([]bool, len(h.g.Groups))
	copy(h.walked, h.base)
	queue := make([]int, 0, h.g.Jobs)
	for j := range h.g.Jobs {
		if h.fixed[j] && len(h.byJob[j]) > 0 {
			placed[j] = true
			queue = append(queue, j)
		}
	}
	held := func(gi int) []int { return h.hs[gi] }
	queue = h.spread(queue, 0, placed, done, held)
	for root := range h.g.Jobs {
		if placed[root] || len(h.byJob[root]) == 0 {
			continue
		}
		placed[root], h.walked[root] = true, 0
		queue = append(queue, root)
		queue = h.spread(queue, len(queue)-1, placed, done, held)
	}
	h.order = queue
	h.shift = slices.Clone(h.walked)
}

// score sets every member link's excess, score, target and own optimum at
// the final shifts.
func (h *holder) score() error {
	links := 0
	for _, gr := range h.g.Groups {
		links += len(gr.Links)
	}
	ints, scores := make([]int64, 3*links), make([]float64, links)
	for gi, gr := range h.g.Groups {
		oc := &h.outs[gi]
		n := len(gr.Links)
		oc.Excess, oc.Target, oc.Optimum = ints[:0:n], ints[n:n:2*n], ints[2*n:2*n:3*n]
		oc.Scores = scores[:0:n]
		ints, scores = ints[3*n:], scores[n:]
		oc.Points = points(h.jobs, gr.Jobs, link.Exact)
		terms := h.terms[h.termsAt[gi]:h.termsAt[gi+1]]
		last, e, tg, own := int32(-1), int64(0), int64(0), int64(0)
		for _, li := range gr.Links {
			c := h.g.Links[li].Capacity
			if c != last {
				last, e, tg, own = c, 0, 0, 0
				if k := slices.IndexFunc(terms, func(t hterm) bool { return t.capacity == c }); k >= 0 {
					t := &terms[k]
					var err error
					if e, err = h.termValue(t, h.shift); err != nil {
						return err
					}
					tg = t.target
					if own, err = h.own(t, e, k == 0); err != nil {
						return err
					}
					oc.Status = max(oc.Status, t.status)
				}
			}
			oc.Excess = append(oc.Excess, e)
			oc.Scores = append(oc.Scores, 1-float64(e)/(float64(oc.Points)*float64(c)))
			oc.Target = append(oc.Target, tg)
			oc.Optimum = append(oc.Optimum, own)
		}
		h.status = max(h.status, oc.Status)
	}
	return nil
}

// termValue returns t's excess at the shifts s (per job).
func (h *holder) termValue(t *hterm, s []int) (int64, error) {
	gr := h.g.Groups[t.group]
	switch {
	case len(t.free) == 0:
		return t.value, nil
	case t.scan != nil:
		return t.scan[s[gr.Jobs[t.free[0]]]%len(t.scan)], nil
	}
	before := t.chk.Evaluated()
	e := t.chk.Excess(h.gather(s, gr.Jobs))
	h.extra += t.chk.Evaluated() - before
	return e, nil
}

// own returns term t's own optimum with every job free, -1 if unknown,
// given its excess e at the final shifts.
func (h *holder) own(t *hterm, e int64, first bool) (int64, error) {
	switch {
	case e == 0:
		return 0, nil
	case h.nfixed[t.group] <= 1:
		return t.target, nil // a common delay of the group's jobs changes nothing
	}
	if o, ok := known(h.f.Own, t.group); ok && first {
		return o.Excess, nil
	}
	if !h.f.Optima {
		return -1, nil
	}
	h.demands(t.group)
	res, err := h.w.Search(h.effort.ctx, link.Problem{Jobs: h.ps, Capacity: t.capacity}, h.lopt, nil)
	if err != nil {
		return 0, fmt.Errorf("affinity: link of jobs %v at capacity %d: %w", h.g.Groups[t.group].Jobs, t.capacity, err)
	}
	h.extra += res.Evaluated
	if res.Status != link.Optimal {
		return -1, nil // not proven: unknown
	}
	return res.Excess, nil
}
