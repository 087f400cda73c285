package orrerywasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/internal/corpus"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
)

// Native and module side by side, in one process, on corpus requests:
//
//	go test -run '^$' -bench . ./bindings/go
//
// (go run ./bindings/crosscheck -bench adds node and Python.)
func BenchmarkHandle(b *testing.B) {
	ctx := context.Background()
	dir, err := corpus.Dir(ctx)
	if err != nil {
		b.Fatal(err)
	}
	m := newModule(b, Options{Instances: 1})
	for _, name := range []string{"link_single_job", "link_exact_coprime_periods", "link_exact_three_jobs", "rank_loops_resolve_exact", "plan_small"} {
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
