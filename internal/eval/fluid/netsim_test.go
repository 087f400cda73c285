package fluid_test

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// simCase is a cluster simulation whose fluid problems the tests replay.
type simCase struct {
	name        string
	topo        *topology.Topology
	jobs        int
	minI, maxI  int
	gpus        int // per server
	policies    []netsim.Policy
	short       bool // also run in -short mode
	noiseSource workload.Source
}

func simCases(t testing.TB) []simCase {
	clos128, err := topology.New(topology.Spec{Pods: 4, ToRsPerPod: 4, ServersPerToR: 8, AggsPerPod: 4, Cores: 4, ServerGbps: 50, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		t.Fatal(err)
	}
	clos1000, err := topology.New(topology.Spec{Pods: 5, ToRsPerPod: 25, ServersPerToR: 8, AggsPerPod: 4, Cores: 8, ServerGbps: 100, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		t.Fatal(err)
	}
	return []simCase{
		{"paper", topology.Paper(), 40, 30, 60, 1, netsim.Policies, true, workload.Both},
		{"clos128-4gpu", clos128, 80, 10, 20, 4, []netsim.Policy{netsim.Baseline, netsim.Cassini}, true, workload.Both},
		{"clos1000", clos1000, 300, 3, 6, 1, []netsim.Policy{netsim.Baseline}, false, workload.Both},
	}
}

func (c simCase) config(t testing.TB, p netsim.Policy) netsim.Config {
	t.Helper()
	jobs, err := workload.Generate(workload.Config{Jobs: c.jobs, Load: 0.9, ClusterGPUs: c.topo.Servers * c.gpus, GPUsPerServer: c.gpus,
		MinIterations: c.minI, MaxIterations: c.maxI, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	noise, err := workload.LoadReplay(os.DirFS("../../../internal/eval/data/alibaba"), c.noiseSource)
	if err != nil {
		t.Fatal(err)
	}
	return netsim.Config{Topology: c.topo, GPUsPerServer: c.gpus, Jobs: jobs, Policy: p, Noise: noise, Seed: 1,
		Cassini: netsim.CassiniOptions{Workers: 1}}
}

// eagerEvery samples the calls checked against the eager reference too.
const eagerEvery = 7

// Every fluid problem of real cluster simulations (the paper's fabric, a
// Clos of 4-GPU servers, the 1000-server Clos), as the simulator's own
// incremental Solver answers it, gets the rates a fresh Solver gives (and,
// on every 7th call, the reference filling of the whole network), bit for
// bit.
func TestNetsimCalls(t *testing.T) {
	for _, c := range simCases(t) {
		if (testing.Short() || raceEnabled) && !c.short || raceEnabled && c.name != "paper" {
			continue
		}
		for _, p := range c.policies {
			calls, flows := 0, 0
			start := time.Now()
			restore := fluid.SetObserver(func(capacity []float64, fs []fluid.Flow, rates []float64) {
				calls++
				flows += len(fs)
				modes := []fluid.Filling{fluid.Full}
				if calls%eagerEvery == 0 {
					modes = append(modes, fluid.Eager) // the slow reference, on a sample
				}
				for _, mode := range modes {
					want, err := fluid.SolveFresh(mode, capacity, fs)
					if err != nil {
						t.Fatal(err)
					}
					for f := range want {
						if math.Float64bits(rates[f]) != math.Float64bits(want[f]) {
							t.Fatalf("%s/%v call %d flow %d: rate %v, %s %v", c.name, p, calls, f, rates[f], mode, want[f])
						}
					}
				}
			})
			cfg := c.config(t, p)
			_, err := netsim.Run(context.Background(), cfg)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s/%v: %d calls, %.1f flows per call (%v)", c.name, p, calls, float64(flows)/float64(max(calls, 1)), time.Since(start).Round(time.Millisecond))
			if calls < 100 {
				t.Fatalf("%s/%v: only %d fluid calls", c.name, p, calls)
			}
		}
	}
}

// The simulations' results are the same whichever filling the simulator's
// Solver uses.
func TestNetsimResultsIdentical(t *testing.T) {
	for _, c := range simCases(t) {
		if !c.short || raceEnabled && c.name != "paper" {
			continue
		}
		for _, p := range c.policies {
			var want netsim.Result
			for i, mode := range []fluid.Filling{fluid.Hot, fluid.Full, fluid.Eager} {
				cfg := c.config(t, p)
				cfg.Filling = mode
				r, err := netsim.Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					want = r
					continue
				}
				if d := cmp.Diff(want, r); d != "" {
					t.Fatalf("%s/%v: %q filling changes the result (-incremental +%s):\n%s", c.name, p, mode, mode, d)
				}
			}
		}
	}
}
