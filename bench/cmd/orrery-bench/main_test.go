package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orrery/orrery/internal/bench"
)

// TestMain lets the test binary serve as its own kernel worker, as the
// command does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == workerArg {
		os.Exit(kernelWorker())
	}
	if len(os.Args) > 1 && os.Args[1] == scaleWorkerArg {
		os.Exit(scaleWorker())
	}
	if len(os.Args) > 1 && os.Args[1] == simWorkerArg {
		os.Exit(simWorker())
	}
	os.Exit(m.Run())
}

func testConfig(t *testing.T) *config {
	t.Helper()
	root, err := findRoot()
	if err != nil {
		t.Fatal(err)
	}
	return &config{root: root, out: t.TempDir(), smoke: true, rounds: 2, target: time.Millisecond, cbcTime: 60 * time.Second}
}

// checkSection runs a section of the smoke suite and checks that it has
// rows and that no gate fails.
func checkSection(t *testing.T, run func(context.Context, *config) ([]bench.Section, []bench.Gate, error), minGates int) []bench.Section {
	t.Helper()
	secs, gates, err := run(context.Background(), testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) == 0 {
		t.Fatal("no sections")
	}
	for _, s := range secs {
		if len(s.Rows) == 0 {
			t.Errorf("%s: no rows", s.ID)
		}
		for _, r := range s.Rows {
			if len(r) != len(s.Header) {
				t.Errorf("%s: row of %d cells under %d headers", s.ID, len(r), len(s.Header))
			}
		}
	}
	if len(gates) < minGates {
		t.Errorf("%d gates, want at least %d", len(gates), minGates)
	}
	for _, g := range gates {
		if !g.Pass && !g.Skipped {
			t.Errorf("gate failed: %s: %s", g.Name, g.Detail)
		}
	}
	return secs
}

func TestKernelSection(t *testing.T) {
	secs := checkSection(t, kernelSection, 2)
	rows := secs[0].Data.([]KernelRow)
	if len(rows) != 1 || rows[0].N != 4096 || !rows[0].Identical {
		t.Fatalf("rows %+v", rows)
	}
	for _, impl := range []string{"generic", "plain"} {
		if s, ok := rows[0].Rates[impl]; !ok || s.N != 2 || !(s.Median > 0) {
			t.Errorf("%s: %+v", impl, s)
		}
	}
}

func TestLinkSection(t *testing.T) {
	secs := checkSection(t, linkSection, 3)
	data := secs[0].Data.(map[string]any)["problems"].([]LinkRow)
	if !data[0].Agree || data[0].ExactScore < data[0].PaperScore {
		t.Fatalf("row %+v", data[0])
	}
	anyRows := secs[1].Data.([]AnyRow)
	if len(anyRows) != 2 || anyRows[0].Perimeter != 5000*4999 || anyRows[0].Shared != 1 || anyRows[0].TodayGrid < 2 {
		t.Fatalf("any-periods rows %+v", anyRows)
	}
	for _, r := range anyRows {
		if !r.Agree || r.Status != "optimal" || r.Score < r.TodayReal {
			t.Errorf("any-periods row %+v", r)
		}
	}
}

func TestRankSection(t *testing.T) {
	secs := checkSection(t, rankSection, 1)
	rows := secs[1].Data.([]ScaleRow)
	if len(rows) != 2 || rows[1].Servers != 1000 || rows[1].GPUs != 8000 || rows[1].Jobs != 240 || rows[1].Searches == 0 || rows[1].Fit == 0 {
		t.Fatalf("scale rows %+v", rows)
	}
	for _, r := range rows {
		if !(r.RankCPU.Median > 0) || r.RankPeak <= 0 || r.BuildPeak <= 0 {
			t.Errorf("row %+v", r)
		}
	}
}

// The fluid section's simulations agree under every exact filling, and
// each filling's runs repeat bit for bit.
func TestFluidSection(t *testing.T) {
	secs := checkSection(t, fluidSection, 2)
	for _, r := range secs[0].Data.([]FluidRow) {
		if !r.Identical || r.Events == 0 || len(r.CPU) != len(fluidModes) {
			t.Errorf("row %+v", r)
		}
	}
}

func TestPlannerSection(t *testing.T) {
	secs := checkSection(t, plannerSection, 4)
	for _, r := range secs[0].Data.([]PlannerRow) {
		if !r.LPFeasible {
			t.Errorf("%s: orrery's plan infeasible in the LP: %v", r.Instance, r.Violations)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	rep := &bench.Report{Meta: meta(testConfig(t)), Sections: []bench.Section{{ID: "x", Title: "X", Header: []string{"a"}, Rows: [][]string{{"1"}}}}}
	if err := write(rep, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.md", "report.json", "readme.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "X") {
			t.Errorf("%s lacks the section", f)
		}
	}
}
