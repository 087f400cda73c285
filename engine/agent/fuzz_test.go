package agent

import (
	"math"
	"testing"
	"time"
)

// FuzzAgent drives an agent built from arbitrary plan and option values
// through arbitrary readiness steps: it must reject bad values with
// ErrInvalid and never start an iteration before the loop is ready.
func FuzzAgent(f *testing.F) {
	f.Add(int64(100e6), int64(40e6), int64(60e6), 0.05, false, []byte{97, 97, 106, 20})
	f.Add(int64(1), int64(0), int64(0), 0.5, true, []byte{255, 0, 1})
	f.Add(int64(math.MaxInt64), int64(1), int64(2), 0.0, true, []byte{3})
	f.Fuzz(func(t *testing.T, period, shift, offset int64, thr float64, free bool, steps []byte) {
		mode := Pad
		if free {
			mode = Free
		}
		p := Plan{Reference: ref, Shift: time.Duration(shift), Period: time.Duration(period), CommOffset: time.Duration(offset)}
		a, err := New(p, Options{Mode: mode, Threshold: thr})
		if err != nil {
			return
		}
		now := ref
		for _, b := range steps {
			d := a.Next(now)
			if d.Start.Before(now) || d.Delay < 0 || d.Late < 0 {
				t.Fatalf("decision %+v for ready %v", d, now.Sub(ref))
			}
			if e := a.Communicating(d.Start); e < -p.Period/2-1 || e > p.Period/2 {
				t.Fatalf("phase error %v outside [-T/2, T/2) for T = %v", e, p.Period)
			}
			// Work between 0 and ~2.5 periods, capped at a year.
			work := time.Duration(min(float64(b)/100*float64(p.Period), float64(365*24*time.Hour)))
			now = d.Start.Add(work)
		}
		if s := a.Stats(); s.Iterations != int64(len(steps)) {
			t.Fatalf("stats %+v after %d steps", s, len(steps))
		}
	})
}
