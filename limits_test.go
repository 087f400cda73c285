package orrery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/orrery/orrery"
)

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// longLink is a link of n jobs whose periods are period ms each (minus
// k·step for job k), at 1 ms ticks with the largest perimeter cap.
func longLink(n, period, step int) map[string]any {
	jobs := make([]map[string]any, n)
	for k := range jobs {
		p := period - k*step
		jobs[k] = map[string]any{"id": fmt.Sprint("j", k), "period_ms": p,
			"phases": []map[string]any{{"ms": p / 2, "gbps": 5}, {"ms": p - p/2, "gbps": 0.5}}}
	}
	return map[string]any{"capacity_gbps": 10, "max_perimeter_ticks": 1 << 24, "jobs": jobs}
}

// TestRefusalBoundedByRequestSize (issue 13, item 2): a request past a cap
// is refused having allocated at most a small multiple of its own size;
// before, the 1.4 KB link of 16 jobs of 2^24 ms built every profile at full
// period (1.7 GB) and the 40 MB plan of 700,000 jobs was decoded and
// predicted (830 MB) before their caps were checked.
func TestRefusalBoundedByRequestSize(t *testing.T) {
	planJobs := func(n, rounds int) map[string]any {
		jobs := make([]map[string]any, n)
		for i := range jobs {
			jobs[i] = map[string]any{"id": i + 1, "gpus": 1, "epoch_bs": []int{32}, "epoch_dur_s": []float64{36}}
		}
		return map[string]any{"gpus": 4, "round": 6, "config": map[string]any{"rounds": rounds}, "jobs": jobs}
	}
	cases := []struct {
		name, op string
		req      map[string]any
		field    string
		message  string // a part of the error message
	}{
		{"16 jobs of 2^24 ms", "cassini.link", longLink(16, 1<<24, 0), "jobs[1]", "ticks"},
		{"64 jobs of 2^24 ms", "cassini.link", longLink(64, 1<<24, 0), "jobs[1]", "ticks"},
		{"16 jobs of 2^20 ms", "cassini.link", longLink(16, 1<<20, 0), "jobs", "cells"},
		{"16 coprime periods of 2^20 ms", "cassini.link", longLink(16, 1<<20, 1), "jobs", "LCM"},
		{"2000 jobs", "cassini.link", longLink(2000, 100, 0), "jobs", ""},
		{"plan of 200,000 jobs", "shockwave.plan", planJobs(200000, 20), "jobs", "200000 jobs × (20 rounds + 1)"},
		{"plan of 5000 jobs × 1000 rounds", "shockwave.plan", planJobs(5000, 1000), "jobs", "5000 jobs × (1000 rounds + 1)"},
		{"predict of 200,000 jobs", "shockwave.predict", planJobs(200000, 20), "jobs", "(20 rounds + 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := mustJSON(t, c.req)
			var err error
			n := allocated(func() { _, err = orrery.Call(context.Background(), c.op, req) })
			var we *orrery.Error
			if !errors.As(err, &we) || we.Code != orrery.CodeLimit || we.Field != c.field || !strings.Contains(we.Message, c.message) {
				t.Fatalf("err %v, want limit_exceeded at %q saying %q", err, c.field, c.message)
			}
			if bound := 8*uint64(len(req)) + 1<<20; n > bound {
				t.Errorf("%d bytes allocated for a %d-byte request before its refusal, more than %d", n, len(req), bound)
			}
			t.Logf("%d-byte request: %d bytes allocated (%.2fx)", len(req), n, float64(n)/float64(len(req)))
		})
	}
}

// TestLongStringRefusedCheaply (issue 13, item 9): an id past
// MaxStringBytes is refused by the scan, before it is decoded and copied.
func TestLongStringRefusedCheaply(t *testing.T) {
	id := strings.Repeat("é", 4<<20) // 8 MB of UTF-8
	req := []byte(`{"capacity_gbps": 10, "jobs": [{"id": "` + id + `", "phases": [{"ms": 1, "gbps": 1}]}]}`)
	var err error
	n := allocated(func() { _, err = orrery.Call(context.Background(), "cassini.link", req) })
	var we *orrery.Error
	if !errors.As(err, &we) || we.Code != orrery.CodeLimit || we.Field != "jobs[0].id" {
		t.Fatalf("err %v, want limit_exceeded at jobs[0].id", err)
	}
	if n > uint64(len(req))/8 {
		t.Errorf("%d bytes allocated to refuse a %d-byte request", n, len(req))
	}
}

// TestTimeLimitCoversSetup (issue 13, item 4): a context that has ended
// stops a call in its setup (the predictions of a 20,000-job plan, a
// link's profiles), with a time-limit error instead of a plan computed
// regardless of it.
func TestTimeLimitCoversSetup(t *testing.T) {
	jobs := make([]map[string]any, 20000)
	for i := range jobs {
		jobs[i] = map[string]any{"id": i + 1, "gpus": 1, "progress": 3, "epoch_bs": []int{32, 32, 32, 32, 64, 64, 64, 64, 64, 64},
			"epoch_dur_s": []float64{36, 36, 36, 36, 37, 37, 37, 37, 37, 37}}
	}
	plan := mustJSON(t, map[string]any{"gpus": 64, "round": 6, "config": map[string]any{"time_limit_ms": 1}, "jobs": jobs})
	link := mustJSON(t, longLink(4, 1<<20, 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		op   string
		req  []byte
		what string
	}{
		{"shockwave.plan", plan, "plan"},
		{"cassini.link", link, "profiles"},
	} {
		_, err := orrery.Call(ctx, c.op, c.req)
		var we *orrery.Error
		if !errors.As(err, &we) || we.Code != orrery.CodeLimit || !errors.Is(err, orrery.ErrTimeLimit) || !strings.Contains(we.Message, c.what) {
			t.Errorf("%s: err %v, want the time limit during the %s", c.op, err, c.what)
		}
	}
	// The same plan with time: it is feasible, so the error above is the
	// limit's and not the request's.
	if _, err := orrery.Call(context.Background(), "shockwave.plan", plan); err != nil {
		var we *orrery.Error
		if !errors.As(err, &we) || !errors.Is(err, orrery.ErrTimeLimit) {
			t.Fatalf("without an ended context: %v", err)
		}
	}
}
