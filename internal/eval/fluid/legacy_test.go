package fluid

import (
	"math"
	"slices"
)

// legacyRates is the progressive filling this package used before it
// filled by components: one common level for the whole network, every
// link's residual capacity decremented by the level's increment at every
// round, residuals within 1e-12 of the capacity counted as zero. It is the
// same max-min allocation, rounded differently (its residuals depend on the
// levels of every component, so it cannot be computed one component at a
// time); the tests check that the two agree to rounding.
func legacyRates(capacity []float64, flows []Flow) []float64 {
	const saturated = 1e-12
	residual := slices.Clone(capacity)
	count := make([]float64, len(capacity))
	full := make([]bool, len(capacity))
	frozen := make([]bool, len(flows))
	var touched []int
	for _, fl := range flows {
		for _, l := range fl.Links {
			if !slices.Contains(touched, l) {
				touched = append(touched, l)
			}
		}
	}
	dst := make([]float64, len(flows))
	active := 0
	for f, fl := range flows {
		if len(fl.Links) == 0 {
			dst[f], frozen[f] = fl.Peak, true
			continue
		}
		active++
		for _, l := range fl.Links {
			count[l]++
		}
	}
	freeze := func(f int, level float64) {
		frozen[f] = true
		dst[f] = min(level, flows[f].Peak)
		active--
		for _, l := range flows[f].Links {
			count[l]--
		}
	}
	level := 0.0
	for active > 0 {
		next := math.Inf(1)
		for _, l := range touched {
			if count[l] > 0 {
				next = min(next, level+residual[l]/count[l])
			}
		}
		for f, fl := range flows {
			if !frozen[f] {
				next = min(next, fl.Peak)
			}
		}
		inc := next - level
		level = next
		for _, l := range touched {
			if c := count[l]; c > 0 {
				residual[l] -= float64(inc * c)
				if residual[l] <= saturated*capacity[l] {
					residual[l], full[l] = 0, true
				}
			}
		}
		progress := false
		for f, fl := range flows {
			if frozen[f] {
				continue
			}
			stop := fl.Peak <= level
			for _, l := range fl.Links {
				stop = stop || full[l]
			}
			if stop {
				progress = true
				freeze(f, level)
			}
		}
		if !progress { // the rounding guard: the fullest link's flows stop
			best, share := -1, math.Inf(1)
			for _, l := range touched {
				if c := count[l]; c > 0 && residual[l]/c < share {
					best, share = l, residual[l]/c
				}
			}
			full[best] = true
			for f, fl := range flows {
				if !frozen[f] && slices.Contains(fl.Links, best) {
					freeze(f, level)
				}
			}
		}
	}
	return dst
}

// legacySolver is the package's Solver before it filled by components,
// verbatim but for names: the baseline the benchmarks measure against.
type legacySolver struct {
	residual []float64
	count    []float64
	full     []bool
	frozen   []bool
	touched  []int
	seen     []uint32
	stamp    uint32
}

func (s *legacySolver) rates(dst []float64, capacity []float64, flows []Flow) ([]float64, error) {
	const saturated = 1e-12
	s.setup(capacity, flows)
	dst = grow(dst, len(flows))
	active := 0
	for f, fl := range flows {
		dst[f] = 0
		s.frozen[f] = false
		if len(fl.Links) == 0 {
			dst[f] = fl.Peak
			s.frozen[f] = true
			continue
		}
		active++
		for _, l := range fl.Links {
			s.count[l]++
		}
	}
	level := 0.0
	for active > 0 {
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
					active--
					for _, l := range fl.Links {
						s.count[l]--
					}
				}
			}
		}
	}
	return dst, nil
}

func (s *legacySolver) setup(capacity []float64, flows []Flow) {
	if len(s.seen) < len(capacity) {
		s.seen = make([]uint32, len(capacity))
		s.stamp = 0
	}
	s.stamp++
	s.residual = grow(s.residual, len(capacity))
	s.count = grow(s.count, len(capacity))
	s.full = grow(s.full, len(capacity))
	s.frozen = grow(s.frozen, len(flows))
	s.touched = s.touched[:0]
	for _, fl := range flows {
		for _, l := range fl.Links {
			if s.seen[l] == s.stamp {
				continue
			}
			s.seen[l] = s.stamp
			s.touched = append(s.touched, l)
			s.residual[l] = capacity[l]
			s.count[l] = 0
			s.full[l] = false
		}
	}
}
