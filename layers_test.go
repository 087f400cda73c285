package orrery_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestLayers keeps the house one-way: the front door (this package) and
// what a scheduler links (kernels/, engine/) never depend on the
// evaluation code, the benchmarks, the bindings or the command line, and
// the kernels depend on nothing of the module. It reads the import graph
// from the go command, so it fails on the change that adds such an
// import, test files excluded (tests may replay a paper's data).
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	const mod = "github.com/orrery/orrery"
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	// Every package the door and the engine link, with its imports.
	out, err := exec.Command(gocmd, "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}",
		".", "./kernels/...", "./engine/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{mod + "/internal/eval", mod + "/internal/bench", mod + "/internal/malformed", mod + "/bindings", mod + "/cmd", mod + "/bench"}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, imports := fields[0], fields[1:]
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		seen++
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("the front door or the engine links %s", pkg)
			}
		}
		if strings.HasPrefix(pkg, mod+"/kernels") {
			for _, imp := range imports {
				if strings.HasPrefix(imp, mod) && !strings.HasPrefix(imp, mod+"/kernels") {
					t.Errorf("%s imports %s: the kernels depend on nothing of the module", pkg, imp)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list listed %d packages of the module; expected the door, the kernels and the engine", seen)
	}
}
