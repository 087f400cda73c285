package orrery_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery"
)

// TestSimulateShockwaveOptions: a bad setup is an ErrSimulation naming the
// field, before any file is read.
func TestSimulateShockwaveOptions(t *testing.T) {
	good, ok := orrery.ShockwaveSetup(32, "testdata/shockwave")
	if !ok {
		t.Fatal("no setup for 32 GPUs")
	}
	if _, ok := orrery.ShockwaveSetup(33, "x"); ok {
		t.Fatal("a setup for 33 GPUs")
	}
	for _, c := range []struct {
		name string
		edit func(*orrery.ShockwaveSimulation)
	}{
		{"GPUs", func(s *orrery.ShockwaveSimulation) { s.GPUs = 0 }},
		{"Jobs", func(s *orrery.ShockwaveSimulation) { s.Jobs = -1 }},
		{"MaxNodes", func(s *orrery.ShockwaveSimulation) { s.MaxNodes = -1 }},
		{"RoundSeconds", func(s *orrery.ShockwaveSimulation) { s.RoundSeconds = 5 }},
		{"Policies[1]", func(s *orrery.ShockwaveSimulation) { s.Policies = []string{"gavel", "fifo"} }},
		{"trace", func(s *orrery.ShockwaveSimulation) { s.Trace = "" }},
	} {
		s := good
		s.Trace, s.Throughputs = "no/such/file", "no/such/file"
		if c.name == "trace" {
			s = good
		}
		c.edit(&s)
		_, err := orrery.SimulateShockwave(context.Background(), s, false)
		if !errors.Is(err, orrery.ErrSimulation) {
			t.Errorf("%s: %v, want ErrSimulation", c.name, err)
		}
	}
	s := good
	s.Trace = "no/such/file"
	if _, err := orrery.SimulateShockwave(context.Background(), s, false); err == nil || errors.Is(err, orrery.ErrSimulation) {
		t.Errorf("missing trace: %v", err)
	}
}

// TestSimulateShockwavePerJob: the per-job records agree with the summary.
func TestSimulateShockwavePerJob(t *testing.T) {
	s, _ := orrery.ShockwaveSetup(32, "testdata/shockwave")
	s.Jobs, s.Policies = 25, []string{"themis"}
	rep, err := orrery.SimulateShockwave(context.Background(), s, true)
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
	s := orrery.CassiniSimulation{Jobs: 12, MinIterations: 30, MaxIterations: 60, Seeds: []uint64{1, 2}}
	a, err := orrery.SimulateCassini(context.Background(), s)
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
	b, err := orrery.SimulateCassini(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ:\n%s", diff)
	}
	for _, c := range []struct {
		field string
		edit  func(*orrery.CassiniSimulation)
	}{
		{"Scenario", func(s *orrery.CassiniSimulation) { s.Scenario = "fig3" }},
		{"Topology", func(s *orrery.CassiniSimulation) { s.Topology = "torus" }},
		{"Scheduler", func(s *orrery.CassiniSimulation) { s.Scheduler = "yarn" }},
		{"Arms[1]", func(s *orrery.CassiniSimulation) { s.Arms = []string{"baseline", "cassini/fast"} }},
		{"Noise", func(s *orrery.CassiniSimulation) { s.Noise = "gauss:2" }},
		{"MinIterations", func(s *orrery.CassiniSimulation) { s.MinIterations, s.MaxIterations = 10, 5 }},
		{"Models", func(s *orrery.CassiniSimulation) { s.Models = []string{"AlexNet"} }},
		{"Jobs", func(s *orrery.CassiniSimulation) { s.Jobs = -3 }},
		{"Sweep", func(s *orrery.CassiniSimulation) { s.Sweep = 41 }},
		{"Sweep", func(s *orrery.CassiniSimulation) { s.Sweep = -1 }},
		{"Sweep", func(s *orrery.CassiniSimulation) { s.Scenario, s.Sweep = "fig2", 2 }},
	} {
		bad := s
		c.edit(&bad)
		_, err := orrery.SimulateCassini(context.Background(), bad)
		if !errors.Is(err, orrery.ErrSimulation) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
}

// TestSimulateCassiniJobCap (issue 13, item 9): a trace past
// MaxSimulationJobs is refused before it is built (-jobs 100000 -load 0
// ran for minutes).
func TestSimulateCassiniJobCap(t *testing.T) {
	_, err := orrery.SimulateCassini(context.Background(), orrery.CassiniSimulation{Jobs: orrery.MaxSimulationJobs + 1, Seeds: []uint64{1}})
	if !errors.Is(err, orrery.ErrSimulation) || !strings.Contains(err.Error(), "Jobs") {
		t.Fatalf("err %v, want ErrSimulation naming Jobs", err)
	}
}
