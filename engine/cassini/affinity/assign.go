package affinity

import (
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// Optimum is a group's own optimization: the shifts of its jobs (in the
// group's job order) and their excess at the group's capacity.
type Optimum struct {
	Shifts []int
	Excess int64
}

// Outcome is what a group's links score under the final job shifts.
type Outcome struct {
	Excess      []int64 // per member link (in Group.Links order), at the final shifts
	Scores      []float64
	Points      int
	Constrained bool        // the group closes a cycle of Algorithm 1's walk: two or more of its jobs were placed when the walk reached it
	Degraded    bool        // the final shifts do not keep the group at its own optimum (Reoptimize only)
	Status      link.Status // Optimal, or why a search behind these shifts stopped early

	// AssignFixed only, per member link: the least excess it can have
	// with the fixed jobs held (its free jobs at any shifts), and its own
	// optimum with every job free, -1 where not searched (Fixed.Optima).
	Target  []int64
	Optimum []int64
}

// Assignment is the result of Algorithm 1.
type Assignment struct {
	Shifts   []int     // per job, in ticks; 0 for jobs outside the graph
	Outcomes []Outcome // per group

	// Status is Optimal, or why the search for a consistent assignment
	// stopped before deciding (Reoptimize only: the groups it left
	// Degraded say so in their Status too).
	Status link.Status

	// Evaluated is the work spent after the walk: pair evaluations (one
	// job's demand added at one point) of the links checked, searched and
	// scored, plus one for every shift the consistency search tried or
	// filtered.
	Evaluated int64
}

// Assign runs Algorithm 1 over g and settles its cycles. jobs holds every
// job's profile (already on a common period grid: lopt.Circle.Round does
// not apply), opt each group's own optimum, found with lopt; w is scratch
// space for the few link searches Assign runs itself.
//
// # Consistency
//
// A link is at its own optimum when its excess at the final shifts is the
// excess of its own optimization (in Paper mode, when its jobs' shifts are
// one of its optimal 5-degree rotations plus a common offset, modulo each
// job's period: Theorem 1's Eq. 6; the sampled excess of such shifts is
// what Outcome reports, and may differ from the optimum's). An assignment
// is consistent when every group is at its own optimum at its smallest
// capacity, the one optimized. Groups whose jobs' summed peaks fit that
// capacity never exceed it at any shift, so they constrain nothing.
//
// The walk of Algorithm 1 gives every job the shift its first group's
// optimum implies. If that assignment is consistent it is the answer: on a
// loop-free graph it always is (Theorem 1), and then it is exactly the
// paper's. Otherwise each connected set of constraining groups is searched
// for a consistent assignment, exactly, over every shift of every job
// (one per class of shifts that none of its groups can tell apart), by
// depth-first search with forward checking: jobs in the walk's order, the
// first job's shift held (a common shift changes no group), each job's
// shifts tried from its walk shift upward in ticks. The first consistent
// assignment in that order wins, so results are deterministic. (Jobs left
// to place that no group with two of them unplaced joins are independent
// parts, each searched on its own: the same first assignment, found
// without retrying one part's shifts for every shift of another.)
//
// Member links above their group's smallest capacity are held to their own
// optimum too where some consistent assignment allows it: each connected
// set is searched first with them and, if that fails, without.
//
// A connected set with no consistent assignment is re-optimized group by
// group around the jobs already placed, as the walk reaches them: under
// Resolve and Paper the placement is then rejected with an
// *InconsistentError naming the first group that loses score; under
// Reoptimize it is kept with those groups Degraded. The search spends at
// most lopt.Budget units of Assignment.Evaluated (DefaultBudget when 0, no
// limit when negative) and watches ctx; when it stops first, that status is
// in the error or the Assignment.
//
// Every member link's reported excess and score are recomputed from the
// final shifts on its own unified circle (or its 72 sample points).
func Assign(ctx context.Context, w *link.Workspace, g Graph, jobs []profile.Profile, opt []Optimum, lopt link.Options, policy Policy) (Assignment, error) {
	if err := validate(g, jobs, opt); err != nil {
		return Assignment{}, err
	}
	lopt.Circle.Round = false
	a := newAssigner(ctx, w, g, jobs, opt, lopt)
	a.walk()
	if err := a.constrain(); err != nil {
		return Assignment{}, err
	}
	for _, comp := range a.components() {
		if err := a.settle(comp, policy); err != nil {
			return Assignment{}, err
		}
	}
	if err := a.score(); err != nil {
		return Assignment{}, err
	}
	return Assignment{Shifts: a.shift, Outcomes: a.outs, Status: a.status, Evaluated: a.effort.work + a.extra}, nil
}

// validate checks that opt and jobs match g.
func validate(g Graph, jobs []profile.Profile, opt []Optimum) error {
	if len(opt) != len(g.Groups) {
		return fmt.Errorf("%w: %d profiles and %d optima for %d jobs and %d groups", ErrInvalid, len(jobs), len(opt), g.Jobs, len(g.Groups))
	}
	for gi, gr := range g.Groups {
		if len(opt[gi].Shifts) != len(gr.Jobs) {
			return fmt.Errorf("%w: group %d has %d jobs, its optimum %d shifts", ErrInvalid, gi, len(gr.Jobs), len(opt[gi].Shifts))
		}
	}
	return validateGraph(g, jobs)
}

// validateGraph checks that jobs and g's groups and links match.
func validateGraph(g Graph, jobs []profile.Profile) error {
	if len(jobs) != g.Jobs {
		return fmt.Errorf("%w: %d profiles for %d jobs", ErrInvalid, len(jobs), g.Jobs)
	}
	for j, p := range jobs {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: job %d: %w", ErrInvalid, j, err)
		}
	}
	for gi, gr := range g.Groups {
		for i, j := range gr.Jobs {
			if j < 0 || j >= g.Jobs {
				return fmt.Errorf("%w: group %d: job %d of %d", ErrInvalid, gi, j, g.Jobs)
			}
			if gr.Profiles == nil {
				continue
			}
			if i >= len(gr.Profiles) {
				return fmt.Errorf("%w: group %d: %d profiles for %d jobs", ErrInvalid, gi, len(gr.Profiles), len(gr.Jobs))
			}
			if p := gr.Profiles[i]; p.Period != jobs[j].Period || p.Validate() != nil {
				return fmt.Errorf("%w: group %d: job %d's demand on its links is not a valid profile of its period %d", ErrInvalid, gi, j, jobs[j].Period)
			}
		}
		if len(gr.Links) == 0 {
			return fmt.Errorf("%w: group %d has no links", ErrInvalid, gi)
		}
		for _, li := range gr.Links {
			if li < 0 || li >= len(g.Links) {
				return fmt.Errorf("%w: group %d: link %d of %d", ErrInvalid, gi, li, len(g.Links))
			}
			if l := g.Links[li]; l.Capacity < gr.Capacity || !slices.Equal(l.Jobs, gr.Jobs) || !sameDemand(l.Profiles, gr.Profiles) {
				return fmt.Errorf("%w: group %d (jobs %v, capacity %d): member link %d carries jobs %v at capacity %d", ErrInvalid, gi, gr.Jobs, gr.Capacity, li, l.Jobs, l.Capacity)
			}
		}
	}
	return nil
}

