package replay_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/internal/eval/data"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// TestSimulateShockwaveOptions: a bad setup is an ErrSimulation naming the
// field, before any file is read.
func TestSimulateShockwaveOptions(t *testing.T) {
	good, ok := replay.AuthorsSetup(32)
	if !ok {
		t.Fatal("no setup for 32 GPUs")
	}
	good.Data = authorsData
	if _, ok := replay.AuthorsSetup(33); ok {
		t.Fatal("a setup for 33 GPUs")
	}
	for _, c := range []struct {
		name string
		edit func(*replay.Shockwave)
	}{
		{"GPUs", func(s *replay.Shockwave) { s.GPUs = 0 }},
		{"Jobs", func(s *replay.Shockwave) { s.Jobs = -1 }},
		{"MaxNodes", func(s *replay.Shockwave) { s.MaxNodes = -1 }},
		{"RoundSeconds", func(s *replay.Shockwave) { s.RoundSeconds = 5 }},
		{"Policies[1]", func(s *replay.Shockwave) { s.Policies = []string{"gavel", "fifo"} }},
		{"trace", func(s *replay.Shockwave) { s.Trace = "" }},
	} {
		s := good
		s.Trace, s.Throughputs = "no/such/file", "no/such/file"
		if c.name == "trace" {
			s = good
		}
		c.edit(&s)
		_, err := replay.RunShockwave(context.Background(), s)
		if !errors.Is(err, replay.ErrInvalid) {
			t.Errorf("%s: %v, want ErrSimulation", c.name, err)
		}
	}
	s := good
	s.Trace = "no/such/file"
	if _, err := replay.RunShockwave(context.Background(), s); err == nil || errors.Is(err, replay.ErrInvalid) {
		t.Errorf("missing trace: %v", err)
	}
}

