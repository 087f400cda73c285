package orrerywasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/internal/build"
	"github.com/orrery/orrery/bindings/internal/corpus"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// Native and module side by side, in one process, on corpus requests:
//
//	go test -run '^$' -bench . ./bindings/go
//
// (go run ./bindings/crosscheck -bench adds node and Python.) Where the
// module's time goes: a module built with its names (no -s -w), and the
// test built with wazero's perfmap tag, which maps the compiled functions
// to those names for perf (/tmp/perf-PID.map):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o /tmp/names.wasm ./wasm
//	go test -c -tags perfmap -o go.test ./bindings/go
//	ORRERY_WASM=/tmp/names.wasm perf record -e cpu-clock ./go.test -test.run '^$' \
//		-test.bench 'Handle/rank_twelve_jobs/wazero' -test.benchtime 200x
func BenchmarkHandle(b *testing.B) {
	ctx := context.Background()
	dir, err := corpus.Dir(ctx)
	if err != nil {
		b.Fatal(err)
	}
	m := newModule(b, Options{Instances: 1})
	for _, name := range []string{"link_single_job", "link_exact_coprime_periods", "link_exact_three_jobs", "rank_loops_resolve_exact", "rank_twelve_jobs", "plan_small"} {
		env, err := os.ReadFile(filepath.Join(dir, "ok", name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/native", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				orrery.Handle(ctx, env)
			}
		})
		b.Run(name+"/wazero", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Handle(ctx, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The boundary alone: one export call through the pool.
func BenchmarkABIVersion(b *testing.B) {
	ctx := context.Background()
	m := newModule(b, Options{Instances: 1})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.ABIVersion(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// The fast path against link.Workspace.Search: two jobs of 255 and 181
// ticks (a 46155-tick circle), exact.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	pr := link.Problem{Jobs: []profile.Profile{pulseAt(255, 141, 25000), pulseAt(181, 120, 30000)}, Capacity: 50000}
	dst := make([]int, 2)
	b.Run("native", func(b *testing.B) {
		var w link.Workspace
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Search(ctx, pr, link.Options{}, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wazero", func(b *testing.B) {
		m := newModule(b, Options{Instances: 1})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Search(ctx, pr, link.Options{}, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// pulseAt is a job of period t that sends bw units from tick from on.
func pulseAt(t, from int, bw int32) profile.Profile {
	d := make([]int32, t)
	for i := from; i < t; i++ {
		d[i] = bw
	}
	return profile.Profile{Period: t, Demand: d}
}

// What a call does inside the module: the bytes and objects it allocates
// and how often the collector runs, from the module's own runtime.MemStats
// (a build with the orrery_stats tag, whose exports read them), against
// the same call's allocations natively:
//
//	go test -run '^$' -bench ModuleHeap ./bindings/go
func BenchmarkModuleHeap(b *testing.B) {
	ctx := context.Background()
	dir, err := corpus.Dir(ctx)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "orrery-stats.wasm")
	if err := build.WasmStats(ctx, path); err != nil {
		b.Fatal(err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(ctx, wasm, Options{Instances: 1, Cache: cache})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	for _, name := range []string{"link_single_job", "link_exact_three_jobs", "rank_twelve_jobs", "plan_24_jobs"} {
		env, err := os.ReadFile(filepath.Join(dir, "ok", name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			in, err := m.acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer m.release(ctx, in, nil)
			stats := func() (gc, bytes, mallocs uint64) {
				var v [3]uint64
				for i, export := range []string{"stats_num_gc", "stats_total_alloc", "stats_mallocs"} {
					f := in.mod.ExportedFunction(export)
					if f == nil {
						b.Fatalf("the orrery_stats build exports no %s", export)
					}
					r, err := f.Call(ctx)
					if err != nil {
						b.Fatal(err)
					}
					v[i] = r[0]
				}
				return v[0], v[1], v[2]
			}
			for range 10 { // a steady state: the workspaces grown, the first collections done
				if _, err := in.handle(ctx, env); err != nil {
					b.Fatal(err)
				}
			}
			gc0, bytes0, mallocs0 := stats()
			n := 0
			for b.Loop() {
				if _, err := in.handle(ctx, env); err != nil {
					b.Fatal(err)
				}
				n++
			}
			gc1, bytes1, mallocs1 := stats()
			b.ReportMetric(float64(gc1-gc0)*1000/float64(n), "gc/1000calls")
			b.ReportMetric(float64(bytes1-bytes0)/float64(n), "module-B/call")
			b.ReportMetric(float64(mallocs1-mallocs0)/float64(n), "module-allocs/call")
			b.ReportMetric(testing.AllocsPerRun(10, func() { orrery.Handle(ctx, env) }), "native-allocs/call")
		})
	}
}
