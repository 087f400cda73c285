package fluid

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrInvalid reports a malformed problem: a capacity or peak that is not a
// positive number, a link index out of range, or a flow that nothing limits.
var ErrInvalid = errors.New("fluid: invalid problem")

// saturated is the fraction of a link's capacity below which its residual
// counts as zero: it absorbs the rounding of the repeated subtractions.
const saturated = 1e-12

// Flow is a fluid flow.
type Flow struct {
	// Links are the indices of the links the flow crosses. A link listed k
	// times carries k connections of the flow, each at the flow's rate.
	Links []int
	// Peak is the most the flow can send, in the capacities' unit (e.g.
	// bits per second); > 0, and +Inf for no limit other than the links.
	Peak float64
}

// Solver holds the buffers of [Solver.Rates]. The zero value is ready; it is
// not safe for concurrent use.
type Solver struct {
	residual []float64 // capacity left on each link
	count    []float64 // unfrozen connections on each link
	full     []bool    // link saturated
	frozen   []bool    // flow frozen
	touched  []int     // links crossed by some flow, each once
	seen     []uint32  // link -> stamp of the solve that touched it
	stamp    uint32
}

// Rates writes the max-min fair rate of every flow into dst (grown if
// needed) and returns it. capacity[l] is link l's capacity (> 0, finite).
// Only the links some flow crosses are read.
func (s *Solver) Rates(dst []float64, capacity []float64, flows []Flow) ([]float64, error) {
	if err := s.setup(capacity, flows); err != nil {
		return dst, err
	}
	dst = grow(dst, len(flows))
	active := 0
	for f, fl := range flows {
		dst[f] = 0
		s.frozen[f] = false
		if len(fl.Links) == 0 {
			dst[f] = fl.Peak // nothing in its way: it sends at its peak
			s.frozen[f] = true
			continue
		}
		active++
		for _, l := range fl.Links {
			s.count[l]++
		}
	}
	level := 0.0 // the common rate of every unfrozen flow
	for active > 0 {
		// The next level: the lowest at which a link fills or a flow
		// reaches its peak.
		next := math.Inf(1)
		for _, l := range s.touched {
			if s.count[l] > 0 {
				next = min(next, level+s.residual[l]/s.count[l])
			}
		}
		for f, fl := range flows {
			if !s.frozen[f] {
				next = min(next, fl.Peak)
			}
		}
		inc := next - level
		level = next
		for _, l := range s.touched {
			if c := s.count[l]; c > 0 {
				// The conversion keeps the compiler from fusing the
				// multiply-subtract, so every platform rounds alike.
				s.residual[l] -= float64(inc * c)
				if s.residual[l] <= saturated*capacity[l] {
					s.residual[l] = 0
					s.full[l] = true
				}
			}
		}
		progress := false
		for f, fl := range flows {
			if s.frozen[f] {
				continue
			}
			stop := fl.Peak <= level
			for _, l := range fl.Links {
				stop = stop || s.full[l]
			}
			if !stop {
				continue
			}
			progress = true
			s.frozen[f] = true
			dst[f] = min(level, fl.Peak)
			active--
			for _, l := range fl.Links {
				s.count[l]--
			}
		}
		if !progress {
			// Unreachable in exact arithmetic (the level stopped at a
			// link or a peak); a guard against rounding looping forever:
			// the flows on the fullest link stop at the level.
			s.freezeFullest(flows, dst, level, &active)
		}
	}
	return dst, nil
}

// freezeFullest freezes the unfrozen flows crossing the link with the least
// residual capacity per connection.
func (s *Solver) freezeFullest(flows []Flow, dst []float64, level float64, active *int) {
	best, share := -1, math.Inf(1)
	for _, l := range s.touched {
		if c := s.count[l]; c > 0 && s.residual[l]/c < share {
			best, share = l, s.residual[l]/c
		}
	}
	s.full[best] = true
	for f, fl := range flows {
		if !s.frozen[f] && slices.Contains(fl.Links, best) {
			s.frozen[f] = true
			dst[f] = min(level, fl.Peak)
			*active--
			for _, l := range fl.Links {
				s.count[l]--
			}
		}
	}
}

// setup validates the problem and sizes the buffers.
func (s *Solver) setup(capacity []float64, flows []Flow) error {
	if len(s.seen) < len(capacity) {
		s.seen = make([]uint32, len(capacity))
		s.stamp = 0
	}
	s.stamp++
	if s.stamp == 0 { // wrapped: old stamps could collide
		clear(s.seen)
		s.stamp = 1
	}
	s.residual = grow(s.residual, len(capacity))
	s.count = grow(s.count, len(capacity))
	s.full = grow(s.full, len(capacity))
	s.frozen = grow(s.frozen, len(flows))
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
			c := capacity[l]
			if !(c > 0) || math.IsInf(c, 1) {
				return fmt.Errorf("%w: link %d: capacity %v is not a positive finite number", ErrInvalid, l, c)
			}
			s.seen[l] = s.stamp
			s.touched = append(s.touched, l)
			s.residual[l] = c
			s.count[l] = 0
			s.full[l] = false
		}
	}
	return nil
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
		return make([]T, n)
	}
	return s[:n]
}
