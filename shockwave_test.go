package orrery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
	"github.com/orrery/orrery/internal/market"
	"github.com/orrery/orrery/internal/predictor"
	"github.com/orrery/orrery/internal/round"
)

const smallPlan = `{"gpus": 4, "round": 6, "config": {"rounds": 4}, "jobs": [
 {"id": 1, "gpus": 1, "progress": 3, "epoch_bs": [32, 32, 32, 64, 64, 64], "epoch_dur_s": [36, 36, 36, 37, 37, 37], "finish": [{"round": 0, "estimate_s": 1400}]},
 {"id": 2, "gpus": 2, "submit_s": 120, "epochs": 40, "progress": 30, "known": {"remaining_s": 600, "mean_epoch_s": 60}}]}`

// edit applies a JSON replacement to smallPlan and checks it was applied.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(smallPlan, old) {
		t.Fatalf("%q not in the base request", old)
	}
	return strings.Replace(smallPlan, old, new, 1)
}

func TestShockwaveBadRequests(t *testing.T) {
	if _, err := orrery.Call(context.Background(), "shockwave.plan", []byte(smallPlan)); err != nil {
		t.Fatalf("base request: %v", err)
	}
	cases := []struct {
		name, req, code, field string
		is                     error
	}{
		{"empty window", edit(t, `"rounds": 4`, `"rounds": 0`), orrery.CodeInvalid, "config.rounds", market.ErrInvalid},
		{"negative window", edit(t, `"rounds": 4`, `"rounds": -2`), orrery.CodeInvalid, "config.rounds", market.ErrInvalid},
		{"huge window", edit(t, `"rounds": 4`, `"rounds": 5000`), orrery.CodeLimit, "config.rounds", market.ErrLimit},
		{"zero round length", edit(t, `"rounds": 4`, `"rounds": 4, "round_s": 0`), orrery.CodeInvalid, "config.round_s", round.ErrInvalid},
		{"negative k", edit(t, `"rounds": 4`, `"rounds": 4, "k": -1`), orrery.CodeInvalid, "config.k", round.ErrInvalid},
		{"bad log", edit(t, `"rounds": 4`, `"rounds": 4, "log": "ln"`), orrery.CodeInvalid, "config.log", market.ErrInvalid},
		{"bad estimator", edit(t, `"rounds": 4`, `"rounds": 4, "estimator": "magic"`), orrery.CodeInvalid, "config.estimator", predictor.ErrInvalid},
		{"breakpoints", edit(t, `"rounds": 4`, `"rounds": 4, "breakpoints": [0, 0.5, 0.4, 1]`), orrery.CodeInvalid, "config.breakpoints[2]", market.ErrInvalid},
		{"no GPUs", edit(t, `"gpus": 4`, `"gpus": 0`), orrery.CodeInvalid, "gpus", round.ErrInvalid},
		{"job wider than the cluster", edit(t, `"id": 2, "gpus": 2`, `"id": 2, "gpus": 8`), orrery.CodeInvalid, "jobs[1].gpus", round.ErrInvalid},
		{"negative duration", edit(t, `[36, 36, 36, 37`, `[36, -36, 36, 37`), orrery.CodeInvalid, "jobs[0].epoch_dur_s[1]", predictor.ErrInvalid},
		{"short durations", edit(t, `[36, 36, 36, 37, 37, 37]`, `[36, 36]`), orrery.CodeInvalid, "jobs[0].epoch_dur_s", predictor.ErrLength},
		{"zero epochs", edit(t, `"epoch_bs": [32, 32, 32, 64, 64, 64], "epoch_dur_s": [36, 36, 36, 37, 37, 37]`, `"epoch_bs": [], "epoch_dur_s": []`), orrery.CodeInvalid, "jobs[0].epoch_bs", predictor.ErrNoEpochs},
		{"unknown batch size", edit(t, `"progress": 3,`, `"progress": 3, "modes": [32], "mode_dur_s": [36],`), orrery.CodeInvalid, "jobs[0].epoch_bs[3]", predictor.ErrUnknownBatchSize},
		{"progress past the total", edit(t, `"progress": 30`, `"progress": 41`), orrery.CodeInvalid, "jobs[1].progress", market.ErrInvalid},
		{"progress past the profile", edit(t, `"progress": 3`, `"progress": 7`), orrery.CodeInvalid, "jobs[0].progress", predictor.ErrProgress},
		{"NaN-like known", edit(t, `"remaining_s": 600`, `"remaining_s": -1`), orrery.CodeInvalid, "jobs[1].known.remaining_s", round.ErrInvalid},
		{"zero mean epoch", edit(t, `"mean_epoch_s": 60`, `"mean_epoch_s": 0`), orrery.CodeInvalid, "jobs[1].known.mean_epoch_s", round.ErrInvalid},
		{"duplicate id", edit(t, `"id": 2`, `"id": 1`), orrery.CodeInvalid, "jobs[1].id", market.ErrInvalid},
		{"finish out of order", edit(t, `"finish": [{"round": 0, "estimate_s": 1400}]`, `"finish": [{"round": 3, "estimate_s": 1400}, {"round": 1, "estimate_s": 1}]`), orrery.CodeInvalid, "jobs[0].finish[1].round", round.ErrInvalid},
		{"timeline without dataset", edit(t, `"progress": 3,`, `"progress": 3, "timeline": [{"round": 2, "it_per_s": 4, "bs": 32}],`), orrery.CodeInvalid, "jobs[0].samples_per_epoch", round.ErrInvalid},
		{"momentum", edit(t, `"rounds": 4`, `"rounds": 4, "momentum": 1.5`), orrery.CodeInvalid, "config.momentum", round.ErrInvalid},
		{"unknown field", edit(t, `"rounds": 4`, `"rounds": 4, "window": 3`), orrery.CodeMalformed, "config.window", orrery.ErrMalformed},
		{"wrong type", edit(t, `"gpus": 4`, `"gpus": 4.5`), orrery.CodeMalformed, "gpus", orrery.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := orrery.Call(context.Background(), "shockwave.plan", []byte(c.req))
			var we *orrery.Error
			if !errors.As(err, &we) || we.Code != c.code || we.Field != c.field || !errors.Is(err, c.is) {
				t.Fatalf("got %v (%+v), want code %s field %q wrapping %v", err, we, c.code, c.field, c.is)
			}
		})
	}
}

