package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/internal/build"
	"github.com/orrery/orrery/bindings/internal/corpus"
)

// The tests build the library and two programs against orrery.h (one C,
// one C++) with the system's compilers, and skip when there are none.

func compilers(t *testing.T) (cc, cxx string) {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	cxx, _ = exec.LookPath("g++")
	return cc, cxx
}

func setup(t *testing.T) (dir string, run func(args ...string) []byte) {
	t.Helper()
	cc, cxx := compilers(t)
	ctx := context.Background()
	dir = t.TempDir()
	lib := filepath.Join(dir, build.SharedLibName())
	if err := build.CShared(ctx, lib); err != nil {
		t.Fatal(err)
	}
	link := []string{"-I.", "-L" + dir, "-lorrery", "-Wl,-rpath," + dir}
	prog := filepath.Join(dir, "check")
	gcc := exec.Command(cc, append([]string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-o", prog, "testdata/check.c", "-lpthread"}, link...)...)
	if out, err := gcc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if cxx != "" {
		gxx := exec.Command(cxx, append([]string{"-std=c++11", "-Wall", "-Werror", "-o", filepath.Join(dir, "checkcc"), "testdata/check.cc"}, link...)...)
		if out, err := gxx.CombinedOutput(); err != nil {
			t.Fatalf("g++: %v\n%s", err, out)
		}
		if out, err := exec.Command(filepath.Join(dir, "checkcc")).CombinedOutput(); err != nil || string(out) != "1 0\n" {
			t.Fatalf("checkcc: %v %q", err, out)
		}
	}
	return dir, func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(prog, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("check %v: %v\n%s", args, err, stderr.Bytes())
		}
		return out
	}
}

// Through the C interface, every corpus request gets orrery.Handle's bytes;
// the fast path and the edge cases behave as orrery.h says; and calls from
// several threads agree.
func TestLibrary(t *testing.T) {
	_, run := setup(t)
	if out := run("search"); string(out) != "ok\n" {
		t.Fatalf("search: %q", out)
	}
	cdir, err := corpus.Dir(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.Load(cdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		mode := "call"
		if c.Session() {
			mode = "session"
		}
		got := run(mode, filepath.Join(cdir, filepath.FromSlash(c.Name)))
		s := orrery.NewSession()
		want, _ := c.Answer(func(env []byte) ([]byte, error) { return s.Handle(context.Background(), env), nil })
		if !bytes.Equal(got, want) {
			t.Errorf("%s: library and native differ\nlib:    %.300s\nnative: %.300s", c.Name, got, want)
		}
	}
	if out := run("threads", filepath.Join(cdir, "ok", "rank_basic_mean.json")); string(out) != "ok\n" {
		t.Fatalf("threads: %q", out)
	}
}
