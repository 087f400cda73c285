package fuzz

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// maxFuzzTicks bounds the profiles FuzzProfile builds, so that one input
// costs microseconds; longer (valid) periods are skipped, longer invalid
// ones still run (they fail before allocating).
const maxFuzzTicks = 1 << 16

// phasesOf reads 16-byte (duration ns, bandwidth bits) records.
func phasesOf(data []byte) []profile.Phase {
	var ph []profile.Phase
	for len(data) >= 16 {
		ph = append(ph, profile.Phase{
			Duration:  time.Duration(binary.LittleEndian.Uint64(data)),
			Bandwidth: math.Float64frombits(binary.LittleEndian.Uint64(data[8:])),
		})
		data = data[16:]
	}
	return ph
}

// encodePhases is the inverse of phasesOf, for seeds.
func encodePhases(ph ...profile.Phase) []byte {
	var b []byte
	for _, p := range ph {
		b = binary.LittleEndian.AppendUint64(b, uint64(p.Duration))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Bandwidth))
	}
	return b
}

var profileSentinels = []error{
	profile.ErrNoPhases, profile.ErrInvalidDuration, profile.ErrInvalidBandwidth, profile.ErrPeriodMismatch,
	profile.ErrZeroPeriod, profile.ErrPeriodTooLong, profile.ErrDemandTooLarge, profile.ErrInvalidQuantum,
}

func FuzzProfile(f *testing.F) {
	ms := time.Millisecond
	f.Add(int64(0), 0.0, int64(255*ms), encodePhases(profile.Phase{Duration: 141 * ms}, profile.Phase{Duration: 114 * ms, Bandwidth: 25e9}))
	f.Fuzz(func(t *testing.T, tick int64, unit float64, period int64, data []byte) {
		phases := phasesOf(data)
		q := profile.Quantum{Tick: time.Duration(tick), Unit: unit}

		// Skip valid inputs whose profile would be long to build.
		tk := time.Duration(tick)
		if tk == 0 {
			tk = profile.DefaultTick
		}
		total := time.Duration(period)
		if total == 0 {
			for _, p := range phases {
				if p.Duration > 0 {
					total = min(total, math.MaxInt64-p.Duration) + p.Duration
				}
			}
		}
		if tk > 0 && total > 0 {
			if n := (total-1)/tk + 1; n > maxFuzzTicks && n <= profile.MaxPeriodTicks {
				t.Skip()
			}
		}

		p, err := profile.FromPhases(time.Duration(period), phases, q)
		if err != nil {
			if !slices.ContainsFunc(profileSentinels, func(s error) bool { return errors.Is(err, s) }) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			var pe *profile.PhaseError
			if errors.As(err, &pe) && (pe.Index < 0 || pe.Index >= len(phases)) {
				t.Fatalf("PhaseError index %d of %d phases", pe.Index, len(phases))
			}
			if p.Period != 0 || p.Demand != nil {
				t.Fatalf("failed with a profile: %+v", p)
			}
			return
		}
		if err := p.Validate(); err != nil || p.Period < 1 || len(p.Demand) != p.Period {
			t.Fatalf("invalid profile: period %d, %d demands: %v", p.Period, len(p.Demand), err)
		}
		for i, d := range p.Demand {
			if d < 0 || d > profile.MaxUnits {
				t.Fatalf("tick %d: demand %d outside [0, %d]", i, d, profile.MaxUnits)
			}
		}
		nq, _ := q.Normalize()
		// The true mass over the quantized period [0, Period*tick), in
		// unit-ticks: phases (or parts of them) past it are dropped.
		end := float64(p.Period) * float64(nq.Tick)
		var mass, scale, at float64
		for _, ph := range phases {
			d := math.Max(0, math.Min(float64(ph.Duration), end-at))
			at += float64(ph.Duration)
			mass += d * ph.Bandwidth / nq.Unit / float64(nq.Tick)
			scale += d * math.Abs(ph.Bandwidth) / nq.Unit / float64(nq.Tick)
		}
		if diff := math.Abs(float64(p.Mass()) - mass); diff > 0.5*float64(p.Period)+1e-9*(scale+float64(p.Period)) {
			t.Fatalf("mass %d, true mass %v: off by %v, more than half a unit on each of %d ticks", p.Mass(), mass, diff, p.Period)
		}
		again, _ := profile.FromPhases(time.Duration(period), phases, q)
		if !slices.Equal(p.Demand, again.Demand) {
			t.Fatal("same phases, different profiles")
		}
	})
}
