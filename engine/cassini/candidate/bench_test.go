package candidate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/eval/topology"
)

// paperInstance places njobs data-parallel jobs of 1-3 GPUs on the CASSINI
// testbed fabric with two GPUs per server (as the paper's multi-GPU
// experiment) in n candidate placements. Each candidate is what a
// locality-aware scheduler would propose: the jobs, in a random order, fill
// the GPUs in ToR order from a random starting server, so most jobs stay
// under one ToR and some span two. Each job runs a ring all-reduce over its
// servers. Periods are 181-255 ms at 1 ms ticks, communication 30-50% of
// the iteration at 15-35 Gbps on 50 Gbps links.
func paperInstance(rng *rand.Rand, njobs, n int) ([]profile.Profile, []Link, []Candidate) {
	tp := topology.Paper()
	links := make([]Link, len(tp.Links))
	for i, l := range tp.Links {
		links[i] = Link{Capacity: int32(l.Gbps * 1000)} // 1 Mbps units
	}
	jobs := make([]profile.Profile, njobs)
	gpus := make([]int, njobs)
	for j := range jobs {
		t := []int{181, 200, 220, 240, 255}[rng.IntN(5)]
		up := t * (30 + rng.IntN(20)) / 100
		d := make([]int32, t)
		for i := t - up; i < t; i++ {
			d[i] = int32(15000 + 1000*rng.IntN(20))
		}
		jobs[j] = profile.Profile{Period: t, Demand: d}
		gpus[j] = 1 + rng.IntN(3)
	}
	slots := 2 * tp.Servers
	cands := make([]Candidate, n)
	for c := range cands {
		next := rng.IntN(slots)
		cands[c].Paths = make([][]int, njobs)
		for _, j := range rng.Perm(njobs) {
			var servers []int
			for range gpus[j] {
				s := (next / 2) % tp.Servers
				if len(servers) == 0 || servers[len(servers)-1] != s {
					servers = append(servers, s)
				}
				next++
			}
			path, err := tp.Ring(servers)
			if err != nil {
				panic(err)
			}
			cands[c].Paths[j] = path
		}
	}
	return jobs, links, cands
}

// BenchmarkRankPaperFabric ranks 10 candidates for 20 jobs on the paper's
// 24-server fabric (the target: under 5 ms in pure Go). Periods are
// rounded where a link's unified circle would pass the cap.
func BenchmarkRankPaperFabric(b *testing.B) {
	jobs, links, cands := paperInstance(rand.New(rand.NewPCG(1, 2)), 20, 10)
	opt := Options{Link: link.Options{Circle: circle.Options{Round: true}}}
	for _, w := range []int{1, 2} {
		opt.Workers = w
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			var r Ranking
			var rk Workspace
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if r, err = rk.Rank(context.Background(), jobs, links, cands, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Searches), "searches/op")
			b.ReportMetric(float64(len(r.Order)), "kept/op")
		})
	}
}
