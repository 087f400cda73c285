package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/trace"
)

// swArgs are the command's arguments for the authors' 120-job setup on 32
// GPUs: the defaults, from the copy inside the binary.
func swArgs(extra ...string) []string { return extra }

// swDisk names the repository's copy of the authors' 32-GPU files on disk
// (the tests run in cmd/orrery).
func swDisk() (tr, tp, cf string) {
	d := filepath.Join("..", "..", "internal", "eval", "data", "shockwave")
	s32, _ := trace.SetupFor(32)
	return filepath.Join(d, "traces", s32.Trace), filepath.Join(d, s32.Table), filepath.Join(d, "configurations", s32.Config)
}

func swRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runShockwaveSimulate(context.Background(), args, stdio{strings.NewReader(""), &out, &errb})
	return out.String(), err
}

func TestShockwaveSimulateTable(t *testing.T) {
	args := swArgs("--jobs", "30", "--policy", "shockwave,gavel,themis")
	out, err := swRun(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(30 jobs), 32 GPUs, tacc_throughputs.json, tacc_32gpus.json",
		"Shockwave", "Gavel", "Themis", "makespan_s", "avg_jct_s", "worst_ftf", "unfair_fraction", "utilization"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	again, err := swRun(t, args...)
	if err != nil || again != out {
		t.Fatalf("second run differs (%v):\n%s\n%s", err, out, again)
	}
}

func TestShockwaveSimulateJSON(t *testing.T) {
	out, err := swRun(t, swArgs("--jobs", "25", "--policy", "mst,ossp", "--json", "--per-job")...)
	if err != nil {
		t.Fatal(err)
	}
	var doc swJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Jobs != 25 || doc.GPUs != 32 || len(doc.Results) != 2 || doc.Results[0].Policy != "max_sum_throughput_perf" ||
		doc.Results[1].Legend != "OSSP" {
		t.Fatalf("document %+v", doc)
	}
	for _, r := range doc.Results {
		worst := 0.0
		for _, j := range r.PerJob {
			worst = max(worst, j.FTF)
		}
		if len(r.PerJob) != 25 || worst != r.WorstFTF || r.MakespanS <= 0 || r.WallS != 0 {
			t.Fatalf("result %s: %d jobs, worst %v vs %v", r.Policy, len(r.PerJob), worst, r.WorstFTF)
		}
	}
	// The documented keys.
	var raw struct{ Results []map[string]any }
	json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"makespan_s", "avg_jct_s", "worst_ftf", "unfair_fraction", "utilization"} {
		if _, ok := raw.Results[0][k]; !ok {
			t.Fatalf("no %q in %v", k, raw.Results[0])
		}
	}
}

