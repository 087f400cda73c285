package netsim

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// A job alone runs every iteration in exactly its uncontended time under
// every policy; a model-parallel job on servers whose own flows contend
// (DLRM's all-to-all across two racks) is timed with that contention.
func TestAlone(t *testing.T) {
	for _, model := range []string{"VGG16", "GPT2", "DLRM"} {
		m, _ := workload.Lookup(model)
		for _, p := range Policies {
			cfg := Config{Topology: twoRacks(t), Policy: p,
				Jobs:   []workload.Job{{ID: 0, Model: model, GPUs: 4, Batch: m.RefBatch, Iterations: 20}},
				Pinned: map[int][]int{0: {0, 1, 2, 3}}}
			r := run(t, cfg)
			alone := float64(r.Jobs[0].Alone) / 1e6
			if len(r.IterMs) != 20 || r.Status != Complete {
				t.Fatalf("%s %v: %d iterations, %v", model, p, len(r.IterMs), r.Status)
			}
			for i, x := range r.IterMs {
				if !near(x, alone, 1e-5) {
					t.Fatalf("%s %v: iteration %d took %v ms, alone %v", model, p, i, x, alone)
				}
			}
		}
	}
	// DLRM on 2+2 servers: each uplink carries 4 of its 12 connections at
	// 40/3 Gbps, 53 > 50: slower than its nominal 125 ms.
	cfg := Config{Topology: twoRacks(t), Jobs: []workload.Job{{ID: 0, Model: "DLRM", GPUs: 4, Batch: 512, Iterations: 1}}}
	r := run(t, cfg)
	if r.Jobs[0].Alone <= 125*time.Millisecond {
		t.Fatalf("DLRM across racks alone: %v", r.Jobs[0].Alone)
	}
}

