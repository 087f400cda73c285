package sim

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/orrery/orrery/internal/eval/trace"
)

// FuzzRun replays arbitrary trace text on the tiny table: a bad trace is
// an error (never a panic), and a good one either finishes with sane
// records or stops with a typed error.
func FuzzRun(f *testing.F) {
	f.Add([]byte(line(rn18, 3*1563, 1, "static", 0)), uint8(1))
	f.Add([]byte(line(rn18, 60*1563, 1, "gns", 0)+"\n"+line(rn18, 4000, 2, "accordion", 30)), uint8(2))
	f.Add([]byte(line("LM (batch size 5)", 31*11935, 1, "gns", 0)+"\n"+line("Recommendation (batch size 512)", 20000, 1, "accordion", 5)), uint8(3))
	f.Add([]byte(line(rn18, 10, 4, "static", 0)+"\n"+line(rn18, 10, 1, "static", 0)), uint8(2))
	f.Add([]byte("ResNet-18 (batch size 32)\tx\ty\tz\t0\t-5\t1\tstatic\t1\t-1\t100\t0"), uint8(1))
	tab := loadTiny(f)
	f.Fuzz(func(t *testing.T, data []byte, g uint8) {
		jobs, err := trace.Parse(bytes.NewReader(data))
		if err != nil || len(jobs) > 50 {
			return
		}
		w, err := NewWorkload(jobs, tab, WorkloadOptions{})
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, trace.ErrThroughput) && !errors.Is(err, trace.ErrRange) {
				t.Fatalf("workload: untyped error %v", err)
			}
			return
		}
		gpus := int(g%16) + 1
		res, err := Run(context.Background(), w, &fifo{}, Options{GPUs: gpus, MaxRounds: 2000})
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrStalled) {
				t.Fatalf("run: untyped error %v", err)
			}
			return
		}
		if !res.Complete || len(res.Jobs) != len(jobs) {
			t.Fatalf("complete %v with %d of %d jobs", res.Complete, len(res.Jobs), len(jobs))
		}
		for _, j := range res.Jobs {
			if !(j.JCT >= 0) || math.IsInf(j.FTF, 0) || math.IsNaN(j.FTF) || j.Completion < j.Admitted {
				t.Fatalf("job record %+v", j)
			}
		}
		if u := res.Summary.Utilization; !(u >= 0 && u <= 1+1e-9) {
			t.Fatalf("utilization %v", u)
		}
	})
}
