package netsim

import (
	"math"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

func phases(t *testing.T, spec ...float64) profile.Profile {
	t.Helper()
	var ph []profile.Phase
	for i := 0; i < len(spec); i += 2 {
		ph = append(ph, profile.Phase{Duration: time.Duration(spec[i]) * time.Millisecond, Bandwidth: spec[i+1] * profile.Gbps})
	}
	p, err := profile.FromPhases(0, ph, profile.Quantum{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The replay is the fluid model of one link: two VGG19 jobs (150 ms of
// compute, 118 ms of all-reduce at 39 Gbps) on 50 Gbps take 334.08 ms fully
// overlapped (each all-reduce at 25 Gbps) and their uncontended 268 ms
// interleaved; free from spread phases they average in between, so holding
// the interleaving gains each job the difference.
func TestReplayFig2(t *testing.T) {
	vgg := phases(t, 150, 0, 118, 39)
	profs := []profile.Profile{vgg, vgg}
	for _, tc := range []struct {
		shift int
		iter  float64
	}{{0, 334.08}, {134, 268}, {120, 268}} {
		it, cm := replayLink(profs, []int{268, 268}, []int{0, tc.shift}, nil, 50000, true, 20000)
		if math.Abs(it[0]-tc.iter) > 0.01 || math.Abs(it[1]-tc.iter) > 0.01 || cm[0] < 118-1e-6 {
			t.Errorf("shift %d: iterations %v, communication %v; want %v", tc.shift, it, cm, tc.iter)
		}
	}
	gain, free := holdGain(profs, []int{268, 268}, []int{0, 134}, 50000)
	for j := range gain {
		if gain[j] < 20 || gain[j] > 45 || free[j] <= 118 || math.Abs(free[j]-118-gain[j]) > 1e-6 {
			t.Errorf("job %d: gain %v ms, free communication %v ms", j, gain[j], free[j])
		}
	}
	// Jobs whose peaks fit the link together gain nothing.
	small := phases(t, 150, 0, 118, 20)
	if g, _ := holdGain([]profile.Profile{small, small}, []int{268, 268}, []int{0, 134}, 50000); math.Abs(g[0]) > 1e-6 || math.Abs(g[1]) > 1e-6 {
		t.Errorf("compatible at any phase: gain %v", g)
	}
	// Periods in a 27:28 ratio sweep every phase held or not: little gain.
	a, b := phases(t, 152, 0, 118, 39), phases(t, 162, 0, 118, 39)
	if g, _ := holdGain([]profile.Profile{a, b}, []int{270, 280}, []int{0, 135}, 50000); g[0] > 5 || g[1] > 5 {
		t.Errorf("27:28: gain %v", g)
	}
}
