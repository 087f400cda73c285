package candidate

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/eval/topology"
)

// running is a cluster with running jobs and one new job (job 0) to place:
// the candidates differ in the new job's path only, and fixed holds the
// running jobs at their shifts.
type running struct {
	jobs  []profile.Profile
	links []Link
	cands []Candidate
	fixed []int
}

// paperRunning is paperInstance's first candidate as a running cluster:
// jobs 1-19 stay where it put them, at the shifts a full ranking of it gave
// them, and job 0 arrives with the ten candidates' paths of its own.
func paperRunning() running {
	jobs, links, cands := paperInstance(rand.New(rand.NewPCG(1, 2)), 20, 10)
	opt := Options{Link: link.Options{Circle: circle.Options{Round: true}}}
	r, err := Rank(context.Background(), jobs, links, cands[:1], opt)
	if err != nil || r.Best != 0 || r.Outcomes[0].Grid != 1 {
		panic("paperRunning: the running placement does not rank")
	}
	in := running{jobs: jobs, links: links, fixed: make([]int, len(jobs))}
	for c := range cands {
		paths := append([][]int(nil), cands[0].Paths...)
		paths[0] = cands[c].Paths[0]
		in.cands = append(in.cands, Candidate{Paths: paths})
	}
	copy(in.fixed, r.Outcomes[0].Shifts)
	in.fixed[0] = -1
	return in
}

// closRunning is the Kubernetes plugin's dense benchmark on a three-tier
// Clos, contended: 1000 servers (5 pods of 10 ToRs of 20 servers, 2
// aggregation switches per pod, 2 cores, ECMP routes), 100 Gbps servers,
// 100 Gbps ToR uplinks and 250 Gbps aggregation uplinks (10:1 and 4:1
// oversubscribed), 200 running four-server jobs, job j on two servers of
// ToR j%50 and two of ToR (j+1)%50, so every ToR carries eight running
// jobs, in one affinity graph, and each uplink the 40 Gbps flows of about
// four: more than it holds at once. Job j holds shift 11j ms modulo its
// period (72, 72, 60 or 80 ms). Each ToR keeps four servers free; the new
// eight-server job's ten candidates take the free servers of two ToRs, some
// in different pods.
func closRunning() running {
	tp, err := topology.New(topology.Spec{Pods: 5, ToRsPerPod: 10, ServersPerToR: 20, AggsPerPod: 2, Cores: 2,
		ServerGbps: 100, ToRGbps: 100, AggGbps: 250})
	if err != nil {
		panic(err)
	}
	in := running{}
	for _, l := range tp.Links {
		in.links = append(in.links, Link{Capacity: int32(l.Gbps * 1000)})
	}
	pulse := func(period, up int, hi, lo int32) profile.Profile {
		d := make([]int32, period)
		for i := range d {
			d[i] = lo
			if i < up {
				d[i] = hi
			}
		}
		return profile.Profile{Period: period, Demand: d}
	}
	kinds := []profile.Profile{pulse(72, 30, 40000, 0), pulse(72, 60, 40000, 0), pulse(60, 20, 40000, 0), pulse(80, 25, 35000, 5000)}
	used := make([]int, 50)
	ring := func(servers []int) []int {
		p, err := tp.Ring(servers)
		if err != nil {
			panic(err)
		}
		return p
	}
	in.jobs = append(in.jobs, kinds[0])
	in.fixed = append(in.fixed, -1)
	var paths [][]int
	for j := range 200 {
		var servers []int
		for k := range 4 {
			tor := (j + k/2) % 50
			servers = append(servers, tor*20+used[tor])
			used[tor]++
		}
		in.jobs = append(in.jobs, kinds[j%4])
		in.fixed = append(in.fixed, 11*j%kinds[j%4].Period)
		paths = append(paths, ring(servers))
	}
	for c := range 10 {
		var servers []int
		for _, tor := range []int{5*c + 4, (5*c + 5) % 50} {
			for k := range 4 {
				servers = append(servers, tor*20+16+k)
			}
		}
		in.cands = append(in.cands, Candidate{Paths: append([][]int{ring(servers)}, paths...)})
	}
	return in
}

// BenchmarkIncremental ranks a new job's ten candidates beside running
// jobs, holding the running jobs at their shifts (incremental) or ranking
// every job again (full, the paper's Algorithm 2), on the paper's fabric
// (19 running jobs) and a dense Clos (200 running jobs, see closRunning):
// cold (a Workspace without a cache: every link problem solved each call)
// and warm (a Workspace whose cache has seen the same call). The two modes
// run in interleaved rounds (internal/bench: one batch of each per
// iteration, calibrated to 20 ms of CPU time), so a loaded machine slows
// both alike; full/incr is the median of the per-round ratios of process
// CPU time per ranking, and full-cpu-ms and incr-cpu-ms the medians of
// each; full-allocs and incr-allocs are the allocations of one ranking
// (allocs/op counts one round: a batch of each).
//
//	go test ./engine/cassini/candidate -run '^$' -bench Incremental
func BenchmarkIncremental(b *testing.B) {
	for _, inst := range []struct {
		name string
		in   running
	}{{"paper", paperRunning()}, {"clos", closRunning()}} {
		for _, cache := range []struct {
			name string
			size int
		}{{"cold", 0}, {"warm", 4096}} {
			b.Run(inst.name+"/"+cache.name, func(b *testing.B) {
				in := inst.in
				var rs [2]Ranking
				var cases []bench.Case
				for k, fixed := range [][]int{nil, in.fixed} {
					opt := Options{Link: link.Options{Circle: circle.Options{Round: true}}, Fixed: fixed}
					ws := &Workspace{Cache: cache.size}
					cases = append(cases, bench.Case{Name: []string{"full", "incremental"}[k], Op: func() error {
						var err error
						rs[k], err = ws.Rank(context.Background(), in.jobs, in.links, in.cands, opt)
						return err
					}})
				}
				ctx := context.Background()
				ops := make([]int, len(cases))
				for k, c := range cases {
					n, err := bench.Calibrate(ctx, c, bench.Options{})
					if err != nil {
						b.Fatal(err)
					}
					ops[k] = n
				}
				var allocs [2]float64
				for k, c := range cases {
					allocs[k] = testing.AllocsPerRun(3, func() {
						if err := c.Op(); err != nil {
							b.Fatal(err)
						}
					})
				}
				b.ReportAllocs()
				samples := make([][]bench.Sample, len(cases))
				round := 0
				for b.Loop() {
					for i := range cases {
						k := (round + i) % len(cases)
						s, err := bench.Run(cases[k], ops[k])
						if err != nil {
							b.Fatal(err)
						}
						samples[k] = append(samples[k], s)
					}
					round++
				}
				b.ReportMetric(bench.Summarize(bench.Ratios(samples[0], samples[1])).Median, "full/incr")
				b.ReportMetric(bench.Summarize(bench.Times(samples[0])).Median*1e3, "full-cpu-ms")
				b.ReportMetric(bench.Summarize(bench.Times(samples[1])).Median*1e3, "incr-cpu-ms")
				b.ReportMetric(float64(rs[0].Searches), "full-searches")
				b.ReportMetric(float64(rs[1].Searches), "incr-searches")
				b.ReportMetric(float64(len(rs[1].Order)), "kept")
				b.ReportMetric(allocs[0], "full-allocs")
				b.ReportMetric(allocs[1], "incr-allocs")
			})
		}
	}
}
