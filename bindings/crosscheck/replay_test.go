package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/eval/policy"
	"github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/trace"
)

// recorder is a sim.Policy around the evaluation's Shockwave policy that
// writes down the calls that policy makes to its scheduler, in the
// schema's words, and each round's answer: what the authors' simulator
// would say to their ShockwaveScheduler. The Python replay drives
// orrery.shockwave.ShockwaveScheduler with the same calls.
type recorder struct {
	p      *policy.Shockwave
	events []map[string]any
}

func (r *recorder) Name() string { return r.p.Name() }

func (r *recorder) Admit(j *sim.Job) error {
	// The job policy.Shockwave.Admit adds: the profile's batch sizes and
	// whole-second durations, submitted at admission.
	r.events = append(r.events, map[string]any{"add": orrery.ShockwaveJob{ID: j.ID, GPUs: j.GPUs, SubmitS: j.Admitted,
		EpochBS: j.Profile.EpochBS, EpochDurS: j.Profile.MetadataDurations(nil), SamplesPerEpoch: float64(j.Profile.SamplesPerEpoch)}})
	return r.p.Admit(j)
}

func (r *recorder) EndRound(rep *sim.Report) error {
	for _, l := range rep.Leases {
		if l.Finished {
			r.events = append(r.events, map[string]any{"remove": l.ID})
			continue
		}
		r.events = append(r.events, map[string]any{"observe": []any{l.ID, rep.Round, l.Throughput, l.BatchSize}},
			map[string]any{"progress": []int{l.ID, l.Progress}})
	}
	r.events = append(r.events, map[string]any{"end_round": rep.Round})
	return r.p.EndRound(rep)
}

func (r *recorder) Schedule(ctx context.Context, s *sim.State) ([]int, error) {
	ids, err := r.p.Schedule(ctx, s)
	r.events = append(r.events, map[string]any{"schedule": append([]int{}, ids...)})
	return ids, err
}

// The 120-job trace of the Shockwave authors' 32-GPU experiment, replayed
// through the Python drop-in ShockwaveScheduler (on the C library), gives
// the Go scheduler's job list in every round.
func TestPythonShockwaveReplay(t *testing.T) {
	python := need(t, "python3")
	ctx := context.Background()
	dir := filepath.Join(shared.root, "internal", "eval", "data", "shockwave")
	setup, ok := trace.SetupFor(32)
	if !ok {
		t.Fatal("no 32-GPU setup")
	}
	tc, err := trace.LoadConfigFile(filepath.Join(dir, "configurations", setup.Config))
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.LoadWorkload(filepath.Join(dir, "traces", setup.Trace), filepath.Join(dir, setup.Table), 0, sim.WorkloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.NewShockwave(32, policy.ShockwaveConfig(tc, 120))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{p: p}
	res, err := sim.Run(ctx, w, rec, sim.Options{GPUs: 32, RoundSeconds: 120})
	if err != nil {
		t.Fatal(err)
	}
	script := map[string]any{
		"gpus": 32,
		// The authors' constructor arguments for this setup.
		"init": map[string]any{"future_nrounds": tc.FutureRounds, "round_duration": 120, "k": tc.K, "lam": tc.Lambda,
			"rhomax": tc.RhoMax, "logapx_bases": tc.LogBases},
		"events": rec.events,
	}
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("the Go run did not finish: %d rounds", res.Rounds)
	}
	t.Logf("Go: %d jobs, %d rounds, makespan %.0f s, %d calls recorded", len(w.Jobs), res.Rounds, res.Summary.Makespan, len(rec.events))
	runTests(t, filepath.Join(shared.root, "bindings", "python"), []string{"ORRERY_LIB=" + shared.lib, "ORRERY_REPLAY=" + path},
		python, "-m", "unittest", "-v", "tests.test_shockwave_replay")
}
