package netsim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// runScratch runs cfg solving the whole network at every change.
func runScratch(t *testing.T, cfg Config) Result {
	t.Helper()
	cfg.ref.scratchRates = true
	return run(t, cfg)
}

// Solving only what an event reaches gives the simulation that solving the
// whole network at every change gives, to the bit: Poisson traces with
// Alibaba noise on the paper's fabric and a Clos of 4-GPU servers, under
// every policy and scheduler, and random small traces.
func TestIncrementalMatchesScratch(t *testing.T) {
	for i, cfg := range incrementalConfigs(t) {
		t.Run(fmt.Sprintf("%d-%v-%v", i, cfg.Policy, cfg.Scheduler), func(t *testing.T) {
			want := runScratch(t, cfg)
			got := run(t, cfg)
			if want.Events < 10 {
				t.Fatalf("only %d events", want.Events)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("incremental differs from scratch (-scratch +incremental):\n%s", d)
			}
		})
	}
}

// Computing only the finishes that can be the earliest (nearest) gives the
// simulation that computing every flow's finish at every change gives, to
// the bit, also when the anchors are swept every other event.
func TestNearestMatchesEveryFinish(t *testing.T) {
	for i, cfg := range incrementalConfigs(t) {
		t.Run(fmt.Sprintf("%d-%v-%v", i, cfg.Policy, cfg.Scheduler), func(t *testing.T) {
			ref := cfg
			ref.ref.everyFinish = true
			want := run(t, ref)
			got := run(t, cfg)
			swept := cfg
			swept.ref.anchorAge = 4
			sw := run(t, swept)
			if want.Events < 10 {
				t.Fatalf("only %d events", want.Events)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("nearest differs from every finish (-every +nearest):\n%s", d)
			}
			if d := cmp.Diff(want, sw); d != "" {
				t.Fatalf("swept every other event, nearest differs from every finish (-every +nearest):\n%s", d)
			}
		})
	}
}

// Syncing a job only when its flows or sums are read or changed gives the
// simulation that syncing every job at every interval gives, to the bit,
// also when the log of intervals fills every other interval and anchors
// are swept every other event: on the configurations of
// incrementalConfigs, with short leases and rounds (jobs preempted while
// they communicate), and with a time limit (flows active at the end).
func TestSyncMatchesEvery(t *testing.T) {
	cfgs := append(incrementalConfigs(t), cutConfigs(t)...)
	preempted, limits := 0, 0
	for i, cfg := range cfgs {
		t.Run(fmt.Sprintf("%d-%v-%v", i, cfg.Policy, cfg.Scheduler), func(t *testing.T) {
			every := cfg
			every.ref.syncEvery = true
			want := run(t, every)
			got := run(t, cfg)
			short := cfg
			short.ref.dtLog, short.ref.anchorAge = 2, 4
			sh := run(t, short)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("lazy syncing differs from syncing at every interval (-every +lazy):\n%s", d)
			}
			if d := cmp.Diff(want, sh); d != "" {
				t.Fatalf("with a log of 2 intervals, lazy syncing differs from syncing at every interval (-every +lazy):\n%s", d)
			}
			for _, j := range want.Jobs {
				preempted += j.Preemptions
			}
			if want.Status == TimeLimit {
				limits++
			}
		})
	}
	if preempted == 0 || limits == 0 {
		t.Fatalf("%d preemptions, %d runs ended by their limit: the cases miss a sync", preempted, limits)
	}
}

// The timers heap gives the simulation that scanning every running job at
// every event gives, to the bit: on the configurations of
// incrementalConfigs and cutConfigs, and on sweeps without noise, whose
// copies of a job step in lock step and touch many timers of one instant
// between two events (the heap once ordered by a key those touches
// changed, and fixing one entry at a time left it out of order: a job
// woke 65 ms late on the first sweep).
func TestTimersMatchScan(t *testing.T) {
	cfgs := append(incrementalConfigs(t), cutConfigs(t)...)
	for seed := range uint64(3) {
		jobs, err := workload.Generate(workload.Config{Jobs: 40, Load: 0.9, ClusterGPUs: 24, Sweep: 4, Seed: 1 + seed})
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, Config{Topology: topology.Paper(), Jobs: jobs, Policy: CassiniPlacement, Seed: 1 + seed})
	}
	matchReference(t, cfgs, func(r *reference) { r.scanTimers = true }, "the timers heap differs from a scan (-scan +heap)")
}

