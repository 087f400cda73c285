package link

import (
	"context"
	"fmt"
	"testing"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/profile"
	"github.com/orrery/orrery/internal/kernels"
)

// comm is a job of period t ms that computes for t-up ms, then communicates
// at gbps for up ms (1 ms ticks, 1 Gbps units... in Mbps: 1000 units/Gbps).
func comm(t, up int, gbps int32) profile.Profile {
	d := make([]int32, t)
	for i := t - up; i < t; i++ {
		d[i] = gbps * 1000
	}
	return profile.Profile{Period: t, Demand: d}
}

// BenchmarkTwoJobs is the case: periods 255 and 181 ms at 1 ms ticks
// on a 50 Gbps link (unified circle of 46155 ticks). "gcd" is the search,
// which needs gcd(255, 181) = 1 shift; "naive" scans all 181 shifts of the
// second job over the whole circle with the same kernel.
func BenchmarkTwoJobs(b *testing.B) {
	jobs := []profile.Profile{comm(255, 114, 40), comm(181, 60, 40)}
	pr := Problem{Jobs: jobs, Capacity: 50000}
	b.Run("gcd", func(b *testing.B) {
		var w Workspace
		dst := make([]int, 2)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Search(context.Background(), pr, Options{}, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("naive", func(b *testing.B) {
		p := 46155
		base := circle.Tile(nil, jobs[0].Demand, 255, p)
		rot := circle.Tile(nil, jobs[1].Demand, 181, p)
		rotor := kernels.PrepareRotor(nil, rot)
		out := make([]int64, 181)
		b.ReportAllocs()
		for b.Loop() {
			kernels.Rotations(out, base, rotor, 50000, 0)
			best := 0
			for s, e := range out {
				if e < out[best] {
					best = s
				}
			}
			_ = best
		}
	})
	b.Run("paper", func(b *testing.B) {
		var w Workspace
		dst := make([]int, 2)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Search(context.Background(), pr, Options{Mode: Paper}, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEqualPeriods: two 255 ms jobs, 255 candidate shifts on a 255 tick
// circle, at 1 ms and at 100 µs ticks.
func BenchmarkEqualPeriods(b *testing.B) {
	for _, scale := range []int{1, 10} {
		jobs := []profile.Profile{comm(255*scale, 114*scale, 40), comm(255*scale, 114*scale, 40)}
		pr := Problem{Jobs: jobs, Capacity: 50000}
		b.Run(fmt.Sprintf("ticks=%d", 255*scale), func(b *testing.B) {
			var w Workspace
			dst := make([]int, 2)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Search(context.Background(), pr, Options{}, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkThreeJobs: three jobs of about 200 ms (180, 200, 240: unified
// circle 3600 ticks) on a 50 Gbps link, proven optimal by branch and bound.
func BenchmarkThreeJobs(b *testing.B) {
	jobs := []profile.Profile{comm(180, 60, 30), comm(200, 70, 30), comm(240, 80, 30)}
	pr := Problem{Jobs: jobs, Capacity: 50000}
	for _, mode := range []Mode{Exact, Paper} {
		b.Run(mode.String(), func(b *testing.B) {
			var w Workspace
			dst := make([]int, 3)
			var res Result
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if res, err = w.Search(context.Background(), pr, Options{Mode: mode}, dst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(res.Score, "score")
			b.ReportMetric(float64(res.Evaluated), "pairs/op")
		})
	}
}
