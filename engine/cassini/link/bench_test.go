package link

import (
	"context"
	"fmt"
	"testing"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/kernels"
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

// BenchmarkTwoJobs is the issue's case: periods 255 and 181 ms at 1 ms ticks
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

// issueLinks are the links of issue 16 at 1 ms ticks on a 50 Gbps link:
// coprime periods whose unified circles are 24,995,000, 1,041,537,223 and
// 46,155 ticks.
func issueLinks() []struct {
	name string
	jobs []profile.Profile
} {
	return []struct {
		name string
		jobs []profile.Profile
	}{
		{"5000_4999", []profile.Profile{comm(5000, 2000, 40), comm(4999, 1800, 35)}},
		{"1009_1013_1019", []profile.Profile{comm(1009, 300, 30), comm(1013, 350, 30), comm(1019, 400, 30)}},
		{"255_181", []profile.Profile{comm(255, 114, 40), comm(181, 60, 40)}},
	}
}

// BenchmarkIssueLinks runs the issue's links with the shared-circle search
// and with today's (Options.Materialize), in one run: compare ns/op. Today's
// search refuses the first two at any cap (their circles pass 2^24 ticks),
// so it runs with period rounding, as a user would: its score is then for
// the rounded periods (the unrounded-score metric scores its shifts on the
// real periods).
func BenchmarkIssueLinks(b *testing.B) {
	for _, l := range issueLinks() {
		pr := Problem{Jobs: l.jobs, Capacity: 50000}
		for _, m := range []struct {
			name string
			opt  Options
		}{
			{"shared", Options{}},
			{"today", Options{Materialize: true, Circle: circle.Options{Round: true}}},
		} {
			b.Run(l.name+"/"+m.name, func(b *testing.B) {
				var w Workspace
				dst := make([]int, len(l.jobs))
				res, err := w.Search(context.Background(), pr, m.opt, dst)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					res, _ = w.Search(context.Background(), pr, m.opt, dst)
				}
				// Today's score may be for rounded periods: score its shifts
				// on the real ones too.
				var ev Workspace
				real, points, err := ev.Evaluate(pr, Options{}, res.Shifts)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(res.Score, "score")
				b.ReportMetric(score(real, points, pr.Capacity), "real-score")
				b.ReportMetric(float64(res.Evaluated), "pairs/op")
			})
		}
	}
}

// commAt is a job of period t ticks sending gbps for up ticks from start.
func commAt(t, start, up int, gbps int32) profile.Profile {
	d := make([]int32, t)
	for i := range up {
		d[(start+i)%t] = gbps * 1000
	}
	return profile.Profile{Period: t, Demand: d}
}

// BenchmarkHardLinks: three and four jobs whose irregular phases leave
// nothing to fold, proven optimal without a budget by the shared-circle
// search and by today's (Options.Materialize), in one run.
func BenchmarkHardLinks(b *testing.B) {
	for _, l := range []struct {
		name string
		jobs []profile.Profile
	}{
		{"180_200_240", []profile.Profile{commAt(180, 119, 61, 30), commAt(200, 127, 73, 30), commAt(240, 153, 87, 30)}},
		{"120_150_200_240", []profile.Profile{commAt(120, 70, 41, 25), commAt(150, 90, 47, 25), commAt(200, 100, 63, 25), commAt(240, 150, 71, 25)}},
	} {
		pr := Problem{Jobs: l.jobs, Capacity: 50000}
		for _, m := range []struct {
			name string
			opt  Options
		}{{"shared", Options{Budget: -1}}, {"today", Options{Budget: -1, Materialize: true}}} {
			b.Run(l.name+"/"+m.name, func(b *testing.B) {
				var w Workspace
				dst := make([]int, len(l.jobs))
				res, err := w.Search(context.Background(), pr, m.opt, dst)
				if err != nil || res.Status != Optimal {
					b.Fatal(err, res.Status)
				}
				b.ReportAllocs()
				for b.Loop() {
					res, _ = w.Search(context.Background(), pr, m.opt, dst)
				}
				b.ReportMetric(float64(res.Evaluated), "pairs/op")
			})
		}
	}
}
