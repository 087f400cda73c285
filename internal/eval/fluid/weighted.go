package fluid

import (
	"fmt"
	"math"

	"github.com/orrery/orrery/internal/scratch"
)

// WeightedRates is [Solver.Rates] under weighted max-min fairness: on a
// saturated link each flow's rate is proportional to its weight, weights[f]
// (> 0, finite). Progressive filling raises every unfrozen flow's rate at
// weights[f] times a common level; a link fills when the weighted sum of
// its unfrozen connections reaches its residual capacity, a flow freezes at
// its peak. It is the legacy whole-network filling (Legacy)
// with weights: unit weights give that filling's rates bit for bit, and
// Rates' default to about 1e-15, relative.
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
	if err := s.scan(capacity, flows); err != nil {
		return dst, err
	}
	dst = scratch.Resize(dst, len(flows))
	s.legacy.solve(dst, capacity, flows, s.touched, weights)
	return dst, nil
}
