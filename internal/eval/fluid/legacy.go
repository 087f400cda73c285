package fluid

import (
	"math"
	"slices"

	"github.com/orrery/orrery/internal/scratch"
)

// legacy is the filling this package used before it filled by components
// (Legacy), kept to reproduce older results and to measure
// against: one common level for the whole network, every link's residual
// capacity decremented by the level's increment at every round, residuals
// within 1e-12 of the capacity counted as zero. It is the same max-min
// allocation, rounded differently: its residuals depend on the levels of
// every component, so it cannot be computed one component at a time. Its
// rates agree with the filling's to about 1e-15, relative.
//
// With weights (WeightedRates) every unfrozen flow f runs at weights[f]
// times the common level; nil weights are all 1, and then every weighted
// step below is exactly the unweighted one (x/1 and 1*x are exact).
type legacy struct {
	residual []float64 // capacity left on each link
	count    []float64 // unfrozen connections on each link
	full     []bool    // link saturated
	frozen   []bool    // flow frozen
}

func (s *legacy) solve(dst, capacity []float64, flows []Flow, touched []int32, weights []float64) {
	const saturated = 1e-12
	s.residual = scratch.Resize(s.residual, len(capacity))
	s.count = scratch.Resize(s.count, len(capacity))
	s.full = scratch.Resize(s.full, len(capacity))
	s.frozen = scratch.Resize(s.frozen, len(flows))
	for _, l := range touched {
		s.residual[l], s.count[l], s.full[l] = capacity[l], 0, false
	}
	active := 0
	for f, fl := range flows {
		dst[f], s.frozen[f] = 0, false
		if len(fl.Links) == 0 {
			dst[f], s.frozen[f] = fl.Peak, true // nothing in its way
			continue
		}
		active++
		for _, l := range fl.Links {
			s.count[l] += weight(weights, f)
		}
	}
	level := 0.0 // the common rate of every unfrozen flow
	for active > 0 {
		// The next level: the lowest at which a link fills or a flow
		// reaches its peak.
		next := math.Inf(1)
		for _, l := range touched {
			if s.count[l] > 0 {
				next = min(next, level+s.residual[l]/s.count[l])
			}
		}
		for f, fl := range flows {
			if !s.frozen[f] {
				next = min(next, fl.Peak/weight(weights, f))
			}
		}
		inc := next - level
		level = next
		for _, l := range touched {
			if c := s.count[l]; c > 0 {
				s.residual[l] -= float64(inc * c) // no fused multiply-subtract
				if s.residual[l] <= saturated*capacity[l] {
					s.residual[l], s.full[l] = 0, true
				}
			}
		}
		progress := s.freeze(dst, flows, weights, level, &active, -1)
		s.recount(flows, touched, weights)
		if !progress {
			// Unreachable in exact arithmetic; a guard against rounding
			// looping forever: the flows on the fullest link stop.
			best, share := int32(-1), math.Inf(1)
			for _, l := range touched {
				if c := s.count[l]; c > 0 && s.residual[l]/c < share {
					best, share = l, s.residual[l]/c
				}
			}
			s.full[best] = true
			s.freeze(dst, flows, weights, level, &active, int(best))
			s.recount(flows, touched, weights)
		}
	}
}

// freeze freezes every unfrozen flow that reached its peak or crosses a full
// link (only, with only >= 0, the flows crossing that link) and reports
// whether it froze any.
func (s *legacy) freeze(dst []float64, flows []Flow, weights []float64, level float64, active *int, only int) bool {
	progress := false
	for f, fl := range flows {
		if s.frozen[f] {
			continue
		}
		// Compared per unit of weight, as the level was chosen: w*(peak/w)
		// can round below the peak.
		w := weight(weights, f)
		stop := fl.Peak/w <= level
		for _, l := range fl.Links {
			stop = stop || s.full[l]
		}
		if only >= 0 {
			stop = slices.Contains(fl.Links, only)
		}
		if !stop {
			continue
		}
		progress = true
		s.frozen[f] = true
		dst[f] = min(float64(w*level), fl.Peak)
		*active--
		if weights == nil {
			for _, l := range fl.Links {
				s.count[l]--
			}
		}
	}
	return progress
}

// recount sums the weights of the unfrozen flows on each link afresh:
// decrementing a float sum could leave a link a phantom weight, or none,
// where a light flow is still unfrozen. Integer unit counts need not.
func (s *legacy) recount(flows []Flow, touched []int32, weights []float64) {
	if weights == nil {
		return
	}
	for _, l := range touched {
		s.count[l] = 0
	}
	for f, fl := range flows {
		if !s.frozen[f] {
			for _, l := range fl.Links {
				s.count[l] += weights[f]
			}
		}
	}
}

// weight is flow f's weight: 1 without weights.
func weight(weights []float64, f int) float64 {
	if weights == nil {
		return 1
	}
	return weights[f]
}
