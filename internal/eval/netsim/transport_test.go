package netsim

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/workload"
)

func TestParseTransport(t *testing.T) {
	for _, tr := range Transports {
		if got, err := ParseTransport(tr.String()); err != nil || got != tr {
			t.Errorf("%v: %v, %v", tr, got, err)
		}
	}
	if got, err := ParseTransport(""); err != nil || got != MaxMin {
		t.Errorf("empty: %v, %v", got, err)
	}
	if _, err := ParseTransport("cubic"); !errors.Is(err, ErrInvalid) {
		t.Errorf("cubic: %v", err)
	}
	cfg := fig2(1)
	cfg.Topology = twoRacks(t)
	for _, c := range []Config{
		func() Config { c := cfg; c.Transport = 7; return c }(),
		func() Config {
			c := cfg
			c.Transport = DCQCN
			c.DCQCN = fluid.DefaultDCQCN()
			c.DCQCN.Pmax = 2
			return c
		}(),
		func() Config { c := cfg; c.Transport = MLTCP; c.MLTCP = MLTCPParams{Slope: -1, Intercept: 1}; return c }(),
	} {
		if _, err := Run(t.Context(), c); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v %+v: %v", c.Transport, c.MLTCP, err)
		}
	}
}

// A job alone runs at its uncontended iteration time under every
// transport (its flows never meet another's), and Ideal does for every
// job; every transport delivers the same bits per iteration.
func TestTransportsAlone(t *testing.T) {
	m, _ := workload.Lookup("VGG19")
	steps, _ := m.Iteration(1400, 2)
	alone := float64(workload.Period(steps)) / 1e6
	for _, tr := range Transports {
		cfg := fig2(20)
		cfg.Topology = twoRacks(t)
		cfg.Transport = tr
		cfg.Jobs = cfg.Jobs[:1]
		delete(cfg.Pinned, 1)
		r := run(t, cfg)
		for _, ms := range r.IterMs {
			if !near(ms, alone, 1e-3) {
				t.Fatalf("%v: a lone job's iteration %v ms, alone %v", tr, ms, alone)
			}
		}
		if want := 20 * steps[1].Bits / 1e9; !near(r.SentGbit, want, 1e-6*want) {
			t.Fatalf("%v: sent %v Gbit, want %v", tr, r.SentGbit, want)
		}
		cfg = fig2(20)
		cfg.Topology = twoRacks(t)
		cfg.Transport, cfg.Policy = tr, Ideal
		r = run(t, cfg)
		if !near(r.Mean(), alone, 1e-3) || r.ExcessGbit != 0 {
			t.Fatalf("%v, ideal: mean %v, excess %v", tr, r.Mean(), r.ExcessGbit)
		}
	}
}

// Fig. 2's two VGG19 jobs start their all-reduces together, on the same
// period (268 ms alone). Under max-min sharing they stay in lock step for
// good (TestFig2): every all-reduce shares the uplinks half and half, and
// an offset between them is neutral (the one that starts later finishes
// later by just that much). DCQCN's law says they drift apart:
//
//   - Exact alignment is not an equilibrium of the law: marks are drawn
//     per packet, so one sender is cut before the other and its
//     all-reduce ends later.
//   - An offset then grows. While the all-reduces overlap both senders
//     are cut to about half the link; when the one ahead finishes, the
//     other is left alone below line rate and regains it only on the
//     law's increase schedule (fast recovery toward Rt, then 40 Mbps per
//     55 us, hyper increase after five 10 MB byte counters: from 12.5 to
//     50 Gbps in 19 ms, TestDCQCNRecoveryFollowsTheLaw). So the one behind
//     ends later than its start lag: the next iteration starts further
//     apart.
//
// So by 100 iterations (29 to 52 on four seeds) the all-reduces no longer overlap and both jobs run
// at their alone time, on every seed; while they overlap (the first
// iterations) they are slowed about as much as under max-min sharing.
// MLTCP's variant gets there sooner (its flows nearer the end of their
// iteration's bytes increase faster, which widens the gap on purpose):
// fewer iterations on average over the seeds (14 to 21).
func TestDCQCNOverlappedAllReducesDrift(t *testing.T) {
	m, _ := workload.Lookup("VGG19")
	steps, _ := m.Iteration(1400, 2)
	alone := float64(workload.Period(steps)) / 1e6
	shared := 150 + steps[1].Bits/25e9*1e3
	const iters = 100
	settle := map[Transport]float64{}
	for _, tr := range []Transport{DCQCN, MLTCP} {
		for seed := uint64(1); seed <= 4; seed++ {
			cfg := fig2(iters)
			cfg.Topology = twoRacks(t)
			cfg.Transport, cfg.Seed = tr, seed
			r := run(t, cfg)
			a, b := r.IterMs[:iters], r.IterMs[iters:]
			if first := (a[0] + b[0]) / 2; first < 0.9*shared {
				t.Errorf("%v, seed %d: first iteration %.1f ms, overlapped under max-min %.1f", tr, seed, first, shared)
			}
			k := slices.IndexFunc(a, func(ms float64) bool { return near(ms, alone, 0.01) })
			if k < 0 || !near(a[iters-1], alone, 0.01) || !near(b[iters-1], alone, 0.01) {
				t.Fatalf("%v, seed %d: still overlapped after %d iterations: %.1f, %.1f ms (alone %.1f)", tr, seed, iters, a[iters-1], b[iters-1], alone)
			}
			settle[tr] += float64(k) / 4
			t.Logf("%v, seed %d: interleaved from iteration %d (first %.1f/%.1f ms)", tr, seed, k, a[0], b[0])
		}
	}
	if settle[MLTCP] >= settle[DCQCN] {
		t.Errorf("MLTCP interleaves after %.1f iterations on average, DCQCN after %.1f", settle[MLTCP], settle[DCQCN])
	}
}

