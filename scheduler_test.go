package orrery_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/orrery/orrery"
)

func swJob(id, gpus, epochs int, dur float64) orrery.ShockwaveJob {
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

// TestSchedulerIsPlan: the Scheduler's rounds are the plans shockwave.plan
// gives for the state it keeps. Its first round is Plan's first round of
// the same jobs; jobs keep progressing and arriving; every answer fits the
// cluster and lists active jobs only.
func TestSchedulerIsPlan(t *testing.T) {
	ctx := context.Background()
	rounds := 6
	cfg := orrery.ShockwaveConfig{Rounds: &rounds, ReoptRounds: 3}
	s, err := orrery.NewScheduler(4, cfg)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []orrery.ShockwaveJob{swJob(1, 2, 8, 200), swJob(2, 1, 6, 150), swJob(3, 1, 10, 120), swJob(4, 2, 4, 300)}
	for _, j := range jobs[:3] {
		if err := s.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Schedule(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := orrery.Plan(ctx, orrery.ShockwavePlanRequest{GPUs: 4, Round: 0, Reestimate: true, Config: cfg, Jobs: jobs[:3]})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, plan.Rounds[0]) {
		t.Fatalf("Scheduler's first round %v, Plan's %v", got, plan.Rounds[0])
	}
	last, ok := s.LastPlan()
	if !ok || last.Objective != plan.Objective || len(last.Jobs) != 3 {
		t.Fatalf("LastPlan %+v, %v", last, ok)
	}
	active := map[int]bool{1: true, 2: true, 3: true}
	progress := map[int]int{}
	for r := 0; r < 12; r++ {
		if r == 2 {
			if err := s.Add(jobs[3]); err != nil {
				t.Fatal(err)
			}
			active[4] = true
		}
		ids, err := s.Schedule(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gpus := 0
		for _, id := range ids {
			if !active[id] {
				t.Fatalf("round %d runs job %d, which is not active", r, id)
			}
			gpus += jobs[id-1].GPUs
			progress[id]++
			if err := s.Observe(id, orrery.ThroughputSpec{Round: r + 1, ItPerS: 5, BS: 32}); err != nil {
				t.Fatal(err)
			}
			if progress[id] == len(jobs[id-1].EpochBS) {
				if err := s.Remove(id); err != nil {
					t.Fatal(err)
				}
				delete(active, id)
			} else if err := s.Progress(id, progress[id]); err != nil {
				t.Fatal(err)
			}
		}
		if gpus > 4 {
			t.Fatalf("round %d uses %d GPUs of 4", r, gpus)
		}
		s.EndRound()
	}
	if s.Round() != 12 || s.Len() != len(active) {
		t.Fatalf("round %d, %d jobs, want 12 and %d", s.Round(), s.Len(), len(active))
	}
}

// TestSchedulerErrors: errors name the argument's field in the schema's
// words, and a refused call changes nothing.
func TestSchedulerErrors(t *testing.T) {
	s, err := orrery.NewScheduler(4, orrery.ShockwaveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(swJob(1, 1, 6, 100)); err != nil {
		t.Fatal(err)
	}
	bad := swJob(2, 1, 6, 100)
	bad.EpochDurS[3] = math.NaN()
	wide := swJob(3, 9, 6, 100)
	two := 2.0
	_, cfgErr := orrery.NewScheduler(4, orrery.ShockwaveConfig{Momentum: &two})
	_, gpusErr := orrery.NewScheduler(0, orrery.ShockwaveConfig{})
	for _, c := range []struct {
		name, field string
		err         error
	}{
		{"NaN duration", "job.epoch_dur_s[3]", s.Add(bad)},
		{"too wide", "job.gpus", s.Add(wide)},
		{"duplicate", "job.id", s.Add(swJob(1, 1, 6, 100))},
		{"NaN throughput", "sample.it_per_s", s.Observe(1, orrery.ThroughputSpec{Round: 1, ItPerS: math.NaN(), BS: 32})},
		{"batch size 0", "sample.bs", s.Observe(1, orrery.ThroughputSpec{Round: 1, ItPerS: 5})},
		{"round -5", "sample.round", s.Observe(1, orrery.ThroughputSpec{Round: -5, ItPerS: 5, BS: 32})},
		{"progress past the end", "epochs", s.Progress(1, 7)},
		{"unknown job", "id", s.Remove(9)},
		{"momentum", "config.momentum", cfgErr},
		{"no GPUs", "gpus", gpusErr},
	} {
		var we *orrery.Error
		if !errors.As(c.err, &we) || we.Field != c.field || we.Code != orrery.CodeInvalid || !errors.Is(c.err, orrery.ErrInvalid) {
			t.Errorf("%s: %v (%+v), want invalid_argument at %q", c.name, c.err, we, c.field)
		}
	}
	if s.Len() != 1 {
		t.Fatalf("%d jobs after refused calls, want 1", s.Len())
	}
	if _, err := s.Schedule(context.Background()); err != nil {
		t.Fatalf("Schedule after refused calls: %v", err)
	}
}
