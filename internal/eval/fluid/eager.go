package fluid

import (
	"math"

	"github.com/orrery/orrery/internal/scratch"
)

// eager is the reference filling: the whole network at once, every link and
// flow scanned in every round (the textbook algorithm's cost, O(F * (F + E))
// per solve). It computes exactly what the filling of the package doc
// defines, so it gives the same rates, bit for bit, as the component-wise
// filling.
type eager struct {
	frozen []float64 // per link (F)
	n      []int32   // unfrozen connections per link
	m      []int32   // connections frozen this round
	at     []bool    // share at most the level this round
	done   []bool    // per flow
}

func (e *eager) solve(dst, capacity []float64, flows []Flow, touched []int32) {
	links := len(capacity)
	e.frozen = scratch.Resize(e.frozen, links)
	e.n = scratch.Resize(e.n, links)
	e.m = scratch.Resize(e.m, links)
	e.at = scratch.Resize(e.at, links)
	e.done = scratch.Resize(e.done, len(flows))
	for _, l := range touched {
		e.frozen[l], e.n[l], e.m[l] = 0, 0, 0
	}
	left := 0
	for f, fl := range flows {
		e.done[f] = len(fl.Links) == 0
		if e.done[f] {
			dst[f] = fl.Peak // nothing in its way: it sends at its peak
			continue
		}
		left++
		for _, l := range fl.Links {
			e.n[l]++
		}
	}
	for left > 0 {
		level := math.Inf(1)
		for _, l := range touched {
			if e.n[l] > 0 {
				level = min(level, share(capacity[l], e.frozen[l], e.n[l]))
			}
		}
		for f, fl := range flows {
			if !e.done[f] {
				level = min(level, fl.Peak)
			}
		}
		for _, l := range touched {
			e.at[l] = e.n[l] > 0 && share(capacity[l], e.frozen[l], e.n[l]) <= level
		}
		for f, fl := range flows {
			if e.done[f] {
				continue
			}
			stop := fl.Peak <= level
			for _, l := range fl.Links {
				stop = stop || e.at[l]
			}
			if !stop {
				continue
			}
			e.done[f] = true
			dst[f] = level
			left--
			for _, l := range fl.Links {
				e.m[l]++
			}
		}
		for _, l := range touched {
			if m := e.m[l]; m > 0 {
				e.frozen[l] += float64(float64(m) * level)
				e.n[l] -= m
				e.m[l] = 0
			}
		}
	}
}
