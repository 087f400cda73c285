package netsim

import (
	"context"
	"fmt"
	"testing"

	"github.com/orrery/orrery/engine/topology"
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