// matchReference runs each of cfgs with *ref set (the reference) and not,
// and fails with msg where the Results differ.
func matchReference(t *testing.T, cfgs []Config, set func(*reference), msg string) {
	t.Helper()
	for i, cfg := range cfgs {
		t.Run(fmt.Sprintf("%d-%v-%v", i, cfg.Policy, cfg.Scheduler), func(t *testing.T) {
			ref := cfg
			set(&ref.ref)
			want := run(t, ref)
			got := run(t, cfg)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%s:\n%s", msg, d)
			}
		})
	}
}

// Leaving out of the network the quiet links of servers a job holds whole,
// and seeing consecutive flows on the same links as one (netFlows), gives
// the simulation that every flow on every link gives, to the bit; on the
// fabrics of incrementalConfigs, with servers of 1 and of 4 GPUs, on a Clos
// whose server links are the bottleneck, and on cutConfigs.
func TestNetFlowsMatchAllLinks(t *testing.T) {
	slow, err := topology.New(topology.Spec{Pods: 2, ToRsPerPod: 3, ServersPerToR: 4, AggsPerPod: 2, Cores: 2, ServerGbps: 20, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		t.Fatal(err)
	}
	cfgs := incrementalConfigs(t)
	for _, gpus := range []int{1, 2} {
		jobs, err := workload.Generate(workload.Config{Jobs: 20, Load: 0.9, ClusterGPUs: slow.Servers * gpus, GPUsPerServer: gpus,
			MinIterations: 3, MaxIterations: 8, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, Config{Topology: slow, GPUsPerServer: gpus, Jobs: jobs, Policy: Baseline, Noise: loadNoise(t, workload.Both), Seed: 1})
	}
	cfgs = append(cfgs, cutConfigs(t)...)
	matchReference(t, cfgs, func(r *reference) { r.allLinks = true }, "the network's flows differ from every flow on every link (-all +net)")
}

// cutConfigs are traces whose jobs are preempted while they communicate
// (short leases and rounds), and runs ended by a time limit with flows
// active.
func cutConfigs(t *testing.T) []Config {
	jobs, err := workload.Generate(workload.Config{Jobs: 10, Load: 1, ClusterGPUs: 24, Seed: 4, MinIterations: 20, MaxIterations: 50})
	if err != nil {
		t.Fatal(err)
	}
	var cfgs []Config
	for _, sch := range []Scheduler{Themis, Gavel} {
		cfgs = append(cfgs, Config{Topology: topology.Paper(), Jobs: jobs, Scheduler: sch, Lease: 2 * time.Second, Seed: 2,
			Noise: loadNoise(t, workload.Both)})
	}
	clos, err := topology.New(topology.Spec{Pods: 4, ToRsPerPod: 4, ServersPerToR: 8, AggsPerPod: 4, Cores: 4, ServerGbps: 50, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		t.Fatal(err)
	}
	if jobs, err = workload.Generate(workload.Config{Jobs: 40, Load: 0.9, ClusterGPUs: clos.Servers, MinIterations: 3, MaxIterations: 8, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	limited := Config{Topology: clos, Jobs: jobs, Noise: loadNoise(t, workload.Both), Seed: 1, Duration: 1234567891}
	cfgs = append(cfgs, limited, mergedAtEnd(t, limited))
	return cfgs
}

// mergedAtEnd returns cfg with the first time limit (in steps of 1 ms
// from its own) at which a flow standing for several (netFlows) is active.
func mergedAtEnd(t *testing.T, cfg Config) Config {
	for ; cfg.Duration < time.Minute; cfg.Duration += time.Millisecond {
		c, err := cfg.normalize()
		if err != nil {
			t.Fatal(err)
		}
		s, err := newSim(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.run(); err != nil {
			t.Fatal(err)
		}
		for _, j := range s.comm {
			if j != nil && slices.ContainsFunc(j.flows, func(f flowRun) bool { return !f.done && f.n > 1 }) {
				return cfg
			}
		}
	}
	t.Fatal("no flow standing for several is active at any limit")
	return cfg
}

// incrementalConfigs are Poisson traces with Alibaba noise on the paper's
// fabric and a Clos of 4-GPU servers, under every policy and scheduler,
// and random small traces.
func incrementalConfigs(t *testing.T) []Config {
	clos, err := topology.New(topology.Spec{Pods: 4, ToRsPerPod: 4, ServersPerToR: 8, AggsPerPod: 4, Cores: 4, ServerGbps: 50, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		t.Fatal(err)
	}
	noise := loadNoise(t, workload.Both)
	var cfgs []Config
	for _, fab := range []struct {
		topo       *topology.Topology
		jobs, gpus int
	}{{topology.Paper(), 20, 1}, {clos, 40, 4}} {
		jobs, err := workload.Generate(workload.Config{Jobs: fab.jobs, Load: 0.9, ClusterGPUs: fab.topo.Servers * fab.gpus, GPUsPerServer: fab.gpus,
			MinIterations: 3, MaxIterations: 8, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for k, p := range Policies {
			cfgs = append(cfgs, Config{Topology: fab.topo, GPUsPerServer: fab.gpus, Jobs: jobs, Policy: p, Noise: noise, Seed: 1,
				Scheduler: Schedulers[(k+1)%len(Schedulers)], Cassini: CassiniOptions{Workers: 1}})
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	models := workload.Models()
	for range 12 {
		cfg := Config{Topology: topology.Paper(), Policy: Policies[rng.IntN(len(Policies))], Scheduler: Schedulers[rng.IntN(len(Schedulers))],
			Seed: rng.Uint64(), Cassini: CassiniOptions{Workers: 1}}
		for id := range 2 + rng.IntN(8) {
			m := models[rng.IntN(len(models))]
			bs := m.BatchChoices()
			cfg.Jobs = append(cfg.Jobs, workload.Job{ID: id, Model: m.Name, GPUs: max(1+rng.IntN(12), m.MinServers), Batch: bs[rng.IntN(len(bs))],
				Iterations: 1 + rng.IntN(20), Arrival: time.Duration(rng.IntN(4000)) * time.Millisecond})
		}
		cfgs = append(cfgs, cfg)
	}
	return append(cfgs, placeConfigs(t)...)
}

// placeConfigs are the placement rules and Themis's auction: the paper's
// auction (worker counts re-tuned, GPUs given up at short leases' ends,
// so jobs move while they communicate) on the paper's fabric and on a
// Clos of 4-GPU servers, with Themis's rule and scattered.
func placeConfigs(t *testing.T) []Config {
	clos, err := topology.New(topology.Spec{Pods: 2, ToRsPerPod: 2, ServersPerToR: 4, AggsPerPod: 2, Cores: 2, ServerGbps: 50, ToRGbps: 50, AggGbps: 50})
	if err != nil {
		t.Fatal(err)
	}
	noise := loadNoise(t, workload.Both)
	var cfgs []Config
	for k, fab := range []struct {
		topo *topology.Topology
		gpus int
	}{{topology.Paper(), 1}, {clos, 4}} {
		jobs, err := workload.Generate(workload.Config{Jobs: 10, Load: 1, ClusterGPUs: fab.topo.Servers * fab.gpus, GPUsPerServer: fab.gpus,
			MinIterations: 10, MaxIterations: 25, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range []Policy{Baseline, Ideal} {
			cfgs = append(cfgs, Config{Topology: fab.topo, GPUsPerServer: fab.gpus, Jobs: jobs, Policy: p, Noise: noise, Seed: 3,
				Placement: Placements[1+(i+k)%2], Auction: AuctionPaper, Lease: 3 * time.Second, Cassini: CassiniOptions{Workers: 1}})
		}
	}
	return cfgs
}
