package fluid

import (
	"fmt"
	"math"
)

// WeightedRates is [Solver.Rates] under weighted max-min fairness: on a
// saturated link each flow's rate is proportional to its weight, weights[f]
// (> 0, finite). Progressive filling raises every unfrozen flow's rate at
// weights[f] times a common level; a link fills when the weighted sum of
// its unfrozen connections reaches its residual capacity, a flow freezes at
// its peak. Equal weights give Rates' allocation.
//
// It models a congestion control whose shares are not equal: measured at
// the packet level (package ns3), a DCTCP flow already sending when another
// one joins its bottleneck keeps more than half of it, and NewReno's
// newcomer gets more. Off unless called: the fluid simulation uses Rates.
func (s *Solver) WeightedRates(dst []float64, capacity []float64, flows []Flow, weights []float64) ([]float64, error) {
	if len(weights) != len(flows) {
		return dst, fmt.Errorf("%w: %d weights for %d flows", ErrInvalid, len(weights), len(flows))
	}
	for f, w := range weights {
		if !(w > 0) || math.IsInf(w, 1) {
			return dst, fmt.Errorf("%w: flow %d: weight %v is not a positive finite number", ErrInvalid, f, w)
		}
	}
	if err := s.setup(capacity, flows); err != nil {
		return dst, err
	}
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
			s.count[l] += weights[f]
		}
	}
	level := 0.0
	for active > 0 {
		next := math.Inf(1)
		for _, l := range s.touched {
			if s.count[l] > saturated {
				next = min(next, level+s.residual[l]/s.count[l])
			}
		}
		for f, fl := range flows {
			if !s.frozen[f] {
				next = min(next, fl.Peak/weights[f])
			}
		}
		inc := next - level
		level = next
		for _, l := range s.touched {
			if c := s.count[l]; c > saturated {
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
			// Compared per unit of weight, as the level was chosen:
			// w*(peak/w) can round below the peak.
			stop := fl.Peak/weights[f] <= level
			for _, l := range fl.Links {
				stop = stop || s.full[l]
			}
			if !stop {
				continue
			}
			progress = true
			s.frozen[f] = true
			dst[f] = min(float64(weights[f]*level), fl.Peak)
			active--
			for _, l := range fl.Links {
				s.count[l] -= weights[f]
			}
		}
		if !progress {
			// A guard against rounding, as in Rates: freeze the flows of
			// the link with the least residual per unit of weight.
			best, share := -1, math.Inf(1)
			for _, l := range s.touched {
				if c := s.count[l]; c > saturated && s.residual[l]/c < share {
					best, share = l, s.residual[l]/c
				}
			}
			if best < 0 {
				return dst, fmt.Errorf("%w: weighted filling made no progress", ErrInvalid)
			}
			s.full[best] = true
		}
	}
	return dst, nil
}
