package cassini

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/bench"
)

// scaleInstance is the growth benchmark's instance on servers 8-GPU
// servers (bench/cmd/orrery-bench's rank-scale section): 0.24 running jobs
// per server, 10 candidates, jobs at lo-hi Gbps (0, 0: 20-90 as there).
func scaleInstance(tb testing.TB, servers, lo, hi int) *Instance {
	tb.Helper()
	spec, err := ScaleSpec(servers)
	if err != nil {
		tb.Fatal(err)
	}
	in, err := Clos(rand.New(rand.NewPCG(1, 2)), ClosConfig{Spec: spec, GPUsPerServer: 8,
		Jobs: max(1, servers*3000/12500), Candidates: 10, LoGbps: lo, HiGbps: hi})
	if err != nil {
		tb.Fatal(err)
	}
	return in
}

// BenchmarkRankScale ranks the growth benchmark's instances with one
// worker, as docs/performance.md's ranking-at-scale table. There a link carries at
// most two jobs (the candidates fill the GPUs in ToR order), and two jobs
// of at most 90 Gbps always fit its 400 Gbps: "hot" draws the jobs at
// 150-350 Gbps instead, so that most shared links are searched.
func BenchmarkRankScale(b *testing.B) {
	for _, c := range []struct {
		servers int
		name    string
		lo, hi  int
	}{{1000, "", 0, 0}, {12500, "", 0, 0}, {12500, "/hot", 150, 350}} {
		in := scaleInstance(b, c.servers, c.lo, c.hi)
		opt := candidate.Options{Link: link.Options{Circle: circle.Options{Round: true}}, Workers: 1}
		b.Run(fmt.Sprintf("servers=%d%s", c.servers, c.name), func(b *testing.B) {
			var ws candidate.Workspace
			var r candidate.Ranking
			b.ReportAllocs()
			c0 := bench.ProcessCPU()
			for b.Loop() {
				var err error
				if r, err = ws.Rank(context.Background(), in.Jobs, in.Links, in.Candidates, opt); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time, which a busy neighbour on a shared machine inflates far
			// less than wall time (docs/performance.md's measure).
			b.ReportMetric(float64(bench.ProcessCPU()-c0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(r.Searches), "searches/op")
		})
	}
}
