// Command crosscheck sends every request of testdata/corpus through every
// host of orrery (the Go engine natively, the WebAssembly module in wazero
// and in node, and the C shared library from Python, plus the module in
// Python's wasmtime where it is installed) and checks that each answers
// byte for byte what the native engine answers, and what the corpus
// expects. With -bench it also measures every host on the same requests
// and prints a Markdown table.
//
//	go run ./bindings/crosscheck           # the check (CI)
//	go run ./bindings/crosscheck -bench    # and the benchmark table
//
// It builds the module and the library first (Go's build cache makes that
// seconds) and needs nothing beyond Go, gcc, node and python3; a host whose
// program is missing is reported and skipped, or fails the check with
// -require.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/orrery/orrery/bindings/internal/corpus"
)

func main() {
	bench := flag.Bool("bench", false, "also run the benchmarks and print their table")
	require := flag.Bool("require", false, "fail when a host (node, python3) is not installed")
	flag.Parse()
	if err := mainErr(*bench, *require); err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(1)
	}
}

func mainErr(bench, require bool) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "crosscheck")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	a, err := prepare(ctx, dir)
	if err != nil {
		return err
	}
	defer a.module.Close(ctx)
	defer a.portable.Close(ctx)
	cases, err := corpus.Load(a.corpus)
	if err != nil {
		return err
	}
	r := check(ctx, a, cases)
	r.print(os.Stdout)
	raw, gz, err := sizes(a.wasm)
	if err != nil {
		return err
	}
	fmt.Printf("\nmodule: %d bytes (%.2f MB), %d gzipped (%.2f MB)\n", raw, float64(raw)/1e6, gz, float64(gz)/1e6)
	if len(r.failed) > 0 {
		return fmt.Errorf("%d failures", len(r.failed))
	}
	if require && len(r.missing) > 0 {
		return fmt.Errorf("hosts not installed: %v", r.missing)
	}
	if bench {
		fmt.Println()
		return benchTable(ctx, os.Stdout, a)
	}
	return nil
}
