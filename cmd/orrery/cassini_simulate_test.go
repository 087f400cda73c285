package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orrery/orrery/internal/eval/replay"
)

// cassiniArgs runs `orrery cassini simulate` with args through the
// command's own entry point.
func cassiniArgs(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runCassiniSimulate(context.Background(), args, stdio{strings.NewReader(""), &out, &errb})
	return out.String(), errb.String(), err
}

const cassiniNoiseDir = "../../internal/eval/data/alibaba"

func TestCassiniSimulateJSON(t *testing.T) {
	out, _, err := cassiniArgs(t, "-jobs", "10", "-iterations", "30-60", "-noise-dir", cassiniNoiseDir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r replay.CassiniReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Arms) != 4 || r.Servers != 24 || r.Jobs != 10 || r.Scheduler != "themis" {
		t.Fatalf("%+v", r)
	}
	for _, a := range r.Arms {
		p := a.Runs[0]
		if !(p.MeanIterMs > 0) || !(p.P99IterMs >= p.MeanIterMs*0.5) || p.ExcessGbit < 0 || p.Finished != 10 || len(p.Models) == 0 {
			t.Fatalf("%+v", p)
		}
		if (p.Arm == "cassini") != (p.AdjustmentsPerMin != nil) || (p.Arm == "cassini") != (a.AdjustmentsPerMin != nil) {
			t.Fatalf("%s: adjustments per minute %v", p.Arm, p.AdjustmentsPerMin)
		}
		if a.MeanIterMs.Mean != p.MeanIterMs || a.MeanIterMs.SD != 0 {
			t.Fatalf("%s: one seed's spread %+v, its run %v", a.Arm, a.MeanIterMs, p.MeanIterMs)
		}
	}
	if a := r.Arms[0]; a.SpeedupMean.Mean != 1 {
		t.Fatalf("the first arm's speedup over itself: %+v", a.SpeedupMean)
	}
	for _, key := range []string{`"mean_iter_ms"`, `"p99_iter_ms"`, `"excess_gbit"`, `"marked_mbit_per_iter"`, `"adjustments_per_min"`, `"models"`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	// Deterministic: the same flags print the same bytes.
	again, _, _ := cassiniArgs(t, "-jobs", "10", "-iterations", "30-60", "-noise-dir", cassiniNoiseDir, "--json")
	if again != out {
		t.Fatal("two runs printed different JSON")
	}
}

func TestCassiniSimulateTable(t *testing.T) {
	out, _, err := cassiniArgs(t, "-scenario", "fig2", "-iterations", "200", "-noise", "none", "-policies", "baseline,cassini,ideal")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"baseline", "cassini", "ideal", "mean iter (ms)", "p99 iter (ms)", "marked (Mbit/iter)", "adjust/job-min"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "334.2") || !strings.Contains(out, "268.0") {
		t.Errorf("fig2 without noise: baseline should take 334.2 ms, cassini the uncontended 268 ms:\n%s", out)
	}
}

func TestCassiniSimulateBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-topology", "torus"},
		{"-topology", "clos:1,2"},
		{"-topology", "clos:2,2,2,2,0"}, // two-tier with two pods
		{"-topology", "clos:1,2,2,1,0,-5"},
		{"-models", "AlexNet"},
		{"-iterations", "9-3"},
		{"-iterations", "x"},
		{"-policies", "themis"},
		{"-policies", "ideal/pad"},
		{"-policies", "cassini/loose"},
		{"-scheduler", "pollux"},
		{"-hold", "some"},
		{"-rank", "best"},
		{"-seed", "5-3"},
		{"-seed", "x"},
		{"-arrive", "AlexNet"},
		{"-noise", "gauss"},
		{"-sweep-noise", "none,loud"},
		{"-agent-mode", "loose"},
		{"-mode", "fast"},
		{"-scenario", "snapshot9"},
		{"-placement", "random"},
		{"-auction", "vickrey"},
		{"-transport", "cubic"},
		{"-bogus"},
		{"extra"},
	} {
		if _, _, err := cassiniArgs(t, args...); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{
		{"-load", "-1"},
		{"-jobs", "-3"},
		{"-threshold", "0.9", "-policies", "cassini"},
		{"-headroom", "2", "-policies", "cassini"},
		{"-noise-dir", "/nonexistent"},
		{"-gpus-per-server", "0", "-models", "GPT3", "-iterations", "5"},
		{"-transport", "dcqcn", "-dcqcn-step", "1s"},
		{"-transport", "mltcp", "-mltcp-slope", "-1"},
	} {
		if _, _, err := cassiniArgs(t, append(args, "-iterations", "5")...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if _, _, err := cassiniArgs(t, "-h"); err == nil {
		t.Error("-h: no error")
	}
}

func TestPlotCassini(t *testing.T) {
	r, err := simulateCassini(context.Background(), func() cassiniFlags {
		o := shortCassini()
		o.NoiseDir = cassiniNoiseDir
		o.MinIterations, o.MaxIterations = 30, 60
		return o
	}())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum := func(path string) [32]byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%s is not a PNG", path)
		}
		return sha256.Sum256(b)
	}
	p1, err := plotCassiniCDF(dir, r)
	if err != nil || filepath.Base(p1) != "cassini_iteration_cdf.png" {
		t.Fatal(p1, err)
	}
	h1 := sum(p1)
	if p1, _ = plotCassiniCDF(dir, r); sum(p1) != h1 {
		t.Fatal("the CDF plot is not deterministic")
	}
	c, err := cassiniCircleExample(context.Background(), "WideResNet101/800", "VGG16/1400")
	if err != nil {
		t.Fatal(err)
	}
	if c.After != 1 || c.Before >= 1 || c.Perimeter != 255 {
		t.Fatalf("circle %+v", c)
	}
	p2, err := plotCassiniCircle(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	h2 := sum(p2)
	if p2, _ = plotCassiniCircle(dir, c); sum(p2) != h2 {
		t.Fatal("the circle plot is not deterministic")
	}
	if _, err := plotCassiniCDF(dir, replay.CassiniReport{}); err == nil {
		t.Error("empty result plotted")
	}
	if _, err := plotCassiniCircle(dir, cassiniCircle{}); err == nil {
		t.Error("empty circle plotted")
	}
	if _, err := cassiniCircleExample(context.Background(), "AlexNet", "VGG16"); err == nil {
		t.Error("unknown model")
	}
	if os.Getenv("CASSINI_PLOT_DIR") != "" {
		plotCassiniCDF(os.Getenv("CASSINI_PLOT_DIR"), r)
		plotCassiniCircle(os.Getenv("CASSINI_PLOT_DIR"), c)
	}
}

func TestCassiniSimulateDemo(t *testing.T) {
	t.Chdir(t.TempDir()) // the noise is inside the binary: any folder will do
	var out bytes.Buffer
	paths, err := cassiniSimulateDemo(context.Background(), &out, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || !strings.Contains(out.String(), "(poisson, themis)") || !strings.Contains(out.String(), "(fig2, themis)") {
		t.Fatalf("%v\n%s", paths, out.String())
	}
	for _, want := range []string{"What the columns compare", "Why an arm can lose on one seed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's table lacks %q", want)
		}
	}
}

// The jitter study: one row per noise and arm, and a JSON array, the same
// bytes every time; -plot writes the CDF.
func TestCassiniSweep(t *testing.T) {
	args := []string{"-scenario", "fig2", "-iterations", "60", "-policies", "cassini-placement,cassini,cassini/paper", "-sweep-noise", "none,gauss:0.03", "-seed", "1-2"}
	out, _, err := cassiniArgs(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gauss:0.03", "cassini/paper", "x cassini-placement mean", "by noise"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep table lacks %q:\n%s", want, out)
		}
	}
	js, _, err := cassiniArgs(t, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var rs []replay.CassiniReport
	if err := json.Unmarshal([]byte(js), &rs); err != nil || len(rs) != 2 || rs[1].Noise != "gauss:0.03" || len(rs[1].Arms) != 3 || len(rs[1].Arms[1].Runs) != 2 {
		t.Fatalf("%v: %+v", err, rs)
	}
	if again, _, _ := cassiniArgs(t, append(args, "--json")...); again != js {
		t.Fatal("two sweeps printed different JSON")
	}
	dir := t.TempDir()
	if _, _, err := cassiniArgs(t, "-scenario", "fig2", "-iterations", "30", "-noise", "none", "-plot", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cassini_iteration_cdf.png")); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseSeeds: a seed list parses to at most 1024 seeds, each range
// increasing, or fails; it never panics.
func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"1", "1-8", "3,5-7,1", "7-3", "", "-", "18446744073709551615", "0-1023", "0-1024", "1,1,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seeds, err := parseSeeds(s)
		if err != nil {
			return
		}
		if len(seeds) == 0 || len(seeds) > 1<<10 {
			t.Fatalf("%q: %d seeds", s, len(seeds))
		}
	})
}

