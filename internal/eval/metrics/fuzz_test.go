package metrics

import (
	"errors"
	"math"
	"testing"
)

// FuzzSummarize checks that any two-job run either summarizes to finite,
// in-range figures or fails with a sentinel.
func FuzzSummarize(f *testing.F) {
	f.Add(0.0, 100.0, 40.0, 80.0, 3.0, 10.0, 210.0, 100.0, 200.0, 0.0, 2, 0)
	f.Add(5.0, 5.0, 1.0, 0.0, 0.0, 5.0, 5.0, 1.0, 0.0, 0.0, 1, 7)
	f.Fuzz(func(t *testing.T, a0, c0, i0, g0, m0, a1, c1, i1, g1, m1 float64, gpus, n int) {
		jobs := []Job{
			{ID: 0, Arrival: a0, Completion: c0, Isolated: i0, GPUSeconds: g0, MeanActive: m0},
			{ID: 1, Arrival: a1, Completion: c1, Isolated: i1, GPUSeconds: g1, MeanActive: m1},
		}
		s, err := Summarize(jobs, Cluster{GPUs: gpus, TraceJobs: n})
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrEmpty) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		for _, v := range []float64{s.Makespan, s.AvgJCT, s.WorstFTF, s.WorstFTFThemis, s.Utilization} {
			if math.IsNaN(v) || v < 0 {
				t.Fatalf("bad summary %+v", s)
			}
		}
		if s.Utilization > 1+1e-9 || s.Unfair110 > s.Unfair105 {
			t.Fatalf("bad summary %+v", s)
		}
	})
}
