package sim

import (
	"fmt"
	"slices"
)

// place assigns GPUs to the round's jobs (indices into s.jobs, in the
// policy's order) as the authors' _schedule_jobs_on_workers does on
// single-GPU servers: jobs are taken widest first (stable, so the policy's
// order breaks ties); within each width, first every job that ran in the
// previous round keeps its GPUs if none of them is taken yet (a lease
// extension), then the others take the lowest-numbered free GPUs, scanning
// with one pointer that only moves forward across the whole round.
func (s *sim) place(sched []int) error {
	slices.SortStableFunc(sched, func(a, b int) int { return s.jobs[b].tj.GPUs - s.jobs[a].tj.GPUs })
	taken := s.taken
	clear(taken)
	ptr := 0
	for lo := 0; lo < len(sched); {
		w := s.jobs[sched[lo]].tj.GPUs
		hi := lo
		for hi < len(sched) && s.jobs[sched[hi]].tj.GPUs == w {
			hi++
		}
		// Keep jobs on their current GPUs where possible.
		for _, k := range sched[lo:hi] {
			j := &s.jobs[k]
			j.placed = false
			if s.round == 0 || j.lastRound != s.round-1 || len(j.gpus) != w {
				continue
			}
			free := true
			for _, g := range j.gpus {
				if taken[g] {
					free = false
					break
				}
			}
			if free {
				for _, g := range j.gpus {
					taken[g] = true
				}
				j.placed, j.extended = true, true
			}
		}
		for _, k := range sched[lo:hi] {
			j := &s.jobs[k]
			if j.placed {
				continue
			}
			j.extended = false
			prev := j.gpus
			j.gpus = j.gpus[:0:0]
			for len(j.gpus) < w && ptr < len(taken) {
				if !taken[ptr] {
					taken[ptr] = true
					j.gpus = append(j.gpus, ptr)
				}
				ptr++
			}
			if len(j.gpus) != w {
				return fmt.Errorf("%w: could not assign %d GPUs to job %d", ErrPolicy, w, j.tj.ID)
			}
			// Upstream counts a lease extension whenever the new GPU set
			// equals the previous one.
			j.extended = s.round > 0 && j.lastRound == s.round-1 && sameSet(prev, j.gpus)
			j.placed = true
		}
		lo = hi
	}
	return nil
}

// sameSet reports whether two GPU lists hold the same GPUs (both are
// duplicate-free).
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
