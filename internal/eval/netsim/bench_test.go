package netsim

import (
	"context"
	"fmt"
	"testing"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// BenchmarkRun simulates a Poisson trace at 90% load with Alibaba noise
// under each policy: on the paper's 24-server fabric (40 jobs of 50-100
// iterations) and on a 128-server three-tier Clos (120 jobs).
func BenchmarkRun(b *testing.B) {
	clos, err := topology.New(topology.Spec{Pods: 4, ToRsPerPod: 4, ServersPerToR: 8, AggsPerPod: 4, Cores: 4, ServerGbps: 50, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		b.Fatal(err)
	}
	noise := loadNoise(b, workload.Both)
	for _, fab := range []struct {
		name string
		topo *topology.Topology
		jobs int
	}{{"paper", topology.Paper(), 40}, {"clos128", clos, 120}} {
		jobs, err := workload.Generate(workload.Config{Jobs: fab.jobs, Load: 0.9, ClusterGPUs: fab.topo.Servers, Seed: 1, MinIterations: 50, MaxIterations: 100})
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range Policies {
			b.Run(fmt.Sprintf("%s/%v", fab.name, p), func(b *testing.B) {
				cfg := Config{Topology: fab.topo, Jobs: jobs, Policy: p, Noise: noise, Cassini: CassiniOptions{Workers: 1}}
				var events int64
				b.ReportAllocs()
				for b.Loop() {
					r, err := Run(context.Background(), cfg)
					if err != nil {
						b.Fatal(err)
					}
					events = r.Events
				}
				b.ReportMetric(float64(events), "events/op")
			})
		}
	}
}

// BenchmarkClos1000 is the fluid section's Clos case of orrery-bench (1000
// servers, 300 jobs of 20-40 iterations at 90% load, Alibaba noise), under
// the baseline policy and CASSINI.
func BenchmarkClos1000(b *testing.B) {
	clos, err := topology.New(topology.Spec{Pods: 5, ToRsPerPod: 25, ServersPerToR: 8, AggsPerPod: 4, Cores: 8,
		ServerGbps: 100, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		b.Fatal(err)
	}
	jobs, err := workload.Generate(workload.Config{Jobs: 300, Load: 0.9, ClusterGPUs: clos.Servers, GPUsPerServer: 1,
		MinIterations: 20, MaxIterations: 40, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	noise := loadNoise(b, workload.Both)
	for _, p := range []Policy{Baseline, Cassini} {
		b.Run(p.String(), func(b *testing.B) {
			cfg := Config{Topology: clos, Jobs: jobs, Policy: p, Noise: noise, Seed: 1, Cassini: CassiniOptions{Workers: 1}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
