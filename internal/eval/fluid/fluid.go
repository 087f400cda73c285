package fluid

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalid reports a malformed problem: a capacity or peak that is not a
// positive number, a link index out of range, or a flow that nothing limits.
var ErrInvalid = errors.New("fluid: invalid problem")

// Flow is a fluid flow.
type Flow struct {
	// Links are the indices of the links the flow crosses. A link listed k
	// times carries k connections of the flow, each at the flow's rate.
	Links []int
	// Peak is the most the flow can send, in the capacities' unit (e.g.
	// bits per second); > 0, and +Inf for no limit other than the links.
	Peak float64
}

// observe, set only by this package's tests (export_test.go), sees every
// problem a Solver solves and its rates: the tests check the rates of real
// simulations' calls against the reference filling.
var observe func(capacity []float64, flows []Flow, rates []float64)

// Solver holds the buffers of [Solver.Rates] and the previous problem it
// solved. The zero value is ready; it is not safe for concurrent use.
type Solver struct {
	mode mode // 0: the package default (ORRERY_FLUID)

	// Per link, sized to the capacities.
	seen    []uint32  // stamp of the call that last touched the link
	parent  []int32   // union-find over this call's links
	comp    []int32   // link -> this call's component
	local   []int32   // link -> index within its component, while filling
	lastCap []float64 // capacity at the last call that touched the link
	stamp   uint32

	touched []int32 // links some flow of this call crosses, each once
	parts   parts   // this call's components
	fill    filler
	eager   eager
	mem     memory // the previous call
	cur     memory // this call, then swapped into mem
	match   []int32
	used    []bool
	reuse   []bool // per component of this call
}

// Rates writes the max-min fair rate of every flow into dst (grown if
// needed) and returns it. capacity[l] is link l's capacity (> 0, finite).
// Only the links some flow crosses are read. The rates are a function of
// capacity and flows alone (see the package doc): the components of the
// problem that equal one of the previous call's are not recomputed, which
// changes their rates in no bit.
//
// A rejected problem leaves the Solver as it was.
func (s *Solver) Rates(dst []float64, capacity []float64, flows []Flow) ([]float64, error) {
	if err := s.setup(capacity, flows); err != nil {
		return dst, err
	}
	dst = grow(dst, len(flows))
	m := s.mode
	if m == 0 {
		m = defaultMode
	}
	if m == modeEager {
		s.eager.solve(dst, capacity, flows, s.touched)
		s.mem.reset() // nothing to reuse from an eager solve
		s.reuse = s.reuse[:0]
	} else {
		s.solve(dst, capacity, flows, m == modeIncremental)
	}
	if observe != nil {
		observe(capacity, flows, dst)
	}
	return dst, nil
}

// solve fills the problem component by component, reusing the previous
// call's unchanged components if reuse is set, and remembers it.
func (s *Solver) solve(dst, capacity []float64, flows []Flow, reuse bool) {
	s.split(flows)
	s.matchPrevious(capacity, flows, reuse)
	p := &s.parts
	for f, fl := range flows {
		if len(fl.Links) == 0 {
			dst[f] = fl.Peak // nothing in its way: it sends at its peak
		}
	}
	for c := range p.count() {
		fs := p.flows(c)
		if s.reuse[c] {
			for _, f := range fs {
				dst[f] = s.mem.rate[s.match[f]]
			}
			continue
		}
		s.fill.solve(dst, capacity, flows, fs, p.links(c), s.local)
	}
	s.remember(capacity, flows, dst)
}

// setup validates the problem and lists the links it touches, in order of
// first crossing. It changes no state a later call reads.
func (s *Solver) setup(capacity []float64, flows []Flow) error {
	if len(s.seen) < len(capacity) {
		s.seen = grow(s.seen, len(capacity))
		clear(s.seen)
		s.stamp = 0
		s.parent = grow(s.parent, len(capacity))
		s.comp = grow(s.comp, len(capacity))
		s.local = grow(s.local, len(capacity))
		s.lastCap = grow(s.lastCap, len(capacity)) // keeps the remembered capacities
	}
	s.stamp++
	if s.stamp == 0 { // wrapped: old stamps could collide
		clear(s.seen)
		s.stamp = 1
	}
	s.touched = s.touched[:0]
	for f, fl := range flows {
		if !(fl.Peak > 0) {
			return fmt.Errorf("%w: flow %d: peak %v is not positive", ErrInvalid, f, fl.Peak)
		}
		if len(fl.Links) == 0 && math.IsInf(fl.Peak, 1) {
			return fmt.Errorf("%w: flow %d crosses no link and has no peak: its rate is unbounded", ErrInvalid, f)
		}
		for _, l := range fl.Links {
			if l < 0 || l >= len(capacity) {
				return fmt.Errorf("%w: flow %d crosses link %d, there are %d", ErrInvalid, f, l, len(capacity))
			}
			if s.seen[l] == s.stamp {
				continue
			}
			if c := capacity[l]; !(c > 0) || math.IsInf(c, 1) {
				return fmt.Errorf("%w: link %d: capacity %v is not a positive finite number", ErrInvalid, l, c)
			}
			s.seen[l] = s.stamp
			s.touched = append(s.touched, int32(l))
		}
	}
	return nil
}

// share is a link's fair share: what each of its n unfrozen connections
// gets of the capacity its frozen load F leaves.
func share(capacity, frozen float64, n int32) float64 {
	return max((capacity-frozen)/float64(n), 0)
}

// Loads writes into dst (grown if needed, len(capacity) entries) the traffic
// each link carries at the given rates: the sum over flows of rate times the
// number of times the flow crosses the link.
func Loads(dst []float64, links int, flows []Flow, rates []float64) []float64 {
	dst = grow(dst, links)
	clear(dst)
	for f, fl := range flows {
		for _, l := range fl.Links {
			dst[l] += rates[f]
		}
	}
	return dst
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return append(s[:cap(s)], make([]T, n-cap(s))...)
	}
	return s[:n]
}
