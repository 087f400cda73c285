package affinity

import (
	"fmt"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// fallback settles a component with no consistent assignment, or whose
// search stopped before finding one. It walks the component's groups again
// from its first job: a group reached with one job placed places the others
// by its optimum (line 17); a group reached with more is re-optimized around
// them, the jobs placed held (a link search). Then every group is checked
// at its smallest capacity, in the order reached: Resolve and Paper reject
// the placement at the first that misses its optimum, Reoptimize keeps it
// Degraded.
func (a *assigner) fallback(comp component, policy Policy) error {
	use := make([]bool, len(a.g.Groups))
	for _, i := range comp.cons {
		use[a.cons[i].group] = true
	}
	placed := make([]bool, a.g.Jobs)
	done := make([]bool, len(a.g.Groups))
	first := comp.jobs[0]
	a.shift[first], placed[first] = a.walked[first], true
	queue, visit := []int{first}, []int(nil)
	for q := 0; q < len(queue); q++ {
		j := queue[q]
		for _, gi := range a.byJob[j] {
			if !use[gi] || done[gi] {
				continue
			}
			done[gi] = true
			visit = append(visit, gi)
			if err := a.reach(gi, j, placed); err != nil {
				return err
			}
			for _, k := range a.g.Groups[gi].Jobs {
				if !placed[k] {
					placed[k] = true
					queue = append(queue, k)
				}
			}
		}
	}
	stop := a.effort.stop
	for _, gi := range visit {
		gr := a.g.Groups[gi]
		c := &a.cons[a.consAt[gi]] // the smallest capacity
		ok, e, err := a.check(c, a.shift)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if policy != Reoptimize {
			if e < 0 { // Paper mode: the sampled excess
				if e, err = a.evaluate(gi, gr.Capacity, a.shift); err != nil {
					return err
				}
			}
			return &InconsistentError{Jobs: gr.Jobs, Link: gr.Links[0], Excess: e, Optimum: c.target, Status: stop}
		}
		oc := &a.outs[gi]
		oc.Degraded, oc.Status = true, max(oc.Status, stop)
		a.status = max(a.status, stop)
	}
	return nil
}

// reach places the jobs of group gi not yet placed, reached from job j.
// Their shifts are written into a.shift; placed is not updated.
func (a *assigner) reach(gi, j int, placed []bool) error {
	gr, o := a.g.Groups[gi], a.opt[gi].Shifts
	fixed := make([]int, len(gr.Jobs))
	ps := make([]profile.Profile, len(gr.Jobs))
	n := 0
	for i, k := range gr.Jobs {
		ps[i], fixed[i] = gr.profile(i, a.jobs[k]), -1
		if placed[k] {
			fixed[i] = a.shift[k]
			n++
		}
	}
	if n == 1 {
		pos := 0
		for gr.Jobs[pos] != j {
			pos++
		}
		for i, k := range gr.Jobs {
			if k != j {
				a.shift[k] = circle.Mod(a.shift[j]-o[pos]+o[i], a.jobs[k].Period)
			}
		}
		return nil
	}
	res, err := a.w.Search(a.effort.ctx, link.Problem{Jobs: ps, Capacity: gr.Capacity, Fixed: fixed}, a.lopt, nil)
	if err != nil {
		return fmt.Errorf("affinity: re-optimizing jobs %v: %w", gr.Jobs, err)
	}
	a.extra += res.Evaluated
	a.outs[gi].Status = max(a.outs[gi].Status, res.Status)
	for i, k := range gr.Jobs {
		if !placed[k] {
			a.shift[k] = circle.Mod(res.Shifts[i], a.jobs[k].Period)
		}
	}
	return nil
}