// assigner is one Assign call's state.
type assigner struct {
	w      *link.Workspace
	g      Graph
	jobs   []profile.Profile
	opt    []Optimum
	lopt   link.Options
	byJob  [][]int // each job's groups, in group order
	order  []int   // jobs in the order the walk reaches them
	walked []int   // Algorithm 1's shift of each job
	shift  []int   // the final shift of each job
	outs   []Outcome

	cons    []constraint // group by group, each group's by capacity
	consAt  []int        // group gi's constraints are cons[consAt[gi]:consAt[gi+1]]
	moved   []bool       // per group: its jobs' final shifts may not be the walk's
	peaks   []int64      // per group: its jobs' summed peak demands
	effort  effort
	extra   int64 // work outside the budget: link searches, scoring
	status  link.Status
	chk     *link.Checker // scratch: the workspace's (link.Workspace.Checker), its buffers reused from call to call
	scratch []int
	ps      []profile.Profile
	sh, rot []int
}

func newAssigner(ctx context.Context, w *link.Workspace, g Graph, jobs []profile.Profile, opt []Optimum, lopt link.Options) *assigner {
	a := &assigner{w: w, g: g, jobs: jobs, opt: opt, lopt: lopt, chk: w.Checker(),
		byJob:  make([][]int, g.Jobs),
		walked: make([]int, g.Jobs),
		outs:   make([]Outcome, len(g.Groups)),
		moved:  make([]bool, len(g.Groups)),
		effort: newEffort(ctx, lopt.Budget),
	}
	// Each job's groups, sliced out of one array.
	n := make([]int, g.Jobs+1)
	for _, gr := range g.Groups {
		for _, j := range gr.Jobs {
			n[j+1]++
		}
	}
	for j := range g.Jobs {
		n[j+1] += n[j]
	}
	flat := make([]int, n[g.Jobs])
	for j := range a.byJob {
		a.byJob[j] = flat[n[j]:n[j]:n[j+1]]
	}
	for gi, gr := range g.Groups {
		for _, j := range gr.Jobs {
			a.byJob[j] = append(a.byJob[j], gi)
		}
	}
	return a
}

