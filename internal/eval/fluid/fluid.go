package fluid

import (
	"errors"
	"fmt"
	"math"

	"github.com/orrery/orrery/internal/scratch"
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

// Solver holds the buffers of [Solver.Rates]. The zero value is ready; it
// is not safe for concurrent use.
type Solver struct {
	// Filling is how Rates fills; the zero value is the default.
	Filling Filling

	// Per link, sized to the most links seen.
	info   []linkInfo
	hotL   []bool  // it can saturate (see hot)
	parent []int32 // union-find over hot links
	grp    []int32 // a root's group
	local  []int32 // scratch of the filler
	stamp  uint32

	touched   []int32 // links some flow crosses, each once, in order of first crossing
	offers    []Offer // the same links, with their offered traffic
	hotLinks  []int32 // the hot ones among them, in the same order
	crossings int     // of all flows' links
	next      []int32 // scratch of group
	groups    groups
	fill      filler
	eager     eager
	legacy    legacy
}

// Rates writes the max-min fair rate of every flow into dst (grown if
// needed) and returns it. capacity[l] is link l's capacity (> 0, finite).
// Only the links some flow crosses are read. The rates are the filling's of
// the package doc, bit for bit, whatever the links that take part.
func (s *Solver) Rates(dst []float64, capacity []float64, flows []Flow) ([]float64, error) {
	if err := s.scan(capacity, flows); err != nil {
		return dst, err
	}
	dst = scratch.Resize(dst, len(flows))
	m := s.Filling
	switch m {
	case Eager:
		s.eager.solve(dst, capacity, flows, s.touched)
	case Legacy:
		s.legacy.solve(dst, capacity, flows, s.touched, nil)
	default:
		s.hotLinks = s.hotLinks[:0]
		keep := margin(s.crossings, len(flows))
		for _, o := range s.offers {
			l := int32(o.Link)
			h := m == Full || hot(capacity[l], o.Load, keep)
			s.hotL[l] = h
			if h {
				s.hotLinks = append(s.hotLinks, l)
			}
		}
		s.group(dst, flows)
		g := &s.groups
		for k := range g.count() {
			s.fill.solve(dst, capacity, flows, g.flows(k), g.links(k), s.local, s.hotL)
		}
	}
	if observe != nil {
		observe(capacity, flows, dst)
	}
	return dst, nil
}

// Offer is the traffic offered to a link: the sum of its crossings' peaks.
type Offer struct {
	Link int
	Load float64 // a flow crossing the link k times counted k times
}

// Offered returns, after a successful [Solver.Rates], every link the
// problem's flows cross, each once, in order of first crossing (flows in
// order, each flow's links in order), with the sum, in that order, of its
// crossings' peaks. A simulator measuring congestion as traffic offered above
// capacity reads it here instead of summing again. The slice is the
// Solver's: it is valid until the next call and must not be modified. After
// a rejected call it is empty.
func (s *Solver) Offered() []Offer { return s.offers }

// scan validates the problem, lists the links it touches and sums each
// one's crossings and their peaks.
func (s *Solver) scan(capacity []float64, flows []Flow) error {
	s.size(len(capacity))
	s.stamp++
	if s.stamp >= 1<<31 { // group's stamps come next: wrap early
		for i := range s.info {
			s.info[i].mark = 0
		}
		s.stamp = 1
	}
	s.touched = s.touched[:0]
	s.crossings = 0
	s.offers = s.offers[:0]
	info := s.info[:len(capacity)]
	for f, fl := range flows {
		s.crossings += len(fl.Links)
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
			in := &info[l]
			if in.mark != s.stamp {
				if c := capacity[l]; !(c > 0) || math.IsInf(c, 1) {
					return fmt.Errorf("%w: link %d: capacity %v is not a positive finite number", ErrInvalid, l, c)
				}
				*in = linkInfo{mark: s.stamp}
				s.touched = append(s.touched, int32(l))
			}
			in.load += fl.Peak
		}
	}
	for _, l := range s.touched {
		s.offers = append(s.offers, Offer{int(l), info[l].load})
	}
	return nil
}

// linkInfo is what scan learns of a link.
type linkInfo struct {
	load float64 // the peaks of its crossings, summed
	mark uint32  // stamp of the call that listed it in touched
}

// size grows the per-link buffers to n links.
func (s *Solver) size(n int) {
	if len(s.info) >= n {
		return
	}
	s.info = scratch.Resize(s.info, n)
	s.hotL = scratch.Resize(s.hotL, n)
	s.parent = scratch.Resize(s.parent, n)
	s.grp = scratch.Resize(s.grp, n)
	s.local = scratch.Resize(s.local, n)
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
	dst = scratch.Resize(dst, links)
	clear(dst)
	for f, fl := range flows {
		for _, l := range fl.Links {
			dst[l] += rates[f]
		}
	}
	return dst
}
