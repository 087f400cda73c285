package netsim

import (
	"context"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// twoRacks is two racks of two 50 Gbps servers under one spine: a job on
// servers {0, 2} and one on {1, 3} share both directions of both uplinks.
func twoRacks(t testing.TB) *topology.Topology {
	t.Helper()
	tp, err := topology.New(topology.Spec{Pods: 1, ToRsPerPod: 2, ServersPerToR: 2, AggsPerPod: 1, ServerGbps: 50, ToRGbps: 50})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func run(t testing.TB, cfg Config) Result {
	t.Helper()
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// fig2 is the paper's Fig. 2: two VGG19 jobs (268 ms iterations, 118 ms of
// all-reduce at 39 Gbps on 2 servers) sharing 50 Gbps uplinks.
func fig2(iters int) Config {
	return Config{
		Topology: nil,
		Jobs: []workload.Job{
			{ID: 0, Model: "VGG19", GPUs: 2, Batch: 1400, Iterations: iters},
			{ID: 1, Model: "VGG19", GPUs: 2, Batch: 1400, Iterations: iters},
		},
		Pinned: map[int][]int{0: {0, 2}, 1: {1, 3}},
	}
}

// Without shifts the two jobs start together and stay in lock step: every
// all-reduce shares the uplinks half and half (25 Gbps each), stretching
// 118 ms to 184 ms. CASSINI delays one job so the all-reduces interleave:
// both run at their uncontended 268 ms. The paper measures 1.26x at p90.
func TestFig2(t *testing.T) {
	cfg := fig2(200)
	cfg.Topology = twoRacks(t)
	m, _ := workload.Lookup("VGG19")
	steps, _ := m.Iteration(1400, 2)
	shared := 150 + steps[1].Bits/25e9*1e3 // ms
	alone := float64(workload.Period(steps)) / 1e6

	cfg.Policy = Baseline
	base := run(t, cfg)
	if !near(base.Mean(), shared, 1e-3) || !near(base.Percentile(90), shared, 1e-3) {
		t.Fatalf("baseline: mean %v, p90 %v, want %v", base.Mean(), base.Percentile(90), shared)
	}
	cfg.Policy = Cassini
	cas := run(t, cfg)
	if !near(cas.Mean(), alone, 0.01) || !near(cas.Percentile(90), alone, 0.01) {
		t.Fatalf("cassini: mean %v, p90 %v, want %v", cas.Mean(), cas.Percentile(90), alone)
	}
	cfg.Policy = Ideal
	ideal := run(t, cfg)
	if !near(ideal.Mean(), alone, 1e-3) || ideal.ExcessGbit != 0 {
		t.Fatalf("ideal: mean %v, excess %v", ideal.Mean(), ideal.ExcessGbit)
	}
	speedup := base.Percentile(90) / cas.Percentile(90)
	if speedup < 1.2 || speedup > 1.3 {
		t.Fatalf("p90 speedup %v, the paper: 1.26", speedup)
	}
	if cas.ExcessGbit > 1e-3 || base.ExcessGbit <= 0 {
		t.Fatalf("excess: cassini %v, baseline %v Gbit", cas.ExcessGbit, base.ExcessGbit)
	}
	if cas.Agent.Agents != 2 || cas.Agent.Adjustments != 0 || cas.Rank.MeanBest != 1 || cas.Drift.Lost != 0 || cas.Drift.Samples == 0 {
		t.Fatalf("cassini: agents %+v, rank %+v, drift %+v", cas.Agent, cas.Rank, cas.Drift)
	}
	t.Logf("p90 %.1f -> %.1f ms (%.2fx); excess %.0f -> %.0f Gbit", base.Percentile(90), cas.Percentile(90), speedup, base.ExcessGbit, cas.ExcessGbit)
}

// loadNoise reads the Alibaba release once per source (tests share it: a
// Replay is read-only).
func loadNoise(t testing.TB, src workload.Source) workload.Replay {
	t.Helper()
	noiseMu.Lock()
	defer noiseMu.Unlock()
	if r, ok := noiseCache[src]; ok {
		return r
	}
	r, err := workload.LoadReplay(os.DirFS("../../../internal/eval/data/alibaba"), src)
	if err != nil {
		t.Fatal(err)
	}
	noiseCache[src] = r
	return r
}

var (
	noiseMu    sync.Mutex
	noiseCache = map[workload.Source]workload.Replay{}
)

// With iteration-time noise replayed from Alibaba PAI, the agents keep the
// two jobs interleaved: few adjustments per minute, little score lost,
// still faster than without shifts.
func TestFig2Noise(t *testing.T) {
	for _, tc := range []struct {
		src      workload.Source
		headroom float64
	}{{workload.Jitter, 0}, {workload.Jitter, 0.05}, {workload.Both, 0.05}} {
		cfg := fig2(1000)
		cfg.Topology = twoRacks(t)
		cfg.Noise = loadNoise(t, tc.src)
		cfg.Cassini.Headroom = tc.headroom
		cfg.Policy = Baseline
		base := run(t, cfg)
		cfg.Policy = Cassini
		cas := run(t, cfg)
		t.Logf("noise %v, headroom %v: baseline mean %.1f p90 %.1f; cassini mean %.1f p90 %.1f; %.2f adjustments/min, drift %v, score %.3f -> %.3f",
			tc.src, tc.headroom, base.Mean(), base.Percentile(90), cas.Mean(), cas.Percentile(90), cas.Agent.PerMinute, cas.Agent.MeanAbs, cas.Drift.Planned, cas.Drift.Realized)
		if cas.Percentile(90) >= base.Percentile(90) {
			t.Errorf("noise %v: cassini p90 %v not better than baseline %v", tc.src, cas.Percentile(90), base.Percentile(90))
		}
	}
}