// traceRequest builds a request from the first n jobs of the authors'
// 120-job trace, with seeded progress.
func traceRequest(t testing.TB, n, gpus int) []byte {
	dir := filepath.Join("testdata", "shockwave")
	jobs, err := trace.ParseFile(filepath.Join(dir, "traces", "120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := throughput.LoadFile(filepath.Join(dir, "tacc_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	req := orrery.ShockwavePlanRequest{GPUs: gpus, Round: 45, Reestimate: true}
	for i := 0; i < n; i++ {
		p, err := trace.Derive(&jobs[i], tab, trace.DeriveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		req.Jobs = append(req.Jobs, orrery.ShockwaveJob{ID: jobs[i].ID, GPUs: jobs[i].GPUs, SubmitS: jobs[i].Arrival,
			Progress: (i * 13) % (p.Epochs() / 2), EpochBS: p.EpochBS, EpochDurS: p.MetadataDurations(nil),
			Finish: []orrery.FinishSpec{{Round: 10, EstimateS: jobs[i].Arrival + 3*jobs[i].Duration}}})
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShockwaveTrace plans the authors' jobs through the wire: a feasible
// plan (every round within the cluster, every ID known, counts matching the
// rounds) and byte-identical responses on repeated calls.
func TestShockwaveTrace(t *testing.T) {
	req := traceRequest(t, 60, 16)
	out, err := orrery.Call(context.Background(), "shockwave.plan", req)
	if err != nil {
		t.Fatal(err)
	}
	var r orrery.ShockwavePlanResponse
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	var q orrery.ShockwavePlanRequest
	json.Unmarshal(req, &q)
	gpus := map[int]int{}
	for _, j := range q.Jobs {
		gpus[j.ID] = j.GPUs
	}
	if r.Status != "optimal" || r.Window != 20 || len(r.Rounds) != 20 || len(r.Jobs) != 60 {
		t.Fatalf("status %s window %d rounds %d jobs %d", r.Status, r.Window, len(r.Rounds), len(r.Jobs))
	}
	planned := map[int]int{}
	for t0, ids := range r.Rounds {
		used := 0
		for k, id := range ids {
			g, ok := gpus[id]
			if !ok {
				t.Fatalf("round %d: unknown job %d", t0, id)
			}
			used += g
			if k < len(ids)-len(r.Backfill[t0]) {
				planned[id]++
			}
		}
		if used > 16 {
			t.Fatalf("round %d uses %d of 16 GPUs", t0, used)
		}
	}
	for _, j := range r.Jobs {
		if planned[j.ID] != j.Rounds {
			t.Fatalf("job %d: %d planned rounds listed, count %d", j.ID, planned[j.ID], j.Rounds)
		}
	}
	for i := 0; i < 3; i++ {
		again, err := orrery.Call(context.Background(), "shockwave.plan", req)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("call %d differs", i)
		}
	}
}

// FuzzShockwavePlan feeds arbitrary requests to shockwave.plan: it must
// answer with a response or a field error, never panic, and any plan must
// fit the cluster; shockwave.predict must fail alike or return the plan's
// predictions. Seeds are in testdata/fuzz/FuzzShockwavePlan.
func FuzzShockwavePlan(f *testing.F) {
	f.Add([]byte(smallPlan))
	if env, err := os.ReadFile(filepath.Join("testdata", "golden", "shockwave_plan_small.json")); err == nil {
		var e struct{ Request json.RawMessage }
		if json.Unmarshal(env, &e) == nil {
			f.Add([]byte(e.Request))
		}
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		out, err := orrery.Call(context.Background(), "shockwave.plan", req)
		// shockwave.predict checks the same state the same way.
		pout, perr := orrery.Call(context.Background(), "shockwave.predict", req)
		if (err == nil) != (perr == nil) || (err != nil && err.Error() != perr.Error()) {
			t.Fatalf("plan error %v, predict error %v", err, perr)
		}
		if err != nil {
			var we *orrery.Error
			if !errors.As(err, &we) || we.Code == orrery.CodeInternal || we.Message == "" {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		var pr orrery.ShockwavePredictResponse
		if json.Unmarshal(pout, &pr) != nil {
			t.Fatalf("undecodable prediction: %s", pout)
		}
		var q orrery.ShockwavePlanRequest
		var r orrery.ShockwavePlanResponse
		if json.Unmarshal(req, &q) != nil || json.Unmarshal(out, &r) != nil {
			t.Fatalf("undecodable request or response: %s", out)
		}
		gpus := map[int]int{}
		for i, j := range q.Jobs {
			gpus[j.ID] = j.GPUs
			if pj, rj := pr.Jobs[i], r.Jobs[i]; pj.ID != j.ID || pj.ShockwavePrediction != rj.ShockwavePrediction {
				t.Fatalf("job %d: predicted %+v, planned with %+v", i, pj, rj)
			}
		}
		for _, ids := range r.Rounds {
			used := 0
			for _, id := range ids {
				used += gpus[id]
			}
			if used > q.GPUs {
				t.Fatalf("a round uses %d of %d GPUs", used, q.GPUs)
			}
		}
	})
}