// -trace runs the user's own jobs from a file or stdin; a bad value in it
// is a runtime error naming the file and the field; generated-trace flags
// beside it are a usage error.
func TestCassiniSimulateTraceFile(t *testing.T) {
	const file = `{"models": [{"name": "my-net", "phases": [{"ms": 150}, {"ms": 118, "gbps": 40}]}],
	 "jobs": [{"model": "my-net", "gpus": 2, "iterations": 40}, {"model": "my-net", "gpus": 2, "iterations": 40},
	          {"model": "VGG19", "gpus": 4, "iterations": 40, "arrival_s": 5}]}`
	path := filepath.Join(t.TempDir(), "jobs.json")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := cassiniArgs(t, "-trace", path, "-noise", "none", "-per-model")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(custom, themis)", "3 jobs, noise none", "my-net", "VGG19"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var stdout, errb bytes.Buffer
	if err := runCassiniSimulate(context.Background(), []string{"-trace", "-", "-noise", "none", "-per-model"}, stdio{strings.NewReader(file), &stdout, &errb}); err != nil || stdout.String() != out {
		t.Fatalf("from stdin: %v\n%s", err, stdout.String())
	}
	bad := strings.Replace(file, `"ms": 118`, `"ms": 0.118`, 1)
	bad = strings.Replace(bad, `"ms": 150`, `"ms": 0.150`, 1)
	err = runCassiniSimulate(context.Background(), []string{"-trace", "-"}, stdio{strings.NewReader(bad), &stdout, &errb})
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "standard input: models[0].phases: an iteration of 0.268 ms") ||
		!strings.Contains(err.Error(), "did you mean 268") {
		t.Fatalf("seconds typed as ms: %v", err)
	}
	if _, _, err := cassiniArgs(t, "-trace", path, "-jobs", "5"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-jobs") {
		t.Fatalf("-trace with -jobs: %v", err)
	}
	if _, _, err := cassiniArgs(t, "-trace", "no/such.json"); err == nil || errors.Is(err, errUsage) {
		t.Fatalf("missing file: %v", err)
	}
}

// The log axes' labels are the 1-2-5 values, and every value with 1.5 on
// a narrow range.
func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) string {
		var out []string
		for _, tk := range logTicks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{65, 4100, "100 200 500 1000 2000"},
		{0.75, 2.05, "0.8 0.9 1 1.5 2"},
		{0.5, 9, "0.5 1 2 5"},
	} {
		if got := labels(c.lo, c.hi); got != c.want {
			t.Errorf("%v..%v: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	if logTicks(0, 1) != nil || logTicks(2, 1) != nil {
		t.Error("ticks for an empty or non-positive range")
	}
}

// The placement knob: the table names the rule and auction, themis by
// default (the paper's auction), contiguous with the greedy auction.
func TestCassiniSimulatePlacement(t *testing.T) {
	for placement, want := range map[string]string{"": "placement themis, auction paper", "contiguous": "placement contiguous, auction greedy",
		"scattered": "placement scattered, auction paper"} {
		args := []string{"-scenario", "paper", "-jobs", "6", "-iterations", "10-20", "-noise", "none"}
		if placement != "" {
			args = append(args, "-placement", placement)
		}
		out, _, err := cassiniArgs(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{want, "pooled mean (ms)", "gap closed", "cross-rack", "uplink hops", "binding sharers"} {
			if !strings.Contains(out, w) {
				t.Errorf("-placement %q: output lacks %q:\n%s", placement, w, out)
			}
		}
	}
}

// The congestion sweep: a Markdown row per oversubscription and placement,
// the block of a -doc file rewritten (and only it), a plot, the same bytes
// every time; a transport this build lacks is a usage error.
func TestCassiniRegime(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.md")
	if err := os.WriteFile(doc, []byte("before\n"+regimeBegin+"\nold\n"+regimeEnd+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	run := func(args ...string) string {
		var out bytes.Buffer
		if err := runCassiniRegime(context.Background(), args, stdio{strings.NewReader(""), &out, &errb}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	args := []string{"-seed", "1", "-jobs", "5", "-iterations", "5-10", "-oversub", "2,8", "-placements", "themis,scattered", "-transports", "maxmin", "-noise", "none", "-q"}
	out := run(append(args, "-doc", doc, "-plot", dir)...)
	for _, w := range []string{"| 2:1 | themis | maxmin |", "| 2:1 | scattered | maxmin |", "| 8:1 | themis | maxmin |", "| 8:1 | scattered | maxmin |", "Themis/Ideal mean", "placement closes"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "before\n" + regimeBegin + "\n" + out + regimeEnd + "\nafter\n"; string(b) != want {
		t.Fatalf("doc:\n%s\nwant:\n%s", b, want)
	}
	png, err := os.ReadFile(filepath.Join(dir, "cassini_regime.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("plot: %v", err)
	}
	if again := run(args...); again != out {
		t.Fatal("two sweeps printed different tables")
	}
	for _, bad := range [][]string{{"-transports", "dcqcn9"}, {"-oversub", "0"}, {"-placements", "random"}, {"-scenario", "fig2"}, {"-auction", "x"}} {
		err := runCassiniRegime(context.Background(), append(slices.Clone(args), bad...), stdio{strings.NewReader(""), io.Discard, io.Discard})
		if err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("%v: err %v, want a usage error", bad, err)
		}
	}
}
