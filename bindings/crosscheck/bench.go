package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/orrery/orrery"
	orrerywasm "github.com/orrery/orrery/bindings/go"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/bench/cassini"
)

// benchmarks are the measurements of -bench, in table order: a name every
// host understands ("abi_version", "search", or a corpus file) and what it
// measures.
var benchmarks = []struct{ name, what string }{
	{"abi_version", "one call across the boundary (abi_version)"},
	{"ok/link_single_job.json", "smallest request: cassini.link, one job of 50 ticks"},
	{"search", "link_search fast path: two jobs of 255 and 181 ticks (46155-tick circle), exact"},
	{"ok/link_exact_coprime_periods.json", "cassini.link, the same two jobs, through JSON"},
	{"ok/link_exact_three_jobs.json", "cassini.link, three jobs of 180/200/240 ms, exact"},
	{"ok/link_paper_three_jobs.json", "cassini.link, the same, paper mode"},
	{"ok/rank_loops_resolve_exact.json", "cassini.rank, 3 jobs, 4 candidates with loops"},
	{"ok/rank_twelve_jobs.json", "cassini.rank, 12 jobs, 8 links, 10 candidates"},
	{"ok/plan_small.json", "shockwave.plan, 5 jobs, 4 rounds"},
	{"ok/plan_24_jobs.json", "shockwave.plan, 24 jobs, 10 rounds"},
}

func nsPerOp(f func(b *testing.B)) float64 {
	r := testing.Benchmark(f)
	return float64(r.T.Nanoseconds()) / float64(r.N)
}

func request(a *artifacts, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(a.corpus, filepath.FromSlash(name)))
}

func nativeBench(ctx context.Context, a *artifacts, names []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, name := range names {
		switch name {
		case "abi_version": // no boundary to cross
		case "search":
			pr, err := cassini.CorpusSearchProblem(a.corpus)
			if err != nil {
				return nil, err
			}
			var w link.Workspace
			dst := make([]int, 2)
			out[name] = nsPerOp(func(b *testing.B) {
				for b.Loop() {
					if _, err := w.Search(ctx, pr, link.Options{}, dst); err != nil {
						b.Fatal(err)
					}
				}
			})
		default:
			env, err := request(a, name)
			if err != nil {
				return nil, err
			}
			out[name] = nsPerOp(func(b *testing.B) {
				for b.Loop() {
					orrery.Handle(ctx, env)
				}
			})
		}
	}
	return out, nil
}

func wazeroBench(ctx context.Context, a *artifacts, names []string) (map[string]float64, error) {
	return moduleBench(ctx, a.module, a, names)
}

// portableBench is wazeroBench on the purego module: the kernels in
// WebAssembly, as on a host that provides none.
func portableBench(ctx context.Context, a *artifacts, names []string) (map[string]float64, error) {
	return moduleBench(ctx, a.portable, a, names)
}

func moduleBench(ctx context.Context, m *orrerywasm.Module, a *artifacts, names []string) (map[string]float64, error) {
	out := map[string]float64{}
	var failed error
	for _, name := range names {
		var f func(b *testing.B)
		switch name {
		case "abi_version":
			f = func(b *testing.B) {
				for b.Loop() {
					if _, err := m.ABIVersion(ctx); err != nil {
						failed = err
					}
				}
			}
		case "search":
			pr, err := cassini.CorpusSearchProblem(a.corpus)
			if err != nil {
				return nil, err
			}
			dst := make([]int, 2)
			f = func(b *testing.B) {
				for b.Loop() {
					if _, err := m.Search(ctx, pr, link.Options{}, dst); err != nil {
						failed = err
					}
				}
			}
		default:
			env, err := request(a, name)
			if err != nil {
				return nil, err
			}
			f = func(b *testing.B) {
				for b.Loop() {
					if _, err := m.Handle(ctx, env); err != nil {
						failed = err
					}
				}
			}
		}
		out[name] = nsPerOp(f)
	}
	return out, failed
}

// benchTable runs every benchmark on every host and prints a Markdown
// table of times per operation, with the ratio to native.
func benchTable(ctx context.Context, w io.Writer, a *artifacts) error {
	names := make([]string, len(benchmarks))
	for i, b := range benchmarks {
		names[i] = b.name
	}
	var cols []string
	results := map[string]map[string]float64{}
	for _, h := range hosts {
		fmt.Fprintf(os.Stderr, "benchmarking %s...\n", h.name)
		r, err := h.bench(ctx, a, names)
		if errors.Is(err, errMissing) {
			fmt.Fprintf(os.Stderr, "  skipped: %v\n", err)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", h.name, err)
		}
		cols = append(cols, h.name)
		results[h.name] = r
	}
	fmt.Fprint(w, "| benchmark |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprint(w, "\n|---|")
	for range cols {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, b := range benchmarks {
		fmt.Fprintf(w, "| %s |", b.what)
		base := results["native"][b.name]
		for _, c := range cols {
			ns, ok := results[c][b.name]
			switch {
			case !ok:
				fmt.Fprint(w, " – |")
			case base > 0 && c != "native":
				fmt.Fprintf(w, " %s (%.1f×) |", duration(ns), ns/base)
			default:
				fmt.Fprintf(w, " %s |", duration(ns))
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

func duration(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// sizes returns the module's size and its size gzipped (level 9).
func sizes(path string) (raw, gz int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return len(b), buf.Len(), nil
}