// Every bit a communication step must send is delivered, once.
func TestConservation(t *testing.T) {
	jobs, err := workload.Generate(workload.Config{Jobs: 12, Load: 1, ClusterGPUs: 24, Seed: 3, MinIterations: 20, MaxIterations: 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Policies {
		r := run(t, Config{Topology: topology.Paper(), Jobs: jobs, Policy: p, Noise: loadNoise(t, workload.Both)})
		var want, flowsDone float64
		for _, j := range r.Jobs {
			m, _ := workload.Lookup(j.Model)
			steps, _ := m.Iteration(jobs[j.ID].Batch, len(j.Servers))
			var per float64
			for _, st := range steps {
				if st.Pattern == workload.Compute || st.Bits == 0 {
					continue
				}
				flows := 1 // a ring is one lock-step flow
				n := len(j.Servers)
				switch st.Pattern {
				case workload.Chain:
					flows = n - 1
				case workload.AllToAll:
					flows = n * (n - 1)
				}
				per += st.Bits * float64(flows)
				flowsDone += float64(flows * j.Iterations)
			}
			want += per * float64(j.Iterations)
		}
		// A flow finishes on the nanosecond after its last bit: at most
		// 50 bits (50 Gbps for 1 ns) over per flow.
		if got := r.SentGbit * 1e9; got < want*(1-1e-12) || got > want*(1+1e-12)+50*flowsDone {
			t.Fatalf("%v: sent %v bits, the steps carry %v (%v flows)", p, got, want, flowsDone)
		}
		if r.Status != Complete {
			t.Fatalf("%v: %v", p, r.Status)
		}
	}
}

func TestDeterministic(t *testing.T) {
	jobs, _ := workload.Generate(workload.Config{Jobs: 15, Load: 0.9, ClusterGPUs: 24, Seed: 5, MinIterations: 30, MaxIterations: 60})
	for _, p := range Policies {
		cfg := Config{Topology: topology.Paper(), Jobs: jobs, Policy: p, Noise: loadNoise(t, workload.Both), Seed: 9,
			Cassini: CassiniOptions{MaxPerimeter: 4096, MinScore: -1, Workers: 1}}
		a := run(t, cfg)
		cfg.Cassini.Workers = 2
		b := run(t, cfg)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("%v: two runs differ (-first +second):\n%s", p, diff)
		}
	}
}

// Without noise, Ideal is every job alone; every other policy is no faster.
func TestPoissonShape(t *testing.T) {
	jobs, _ := workload.Generate(workload.Config{Jobs: 25, Load: 0.9, ClusterGPUs: 24, Seed: 2, MinIterations: 50, MaxIterations: 100})
	res := map[Policy]Result{}
	for _, p := range Policies {
		res[p] = run(t, Config{Topology: topology.Paper(), Jobs: jobs, Policy: p, Cassini: CassiniOptions{MaxPerimeter: 4096}})
	}
	if s := res[Ideal].Slowdown(); !near(s, 1, 1e-6) {
		t.Fatalf("ideal slowdown %v", s)
	}
	for _, p := range []Policy{Baseline, Random, Cassini} {
		if s := res[p].Slowdown(); s < 1-1e-6 {
			t.Errorf("%v: slowdown %v below 1", p, s)
		}
		t.Logf("%-8v mean %.1f ms, p99 %.1f ms, slowdown %.3f, excess %.0f Gbit", p, res[p].Mean(), res[p].Percentile(99), res[p].Slowdown(), res[p].ExcessGbit)
	}
	if r := res[Cassini].Rank; r.Rankings < 1 || r.Rankings > 25 {
		t.Errorf("rank stats %+v", r)
	}
}

func TestDurationAndCancel(t *testing.T) {
	cfg := fig2(1000)
	cfg.Topology = twoRacks(t)
	cfg.Duration = 10 * time.Second
	r := run(t, cfg)
	if r.Status != TimeLimit || r.End != 10*time.Second || len(r.IterMs) == 0 || r.Jobs[0].End != 0 {
		t.Fatalf("%v at %v, %d iterations", r.Status, r.End, len(r.IterMs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg.Duration = 0
	r, err := Run(ctx, cfg)
	if err != nil || r.Status != Cancelled {
		t.Fatalf("%v, %v", r.Status, err)
	}
}

// The agent's mode and threshold reach the agents: the paper's Free mode
// re-aligns only on drift, Pad holds every slot.
func TestAgentOptions(t *testing.T) {
	perMinute := map[agent.Mode]float64{}
	for _, mode := range []agent.Mode{agent.Pad, agent.Free} {
		cfg := fig2(300)
		cfg.Topology = twoRacks(t)
		cfg.Policy = Cassini
		cfg.Noise = loadNoise(t, workload.Jitter)
		cfg.Agent = agent.Options{Mode: mode, Threshold: 0.1}
		r := run(t, cfg)
		if r.Agent.Agents != 2 || r.Agent.Samples == 0 {
			t.Fatalf("%v: %+v", mode, r.Agent)
		}
		t.Logf("%v: mean %.1f ms, %.2f adjustments/min, drift %v", mode, r.Mean(), r.Agent.PerMinute, r.Agent.MeanAbs)
		perMinute[mode] = r.Agent.PerMinute
	}
	if perMinute[agent.Pad] == perMinute[agent.Free] {
		t.Fatalf("both modes adjust %.2f times a minute: the mode did not reach the agents", perMinute[agent.Pad])
	}
}

func TestConfigErrors(t *testing.T) {
	ok := func() Config {
		c := fig2(5)
		c.Topology = twoRacks(t)
		return c
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no topology", func(c *Config) { c.Topology = nil }},
		{"unknown model", func(c *Config) { c.Jobs[0].Model = "AlexNet" }},
		{"too many GPUs", func(c *Config) { c.Jobs[0].GPUs = 5 }},
		{"no GPUs", func(c *Config) { c.Jobs[0].GPUs = 0 }},
		{"no iterations", func(c *Config) { c.Jobs[0].Iterations = 0 }},
		{"bad batch", func(c *Config) { c.Jobs[0].Batch = 1 }},
		{"negative arrival", func(c *Config) { c.Jobs[0].Arrival = -1 }},
		{"repeated ID", func(c *Config) { c.Jobs[1].ID = 0 }},
		{"policy", func(c *Config) { c.Policy = 9 }},
		{"candidates", func(c *Config) { c.Candidates = -1 }},
		{"duration", func(c *Config) { c.Duration = -1 }},
		{"threshold", func(c *Config) { c.Agent.Threshold = 2 }},
		{"headroom", func(c *Config) { c.Cassini.Headroom = math.NaN() }},
		{"min score", func(c *Config) { c.Cassini.MinScore = 2 }},
		{"min gain", func(c *Config) { c.Cassini.MinGain = math.NaN() }},
		{"hold", func(c *Config) { c.Cassini.Hold = 7 }},
		{"rank", func(c *Config) { c.Cassini.Rank = 7 }},
		{"scheduler", func(c *Config) { c.Scheduler = 9 }},
		{"lease", func(c *Config) { c.Lease = -time.Second }},
		{"tick", func(c *Config) { c.Cassini.Tick = time.Nanosecond }},
		{"pinned server", func(c *Config) { c.Pinned[0] = []int{0, 9} }},
		{"pinned twice", func(c *Config) { c.Pinned[0] = []int{1, 1} }},
		{"pinned unknown job", func(c *Config) { c.Pinned[7] = []int{0} }},
		{"pinned model parallel on one server", func(c *Config) {
			c.Jobs[0] = workload.Job{ID: 0, Model: "GPT3", GPUs: 1, Batch: 32, Iterations: 1}
			c.Pinned[0] = []int{0}
		}},
		{"zero-capacity link", func(c *Config) {
			tp := *c.Topology
			tp.Links = append([]topology.Link(nil), tp.Links...)
			tp.Links[0].Gbps = 0
			c.Topology = &tp
		}},
	} {
		c := ok()
		tc.edit(&c)
		_, err := Run(context.Background(), c)
		if !errors.Is(err, ErrInvalid) && !errors.Is(err, workload.ErrUnknownModel) && !errors.Is(err, workload.ErrInvalid) {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}
	for _, s := range []string{"baseline", "random", "cassini", "ideal", "CASSINI"} {
		if _, err := ParsePolicy(s); err != nil {
			t.Errorf("ParsePolicy(%q): %v", s, err)
		}
	}
	if _, err := ParsePolicy("themis"); !errors.Is(err, ErrInvalid) {
		t.Error(err)
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3}
	for _, tc := range []struct{ p, want float64 }{{20, 1}, {50, 3}, {90, 5}, {99, 5}, {100, 5}, {1, 1}} {
		if got := Percentile(v, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if Percentile(nil, 50) != 0 || Mean(nil) != 0 || Mean(v) != 3 {
		t.Error("empty")
	}
}

// TestHorizon: links so slow that a step would end decades later fail the
// run with ErrInvalid; they used to overflow the nanosecond clock and
// "complete" with iterations faster than on a 50 Gbps fabric.
func TestHorizon(t *testing.T) {
	tp, err := topology.New(topology.Spec{Pods: 1, ToRsPerPod: 2, ServersPerToR: 2, AggsPerPod: 1, ServerGbps: 1e-12, ToRGbps: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Policies {
		cfg := fig2(3)
		cfg.Topology, cfg.Policy = tp, p
		if r, err := Run(context.Background(), cfg); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: %v, %+v", p, err, r.Jobs)
		}
	}
	s := &sim{now: horizon - 10}
	if got := s.later(9); got != horizon-1 || s.overflow {
		t.Fatalf("later(9) = %d, overflow %v", got, s.overflow)
	}
	for _, ns := range []float64{10, 1e300, math.Inf(1), math.NaN()} {
		s.overflow = false
		if got := s.later(ns); got != horizon || !s.overflow {
			t.Errorf("later(%v) = %d, overflow %v", ns, got, s.overflow)
		}
	}
}

// Without noise every Ideal iteration takes its job's uncontended time on
// the placement it ran on, also for jobs that preemptions move between
// placements of different uncontended times (4-GPU servers: a job on one
// server or across two), so every slowdown is 1.
func TestSlowdownPerPlacement(t *testing.T) {
	clos, err := topology.New(topology.Spec{Pods: 2, ToRsPerPod: 2, ServersPerToR: 4, AggsPerPod: 2, Cores: 2, ServerGbps: 50, ToRGbps: 100, AggGbps: 100})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := workload.Generate(workload.Config{Jobs: 30, Load: 1, ClusterGPUs: 4 * clos.Servers, GPUsPerServer: 4, Seed: 2, MinIterations: 30, MaxIterations: 80})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, Config{Topology: clos, GPUsPerServer: 4, Jobs: jobs, Policy: Ideal, Lease: 2 * time.Second, Seed: 1})
	moved, k := 0, 0
	for _, j := range r.Jobs {
		if slices.ContainsFunc(r.AloneMs[k:k+j.Iterations], func(a float64) bool { return a != r.AloneMs[k] }) {
			moved++
		}
		k += j.Iterations
	}
	if moved == 0 {
		t.Fatal("no job ran on placements of different uncontended times")
	}
	for i, s := range r.Slowdowns() {
		if !near(s, 1, 1e-6) {
			t.Fatalf("iteration %d: slowdown %v, want 1 (%d jobs moved)", i, s, moved)
		}
	}
}
