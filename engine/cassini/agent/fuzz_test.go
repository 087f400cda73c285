package agent

import (
	"math"
	"testing"
	"time"
)

// FuzzAgent drives two agents built from arbitrary plan and option values
// (sharing a group clock in Elastic mode) through arbitrary readiness steps:
// it must reject bad values with ErrInvalid and never start an iteration
// before the loop is ready.
func FuzzAgent(f *testing.F) {
	f.Add(int64(100e6), int64(40e6), int64(60e6), 0.05, uint8(1), []byte{97, 97, 106, 20})
	f.Add(int64(1), int64(0), int64(0), 0.5, uint8(2), []byte{255, 0, 1})
	f.Add(int64(math.MaxInt64), int64(1), int64(2), 0.0, uint8(2), []byte{3})
	f.Add(int64(100e6), int64(40e6), int64(60e6), 0.05, uint8(0), []byte{97, 140, 106, 20, 0, 255, 99, 101})
	f.Add(int64(100e6), int64(40e6), int64(60e6), 0.05, uint8(3), []byte{97, 140, 106, 20, 0, 255, 99, 101})
	f.Fuzz(func(t *testing.T, period, shift, offset int64, thr float64, mode uint8, steps []byte) {
		p := Plan{Reference: ref, Shift: time.Duration(shift), Period: time.Duration(period), CommOffset: time.Duration(offset),
			FreeComm: time.Duration(period / 2), Slack: time.Duration(offset / 2)}
		m := Mode(mode % 3)
		budget := [3]float64{0, -1, 60}[mode/3%3] // default, no cap, one a second
		if m == Elastic {
			p.Group = NewGroup(ref)
		}
		var agents [2]*Agent
		for i := range agents {
			a, err := New(p, Options{Mode: m, Threshold: thr, Budget: budget})
			if err != nil {
				return
			}
			agents[i] = a
		}
		now := [2]time.Time{ref, ref}
		for k, b := range steps {
			i := k % 2
			a := agents[i]
			d := a.Next(now[i])
			if d.Start.Before(now[i]) || d.Delay < 0 || d.Late < 0 || d.Delay != d.Start.Sub(now[i]) {
				t.Fatalf("decision %+v for ready %v", d, now[i].Sub(ref))
			}
			if e := a.Communicating(d.Start); e < -p.Period/2-1 || e > p.Period/2 {
				t.Fatalf("phase error %v outside [-T/2, T/2) for T = %v", e, p.Period)
			}
			a.Communicated(time.Duration(b) * p.Period / 256)
			// Work between 0 and ~2.5 periods, capped at a day.
			work := time.Duration(min(float64(b)/100*float64(p.Period), float64(24*time.Hour)))
			now[i] = d.Start.Add(work)
		}
		if s := agents[0].Stats(); s.Iterations != int64((len(steps)+1)/2) {
			t.Fatalf("stats %+v after %d steps", s, len(steps))
		}
	})
}
