// Command wasirun runs a WASI preview 1 program (a GOOS=wasip1 binary, such
// as a test binary) in wazero with orrery's kernel imports provided
// natively by package wasmhost: what the wazero CLI does for Go's
// go_wasip1_wasm_exec (the host's / mounted at /, its environment, real
// clocks and randomness), plus the "orrery_kernels" host module. It lets
// go test run the kernels' import path:
//
//	go build -o /tmp/wasirun ./internal/wasmhost/wasirun
//	GOOS=wasip1 GOARCH=wasm go test -exec /tmp/wasirun ./kernels/
//
// Compiled code is cached under $TMPDIR/orrery-wasirun. The exit code is
// the program's.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/orrery/orrery/internal/wasmhost"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wasirun program.wasm [args...]")
		os.Exit(2)
	}
	code, err := run(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasirun:", err)
	}
	os.Exit(code)
}

func run(path string, args []string) (int, error) {
	ctx := context.Background()
	bin, err := os.ReadFile(path)
	if err != nil {
		return 1, err
	}
	cfg := wazero.NewRuntimeConfig()
	if cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(os.TempDir(), "orrery-wasirun")); err == nil {
		cfg = cfg.WithCompilationCache(cache)
	}
	r := wazero.NewRuntimeWithConfig(ctx, cfg)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	if _, err := wasmhost.Instantiate(ctx, r); err != nil {
		return 1, err
	}
	mc := wazero.NewModuleConfig().
		WithStdin(os.Stdin).WithStdout(os.Stdout).WithStderr(os.Stderr).
		WithRandSource(rand.Reader).
		WithSysNanosleep().WithSysNanotime().WithSysWalltime().
		WithFSConfig(wazero.NewFSConfig().WithDirMount("/", "/")).
		WithArgs(append([]string{path}, args...)...)
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			mc = mc.WithEnv(k, v)
		}
	}
	_, err = r.InstantiateWithConfig(ctx, bin, mc)
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return int(exit.ExitCode()), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}
