package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orrery/orrery/bindings/internal/corpus"
)

// ORRERY_REQUIRE_HOSTS=1 makes a missing node or python3 a failure (CI
// sets it); without it, hosts that are not installed are skipped.
var requireHosts = os.Getenv("ORRERY_REQUIRE_HOSTS") != ""

var shared *artifacts

func TestMain(m *testing.M) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "crosscheck")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared, err = prepare(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	shared.module.Close(ctx)
	os.RemoveAll(dir)
	os.Exit(code)
}

// Every host answers every corpus request with the native bytes.
func TestHosts(t *testing.T) {
	cases, err := corpus.Load(shared.corpus)
	if err != nil {
		t.Fatal(err)
	}
	r := check(context.Background(), shared, cases)
	var b strings.Builder
	r.print(&b)
	t.Log("\n" + b.String())
	for _, err := range r.failed {
		t.Error(err)
	}
	if len(r.missing) > 0 {
		if requireHosts {
			t.Errorf("hosts not installed: %v", r.missing)
		} else {
			t.Skipf("hosts not installed: %v (set ORRERY_REQUIRE_HOSTS=1 to fail instead)", r.missing)
		}
	}
}

// need returns the path of program, skipping (or failing) when it is not
// installed.
func need(t *testing.T, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		if requireHosts {
			t.Fatalf("%s is not installed", program)
		}
		t.Skipf("%s is not installed", program)
	}
	return p
}

func runTests(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s\n%s", strings.Join(args, " "), out)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("%s failed: %v", args[0], err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// The JavaScript package's own tests (node --test) on the built module.
func TestNodePackage(t *testing.T) {
	node := need(t, "node")
	runTests(t, filepath.Join(shared.root, "bindings", "js"), []string{"ORRERY_WASM=" + shared.wasm},
		node, "--no-warnings", "--test", "test/")
}

// The Python package's own tests (unittest) on the built library; the
// native backend must not be skipped.
func TestPythonPackage(t *testing.T) {
	python := need(t, "python3")
	runTests(t, filepath.Join(shared.root, "bindings", "python"),
		[]string{"ORRERY_LIB=" + shared.lib, "ORRERY_WASM=" + shared.wasm, "ORRERY_REQUIRE_NATIVE=1"},
		python, "-m", "unittest", "discover", "-s", "tests", "-v")
}
