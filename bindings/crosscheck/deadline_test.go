package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/timing"
)

// Issue 29, item 2, in node: every case of internal/timing answers within
// timing.Bound through the JavaScript package's module (host.mjs time), as
// the root package's TestDeadlines checks natively and bindings/go's in
// wazero (see there for the bound and the clock: node reports its
// process's CPU time too, for a loaded machine). The module is
// cooperative: the deadline holds only where the engine reads the clock.

var deadlineSweep = flag.Bool("deadline.sweep", false, "time every size at limits of 1 ms to 1 s in node, and log the table")

// nodeT0 bounds t0 in node: as in wazero, with room for V8's tiering
// (the first calls of a fresh instance run in its baseline compiler).
var nodeT0 = timing.Uninterrupted{Fixed: 150 * time.Millisecond, PerByte: 3 * time.Microsecond, PerJob: 80 * time.Microsecond}

func TestNodeDeadlines(t *testing.T) {
	node := need(t, "node")
	limits, rank, plan, sched := []float64{1, 10}, timing.RankSizes[:2], timing.PlanSizes[:2], timing.SchedSizes[:2]
	if *deadlineSweep {
		limits, rank, plan, sched = []float64{1, 10, 100, 1000}, timing.RankSizes, timing.PlanSizes, timing.SchedSizes
	}
	if testing.Short() {
		limits = limits[:1]
	}
	cases := timing.Cases(limits, rank, plan, sched)
	// Every case and its Tiny twin, one file each, timed 7 times.
	dir := t.TempDir()
	files := map[string]string{} // case name -> file
	var all []timing.Case
	for _, c := range cases {
		all = append(all, c, timing.WithLimit(c, timing.Tiny))
	}
	for _, c := range all {
		if _, ok := files[c.Name]; ok {
			continue
		}
		f := fmt.Sprintf("%03d.jsonl", len(files))
		files[c.Name] = f
		var b strings.Builder
		for _, l := range c.Lines {
			b.Write(l)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const runs = 7
	lines, err := run[struct {
		Name   string    `json:"name"`
		WallNs []float64 `json:"wall_ns"`
		CPUNs  []float64 `json:"cpu_ns"`
		B64    string    `json:"b64"`
	}](context.Background(), command{args: []string{node, "--no-warnings", filepath.Join(shared.root, "bindings", "js", "tools", "host.mjs"),
		"time", shared.wasm, dir, fmt.Sprint(runs)}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]timing.Run{}
	for _, l := range lines {
		ans, err := base64.StdEncoding.DecodeString(l.B64)
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.WallNs {
			got[l.Name] = append(got[l.Name], timing.Run{Wall: time.Duration(l.WallNs[i]), CPU: time.Duration(l.CPUNs[i]), Answer: ans})
		}
	}
	used := map[string]int{}
	runner := func(c timing.Case, n int) ([]timing.Run, error) {
		rs := got[files[c.Name]]
		from := used[c.Name]
		if from+n > len(rs) {
			return nil, fmt.Errorf("%d runs of %s, %d asked", len(rs), c.Name, from+n)
		}
		used[c.Name] = from + n
		return rs[from : from+n], nil
	}
	loaded, load := timing.Loaded(runtime.NumCPU())
	results, err := timing.Measure(cases, runner, loaded)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		var a struct {
			Error *orrery.Error `json:"error"`
		}
		if err := json.Unmarshal(r.Answer, &a); err != nil {
			t.Fatalf("%s: %v", r.Case.Name, err)
		}
		if a.Error != nil && (a.Error.Code != orrery.CodeLimit || !strings.Contains(a.Error.Field, "time_limit_ms")) {
			t.Errorf("%s: %+v", r.Case.Name, a.Error)
		}
		if !r.OK() {
			t.Errorf("%s: the fastest run took %v, above the bound %v (t0 %v)", r.Case.Name, r.Best, r.Bound, r.T0)
		}
		if b := nodeT0.Of(timing.WithLimit(r.Case, timing.Tiny)); r.T0 > b {
			t.Errorf("%s: t0 %v, above %v", r.Case.Name, r.T0, b)
		}
	}
	clock := "wall time"
	if loaded {
		clock = fmt.Sprintf("CPU time (load %.1f on %d CPUs)", load, runtime.NumCPU())
	}
	t.Logf("node, %s:\n%s", clock, timing.Table(results))
}
