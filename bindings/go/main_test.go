package orrerywasm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/orrery/orrery/bindings/internal/build"
)

// wasmPath is the module the tests use: built from the sources by
// TestMain, or the file ORRERY_WASM names.
var wasmPath string

// cache is shared by every Module the tests make, so the module compiles
// once per test binary.
var cache = wazero.NewCompilationCache()

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orrerywasm")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wasmPath = filepath.Join(dir, "orrery.wasm")
	if err := build.Wasm(context.Background(), wasmPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	os.Setenv("ORRERY_EXAMPLE_WASM", wasmPath) // for the examples, which read it like a user would
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var wasmBytes = sync.OnceValues(func() ([]byte, error) { return os.ReadFile(wasmPath) })

// newModule returns a Module over the test module, closed when tb ends.
func newModule(tb testing.TB, opt Options) *Module {
	tb.Helper()
	b, err := wasmBytes()
	if err != nil {
		tb.Fatal(err)
	}
	if opt.Cache == nil {
		opt.Cache = cache
	}
	ctx := context.Background()
	m, err := New(ctx, b, opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close(ctx) })
	return m
}
