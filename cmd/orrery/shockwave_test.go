package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

const planState = `{"gpus": 4, "round": 2, "config": {"rounds": 3}, "jobs": [
 {"id": 1, "gpus": 1, "progress": 1, "epoch_bs": [32, 32, 64, 64], "epoch_dur_s": [36, 36, 30, 30]},
 {"id": 2, "gpus": 2, "epochs": 10, "progress": 4, "known": {"remaining_s": 900, "mean_epoch_s": 150, "elapsed_s": 600}}]}`

func TestShockwavePlanCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"shockwave", "plan"}, stdio{strings.NewReader(planState), &out, &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		Status string
		Rounds [][]int
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Status != "optimal" || len(r.Rounds) != 3 {
		t.Fatalf("response %s (%v)", out.String(), err)
	}
	// Every round runs both jobs: 3 GPUs of 4 are enough for both.
	for _, ids := range r.Rounds {
		if len(ids) != 2 {
			t.Fatalf("rounds %v: want both jobs in every round", r.Rounds)
		}
	}

	out.Reset()
	errb.Reset()
	bad := strings.Replace(planState, `"epoch_dur_s": [36, 36, 30, 30]`, `"epoch_dur_s": [36, -1, 30, 30]`, 1)
	if code := run(context.Background(), []string{"shockwave", "plan"}, stdio{strings.NewReader(bad), &out, &errb}); code != 1 || !strings.Contains(errb.String(), "jobs[0].epoch_dur_s[1]") {
		t.Fatalf("bad request: exit %d, stderr %q", code, errb.String())
	}
	if code := run(context.Background(), []string{"shockwave", "replan"}, stdio{strings.NewReader(""), &out, &errb}); code != 2 {
		t.Fatalf("unknown subcommand: exit %d", code)
	}
}

// The predict command gives the predictor's numbers without a plan: job 1
// by the authors' formula (E = 4, epochs 0..1 at 32 observed:
// α' = (4, 2), r = (8/3 − 2, 4/3), Ĩ = 3, R = (2/3)·36 + (4/3)·30 = 64 s),
// D̄ = mean of epochs 0..1 = 36 s; job 2 as the caller's known values.
func TestShockwavePredictCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"shockwave", "predict"}, stdio{strings.NewReader(planState), &out, &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		Round int
		Jobs  []struct {
			ID         int
			RemainingS float64 `json:"remaining_s"`
			MeanEpochS float64 `json:"mean_epoch_s"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Round != 2 || len(r.Jobs) != 2 {
		t.Fatalf("response %s (%v)", out.String(), err)
	}
	if j := r.Jobs[0]; j.ID != 1 || math.Abs(j.RemainingS-64) > 1e-9 || j.MeanEpochS != 36 {
		t.Fatalf("job 1: %+v, want remaining 64 s, mean epoch 36 s", j)
	}
	if j := r.Jobs[1]; j.ID != 2 || j.RemainingS != 900 || j.MeanEpochS != 150 {
		t.Fatalf("job 2: %+v, want the known 900 s and 150 s", j)
	}
}
