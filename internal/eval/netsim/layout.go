package netsim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/workload"
)

// layout is a job on concrete servers.
type layout struct {
	steps    []workload.Step
	routes   [][][]int         // per step, per flow: links (nil for a step without traffic)
	links    []int             // every link a step crosses, increasing
	alone    time.Duration     // the iteration alone on the network
	commOff  time.Duration     // first communication step's offset alone, -1 if none
	prof     profile.Profile   // CASSINI's profile: timed alone, at the NIC, padded by the headroom
	linkProf []profile.Profile // the job's demand on each of links, timed alone (same period as prof)
	// On each of links, alone: the most the job puts on it in a step and
	// its mean over the iteration, bits/s (placement statistics).
	peakOn, meanOn []float64
}

// layout computes a job's steps, routes and profiles on the given servers.
// The profiles are what profiling the job alone on these servers measures:
// each communication step lasts as long as its slowest flow takes when the
// job's own flows share the links (an all-to-all across two racks contends
// with itself), and on each link the job demands what its flows crossing it
// carry meanwhile (a cross-rack all-to-all over 2+2 servers puts 4/3 of a
// server's rate on the uplinks, a ring one hop's rate).
func (s *sim) layout(m workload.Model, batch int, servers []int) (layout, error) {
	steps, err := m.Iteration(batch, len(servers))
	if err != nil {
		return layout{}, err
	}
	l := layout{steps: steps, commOff: -1}
	if err := s.route(&l, servers); err != nil {
		return layout{}, err
	}
	durations, onLink, err := s.timeAlone(&l)
	if err != nil {
		return layout{}, err
	}
	return l, s.profiles(&l, durations, onLink)
}

// route sets the flows of every communication step: a ring is one
// lock-step flow over all of its hops, a chain and an all-to-all one flow
// per connection, within each of the step's groups. Steps of the same
// pattern over the same groups (a model's repeated phases) share their
// flows, which nothing changes.
func (s *sim) route(l *layout, servers []int) error {
	var all []int
	route := func(a, b int) ([]int, error) {
		p, err := s.topo.Route(servers[a], servers[b])
		if err != nil {
			return nil, fmt.Errorf("%w: topology: %w", ErrInvalid, err)
		}
		all = append(all, p...)
		return p, nil
	}
	l.routes = make([][][]int, len(l.steps))
	for i, st := range l.steps {
		if st.Pattern == workload.Compute || st.Bits == 0 {
			continue
		}
		if k := slices.IndexFunc(l.steps[:i], func(o workload.Step) bool {
			return o.Pattern == st.Pattern && o.Bits != 0 && slices.EqualFunc(o.Groups, st.Groups, slices.Equal)
		}); k >= 0 {
			l.routes[i] = l.routes[k]
			continue
		}
		groups := st.Groups
		if groups == nil {
			g := make([]int, len(servers))
			for k := range g {
				g[k] = k
			}
			groups = [][]int{g}
		}
		var flows [][]int
		for _, g := range groups {
			fs, err := groupFlows(st.Pattern, g, route)
			if err != nil {
				return err
			}
			flows = append(flows, fs...)
		}
		l.routes[i] = flows
	}
	slices.Sort(all)
	l.links = slices.Compact(all)
	return nil
}

// groupFlows are the flows of a pattern among the servers g (indices).
func groupFlows(p workload.Pattern, g []int, route func(a, b int) ([]int, error)) ([][]int, error) {
	n := len(g)
	var flows [][]int
	switch p {
	case workload.Ring:
		var ring []int
		for i := range n {
			r, err := route(g[i], g[(i+1)%n])
			if err != nil {
				return nil, err
			}
			ring = append(ring, r...)
		}
		flows = [][]int{ring}
	case workload.Chain:
		for i := 0; i+1 < n; i++ {
			r, err := route(g[i], g[i+1])
			if err != nil {
				return nil, err
			}
			flows = append(flows, r)
		}
	case workload.AllToAll:
		for _, a := range g {
			for _, b := range g {
				if a == b {
					continue
				}
				r, err := route(a, b)
				if err != nil {
					return nil, err
				}
				flows = append(flows, r)
			}
		}
	}
	return flows, nil
}

