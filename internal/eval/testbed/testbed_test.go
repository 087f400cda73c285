//go:build linux

package testbed

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/topology"
)

func TestHarmonic(t *testing.T) {
	for _, c := range []struct{ in, want []int }{
		{[]int{268, 269}, []int{269, 269}},
		{[]int{236, 239}, []int{239, 239}},
		{[]int{100, 200}, []int{100, 200}},           // already harmonic
		{[]int{130, 268}, []int{134, 268}},           // k = 2
		{[]int{200, 300}, []int{200, 300}},           // one period each: 200 to 300 is past 5%
		{[]int{100, 150, 301}, []int{102, 153, 306}}, // k = 3, 2, 1 on 306: each within 2%
		{[]int{100, 130}, []int{100, 130}},
	} {
		if got := harmonic(c.in); !slices.Equal(got, c.want) {
			t.Errorf("harmonic(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// paceSlack is the Elastic group's slack rule: Margin·σ²/θ, at most θ.
func TestPaceSlack(t *testing.T) {
	flat := []float64{268, 268, 268, 268}
	if s := paceSlack(flat, 268, 0); s != 0 {
		t.Errorf("no spread: slack %v", s)
	}
	noisy := []float64{260, 276, 260, 276, 260, 276} // MAD 8 of 268: σ = 4.4%
	want := 1.4826 * 8 / 268
	want = want * want / 0.05
	if s := paceSlack(noisy, 268, 0); s < want*0.99 || s > want*1.01 {
		t.Errorf("slack %v, want %v", s, want)
	}
	if s := paceSlack([]float64{100, 300, 100, 300}, 200, 0.05); s != 0.05 {
		t.Errorf("capped: %v", s)
	}
}

func TestModelAlone(t *testing.T) {
	got, err := ModelAlone(replay.Fig2)
	if err != nil {
		t.Fatal(err)
	}
	// Fig. 2's VGG19: 150 ms of compute and 118 ms of all-reduce, the
	// fluid model's 268.0 ms alone.
	if len(got) != 2 || math.Abs(got[0]-268) > 0.5 || got[0] != got[1] {
		t.Errorf("fig2 alone: %v ms, want 268 each", got)
	}
}

func TestJudge(t *testing.T) {
	arm := func(name Arm, p50 float64, disturbed int) ArmResult {
		return ArmResult{Arm: string(name), P50Ms: p50, Disturbed: disturbed, RankIterations: 800, Jobs: []JobArm{{MedianMs: p50}, {MedianMs: p50}}}
	}
	rep := func(alone, over, agents float64, dOver, dAgents int) Report {
		return Report{StallMs: 10, Arms: []ArmResult{arm(Alone, alone, 0), arm(Overlapped, over, dOver), arm(Agents, agents, dAgents)}}
	}
	model := []float64{268, 268}
	for _, c := range []struct {
		r    Report
		want Outcome
	}{
		{rep(268.5, 331, 270, 0, 3), Pass},
		{rep(268.5, 280, 275, 0, 3), Fail},     // 1.018x: under the margin
		{rep(290, 331, 270, 0, 0), Fail},       // alone is not the model's
		{rep(268.5, 280, 275, 0, 41), InDoubt}, // 41 of 800 disturbed: past 5%
		{rep(268.5, 331, 270, 60, 0), InDoubt},
	} {
		if got, why := DefaultPolicy.Judge(c.r, model); got != c.want {
			t.Errorf("%+v: %v (%s), want %v", c.r.Arms, got, why, c.want)
		}
	}
}

// The fabric is built in namespaces of a fresh name and removed by Close;
// Leftovers removes the namespaces of a run whose process is gone and
// leaves those of live runs (this one).
func TestFabricAndLeftovers(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	topo, err := topology.Parse("clos:1,2,2,1,0")
	if err != nil {
		t.Fatal(err)
	}
	name := NewName()
	f, err := Build(ctx, name, topo, FabricOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dead := Prefix + "999999999-feed00-s0" // no process has that PID
	if err := run(ctx, "ip", "netns", "add", dead); err != nil {
		t.Fatal(err)
	}
	removed, err := Leftovers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, dead) || slices.ContainsFunc(removed, func(ns string) bool { return strings.HasPrefix(ns, name) }) {
		t.Errorf("removed %v: want %s and none of %s-*", removed, dead, name)
	}
	if n := countNamespaces(t, name); n != 5 {
		t.Errorf("%d namespaces of the fabric, want 5 (4 servers, the switches)", n)
	}
	st, err := f.Stats(ctx)
	if err != nil || len(st) != len(topo.Links) {
		t.Fatalf("stats %v, %v", st, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := countNamespaces(t, name); n != 0 {
		t.Errorf("%d namespaces left after Close", n)
	}
}

func countNamespaces(t *testing.T, prefix string) int {
	b, err := output(context.Background(), "ip", "netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), prefix+"-")
}

// The paper's 2:1 fabric has redundant paths, which bridges cannot carry.
func TestFabricRefusesLoops(t *testing.T) {
	if _, err := Build(context.Background(), "unused", topology.Paper(), FabricOptions{}); err == nil || !strings.Contains(err.Error(), "not a tree") {
		t.Fatalf("paper fabric: %v", err)
	}
}

// A short run on real TCP: Fig. 2 alone and overlapped for a few
// iterations each; the job alone takes its model's time within 5%, and
// overlapped jobs take longer.
func TestShortRun(t *testing.T) {
	if os.Getenv("ORRERY_TESTBED") == "" {
		t.Skip("set ORRERY_TESTBED=1 (make testbed-check) to run the testbed")
	}
	needRoot(t)
	rep, err := Run(context.Background(), Options{Iterations: 12, AloneIterations: 10, Arms: []Arm{Alone, Overlapped}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Table())
	model, _ := ModelAlone(replay.Fig2)
	a, o := rep.Arm(Alone), rep.Arm(Overlapped)
	for k, j := range a.Jobs {
		if math.Abs(j.MedianMs/model[k]-1) > 0.05 {
			t.Errorf("job %d alone: %.1f ms, the model's %.1f", k, j.MedianMs, model[k])
		}
	}
	if o.P50Ms < a.P50Ms*1.05 {
		t.Errorf("overlapped %.1f ms, alone %.1f: no contention", o.P50Ms, a.P50Ms)
	}
	if n := countNamespaces(t, Prefix); n != 0 {
		t.Errorf("%d testbed namespaces left", n)
	}
}

// TestCI is the run every .ci/run makes (make testbed-check: ORRERY_TESTBED=1):
// Fig. 2 under Cubic, each job alone (30 iterations, its profile), then
// overlapped and with its agents (150 iterations each), at real-time
// priority. It passes when the agents beat the overlapped jobs on medians
// by DefaultPolicy.Margin and each job alone runs its model's time; when
// the host stalled too often to tell, it says IN DOUBT loudly and skips
// (neither a pass nor a failure).
func TestCI(t *testing.T) {
	if os.Getenv("ORRERY_TESTBED") == "" {
		t.Skip("set ORRERY_TESTBED=1 (make testbed-check) to run the testbed")
	}
	if err := Check(); err != nil {
		if os.Getenv("ORRERY_TESTBED") == "required" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// An interrupt (a cancelled CI job) ends the run, which then removes
	// its namespaces.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, err := Run(ctx, Options{Iterations: 150, AloneIterations: 30, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Table())
	model, _ := ModelAlone(replay.Fig2)
	out, why := DefaultPolicy.Judge(rep, model)
	t.Logf("%v in %v: %s", out, time.Since(start).Round(time.Second), why)
	switch out {
	case Fail:
		t.Fatal(why)
	case InDoubt:
		fmt.Fprintf(os.Stderr, "\n%s\n*** TESTBED IN DOUBT: %s\n%s\n\n", strings.Repeat("*", 72), why, strings.Repeat("*", 72))
		t.Skip("IN DOUBT: " + why)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// needRoot skips a test that builds namespaces where the testbed cannot run.
func needRoot(t *testing.T) {
	t.Helper()
	if err := Check(); err != nil {
		t.Skip(err)
	}
}

// The fluid column is the simulator's: Fig. 2 without noise, overlapped
// 334.2 ms, with CASSINI's shifts 268.0.
func TestFluidColumn(t *testing.T) {
	arms, err := fluid(context.Background(), Options{Scenario: replay.Fig2, Iterations: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 2 || math.Abs(arms[0].MeanMs-334.2) > 0.1 || math.Abs(arms[1].MeanMs-268) > 0.1 {
		t.Errorf("fluid: %+v", arms)
	}
}

// A host stall while a job is profiled (one iteration 100 ms long, every
// later one 100 ms later) does not move its profile: a Fig. 2 job profiled
// through one and a job profiled without, sharing a 200 Mbit/s link, are
// planned 118 ms apart at the edge (their all-reduce's length). Timed as
// measured (each event at its own instant), the stalled job's fold would
// put its all-reduce 100 ms late for two thirds of its record, and the
// plan would interleave profiles that are not the jobs' (a CI run planned
// a 57 ms shift).
func TestProfileSurvivesAStall(t *testing.T) {
	const period, offset, comm = 268 * 1e6, 150 * 1e6, 118 * 1e6
	iterations := func(stallAt int) []Iteration {
		var its []Iteration
		var t int64
		for i := range 30 {
			it := Iteration{Start: t, CommStart: t + offset, CommEnd: t + offset + comm}
			t += period
			if i == stallAt {
				it.CommStart += 100e6
				it.CommEnd += 100e6
				t += 100e6
			}
			its = append(its, it)
		}
		return its
	}
	var jobs []orrery.JobSpec
	for k, stallAt := range []int{10, -1} {
		ev, _, _ := profileEvents(iterations(stallAt), 2_200_000)
		id := fmt.Sprint("job", k)
		prof, err := orrery.Profile(context.Background(), orrery.ProfileRequest{Job: orrery.JobSpec{ID: id, Events: ev}, SearchSpec: orrery.SearchSpec{TickMs: 1}})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, orrery.JobSpec{ID: id, Samples: &prof.Samples})
	}
	res, err := orrery.Link(context.Background(), orrery.LinkRequest{CapacityGbps: 0.2, Jobs: jobs, SearchSpec: orrery.SearchSpec{TickMs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.ShiftsMs["job1"]; math.Abs(s-118) > 2 || res.Score < 0.99 {
		t.Errorf("periods %v ms, edge shift %v ms, score %v: want 118 ms apart", res.PeriodsMs, s, res.Score)
	}
}
