package affinity

import (
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// oldAssign is Assign as it was before the consistency search (commit
// abd5b56), kept as the baseline the new one is measured against: the walk
// of Algorithm 1 with each link's smallest tied optimum, a constrained
// search at each group that closes a cycle, rejecting at the first one that
// loses score. It also returns the pair evaluations it spent.
//
// Assign ran the breadth-first walk over g. jobs holds every job's profile
// (already on a common period grid), opt each group's own optimum. The
// search options are those the optima were found with; w is scratch space.
func oldAssign(ctx context.Context, w *link.Workspace, g Graph, jobs []profile.Profile, opt []Optimum, lopt link.Options, policy Policy) (Assignment, int64, error) {
	var evals int64
	if len(jobs) != g.Jobs || len(opt) != len(g.Groups) {
		return Assignment{}, evals, fmt.Errorf("%w: %d profiles and %d optima for %d jobs and %d groups", ErrInvalid, len(jobs), len(opt), g.Jobs, len(g.Groups))
	}
	for j, p := range jobs {
		if err := p.Validate(); err != nil {
			return Assignment{}, evals, fmt.Errorf("%w: job %d: %w", ErrInvalid, j, err)
		}
	}
	for gi, gr := range g.Groups {
		if len(opt[gi].Shifts) != len(gr.Jobs) {
			return Assignment{}, evals, fmt.Errorf("%w: group %d has %d jobs, its optimum %d shifts", ErrInvalid, gi, len(gr.Jobs), len(opt[gi].Shifts))
		}
		for _, j := range gr.Jobs {
			if j < 0 || j >= g.Jobs {
				return Assignment{}, evals, fmt.Errorf("%w: group %d: job %d of %d", ErrInvalid, gi, j, g.Jobs)
			}
		}
	}
	shift := make([]int, g.Jobs)
	assigned := make([]bool, g.Jobs)
	byJob := make([][]int, g.Jobs)
	for gi, gr := range g.Groups {
		for _, j := range gr.Jobs {
			byJob[j] = append(byJob[j], gi)
		}
	}
	done := make([]bool, len(g.Groups))
	known := make([]int64, len(g.Groups)) // excess at the group's capacity under the final shifts
	out := Assignment{Shifts: shift, Outcomes: make([]Outcome, len(g.Groups))}
	var queue []int
	var profiles []profile.Profile
	var fixed, buf []int
	for root := range g.Jobs {
		if assigned[root] || len(byJob[root]) == 0 {
			continue
		}
		assigned[root] = true // reference job of its component: shift 0
		queue = append(queue[:0], root)
		for len(queue) > 0 {
			j := queue[0]
			queue = queue[1:]
			for _, gi := range byJob[j] {
				if done[gi] {
					continue
				}
				done[gi] = true
				gr, o := g.Groups[gi], opt[gi]
				profiles = profiles[:0]
				fixed = fixed[:0]
				nfixed := 0
				for _, k := range gr.Jobs {
					profiles = append(profiles, jobs[k])
					if assigned[k] {
						fixed = append(fixed, shift[k])
						nfixed++
					} else {
						fixed = append(fixed, -1)
					}
				}
				pos := slices.Index(gr.Jobs, j)
				oc := &out.Outcomes[gi]
				oc.Status = link.Optimal
				known[gi] = o.Excess
				if nfixed == 1 {
					// Algorithm 1, line 17.
					for i, k := range gr.Jobs {
						if k != j {
							shift[k] = circle.Mod(shift[j]-o.Shifts[pos]+o.Shifts[i], jobs[k].Period)
							assigned[k] = true
							queue = append(queue, k)
						}
					}
				} else {
					// The group closes a cycle: hold the jobs that have
					// shifts, optimize the rest around them.
					oc.Constrained = true
					res, err := w.Search(ctx, link.Problem{Jobs: profiles, Capacity: gr.Capacity, Fixed: fixed}, lopt, buf)
					if err != nil {
						return Assignment{}, evals, err
					}
					buf = res.Shifts
					evals += res.Evaluated
					oc.Status = res.Status
					known[gi] = res.Excess
					if res.Excess > o.Excess {
						if policy != Reoptimize {
							return Assignment{}, evals, &InconsistentError{Jobs: gr.Jobs, Link: gr.Links[0], Excess: res.Excess, Optimum: o.Excess}
						}
						oc.Degraded = true
					}
					for i, k := range gr.Jobs {
						if !assigned[k] {
							shift[k] = circle.Mod(res.Shifts[i], jobs[k].Period)
							assigned[k] = true
							queue = append(queue, k)
						}
					}
				}
			}
		}
	}
	// Score every member link at the final shifts. At the group's own
	// capacity the excess is already known: the optimum's, moved by whole
	// periods, or the constrained search's. Other capacities are evaluated.
	for gi, gr := range g.Groups {
		profiles = profiles[:0]
		fixed = fixed[:0]
		for _, k := range gr.Jobs {
			profiles = append(profiles, jobs[k])
			fixed = append(fixed, shift[k])
		}
		oc := &out.Outcomes[gi]
		oc.Points = points(jobs, gr.Jobs, lopt.Mode)
		for _, li := range gr.Links {
			c := g.Links[li].Capacity
			e := known[gi]
			if c != gr.Capacity {
				var err error
				if e, _, err = w.Evaluate(link.Problem{Jobs: profiles, Capacity: c}, lopt, fixed); err != nil {
					return Assignment{}, evals, err
				}
				evals += int64(len(profiles) * oc.Points)
			}
			oc.Excess = append(oc.Excess, e)
			oc.Scores = append(oc.Scores, 1-float64(e)/(float64(oc.Points)*float64(c)))
		}
	}
	return out, evals, nil
}
