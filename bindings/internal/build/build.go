// Package build builds orrery's WebAssembly module and C shared library
// from the sources, with the flags the Makefile uses, for the bindings'
// tests, benchmarks and the cross-host check.
//
// The bindings do not ship a committed module: it is a build product of the
// engine, rebuilt in seconds from Go's build cache, and a committed copy
// would go stale with every engine change. Tests build it (or take the
// file named by the ORRERY_WASM environment variable) before they run.
package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// WasmEnv is the environment variable that names a prebuilt module; when
// it is set, [Wasm] copies that file instead of building. make crosscheck
// sets it to the module make wasm ships (wasm-opt's output), so that the
// bytes users get are the ones checked on every host.
const WasmEnv = "ORRERY_WASM"

// WasmPortableEnv names a prebuilt purego module for [WasmPortable], as
// WasmEnv does for [Wasm].
const WasmPortableEnv = "ORRERY_WASM_PORTABLE"

// Root returns the directory of the orrery module's go.mod.
func Root(ctx context.Context) (string, error) {
	out, err := goCmd(ctx, "", nil, "env", "GOMOD")
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("build: not inside the orrery module")
	}
	return filepath.Dir(mod), nil
}

// Wasm builds the module (package ./wasm) into the file out:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o out ./wasm
//
// or copies the file ORRERY_WASM names, if it is set.
func Wasm(ctx context.Context, out string) error {
	if ok, err := prebuilt(WasmEnv, out); ok || err != nil {
		return err
	}
	return wasm(ctx, out)
}

// wasm runs go build of ./wasm for wasip1 into out, with the build tags
// given (none, purego or orrery_stats).
func wasm(ctx context.Context, out string, tags ...string) error {
	root, err := Root(ctx)
	if err != nil {
		return err
	}
	args := []string{"build"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./wasm")
	_, err = goCmd(ctx, root, []string{"GOOS=wasip1", "GOARCH=wasm"}, args...)
	return err
}

// WasmStats builds the module with the orrery_stats tag, which adds
// exports that read the module's heap counters (stats_num_gc,
// stats_total_alloc, stats_mallocs: runtime.MemStats' NumGC, TotalAlloc
// and Mallocs), into the file out, for benchmarks that measure inside the
// module:
//
//	GOOS=wasip1 GOARCH=wasm go build -tags orrery_stats -buildmode=c-shared -trimpath -ldflags='-s -w' -o out ./wasm
func WasmStats(ctx context.Context, out string) error {
	return wasm(ctx, out, "orrery_stats")
}

// WasmPortable builds the module with the purego tag, which imports no
// kernels (only WASI), into the file out:
//
//	GOOS=wasip1 GOARCH=wasm go build -tags purego -buildmode=c-shared -trimpath -ldflags='-s -w' -o out ./wasm
//
// or copies the file ORRERY_WASM_PORTABLE names, if it is set.
func WasmPortable(ctx context.Context, out string) error {
	if ok, err := prebuilt(WasmPortableEnv, out); ok || err != nil {
		return err
	}
	return wasm(ctx, out, "purego")
}

// prebuilt copies the file the environment variable env names to out and
// reports true, or reports false when env is unset.
func prebuilt(env, out string) (bool, error) {
	p := os.Getenv(env)
	if p == "" {
		return false, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return true, fmt.Errorf("build: %s: %w", env, err)
	}
	return true, os.WriteFile(out, b, 0o644)
}

// CShared builds the C shared library (package ./bindings/c) into the file
// out; cgo writes its generated header next to it (out without its
// extension, plus ".h"):
//
//	go build -buildmode=c-shared -trimpath -o out ./bindings/c
func CShared(ctx context.Context, out string) error {
	root, err := Root(ctx)
	if err != nil {
		return err
	}
	_, err = goCmd(ctx, root, []string{"CGO_ENABLED=1"}, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./bindings/c")
	return err
}

// SharedLibName is the platform's file name of a shared library called
// orrery: liborrery.so, liborrery.dylib or orrery.dll.
func SharedLibName() string {
	switch runtime.GOOS {
	case "darwin":
		return "liborrery.dylib"
	case "windows":
		return "orrery.dll"
	}
	return "liborrery.so"
}

// goCmd runs the go command in dir with extra environment variables.
func goCmd(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is not on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("build: go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
