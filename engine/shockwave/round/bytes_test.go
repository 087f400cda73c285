package round

import (
	"runtime"
	"testing"

	"github.com/orrery/orrery/engine/shockwave/predictor"
)

// TestSchedulerBytes: Bytes counts what the jobs hold, within a factor of
// two of the heap they take (a session's cap is in these bytes), and
// returns to 0 when they leave.
func TestSchedulerBytes(t *testing.T) {
	for _, c := range []struct {
		name     string
		epochs   int
		timeline int
	}{{"short", 2, 0}, {"long", 200, 0}, {"calibrated", 50, 40}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(64, Config{})
			if err != nil {
				t.Fatal(err)
			}
			const n = 2000
			heap := func() uint64 {
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			before := heap()
			for i := range n {
				j := Job{ID: i, GPUs: 1, Submit: 60, EpochBS: make([]int, c.epochs), EpochDur: make([]float64, c.epochs), SamplesPerEpoch: 1000}
				for e := range j.EpochBS {
					j.EpochBS[e], j.EpochDur[e] = 32<<(e%2), 36
				}
				if err := s.Add(j); err != nil {
					t.Fatal(err)
				}
			}
			for r := range c.timeline {
				for i := range n {
					if err := s.Observe(i, predictor.Sample{Round: r + 1, ItPerSec: 3, BatchSize: 32}); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.EndRound(); err != nil {
					t.Fatal(err)
				}
			}
			got := float64(heap() - before)
			ratio := got / float64(s.Bytes())
			t.Logf("%d jobs of %d epochs: Bytes %d, heap %.0f (%.2f×)", n, c.epochs, s.Bytes(), got, ratio)
			if ratio < 0.5 || ratio > 2 {
				t.Errorf("heap/Bytes = %.2f, want within [0.5, 2]", ratio)
			}
			for i := range n {
				if err := s.Remove(i); err != nil {
					t.Fatal(err)
				}
			}
			if s.Bytes() != 0 {
				t.Errorf("Bytes %d with no job", s.Bytes())
			}
		})
	}
}
