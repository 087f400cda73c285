package netsim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/orrery/orrery/engine/agent"
	"github.com/orrery/orrery/engine/candidate"
	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
)

// planned is the outcome of the chosen candidate, over the jobs in ranking
// order: the running jobs by arrival, then the new one.
type planned struct {
	order []*jobRun
	out   candidate.Outcome
}

// group is a shared link of the current plan, for drift sampling.
type group struct {
	jobs     []*jobRun
	padded   []profile.Profile // the jobs' profiles padded to the plan's grid
	capacity int32
	planned  float64
}

func (s *sim) linkOptions(round bool) link.Options {
	c := s.cfg.Cassini
	return link.Options{Mode: c.Mode, Budget: c.Budget, Circle: circle.Options{MaxPerimeter: c.MaxPerimeter, Round: round}}
}

// units converts a capacity in Gbps to the profiles' demand units.
func (s *sim) units(gbps float64) int32 {
	return int32(min(s.quantum.Units(gbps*profile.Gbps), math.MaxInt32))
}

// rank ranks cands for j, as CASSINI's Algorithm 2, with the running jobs
// whose shifts a candidate can touch: every job in a connected component of
// the running jobs' affinity graph (jobs linked by the links they share)
// that crosses a link some candidate uses. The other components keep their
// shifts; their links are the same in every candidate. The new job's
// profile depends on its servers (it is timed alone on them), so candidates
// with the same profile are ranked together and the best of all wins (ties:
// the earlier candidate).
func (s *sim) rank(j *jobRun, cands []alloc) (int, *planned, error) {
	ls := make([]layout, len(cands))
	touched := map[int]bool{}
	for c, a := range cands {
		l, err := s.layout(j.model, j.job.Batch, a.servers)
		if err != nil {
			return 0, nil, fmt.Errorf("job %d: %w", j.job.ID, err)
		}
		ls[c] = l
		for _, li := range l.links {
			touched[li] = true
		}
	}
	order := append(s.neighbours(touched), j)
	n := len(order) - 1
	base := make([][]int, n+1)
	profiles := make([]profile.Profile, n+1)
	for i, r := range order[:n] {
		profiles[i], base[i] = r.prof, r.links
	}
	links := make([]candidate.Link, len(s.topo.Links))
	for i, l := range s.topo.Links {
		links[i] = candidate.Link{Capacity: s.units(l.Gbps)}
	}
	opt := candidate.Options{
		Link:      s.linkOptions(!s.cfg.Cassini.ExactPeriods),
		Loops:     s.cfg.Cassini.Loops,
		Aggregate: s.cfg.Cassini.Aggregate,
		Workers:   s.cfg.Cassini.Workers,
	}
	type cand struct {
		prof  profile.Profile
		paths [][]int
	}
	cs := make([]cand, len(cands))
	for c, l := range ls {
		paths := slices.Clone(base)
		paths[n] = l.links
		cs[c] = cand{l.prof, paths}
	}
	best, score := -1, math.Inf(-1)
	var out candidate.Outcome
	done := make([]bool, len(cands))
	for c := range cands {
		if done[c] {
			continue
		}
		var idx []int
		var group []candidate.Candidate
		for d := c; d < len(cands); d++ {
			if !done[d] && slices.Equal(cs[d].prof.Demand, cs[c].prof.Demand) {
				done[d] = true
				idx = append(idx, d)
				group = append(group, candidate.Candidate{Paths: cs[d].paths})
			}
		}
		profiles[n] = cs[c].prof
		r, err := s.ranker.Rank(s.ctx, profiles, links, group, opt)
		if err != nil {
			return 0, nil, fmt.Errorf("job %d: ranking: %w", j.job.ID, err)
		}
		if r.Best >= 0 {
			o := r.Outcomes[r.Best]
			if o.Score > score || (o.Score == score && idx[r.Best] < best) {
				best, score, out = idx[r.Best], o.Score, o
			}
		}
	}
	s.res.Rank.Rankings++
	if best < 0 {
		s.res.Rank.AllDiscarded++
		return 0, nil, nil
	}
	s.res.Rank.MeanBest += out.Score // summed here, divided in result
	if out.Grid > 1 {
		s.res.Rank.Rounded++
	}
	if s.cfg.Cassini.NoShifts {
		return best, nil, nil
	}
	// The plan's profiles are the ranked ones; the new job's is its
	// chosen candidate's.
	return best, &planned{order: order, out: out}, nil
}

// neighbours returns, by arrival, the running jobs in the connected
// components (of the graph linking jobs that share a link) that cross a
// touched link.
func (s *sim) neighbours(touched map[int]bool) []*jobRun {
	k := len(s.running)
	parent, find := disjointSets(k)
	first := map[int]int{} // link -> first running job on it
	for i, r := range s.running {
		for _, li := range r.links {
			if f, ok := first[li]; ok {
				parent[find(i)] = find(f)
			} else {
				first[li] = i
			}
		}
	}
	hit := map[int]bool{}
	for li := range touched {
		if f, ok := first[li]; ok {
			hit[find(f)] = true
		}
	}
	var out []*jobRun
	for i, r := range s.running {
		if hit[find(i)] {
			out = append(out, r)
		}
	}
	return out
}

