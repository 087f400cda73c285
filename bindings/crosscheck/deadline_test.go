package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	cases := timing.Select(*deadlineSweep, testing.Short(), 2)
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
	timing.Check(t, "node", cases, runner, nodeT0)
}