// walk is Algorithm 1's breadth-first walk: each connected component from
// its lowest job (shift 0); reaching a group from job j places each of its
// jobs k not yet placed at t_k = (t_j - w(j,l) + w(l,k)) mod T_k (line 17),
// with w the group's own optimum.
func (a *assigner) walk() {
	placed := make([]bool, a.g.Jobs)
	done := make([]bool, len(a.g.Groups))
	own := func(gi int) []int { return a.opt[gi].Shifts }
	for root := range a.g.Jobs {
		if placed[root] || len(a.byJob[root]) == 0 {
			continue
		}
		placed[root] = true
		a.order = append(a.order, root)
		a.order = a.spread(a.order, len(a.order)-1, placed, done, own)
	}
	a.shift = slices.Clone(a.walked)
}

// spread continues the walk over queue from its entry q: reaching group gi
// from job j places each of its jobs k not yet placed at t_k = (t_j -
// w(j,l) + w(l,k)) mod T_k, w the group's shifts(gi), and queues k; a group
// that meets a placed job other than j is Constrained. It returns the
// grown queue.
func (a *assigner) spread(queue []int, q int, placed, done []bool, shifts func(gi int) []int) []int {
	for ; q < len(queue); q++ {
		j := queue[q]
		for _, gi := range a.byJob[j] {
			if done[gi] {
				continue
			}
			done[gi] = true
			gr, o := a.g.Groups[gi], shifts(gi)
			pos := slices.Index(gr.Jobs, j)
			for i, k := range gr.Jobs {
				if placed[k] {
					a.outs[gi].Constrained = a.outs[gi].Constrained || k != j
					continue
				}
				a.walked[k] = circle.Mod(a.walked[j]-o[pos]+o[i], a.jobs[k].Period)
				placed[k] = true
				queue = append(queue, k)
			}
		}
	}
	return queue
}

// settle fixes the final shifts of one connected set of constraining
// groups (comp: its jobs in walk order, its constraints).
func (a *assigner) settle(comp component, policy Policy) error {
	strict := comp.cons
	if a.allHold(strict) {
		return nil // the walk's shifts
	}
	weak := comp.weak()
	for _, i := range comp.cons {
		a.moved[a.cons[i].group] = true
	}
	if len(strict) > len(weak) {
		if ok, err := a.search(comp.jobs, strict); ok || err != nil {
			return err
		}
	}
	if a.allHold(weak) {
		return nil
	}
	if ok, err := a.search(comp.jobs, weak); ok || err != nil {
		return err
	}
	return a.fallback(comp, policy)
}

// allHold reports whether every constraint in cs holds at the walk's
// shifts.
func (a *assigner) allHold(cs []int) bool {
	for _, c := range cs {
		if !a.cons[c].walkOK {
			return false
		}
	}
	return true
}

