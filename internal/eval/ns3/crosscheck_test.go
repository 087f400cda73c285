package ns3

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"
)

// packetLevel builds the ns-3 program for the packet-level tests, which
// cost minutes of CPU and so run only when ORRERY_NS3 asks for them (go
// test ./... runs five times in CI): ORRERY_NS3=1 requires ns-3 and fails
// without it (make ns3-check installs it and sets this); ORRERY_NS3=optional
// runs where ns-3 is installed and skips, saying so, where it is not.
func packetLevel(t *testing.T) Program {
	t.Helper()
	mode := os.Getenv("ORRERY_NS3")
	if mode == "" {
		t.Skip("packet-level cross-check not run: set ORRERY_NS3=1 (make ns3-check installs ns-3 and runs it, as CI does)")
	}
	if err := Available(); err != nil {
		if mode == "optional" {
			t.Skipf("packet-level cross-check skipped (ORRERY_NS3=optional): %v", err)
		}
		t.Fatalf("packet-level cross-check: %v", err)
	}
	start := time.Now()
	prog, err := Build(context.Background(), os.Getenv("ORRERY_NS3_CACHE"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("program %s ready in %.1fs", prog.Path, time.Since(start).Seconds())
	return prog
}

func logReport(t *testing.T, runs []Run) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteReport(&b, runs); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	var cpu, sim float64
	for _, r := range runs {
		cpu += r.CPUSec
		sim += r.SimSec
	}
	t.Logf("%d ns-3 runs: %.0f s of CPU for %.0f simulated seconds", len(runs), cpu, sim)
}

func find(t *testing.T, runs []Run, name string, v Variant, cc CC) Run {
	t.Helper()
	for _, r := range runs {
		if r.Case == name && r.Variant == v && r.CC == cc {
			return r
		}
	}
	t.Fatalf("no run %s %s %s", name, v, cc)
	return Run{}
}