func TestShockwaveSimulateUsage(t *testing.T) {
	for _, args := range [][]string{
		swArgs("--policy", "fifo"),
		swArgs("--jobs", "-1"),
		swArgs("--round-s", "0"),
		swArgs("--max-nodes", "-3"),
		swArgs("extra"),
		{"--gpus", "7"},
		{"--gpus", "0"},
	} {
		if _, err := swRun(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// A malformed trace is reported with its line and field; a job wider than
// the cluster with its line.
func TestShockwaveSimulateBadTrace(t *testing.T) {
	good := "ResNet-18 (batch size 32)\tcmd\tdir\t--steps\t0\t5000\t1\tstatic\t1\t-1\t300\t0\n"
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{good + "ResNet-18 (batch size 33)\tcmd\tdir\t--steps\t0\t5000\t1\tstatic\t1\t-1\t300\t10\n", "line 2 field job_type"},
		{good + "ResNet-18 (batch size 32)\tcmd\tdir\t--steps\t0\t5000\t1\tstatic\n", "line 2"},
		{good + "ResNet-18 (batch size 32)\tcmd\tdir\t--steps\t0\t5000\t64\tstatic\t1\t-1\t300\t10\n", "line 2 field throughput"},
		{good + "ResNet-18 (batch size 32)\tcmd\tdir\t--steps\t0\t5000\t8\tstatic\t1\t-1\t300\t10\n", "(line 2) field scale_factor"},
		{good + "Pong (batch size 32)\tcmd\tdir\t--steps\t0\t5000\t1\tstatic\t1\t-1\t300\t10\n", "unknown model"},
	} {
		path := filepath.Join(dir, "bad.trace")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		args := swArgs("--policy", "gavel", "--gpus", "4", "--trace", path)
		_, err := swRun(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, errUsage) {
			t.Errorf("%q: %v", c.want, err)
		}
	}
}

// The plot is written as PNG and SVG, and is the same every time.
func TestPlotShockwaveFTF(t *testing.T) {
	tr, tp, cf := swDisk()
	c, err := swSetupFor(32, "", tr, tp, cf)
	if err != nil {
		t.Fatal(err)
	}
	c.Jobs, c.Policies, c.PerJob = 20, []string{"shockwave", "max_min_fairness"}, true
	results, err := replay.RunShockwave(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var first [][]byte
	for _, dir := range []string{t.TempDir(), t.TempDir()} {
		paths, err := plotShockwaveFTF(filepath.Join(dir, "plots"), results)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, b)
		}
		if _, err := png.Decode(bytes.NewReader(got[0])); err != nil || !bytes.Contains(got[1], []byte("<svg")) {
			t.Fatalf("not a PNG and an SVG: %v", err)
		}
		if first != nil && (!bytes.Equal(first[0], got[0]) || !bytes.Equal(first[1], got[1])) {
			t.Fatal("two plots of the same results differ")
		}
		first = got
	}
	if _, err := plotShockwaveFTF(t.TempDir(), replay.ShockwaveReport{}); err == nil {
		t.Fatal("plot of nothing")
	}
}

// The demo's replay, run from a folder outside the repository.
func TestShockwaveSimulateDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the whole trace five times")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	var out bytes.Buffer
	paths, err := shockwaveSimulateDemo(context.Background(), &out, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || !strings.Contains(out.String(), "(120 jobs), 32 GPUs") || !strings.Contains(out.String(), "Shockwave") {
		t.Fatalf("paths %v, output:\n%s", paths, out.String())
	}
}

// From a folder outside the repository, the command reads the authors'
// files inside the binary; the same files on disk (--data, or each named
// by its flag) give the same replay.
func TestShockwaveSimulateData(t *testing.T) {
	tr, tp, cf := swDisk()
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	tr, tp, cf = abs(tr), abs(tp), abs(cf)
	t.Chdir(t.TempDir())
	base := []string{"--jobs", "15", "--policy", "shockwave,gavel", "--json", "--per-job"}
	embedded, err := swRun(t, base...)
	if err != nil {
		t.Fatal(err)
	}
	results := func(out string) string {
		var doc swJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Results) != 2 {
			t.Fatalf("%v: %s", err, out)
		}
		b, _ := json.Marshal(doc.Results)
		return string(b)
	}
	want := results(embedded)
	for _, args := range [][]string{
		{"--data", filepath.Dir(tp)},
		{"--trace", tr, "--throughputs", tp, "--config", cf},
		{"--trace", tr},
	} {
		out, err := swRun(t, append(args, base...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if got := results(out); got != want {
			t.Errorf("%v: the replay differs from the embedded files'", args)
		}
	}
	// A file that is not there is a runtime error, not a usage error.
	if _, err := swRun(t, append([]string{"--trace", "no/such.trace"}, base...)...); err == nil || errors.Is(err, errUsage) {
		t.Errorf("missing trace: %v", err)
	}
	if _, err := swRun(t, append([]string{"--data", "no/such/folder"}, base...)...); err == nil || errors.Is(err, errUsage) {
		t.Errorf("missing --data: %v", err)
	}
}