// TestSimulateShockwavePerJob: the per-job records agree with the summary.
func TestSimulateShockwavePerJob(t *testing.T) {
	s, _ := replay.AuthorsSetup(32)
	s.Data, s.Jobs, s.Policies, s.PerJob = authorsData, 25, []string{"themis"}, true
	rep, err := replay.RunShockwave(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TraceJobs != 25 || len(rep.Results) != 1 || rep.Results[0].Policy != "finish_time_fairness" || rep.Results[0].Legend != "Themis" {
		t.Fatalf("report %+v", rep)
	}
	r := rep.Results[0]
	worst, last := 0.0, 0.0
	for _, j := range r.PerJob {
		worst, last = max(worst, j.FTF), max(last, j.CompletionS)
	}
	if len(r.PerJob) != 25 || worst != r.WorstFTF || last != r.MakespanS {
		t.Fatalf("%d jobs, worst ρ %v vs %v, last completion %v vs makespan %v", len(r.PerJob), worst, r.WorstFTF, last, r.MakespanS)
	}
}

// TestSimulateCassini: the zero simulation is the paper's Poisson experiment
// without noise; a bad field is an ErrSimulation naming it; the result is
// deterministic.
func TestSimulateCassini(t *testing.T) {
	s := replay.Cassini{Jobs: 12, MinIterations: 30, MaxIterations: 60, Seeds: []uint64{1, 2}}
	a, err := replay.RunCassini(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if a.Scenario != "poisson" || a.Scheduler != "themis" || a.Servers != 24 || len(a.Arms) != 4 || a.Noise != "none" {
		t.Fatalf("report %+v", a)
	}
	for _, arm := range a.Arms {
		if len(arm.Runs) != 2 || arm.MeanSlowdown.Mean < 1 {
			t.Fatalf("arm %s: %d runs, mean slowdown %v", arm.Arm, len(arm.Runs), arm.MeanSlowdown.Mean)
		}
	}
	if ideal, base := a.Arms[3].MeanSlowdown.Mean, a.Arms[0].MeanSlowdown.Mean; ideal > base {
		t.Fatalf("Ideal's slowdown %v above the scheduler's own %v", ideal, base)
	}
	b, err := replay.RunCassini(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ:\n%s", diff)
	}
	for _, c := range []struct {
		field string
		edit  func(*replay.Cassini)
	}{
		{"Scenario", func(s *replay.Cassini) { s.Scenario = "fig3" }},
		{"Fabric", func(s *replay.Cassini) { s.Fabric = &topology.Topology{} }},
		{"Scheduler", func(s *replay.Cassini) { s.Scheduler = 99 }},
		{"Arms[1]", func(s *replay.Cassini) { s.Arms = []replay.Arm{{}, {Policy: netsim.Cassini, Shifts: "fast"}} }},
		{"Arms[0]", func(s *replay.Cassini) { s.Arms = []replay.Arm{{Policy: netsim.Ideal, Shifts: "pad"}} }},
		{"NoiseCV", func(s *replay.Cassini) { s.Noise, s.NoiseCV = replay.Gaussian, 2 }},
		{"NoiseData", func(s *replay.Cassini) { s.Noise = replay.Alibaba }},
		{"MinIterations", func(s *replay.Cassini) { s.MinIterations, s.MaxIterations = 10, 5 }},
		{"Models", func(s *replay.Cassini) { s.Models = []string{"AlexNet"} }},
		{"Jobs", func(s *replay.Cassini) { s.Jobs = -3 }},
		{"Sweep", func(s *replay.Cassini) { s.Sweep = 41 }},
		{"Sweep", func(s *replay.Cassini) { s.Sweep = -1 }},
		{"Sweep", func(s *replay.Cassini) { s.Scenario, s.Sweep = "fig2", 2 }},
		{"Placement", func(s *replay.Cassini) { s.Placement = "random" }},
		{"Auction", func(s *replay.Cassini) { s.Auction = "vickrey" }},
		{"Transport", func(s *replay.Cassini) { s.Transport = 9 }},
		{"DCQCNStep", func(s *replay.Cassini) { s.Transport, s.DCQCNStep = netsim.DCQCN, time.Second }},
	} {
		bad := s
		c.edit(&bad)
		_, err := replay.RunCassini(context.Background(), bad)
		if !errors.Is(err, replay.ErrInvalid) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
}

// TestSimulateCassiniJobCap (issue 13, item 9): a trace past
// MaxJobs is refused before it is built (-jobs 100000 -load 0
// ran for minutes).
func TestSimulateCassiniJobCap(t *testing.T) {
	_, err := replay.RunCassini(context.Background(), replay.Cassini{Jobs: replay.MaxJobs + 1, Seeds: []uint64{1}})
	if !errors.Is(err, replay.ErrInvalid) || !strings.Contains(err.Error(), "Jobs") {
		t.Fatalf("err %v, want ErrSimulation naming Jobs", err)
	}
}

// authorsData is the Shockwave authors' data folder, embedded.
var authorsData = data.Shockwave

// A Trace of the caller's holding the jobs the Poisson scenario generates
// runs them as that scenario does, arm for arm; a model of the caller's
// that is VGG19's own profile under another name simulates as VGG19; a
// Trace with a generated scenario's options is refused.
func TestSimulateCassiniTrace(t *testing.T) {
	ctx := context.Background()
	s := replay.Cassini{Jobs: 10, MinIterations: 20, MaxIterations: 40}
	want, err := replay.RunCassini(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := workload.Generate(workload.Config{Jobs: 10, Load: 0.9, ClusterGPUs: 24, MinIterations: 20, MaxIterations: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := replay.RunCassini(ctx, replay.Cassini{Trace: jobs})
	if err != nil {
		t.Fatal(err)
	}
	if got.Scenario != "custom" || got.Jobs != 10 {
		t.Fatalf("report %+v", got)
	}
	if diff := cmp.Diff(want.Arms, got.Arms); diff != "" {
		t.Fatalf("the generated jobs as a Trace differ from the Poisson scenario (-want +got):\n%s", diff)
	}

	// VGG19's profile under another name.
	vgg, _ := workload.Lookup("VGG19")
	gbps := vgg.GradientBits() / vgg.Phases[1].Duration.Seconds() / 1e9
	trace := []workload.Job{{ID: 0, Model: "VGG19", GPUs: 2, Batch: vgg.RefBatch, Iterations: 30}, {ID: 1, Model: "VGG19", GPUs: 2, Batch: vgg.RefBatch, Iterations: 30}}
	builtin, err := replay.RunCassini(ctx, replay.Cassini{Trace: trace})
	if err != nil {
		t.Fatal(err)
	}
	own, _, err := workload.JobFile{Models: []workload.ModelSpec{{Name: "mine", Phases: []workload.PhaseSpec{{Ms: 150}, {Ms: 118, Gbps: gbps}}}}}.Parse(workload.FileOptions{})
	if err == nil {
		t.Fatal("a file without jobs parsed")
	}
	_, models, err := workload.JobFile{Models: []workload.ModelSpec{{Name: "mine", Phases: []workload.PhaseSpec{{Ms: 150}, {Ms: 118, Gbps: gbps}}}},
		Jobs: []workload.JobSpec{{Model: "mine", GPUs: 2, Iterations: 30}}}.Parse(workload.FileOptions{})
	if err != nil || own != nil {
		t.Fatal(err)
	}
	for i := range trace {
		trace[i].Model, trace[i].Batch = "mine", 1
	}
	mine, err := replay.RunCassini(ctx, replay.Cassini{Trace: trace, Profiles: models})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range mine.Arms {
		b := builtin.Arms[i]
		if a.MeanIterMs != b.MeanIterMs || a.P99IterMs != b.P99IterMs || a.MarkedMbitPerIter != b.MarkedMbitPerIter ||
			len(a.Models) != 1 || a.Models[0].Model != "mine" {
			t.Fatalf("arm %s: %+v, as VGG19 %+v", a.Arm, a, b)
		}
	}

	for _, bad := range []replay.Cassini{
		{Trace: jobs, Scenario: replay.Poisson},
		{Trace: jobs, Sweep: 2},
		{Trace: []workload.Job{}},
		{Scenario: replay.Custom},
	} {
		if _, err := replay.RunCassini(ctx, bad); !errors.Is(err, replay.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestCassiniTransports is the transports' smoke test: Fig. 2 under each
// one, with the invariants that hold whatever the congestion control:
// CASSINI's shifted jobs and Ideal run at the uncontended 268 ms (the two
// all-reduces never meet), the scheduler's own overlapped jobs run no
// faster than that and no slower than max-min's lock step (334.2 ms,
// 5% allowed for DCQCN's under-utilization), every arm delivers the
// same traffic, the report names the transport (not max-min's, whose
// JSON is unchanged), and a second run gives the same report.
func TestCassiniTransports(t *testing.T) {
	arms := []replay.Arm{{Policy: netsim.Baseline}, {Policy: netsim.Cassini}, {Policy: netsim.Ideal}}
	overlapped := map[netsim.Transport]float64{}
	for _, tr := range netsim.Transports {
		s := replay.Cassini{Scenario: replay.Fig2, MaxIterations: 40, Arms: arms, Transport: tr}
		a, err := replay.RunCassini(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[netsim.Transport]string{netsim.DCQCN: "dcqcn", netsim.MLTCP: "mltcp"}[tr]; a.Transport != want {
			t.Errorf("%v: report's transport %q", tr, a.Transport)
		}
		base, cas, ideal := a.Arms[0].Runs[0], a.Arms[1].Runs[0], a.Arms[2].Runs[0]
		if cas.MeanIterMs != 268 || ideal.MeanIterMs != 268 || cas.P99IterMs != 268 {
			t.Errorf("%v: cassini %v (p99 %v), ideal %v ms, want 268", tr, cas.MeanIterMs, cas.P99IterMs, ideal.MeanIterMs)
		}
		if base.MeanIterMs < 268 || base.P99IterMs > 334.2*1.05 {
			t.Errorf("%v: overlapped mean %v, p99 %v ms", tr, base.MeanIterMs, base.P99IterMs)
		}
		if tr == netsim.MaxMin && base.MeanIterMs != 334.214 {
			t.Errorf("max-min: overlapped %v ms, want 334.214 (lock step)", base.MeanIterMs)
		}
		overlapped[tr] = base.MeanIterMs
		if base.Iterations != 80 || cas.Iterations != 80 || ideal.Iterations != 80 {
			t.Errorf("%v: iterations %d, %d, %d", tr, base.Iterations, cas.Iterations, ideal.Iterations)
		}
		b, err := replay.RunCassini(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%v: two runs differ:\n%s", tr, diff)
		}
	}
	// The laws' order on the aligned jobs: max-min keeps them in lock
	// step, DCQCN lets them drift apart, and MLTCP pushes them apart
	// sooner (netsim's TestDCQCNOverlappedAllReducesDrift: on average over
	// four seeds), so over 40 iterations their means fall in that order.
	if !(overlapped[netsim.MLTCP] < overlapped[netsim.DCQCN] && overlapped[netsim.DCQCN] < overlapped[netsim.MaxMin]) {
		t.Errorf("overlapped means: max-min %v, DCQCN %v, MLTCP %v ms", overlapped[netsim.MaxMin], overlapped[netsim.DCQCN], overlapped[netsim.MLTCP])
	}
	t.Logf("overlapped means over 40 iterations: max-min %v, DCQCN %v, MLTCP %v ms", overlapped[netsim.MaxMin], overlapped[netsim.DCQCN], overlapped[netsim.MLTCP])
}

// TestGapClosed: (base - arm) / (base - ideal), 0 with no gap.
func TestGapClosed(t *testing.T) {
	for _, c := range []struct{ base, arm, ideal, want float64 }{
		{1.5, 1.2, 1.0, 0.6},   // 0.3 of a 0.5 gap
		{1.5, 1.0, 1.0, 1},     // as fast as Ideal
		{1.5, 1.5, 1.0, 0},     // as slow as the scheduler
		{1.5, 1.75, 1.0, -0.5}, // slower than the scheduler
		{1.0, 0.9, 1.0, 0},     // no gap
		{0.9, 0.8, 1.0, 0},     // the scheduler faster than Ideal: no gap
	} {
		if got := replay.GapClosed(c.base, c.arm, c.ideal); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("GapClosed(%v, %v, %v) = %v, want %v", c.base, c.arm, c.ideal, got, c.want)
		}
	}
}

// TestPaperScenario is the CI smoke of the paper's setup: its fabric, its
// ten models, Themis placing as Themis does. Without noise no arm beats
// Ideal on the pooled mean (contention only slows), the placement
// statistics are fractions, the pooled metric and the gap arithmetic
// agree with the arms' runs, and the run is deterministic.
func TestPaperScenario(t *testing.T) {
	s := replay.Cassini{Scenario: replay.Paper, Jobs: 12, MinIterations: 20, MaxIterations: 40, Seeds: []uint64{1, 2}}
	a, err := replay.RunCassini(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if a.Scenario != "paper" || a.Placement != "themis" || a.Auction != "paper" || a.Topology != "paper" || len(a.Arms) != 4 {
		t.Fatalf("report %+v", a)
	}
	ideal := a.Arms[3]
	if ideal.Arm != "ideal" || ideal.Pooled.GapClosed == nil || *ideal.Pooled.GapClosed != 1 || *a.Arms[0].Pooled.GapClosed != 0 {
		t.Fatalf("ideal arm %+v, baseline %+v", ideal.Pooled, a.Arms[0].Pooled)
	}
	allowed := replay.PaperModels()
	for _, arm := range a.Arms {
		if arm.Pooled.MeanIterMs < ideal.Pooled.MeanIterMs {
			t.Errorf("%s: pooled mean %v ms below Ideal's %v", arm.Arm, arm.Pooled.MeanIterMs, ideal.Pooled.MeanIterMs)
		}
		var iters []float64
		for _, r := range arm.Runs {
			iters = append(iters, r.IterMs...)
			p := r.Placement
			for name, v := range map[string]float64{"cross-rack": p.CrossRack, "uplink hops": p.UplinkHops, "binding share": p.BindingShare} {
				if !(v >= 0 && v <= 1) {
					t.Errorf("%s seed %d: %s %v outside [0, 1]", arm.Arm, r.Seed, name, v)
				}
			}
			if p.UplinkLoad < 0 || (p.BindingShare > 0) != (p.BindingSharers >= 1) || p.Placements < 12 {
				t.Errorf("%s seed %d: placement %+v", arm.Arm, r.Seed, p)
			}
			for _, m := range r.Models {
				if !slices.Contains(allowed, m.Model) {
					t.Errorf("%s: model %s is not in the paper's mix", arm.Arm, m.Model)
				}
			}
		}
		var sum float64
		for _, x := range iters {
			sum += x
		}
		if mean := sum / float64(len(iters)); math.Abs(mean-arm.Pooled.MeanIterMs) > 0.0005 {
			t.Errorf("%s: pooled mean %v, its runs' iterations %v", arm.Arm, arm.Pooled.MeanIterMs, mean)
		}
		want := replay.GapClosed(a.Arms[0].Pooled.MeanIterMs, arm.Pooled.MeanIterMs, ideal.Pooled.MeanIterMs)
		if math.Abs(*arm.Pooled.GapClosed-want) > 0.002 {
			t.Errorf("%s: gap closed %v, from the pooled means %v", arm.Arm, *arm.Pooled.GapClosed, want)
		}
	}
	if ideal.Pooled.SpeedupMean <= 1 {
		t.Errorf("no gap to Ideal: %+v", ideal.Pooled)
	}
	b, err := replay.RunCassini(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ:\n%s", diff)
	}
}

// TestRegime: a sweep's cells are their reports' pooled arithmetic
// (Themis/Ideal, the gains, the fractions of the gap closed), one per
// oversubscription, placement and transport in order; the fabric's uplinks
// follow the oversubscription; bad axes are errors naming the field.
func TestRegime(t *testing.T) {
	base := replay.Cassini{Scenario: replay.Paper, Jobs: 8, MinIterations: 20, MaxIterations: 30, Seeds: []uint64{1}}
	rep, err := replay.RunRegime(context.Background(), replay.Regime{Base: base, Oversubscriptions: []float64{2, 8},
		Placements: []replay.Placement{replay.PlaceContiguous, replay.PlaceScattered}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 4 || rep.Auction != "paper" || rep.Scenario != "paper" {
		t.Fatalf("%+v", rep)
	}
	for i, c := range rep.Cells {
		if want := []float64{2, 2, 8, 8}[i]; c.Oversubscription != want || c.Placement != []string{"contiguous", "scattered"}[i%2] || c.Transport != "maxmin" {
			t.Fatalf("cell %d: %v:1 %s %s", i, c.Oversubscription, c.Placement, c.Transport)
		}
		r := c.Report
		if r.Placement != c.Placement || r.Auction != "paper" || r.Topology != map[float64]string{2: "paper", 8: "clos:2,3,4,2,3,50,12.5"}[c.Oversubscription] {
			t.Fatalf("cell %d ran %s/%s on %s", i, r.Placement, r.Auction, r.Topology)
		}
		b, p, s, id := r.Arms[0].Pooled.MeanIterMs, r.Arms[1].Pooled.MeanIterMs, r.Arms[2].Pooled.MeanIterMs, r.Arms[3].Pooled.MeanIterMs
		for name, got := range map[string][2]float64{
			"Themis/Ideal":     {c.ThemisOverIdeal, b / id},
			"placement gain":   {c.PlacementGain, b / p},
			"shifts gain":      {c.ShiftsGain, b / s},
			"placement closed": {c.PlacementClosed, (b - p) / (b - id)},
			"shifts closed":    {c.ShiftsClosed, (b - s) / (b - id)},
		} {
			if math.Abs(got[0]-got[1]) > 0.002 {
				t.Errorf("cell %d: %s %v, from the pooled means %v", i, name, got[0], got[1])
			}
		}
		if c.CrossRack != r.Arms[0].Placement.CrossRack.Mean || c.UplinkLoad != r.Arms[0].Placement.UplinkLoad.Mean {
			t.Errorf("cell %d: placement statistics are not the scheduler's", i)
		}
	}
	// MLTCP's columns: each cell's scheduler over the scheduler under
	// MLTCP at the same oversubscription and placement (about
	// 14 s of CPU: not in -short).
	if !testing.Short() {
		small := replay.Cassini{Scenario: replay.Paper, Jobs: 6, MinIterations: 5, MaxIterations: 10, Seeds: []uint64{1}, Noise: replay.NoNoise}
		rep, err := replay.RunRegime(context.Background(), replay.Regime{Base: small, Oversubscriptions: []float64{8},
			Placements: []replay.Placement{replay.PlaceScattered}, Transports: []string{"dcqcn", "mltcp"}})
		if err != nil {
			t.Fatal(err)
		}
		ml := rep.Cells[1].Report.Arms[0].Pooled.MeanIterMs
		for i, c := range rep.Cells {
			if c.Transport != []string{"dcqcn", "mltcp"}[i] || c.MLTCPGain == nil || c.MLTCPClosed == nil {
				t.Fatalf("cell %d: %s, MLTCP columns %v %v", i, c.Transport, c.MLTCPGain, c.MLTCPClosed)
			}
			b, id := c.Report.Arms[0].Pooled.MeanIterMs, c.Report.Arms[3].Pooled.MeanIterMs
			if math.Abs(*c.MLTCPGain-b/ml) > 0.002 || (b > id && math.Abs(*c.MLTCPClosed-(b-ml)/(b-id)) > 0.002) {
				t.Errorf("cell %d: MLTCP gain %v closes %v; from the pooled means %v, %v", i, *c.MLTCPGain, *c.MLTCPClosed, b/ml, (b-ml)/(b-id))
			}
		}
		if *rep.Cells[1].MLTCPGain != 1 {
			t.Errorf("MLTCP over itself: %v", *rep.Cells[1].MLTCPGain)
		}
	}
	fab, err := replay.RegimeFabric(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range fab.Links {
		if want := map[bool]float64{true: 50, false: 25}[l.From < fab.Servers || l.To < fab.Servers]; l.Gbps != want {
			t.Fatalf("4:1: link %s at %v Gbps, want %v", l.ID, l.Gbps, want)
		}
	}
	for _, c := range []struct {
		field string
		r     replay.Regime
	}{
		{"Oversubscriptions", replay.Regime{Base: base, Oversubscriptions: []float64{0}}},
		{"Placements", replay.Regime{Base: base, Placements: []replay.Placement{"random"}}},
		{"Transports", replay.Regime{Base: base, Transports: []string{"dcqcn2"}}},
	} {
		if _, err := replay.RunRegime(context.Background(), c.r); !errors.Is(err, replay.ErrInvalid) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
}