func roundUp(t, g int) int { return (t + g - 1) / g * g }

func mod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// sameSlots reports whether two plans put iterations at the same instants.
func sameSlots(a, b agent.Plan) bool {
	if a.Period != b.Period || a.CommOffset != b.CommOffset {
		return false
	}
	d := b.Reference.Sub(a.Reference) + b.Shift - a.Shift
	return mod(int64(d), int64(a.Period)) == 0
}

// apply installs the chosen candidate's time shifts: every job in its
// affinity graph gets an agent holding its shift on its padded period.
// Within a connected component the shifts are relative, so the component's
// reference instant is chosen where it delays the running jobs least.
func (s *sim) apply(newJob *jobRun, p *planned) error {
	o, order := p.out, p.order
	tick := s.cfg.Cassini.Tick
	grid := max(o.Grid, 1)
	k := len(order)
	parent, find := disjointSets(k)
	// A link binds its jobs' shifts only if their peaks together exceed its
	// capacity: otherwise every relative phase fits and holding one would
	// only cost padding. Jobs whose binding links are all compatible enough
	// keep their shifts; the binding links among them tie those together.
	binding := func(ls candidate.LinkScore) bool {
		var peaks int64
		for _, m := range ls.Jobs {
			peaks += int64(order[m].prof.Peak())
		}
		return peaks > int64(s.units(s.topo.Links[ls.Link].Gbps))
	}
	minScore := s.cfg.Cassini.minScore()
	ok := make([]bool, k)
	for _, ls := range o.Links {
		if binding(ls) {
			for _, m := range ls.Jobs {
				ok[m] = true
			}
		}
	}
	for _, ls := range o.Links {
		if binding(ls) && ls.Score < minScore {
			for _, m := range ls.Jobs {
				ok[m] = false
			}
		}
	}
	kept := func(ls candidate.LinkScore) bool {
		return binding(ls) && !slices.ContainsFunc(ls.Jobs, func(m int) bool { return !ok[m] })
	}
	in := make([]bool, k)
	for _, ls := range o.Links {
		if !kept(ls) {
			continue
		}
		for _, m := range ls.Jobs {
			in[m] = true
			parent[find(m)] = find(ls.Jobs[0])
		}
	}
	period := make([]int64, k)
	shift := make([]int64, k)
	for m, r := range order {
		period[m] = int64(roundUp(r.prof.Period, grid)) * int64(tick)
		shift[m] = int64(o.Shifts[m]) * int64(tick)
	}
	for root := range k {
		if !in[root] || find(root) != root {
			continue
		}
		var members []int
		for m := range k {
			if in[m] && find(m) == root {
				members = append(members, m)
			}
		}
		// Reference: among the instants that keep one running job where
		// it is, the one that delays the running jobs least in total.
		anchor := func(r *jobRun) int64 {
			if r.st == waiting {
				return r.until
			}
			return r.iterStart
		}
		ref, bestCost := s.now, int64(math.MaxInt64)
		for _, c := range members {
			rc := order[c]
			if rc == newJob {
				continue
			}
			cand := anchor(rc) - shift[c]
			var cost int64
			for _, m := range members {
				if rm := order[m]; rm != newJob {
					cost += mod(cand+shift[m]-anchor(rm), period[m])
				}
			}
			if cost < bestCost {
				ref, bestCost = cand, cost
			}
		}
		for _, m := range members {
			r := order[m]
			if r.commOff < 0 {
				continue // no traffic: nothing to align
			}
			plan := agent.Plan{Reference: simTime(ref), Shift: time.Duration(shift[m]), Period: time.Duration(period[m]), CommOffset: r.commOff}
			if r.agent != nil && sameSlots(r.agent.Plan(), plan) {
				continue
			}
			r.driftOK = false
			if r.agent != nil {
				if err := r.agent.SetPlan(plan); err != nil {
					return fmt.Errorf("job %d: %w", r.job.ID, err)
				}
				continue
			}
			a, err := agent.New(plan, s.cfg.Agent)
			if err != nil {
				return fmt.Errorf("job %d: %w", r.job.ID, err)
			}
			r.agent = a
			r.agents = append(r.agents, a)
			s.agents = append(s.agents, a)
		}
	}
	for m, r := range order {
		if !in[m] {
			r.agent = nil // shares no link any more: free to run
		}
	}
	// The shared links, for drift sampling: those of the jobs ranked are
	// replaced.
	s.groups = slices.DeleteFunc(s.groups, func(g group) bool {
		return slices.ContainsFunc(g.jobs, func(r *jobRun) bool { return slices.Contains(order, r) })
	})
	for _, ls := range o.Links {
		if !kept(ls) {
			continue
		}
		g := group{capacity: s.units(s.topo.Links[ls.Link].Gbps), planned: ls.Score}
		for _, m := range ls.Jobs {
			g.jobs = append(g.jobs, order[m])
		}
		if slices.ContainsFunc(s.groups, func(h group) bool { return h.capacity == g.capacity && slices.Equal(h.jobs, g.jobs) }) {
			continue
		}
		for _, r := range g.jobs {
			g.padded = append(g.padded, pad(r.prof, roundUp(r.prof.Period, grid)))
		}
		s.groups = append(s.groups, g)
	}
	if s.nextSample <= s.now {
		s.nextSample = s.now + int64(s.cfg.SampleEvery)
	}
	return nil
}