// score sets every member link's excess at the final shifts. It is
// evaluated unless known: 0 where the jobs' summed peaks fit, and in Exact
// mode the group's own optimum where the walk placed the group by it (its
// jobs moved by whole periods of their own), or the excess the walk's check
// found.
func (a *assigner) score() error {
	links := 0
	for _, gr := range a.g.Groups {
		links += len(gr.Links)
	}
	excess, scores := make([]int64, 0, links), make([]float64, 0, links)
	for gi, gr := range a.g.Groups {
		oc := &a.outs[gi]
		oc.Excess, oc.Scores = excess[len(excess):len(excess):len(excess)+len(gr.Links)], scores[len(scores):len(scores):len(scores)+len(gr.Links)]
		excess, scores = excess[:len(excess)+len(gr.Links)], scores[:len(scores)+len(gr.Links)]
		oc.Points = points(a.jobs, gr.Jobs, a.lopt.Mode)
		peaks := a.peaks[gi]
		last, e := int32(-1), int64(0)
		for _, li := range gr.Links {
			c := a.g.Links[li].Capacity
			if c != last {
				last = c
				var err error
				if e, err = a.excessAt(gi, c, peaks); err != nil {
					return err
				}
			}
			oc.Excess = append(oc.Excess, e)
			oc.Scores = append(oc.Scores, 1-float64(e)/(float64(oc.Points)*float64(c)))
		}
	}
	return nil
}

// excessAt returns group gi's excess at capacity c at the final shifts.
func (a *assigner) excessAt(gi int, c int32, peaks int64) (int64, error) {
	if peaks <= int64(c) {
		return 0, nil
	}
	if a.lopt.Mode == link.Exact && !a.moved[gi] {
		if c == a.g.Groups[gi].Capacity && !a.outs[gi].Constrained {
			return a.opt[gi].Excess, nil
		}
		for _, k := range a.cons[a.consAt[gi]:a.consAt[gi+1]] {
			if k.capacity == c && k.walked >= 0 {
				return k.walked, nil
			}
		}
	}
	return a.evaluate(gi, c, a.shift)
}

// demands loads a.ps with the demands of group gi's jobs on its links.
func (a *assigner) demands(gi int) {
	gr := a.g.Groups[gi]
	a.ps = a.ps[:0]
	for i, j := range gr.Jobs {
		a.ps = append(a.ps, gr.profile(i, a.jobs[j]))
	}
}

// evaluate returns the excess at capacity c of group gi's jobs at the shifts
// t (indexed by job, each in [0, T_j)). Exact mode evaluates with the link
// workspace, whose buffers outlive the call: a check per cycle and per
// scored link allocates nothing in steady state.
func (a *assigner) evaluate(gi int, c int32, t []int) (int64, error) {
	on := a.g.Groups[gi].Jobs
	a.demands(gi)
	sh := a.gather(t, on)
	if a.lopt.Mode == link.Exact {
		e, n, err := a.w.Evaluate(link.Problem{Jobs: a.ps, Capacity: c}, a.lopt, sh)
		if err != nil {
			return 0, fmt.Errorf("affinity: link of jobs %v: %w", on, err)
		}
		a.effort.work += int64(len(on)) * int64(n)
		return e, nil
	}
	if err := a.chk.Reset(link.Problem{Jobs: a.ps, Capacity: c}, a.lopt); err != nil {
		return 0, fmt.Errorf("affinity: link of jobs %v: %w", on, err)
	}
	e := a.chk.Excess(sh)
	a.effort.work += a.chk.Evaluated()
	return e, nil
}

// reset prepares chk for group gi's link at capacity c.
func (a *assigner) reset(chk *link.Checker, gi int, c int32) error {
	a.demands(gi)
	if err := chk.Reset(link.Problem{Jobs: a.ps, Capacity: c}, a.lopt); err != nil {
		return fmt.Errorf("affinity: link of jobs %v: %w", a.g.Groups[gi].Jobs, err)
	}
	return nil
}

// gather returns the shifts of the jobs on (in a reused buffer).
func (a *assigner) gather(t []int, on []int) []int {
	a.scratch = a.scratch[:0]
	for _, j := range on {
		a.scratch = append(a.scratch, t[j])
	}
	return a.scratch
}

// points returns |A| of a link carrying jobs: its unified perimeter in Exact
// mode, 72 in Paper mode. The jobs' periods are known to unify.
func points(jobs []profile.Profile, on []int, mode link.Mode) int {
	if mode == link.Paper {
		return link.PaperAngles
	}
	p := 1
	for _, j := range on {
		p = p / circle.GCD(p, jobs[j].Period) * jobs[j].Period
	}
	return p
}