// timeAlone times every step with the job alone on the network, and
// returns the steps' lengths and, per step, what the job's flows put on each
// of its links meanwhile (bits/s, in l.links order; nil for compute).
func (s *sim) timeAlone(l *layout) ([]time.Duration, [][]float64, error) {
	durations := make([]time.Duration, len(l.steps))
	onLink := make([][]float64, len(l.steps))
	for i, st := range l.steps {
		durations[i] = st.Alone()
		flows := l.routes[i]
		if len(flows) == 0 {
			continue
		}
		s.fbuf = s.fbuf[:0]
		for _, f := range flows {
			s.fbuf = append(s.fbuf, fluid.Flow{Links: f, Peak: st.Peak})
		}
		var err error
		if s.rates, err = s.solver.Rates(s.rates, s.capacity, s.fbuf); err != nil {
			return nil, nil, err
		}
		slowest := slices.Min(s.rates)
		ns := math.Round(st.Bits / slowest * 1e9)
		if !(ns < float64(horizon)) {
			return nil, nil, fmt.Errorf("%w: a %v-bit step at %v bit/s alone passes %v", ErrInvalid, st.Bits, slowest, time.Duration(horizon))
		}
		durations[i] = time.Duration(ns)
		// A flow sends its bits over the step at its own rate; the lock-step
		// ring at its slowest hop's. Its average over the step is what
		// profiling measures.
		onLink[i] = make([]float64, len(l.links))
		avg := st.Bits / (ns / 1e9)
		for _, f := range flows {
			for _, li := range f {
				x, _ := slices.BinarySearch(l.links, li)
				onLink[i][x] += avg
			}
		}
	}
	l.alone = 0
	for i, d := range durations {
		if l.commOff < 0 && onLink[i] != nil {
			l.commOff = l.alone
		}
		l.alone += d
	}
	l.peakOn, l.meanOn = make([]float64, len(l.links)), make([]float64, len(l.links))
	for i, on := range onLink {
		for x, v := range on {
			l.peakOn[x] = max(l.peakOn[x], v)
			l.meanOn[x] += float64(v * durations[i].Seconds())
		}
	}
	if l.alone > 0 {
		for x := range l.meanOn {
			l.meanOn[x] /= l.alone.Seconds()
		}
	}
	return durations, onLink, nil
}

// profiles sets the job's CASSINI profiles from its steps' lengths alone: at
// its NIC (the step's bandwidth, stretched as the step is) and on each link.
func (s *sim) profiles(l *layout, durations []time.Duration, onLink [][]float64) error {
	phases := make([]profile.Phase, 0, len(l.steps))
	for i, st := range l.steps {
		bw := st.Bandwidth
		if onLink[i] != nil && durations[i] > 0 {
			bw *= float64(st.Alone()) / float64(durations[i])
		}
		if st.Pattern == workload.Compute || onLink[i] == nil {
			bw = 0
		}
		if durations[i] > 0 {
			phases = append(phases, profile.Phase{Duration: durations[i], Bandwidth: bw})
		}
	}
	var err error
	if l.prof, err = s.quantize(phases); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	l.linkProf = make([]profile.Profile, len(l.links))
	for x := range l.links {
		phases = phases[:0]
		for i, d := range durations {
			if d > 0 {
				var bw float64
				if onLink[i] != nil {
					bw = onLink[i][x]
				}
				phases = append(phases, profile.Phase{Duration: d, Bandwidth: bw})
			}
		}
		p, err := s.quantize(phases)
		if err != nil {
			return fmt.Errorf("profile on link %d: %w", l.links[x], err)
		}
		if p.Period != l.prof.Period {
			return fmt.Errorf("%w: profile on link %d: period %d, the job's %d", ErrInvalid, l.links[x], p.Period, l.prof.Period)
		}
		l.linkProf[x] = p
	}
	if h := s.cfg.Cassini.Headroom; h > 0 && s.readsProfiles() {
		period := int(math.Ceil(float64(l.prof.Period) * (1 + h)))
		l.prof = pad(l.prof, period)
		for x, p := range l.linkProf {
			l.linkProf[x] = pad(p, period)
		}
	}
	return nil
}

// readsProfiles reports whether the policy reads the jobs' profiles (its
// ranking, plans and agents do).
func (s *sim) readsProfiles() bool {
	return s.cfg.Policy == Cassini || s.cfg.Policy == CassiniPlacement
}

// quantize is profile.FromPhases of phases on the simulation's grid. Under
// a policy that reads no profile it returns only the period (no demand),
// with the same errors, from profile.Summarize: no tick is built.
func (s *sim) quantize(phases []profile.Phase) (profile.Profile, error) {
	if !s.readsProfiles() {
		sum, err := profile.Summarize(0, phases, s.quantum)
		return profile.Profile{Period: sum.Period}, err
	}
	return profile.FromPhases(0, phases, s.quantum)
}

// demandOn is j's CASSINI profile on link li (its NIC profile if it does not
// cross li).
func (j *jobRun) demandOn(li int) profile.Profile {
	if x, ok := slices.BinarySearch(j.links, li); ok {
		return j.linkProf[x]
	}
	return j.prof
}
