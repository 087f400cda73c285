package fluid_test

import (
	"context"
	"slices"
	"testing"

	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/netsim"
)

// recording is the sequence of fluid problems a simulation solved. Flows
// are interned: each call is a list of flow ids, so that replaying gives
// the solver the same slices the simulator did (its flows' links are
// shared between calls).
type recording struct {
	capacity []float64
	flows    []fluid.Flow
	calls    [][]int32
}

func record(t testing.TB, c simCase, p netsim.Policy) *recording {
	t.Helper()
	rec := &recording{}
	ids := map[string]int32{}
	var key []byte
	restore := fluid.SetObserver(func(capacity []float64, fs []fluid.Flow, _ []float64) {
		if rec.capacity == nil {
			rec.capacity = slices.Clone(capacity)
		}
		call := make([]int32, len(fs))
		for i, f := range fs {
			key = key[:0]
			for _, l := range f.Links {
				key = append(key, byte(l), byte(l>>8), byte(l>>16), byte(l>>24))
			}
			key = append(key, byte(len(f.Links)))
			k := string(key) + "@" + string(rune(int(f.Peak/1e6)))
			id, ok := ids[k]
			if !ok || rec.flows[id].Peak != f.Peak {
				id = int32(len(rec.flows))
				ids[k] = id
				rec.flows = append(rec.flows, fluid.Flow{Links: slices.Clone(f.Links), Peak: f.Peak})
			}
			call[i] = id
		}
		rec.calls = append(rec.calls, call)
	})
	defer restore()
	if _, err := netsim.Run(context.Background(), c.config(t, p)); err != nil {
		t.Fatal(err)
	}
	return rec
}

// rater is a Solver, or the old one.
type rater interface {
	Rates(dst, capacity []float64, flows []fluid.Flow) ([]float64, error)
}

// replay solves every recorded call in order with one solver.
func (r *recording) replay(b testing.TB, s rater, buf []fluid.Flow, rates []float64) ([]fluid.Flow, []float64) {
	for _, call := range r.calls {
		buf = buf[:0]
		for _, id := range call {
			buf = append(buf, r.flows[id])
		}
		var err error
		if rates, err = s.Rates(rates, r.capacity, buf); err != nil {
			b.Fatal(err)
		}
	}
	return buf, rates
}

// BenchmarkNetsimCalls replays the fluid problems of a simulation of 300
// jobs on the 1000-server Clos (baseline placement, 3-6 iterations each;
// 3809 calls of 148 flows crossing 1288 links on average): time per call of
// the package's old Solver (one level for the whole network), the
// reference filling, the filling of whole components and the default.
func BenchmarkNetsimCalls(b *testing.B) {
	var c simCase
	for _, sc := range simCases(b) {
		if sc.name == "clos1000" {
			c = sc
		}
	}
	rec := record(b, c, netsim.Baseline)
	for _, mode := range []fluid.Filling{fluid.Legacy, fluid.Eager, fluid.Full, fluid.Hot} {
		b.Run(mode.String(), func(b *testing.B) {
			var s rater = &fluid.Solver{Filling: mode}
			buf, rates := rec.replay(b, s, nil, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				buf, rates = rec.replay(b, s, buf, rates)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rec.calls)), "ns/call")
		})
	}
}
