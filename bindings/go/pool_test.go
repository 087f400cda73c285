package orrerywasm

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// bigPlan is a shockwave.plan envelope of n jobs: its decoding and
// prediction grow an instance's memory by tens of megabytes.
func bigPlan(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"op": "shockwave.plan", "request": {"gpus": 64, "round": 0, "config": {"rounds": 4}, "jobs": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id": %d, "gpus": %d, "submit_s": 0, "progress": 0, "epoch_bs": [32, 32, 32, 32], "epoch_dur_s": [%d, %d, %d, %d]}`,
			i, 1+i%4, 20+i%97, 20+i%97, 20+i%97, 20+i%97)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// TestPoolMemoryBounded: with many callers and requests that grow memory,
// the pool never holds more than Instances instances, and between calls
// their memory stays under Instances·RecycleBytes (without recycling, every
// instance would keep the largest memory it ever grew to).
func TestPoolMemoryBounded(t *testing.T) {
	const instances, recycle = 3, 16 << 20
	m := newModule(t, Options{Instances: instances, RecycleBytes: recycle})
	big := bigPlan(8000)
	small := []byte(`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}]}}`)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4 {
				env := small
				if (g+i)%2 == 0 {
					env = big
				}
				out, err := m.Handle(context.Background(), env)
				if err != nil || !strings.Contains(string(out), `"response"`) {
					t.Errorf("call: %v %.200s", err, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := cap(m.slots) - len(m.slots); got > instances || got < len(m.idle) {
		t.Fatalf("%d instances alive, want at most %d", got, instances)
	}
	var total uint64
	for range len(m.idle) {
		in := <-m.idle
		total += uint64(in.mem.Size())
		m.idle <- in
	}
	if total > instances*recycle {
		t.Fatalf("idle instances hold %d bytes, above %d·%d", total, instances, recycle)
	}
	// The same load without recycling keeps the grown memories.
	keep := newModule(t, Options{Instances: 1, RecycleBytes: -1})
	if _, err := keep.Handle(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	in := <-keep.idle
	if in.mem.Size() <= recycle {
		t.Fatalf("a big plan grew memory only to %d bytes: the test proves nothing", in.mem.Size())
	}
	keep.idle <- in
}