// The same configuration gives the same run, bit for bit, under each
// transport.
func TestTransportsDeterministic(t *testing.T) {
	for _, tr := range []Transport{DCQCN, MLTCP} {
		cfg := snapshots(t, 30)["snapshot2"]
		cfg.Transport = tr
		x, y := run(t, cfg), run(t, cfg)
		if !slices.Equal(x.IterMs, y.IterMs) || math.Float64bits(x.SentGbit) != math.Float64bits(y.SentGbit) || x.Events != y.Events {
			t.Fatalf("%v: two runs differ", tr)
		}
	}
}

// MLTCP's aggressiveness function is F(r) = Slope r + Intercept of the
// bytes ratio r, clamped to [0, 1]; a job's bytes ratio counts the bits of
// its earlier communication steps of the iteration (commBefore) plus what
// the current step's flow has sent.
func TestMLTCPFactor(t *testing.T) {
	m := DefaultMLTCP
	for _, c := range []struct{ r, want float64 }{{-1, 1}, {0, 1}, {0.25, 1.25}, {1, 2}, {3, 2}} {
		if got := m.Factor(c.r); got != c.want {
			t.Errorf("F(%v) = %v, want %v", c.r, got, c.want)
		}
	}
	if got := (MLTCPParams{Slope: 4, Intercept: 0.5}).Factor(0.5); got != 2.5 {
		t.Errorf("4*0.5+0.5 = %v", got)
	}
	j := &jobRun{steps: []workload.Step{
		{Pattern: workload.Compute, Bits: 0},
		{Pattern: workload.Ring, Bits: 3e9},
		{Pattern: workload.Compute, Bits: 0},
		{Pattern: workload.Ring, Bits: 1e9},
	}}
	j.iterationBits()
	if want := []float64{0, 0, 3e9, 3e9, 4e9}; !slices.Equal(j.commBefore, want) || j.iterBits != 4e9 {
		t.Fatalf("commBefore %v, iterBits %v; want %v, 4e9", j.commBefore, j.iterBits, want)
	}
}

// With F = 1 (slope 0, intercept 1) MLTCP's rule scales nothing, so an
// MLTCP run is the DCQCN run, bit for bit; with the default F it is not
// (the rule changes the rates).
func TestMLTCPUnitFactorIsDCQCN(t *testing.T) {
	cfg := fig2(30)
	cfg.Topology = twoRacks(t)
	cfg.Transport = DCQCN
	d := run(t, cfg)
	cfg.Transport, cfg.MLTCP = MLTCP, MLTCPParams{Slope: 0, Intercept: 1}
	m1 := run(t, cfg)
	if !slices.Equal(d.IterMs, m1.IterMs) || math.Float64bits(d.SentGbit) != math.Float64bits(m1.SentGbit) {
		t.Fatalf("MLTCP with F = 1 differs from DCQCN: %v vs %v ms", m1.Mean(), d.Mean())
	}
	cfg.MLTCP = MLTCPParams{}
	if m := run(t, cfg); slices.Equal(d.IterMs, m.IterMs) {
		t.Fatal("MLTCP with the default F gave DCQCN's run")
	}
}