// pad extends p with idle ticks to period ticks.
func pad(p profile.Profile, period int) profile.Profile {
	if period == p.Period {
		return p
	}
	d := make([]int32, period)
	copy(d, p.Demand)
	return profile.Profile{Period: period, Demand: d}
}

// sampleDrift scores each shared link at the jobs' actual phase positions:
// each job's planned shift plus the phase error of its last communication
// start under the current plan.
func (s *sim) sampleDrift() error {
	tick := int64(s.cfg.Cassini.Tick)
	var shifts []int
	kept := s.groups[:0]
	for _, g := range s.groups {
		live := true
		for _, j := range g.jobs {
			live = live && j.st != done && j.agent != nil
		}
		if !live {
			continue
		}
		kept = append(kept, g)
		measured := true
		shifts = shifts[:0]
		for _, j := range g.jobs {
			measured = measured && j.driftOK
			pos := int64(j.agent.Plan().Shift) + int64(j.drift)
			shifts = append(shifts, int(math.Round(float64(pos)/float64(tick))))
		}
		if !measured {
			continue
		}
		excess, points, err := s.lw.Evaluate(link.Problem{Jobs: g.padded, Capacity: g.capacity}, s.linkOptions(false), shifts)
		if err != nil {
			return fmt.Errorf("drift sample: %w", err)
		}
		d := &s.res.Drift
		d.Samples++
		d.Planned += g.planned
		d.Realized += 1 - float64(excess)/(float64(points)*float64(g.capacity))
	}
	s.groups = kept
	return nil
}

// result assembles the outcome.
func (s *sim) result() Result {
	r := s.res
	r.End = time.Duration(s.now)
	sent := s.sentBits
	for _, f := range s.flows {
		sent += f.sent
	}
	r.SentGbit = sent / 1e9
	r.ExcessGbit = s.excessBits / 1e9
	for _, j := range s.jobs {
		jr := JobResult{ID: j.job.ID, Model: j.job.Model, GPUs: j.job.GPUs, Arrival: j.job.Arrival, Alone: j.alone,
			Iterations: len(j.iterMs)}
		if j.st != queued {
			jr.Servers = j.place.servers
			jr.Start = time.Duration(j.start)
		}
		if j.st == done {
			jr.End = time.Duration(j.end)
		}
		for _, a := range j.agents {
			jr.Adjustments += a.Stats().Adjustments
			jr.Period = a.Plan().Period
		}
		if len(j.iterMs) > 0 {
			var t float64
			for _, x := range j.iterMs {
				t += x
			}
			jr.MeanIter = time.Duration(math.Round(t / float64(len(j.iterMs)) * 1e6))
		}
		r.Jobs = append(r.Jobs, jr)
		r.IterMs = append(r.IterMs, j.iterMs...)
	}
	if r.Rank.Rankings > r.Rank.AllDiscarded {
		r.Rank.MeanBest /= float64(r.Rank.Rankings - r.Rank.AllDiscarded)
	}
	a := &r.Agent
	a.Agents = len(s.agents)
	var abs float64
	for _, ag := range s.agents {
		st := ag.Stats()
		a.Adjustments += st.Adjustments
		a.Replans += st.Replans
		a.JobMinutes += st.Span.Minutes()
		a.Padding += st.Padding
		a.AdjustDelay += st.AdjustDelay
		a.Samples += st.Samples
		a.Over += st.Over
		abs += float64(float64(st.MeanAbs) * float64(st.Samples))
	}
	if a.JobMinutes > 0 {
		a.PerMinute = float64(a.Adjustments) / a.JobMinutes
	}
	if a.Samples > 0 {
		a.MeanAbs = time.Duration(math.Round(abs / float64(a.Samples)))
	}
	if d := &r.Drift; d.Samples > 0 {
		d.Planned /= float64(d.Samples)
		d.Realized /= float64(d.Samples)
		d.Lost = d.Planned - d.Realized
	}
	return r
}

// disjointSets returns n singleton sets as a parent array (join two sets with
// parent[find(a)] = find(b)) and its find, which halves paths as it goes.
func disjointSets(n int) ([]int, func(int) int) {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	return parent, func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
}
