package orrerywasm

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery"
)

func testJob(id, gpus, epochs int, dur float64) orrery.ShockwaveJob {
	j := orrery.ShockwaveJob{ID: id, GPUs: gpus, SubmitS: float64(60 * id), SamplesPerEpoch: 50000}
	for e := range epochs {
		bs := 32
		if e >= epochs/2 {
			bs = 64
		}
		j.EpochBS = append(j.EpochBS, bs)
		j.EpochDurS = append(j.EpochDurS, dur-float64(bs)/16)
	}
	return j
}

// The module's Scheduler answers, call for call, what orrery.Scheduler
// answers natively: the same ids every round and the same last plan.
func TestSchedulerMatchesNative(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	rounds := 5
	cfg := orrery.ShockwaveConfig{Rounds: &rounds, ReoptRounds: 3}
	native, err := orrery.NewScheduler(4, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := m.NewScheduler(ctx, 4, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer wasm.Close(ctx)
	both := func(a, b error) {
		t.Helper()
		if a != nil || b != nil {
			t.Fatalf("native %v, module %v", a, b)
		}
	}
	for _, j := range []orrery.ShockwaveJob{testJob(1, 2, 8, 200), testJob(2, 1, 6, 150), testJob(3, 1, 10, 120)} {
		both(native.Add(j), wasm.Add(ctx, j))
	}
	done := map[int]int{}
	for r := range 10 {
		want, err1 := native.Schedule(ctx)
		got, err2 := wasm.Schedule(ctx)
		both(err1, err2)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round %d (-native +module):\n%s", r, diff)
		}
		wp, _ := native.LastPlan()
		gp, ok, err := wasm.LastPlan(ctx)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if diff := cmp.Diff(wp, gp); diff != "" {
			t.Fatalf("round %d: last plan (-native +module):\n%s", r, diff)
		}
		for _, id := range want {
			done[id]++
			both(native.Progress(id, done[id]), wasm.Progress(ctx, id, done[id]))
			s := orrery.ThroughputSpec{Round: r + 1, ItPerS: 10, BS: 32}
			both(native.Observe(id, s), wasm.Observe(ctx, id, s))
			if done[id] == 4 {
				both(native.Remove(id), wasm.Remove(ctx, id))
			}
		}
		if r == 3 {
			j := testJob(4, 2, 4, 300)
			both(native.Add(j), wasm.Add(ctx, j))
		}
		native.EndRound()
		if n, err := wasm.EndRound(ctx); err != nil || n != native.Round() {
			t.Fatalf("EndRound: %d, %v; native %d", n, err, native.Round())
		}
	}
	// A refused call is the native error, field and all.
	err1 := native.Progress(99, 1)
	err2 := wasm.Progress(ctx, 99, 1)
	var e *orrery.Error
	if !errors.As(err2, &e) || e.Field != "id" || !errors.Is(err2, orrery.ErrInvalid) || err1 == nil {
		t.Fatalf("Progress of an unknown job: native %v, module %v", err1, err2)
	}
}

// Schedulers of one Session share its instance; each Session's handles
// are its own; a closed Session refuses calls.
func TestSessions(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	a, err := m.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := a.NewScheduler(ctx, 4, orrery.ShockwaveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := a.NewScheduler(ctx, 4, orrery.ShockwaveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s3, err := b.NewScheduler(ctx, 4, orrery.ShockwaveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if s1.Handle() != 1 || s2.Handle() != 2 || s3.Handle() != 1 {
		t.Fatalf("handles %d %d %d, want 1 2 1", s1.Handle(), s2.Handle(), s3.Handle())
	}
	if err := s1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Schedule(ctx); !errors.Is(err, orrery.ErrInvalid) {
		t.Fatalf("a closed scheduler: %v", err)
	}
	b.Close(ctx)
	if _, err := s3.Schedule(ctx); err == nil {
		t.Fatal("a closed session answered")
	}
	a.Close(ctx)
}
