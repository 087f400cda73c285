package affinity

import (
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
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
// assignment in that order wins, so results are deterministic.
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
	if len(jobs) != g.Jobs || len(opt) != len(g.Groups) {
		return fmt.Errorf("%w: %d profiles and %d optima for %d jobs and %d groups", ErrInvalid, len(jobs), len(opt), g.Jobs, len(g.Groups))
	}
	for j, p := range jobs {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: job %d: %w", ErrInvalid, j, err)
		}
	}
	for gi, gr := range g.Groups {
		if len(opt[gi].Shifts) != len(gr.Jobs) {
			return fmt.Errorf("%w: group %d has %d jobs, its optimum %d shifts", ErrInvalid, gi, len(gr.Jobs), len(opt[gi].Shifts))
		}
		for _, j := range gr.Jobs {
			if j < 0 || j >= g.Jobs {
				return fmt.Errorf("%w: group %d: job %d of %d", ErrInvalid, gi, j, g.Jobs)
			}
		}
		if len(gr.Links) == 0 {
			return fmt.Errorf("%w: group %d has no links", ErrInvalid, gi)
		}
		for _, li := range gr.Links {
			if li < 0 || li >= len(g.Links) {
				return fmt.Errorf("%w: group %d: link %d of %d", ErrInvalid, gi, li, len(g.Links))
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

	cons    []*constraint
	consOf  [][]int // per group: indices into cons, its smallest capacity first
	holds1  []bool  // per constraint: holds at the walk's shifts
	effort  effort
	extra   int64 // work outside the budget: link searches, scoring
	status  link.Status
	chk     link.Checker // scratch
	scratch []int
	ps      []profile.Profile
	sh, rot []int
}

func newAssigner(ctx context.Context, w *link.Workspace, g Graph, jobs []profile.Profile, opt []Optimum, lopt link.Options) *assigner {
	a := &assigner{w: w, g: g, jobs: jobs, opt: opt, lopt: lopt,
		byJob:  make([][]int, g.Jobs),
		walked: make([]int, g.Jobs),
		outs:   make([]Outcome, len(g.Groups)),
		effort: newEffort(ctx, lopt.Budget),
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
	for root := range a.g.Jobs {
		if placed[root] || len(a.byJob[root]) == 0 {
			continue
		}
		placed[root] = true
		a.order = append(a.order, root)
		for q := len(a.order) - 1; q < len(a.order); q++ {
			j := a.order[q]
			for _, gi := range a.byJob[j] {
				if done[gi] {
					continue
				}
				done[gi] = true
				gr, o := a.g.Groups[gi], a.opt[gi].Shifts
				pos := slices.Index(gr.Jobs, j)
				for i, k := range gr.Jobs {
					if placed[k] {
						a.outs[gi].Constrained = a.outs[gi].Constrained || k != j
						continue
					}
					a.walked[k] = circle.Mod(a.walked[j]-o[pos]+o[i], a.jobs[k].Period)
					placed[k] = true
					a.order = append(a.order, k)
				}
			}
		}
	}
	a.shift = slices.Clone(a.walked)
}

// settle fixes the final shifts of one connected set of constraining
// groups (comp: its jobs in walk order, its constraints).
func (a *assigner) settle(comp component, policy Policy) error {
	strict, weak := comp.cons, comp.weak()
	if a.allHold(strict) {
		return nil // the walk's shifts
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
		if !a.holds1[c] {
			return false
		}
	}
	return true
}

// score recomputes every member link's excess at the final shifts.
func (a *assigner) score() error {
	for gi, gr := range a.g.Groups {
		oc := &a.outs[gi]
		oc.Points = points(a.jobs, gr.Jobs, a.lopt.Mode)
		sh := a.gather(a.shift, gr.Jobs)
		var last int32
		var e int64
		for k, li := range gr.Links {
			c := a.g.Links[li].Capacity
			if k == 0 || c != last {
				if err := a.reset(&a.chk, gr.Jobs, c); err != nil {
					return err
				}
				e = a.chk.Excess(sh)
				a.extra += a.chk.Evaluated()
				last = c
			}
			oc.Excess = append(oc.Excess, e)
			oc.Scores = append(oc.Scores, 1-float64(e)/(float64(oc.Points)*float64(c)))
		}
	}
	return nil
}

// reset prepares chk for the link carrying the given jobs at capacity c.
func (a *assigner) reset(chk *link.Checker, on []int, c int32) error {
	a.ps = a.ps[:0]
	for _, j := range on {
		a.ps = append(a.ps, a.jobs[j])
	}
	if err := chk.Reset(link.Problem{Jobs: a.ps, Capacity: c}, a.lopt); err != nil {
		return fmt.Errorf("affinity: link of jobs %v: %w", on, err)
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
