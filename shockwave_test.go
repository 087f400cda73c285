package orrery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/engine/shockwave/round"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
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
	if _, err := Call(context.Background(), "shockwave.plan", []byte(smallPlan)); err != nil {
		t.Fatalf("base request: %v", err)
	}
	cases := []struct {
		name, req, code, field string
		is                     error
	}{
		{"empty window", edit(t, `"rounds": 4`, `"rounds": 0`), CodeInvalid, "config.rounds", market.ErrInvalid},
		{"negative window", edit(t, `"rounds": 4`, `"rounds": -2`), CodeInvalid, "config.rounds", market.ErrInvalid},
		{"huge window", edit(t, `"rounds": 4`, `"rounds": 5000`), CodeLimit, "config.rounds", market.ErrLimit},
		{"zero round length", edit(t, `"rounds": 4`, `"rounds": 4, "round_s": 0`), CodeInvalid, "config.round_s", round.ErrInvalid},
		{"negative k", edit(t, `"rounds": 4`, `"rounds": 4, "k": -1`), CodeInvalid, "config.k", round.ErrInvalid},
		{"bad log", edit(t, `"rounds": 4`, `"rounds": 4, "log": "ln"`), CodeInvalid, "config.log", market.ErrInvalid},
		{"bad estimator", edit(t, `"rounds": 4`, `"rounds": 4, "estimator": "magic"`), CodeInvalid, "config.estimator", predictor.ErrInvalid},
		{"breakpoints", edit(t, `"rounds": 4`, `"rounds": 4, "breakpoints": [0, 0.5, 0.4, 1]`), CodeInvalid, "config.breakpoints[2]", market.ErrInvalid},
		{"no GPUs", edit(t, `"gpus": 4`, `"gpus": 0`), CodeInvalid, "gpus", round.ErrInvalid},
		{"job wider than the cluster", edit(t, `"id": 2, "gpus": 2`, `"id": 2, "gpus": 8`), CodeInvalid, "jobs[1].gpus", round.ErrInvalid},
		{"negative duration", edit(t, `[36, 36, 36, 37`, `[36, -36, 36, 37`), CodeInvalid, "jobs[0].epoch_dur_s[1]", predictor.ErrInvalid},
		{"short durations", edit(t, `[36, 36, 36, 37, 37, 37]`, `[36, 36]`), CodeInvalid, "jobs[0].epoch_dur_s", predictor.ErrLength},
		{"zero epochs", edit(t, `"epoch_bs": [32, 32, 32, 64, 64, 64], "epoch_dur_s": [36, 36, 36, 37, 37, 37]`, `"epoch_bs": [], "epoch_dur_s": []`), CodeInvalid, "jobs[0].epoch_bs", predictor.ErrNoEpochs},
		{"unknown batch size", edit(t, `"progress": 3,`, `"progress": 3, "modes": [32], "mode_dur_s": [36],`), CodeInvalid, "jobs[0].epoch_bs[3]", predictor.ErrUnknownBatchSize},
		{"progress past the total", edit(t, `"progress": 30`, `"progress": 41`), CodeInvalid, "jobs[1].progress", market.ErrInvalid},
		{"progress past the profile", edit(t, `"progress": 3`, `"progress": 7`), CodeInvalid, "jobs[0].progress", predictor.ErrProgress},
		{"NaN-like known", edit(t, `"remaining_s": 600`, `"remaining_s": -1`), CodeInvalid, "jobs[1].known.remaining_s", round.ErrInvalid},
		{"zero mean epoch", edit(t, `"mean_epoch_s": 60`, `"mean_epoch_s": 0`), CodeInvalid, "jobs[1].known.mean_epoch_s", round.ErrInvalid},
		{"duplicate id", edit(t, `"id": 2`, `"id": 1`), CodeInvalid, "jobs[1].id", market.ErrInvalid},
		{"finish out of order", edit(t, `"finish": [{"round": 0, "estimate_s": 1400}]`, `"finish": [{"round": 3, "estimate_s": 1400}, {"round": 1, "estimate_s": 1}]`), CodeInvalid, "jobs[0].finish[1].round", round.ErrInvalid},
		{"timeline without dataset", edit(t, `"progress": 3,`, `"progress": 3, "timeline": [{"round": 2, "it_per_s": 4, "bs": 32}],`), CodeInvalid, "jobs[0].samples_per_epoch", round.ErrInvalid},
		{"momentum", edit(t, `"rounds": 4`, `"rounds": 4, "momentum": 1.5`), CodeInvalid, "config.momentum", round.ErrInvalid},
		{"prior strength past its cap", edit(t, `"rounds": 4`, `"rounds": 4, "prior_strength": 1e20`), CodeInvalid, "config.prior_strength", predictor.ErrInvalid},
		{"submission past the bound", edit(t, `"submit_s": 120, "epochs": 40`, `"submit_s": 1.7e308, "epochs": 40`), CodeInvalid, "jobs[1].submit_s", round.ErrInvalid},
		{"known remaining time past the bound", edit(t, `"known": {"remaining_s": 600`, `"known": {"remaining_s": 1e308`), CodeInvalid, "jobs[1].known.remaining_s", round.ErrInvalid},
		{"negative duration, calibrated", edit(t, `"progress": 3, "epoch_bs": [32, 32, 32, 64, 64, 64], "epoch_dur_s": [36, 36`,
			`"progress": 3, "samples_per_epoch": 1000, "timeline": [{"round": 2, "it_per_s": 4, "bs": 32}], "epoch_bs": [32, 32, 32, 64, 64, 64], "epoch_dur_s": [36, -36`),
			CodeInvalid, "jobs[0].epoch_dur_s[1]", predictor.ErrInvalid},
		{"zero profiled durations", edit(t, `"progress": 3,`,
			`"progress": 3, "samples_per_epoch": 1000, "timeline": [{"round": 2, "it_per_s": 4, "bs": 32}], "profiled_dur_s": [0, 0, 0, 0, 0, 0],`),
			CodeInvalid, "jobs[0].profiled_dur_s[0]", round.ErrInvalid},
		{"timeline", edit(t, `"progress": 3,`, `"progress": 3, "samples_per_epoch": 1000, "timeline": [{"round": 2, "it_per_s": -4, "bs": 32}],`),
			CodeInvalid, "jobs[0].timeline[0].it_per_s", round.ErrInvalid},
		{"too many GPU-rounds", edit(t, `"gpus": 4, "round": 6, "config": {"rounds": 4}`, `"gpus": 1000000, "round": 6, "config": {"rounds": 5}`),
			CodeLimit, "gpus", market.ErrLimit},
		{"unknown field", edit(t, `"rounds": 4`, `"rounds": 4, "window": 3`), CodeMalformed, "config.window", ErrMalformed},
		{"wrong type", edit(t, `"gpus": 4`, `"gpus": 4.5`), CodeMalformed, "gpus", ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Call(context.Background(), "shockwave.plan", []byte(c.req))
			var we *Error
			if !errors.As(err, &we) || we.Code != c.code || we.Field != c.field || !errors.Is(err, c.is) {
				t.Fatalf("got %v (%+v), want code %s field %q wrapping %v", err, we, c.code, c.field, c.is)
			}
			if err := resolveJSON(reflect.TypeFor[ShockwavePlanRequest](), we.Field); err != nil && c.code != CodeMalformed {
				t.Errorf("the field is not in the request: %v", err)
			}
		})
	}
}

// traceRequest builds a request from the first n jobs of the authors'
// 120-job trace, with seeded progress.
func traceRequest(t testing.TB, n, gpus int) []byte {
	dir := filepath.Join("internal", "eval", "data", "shockwave")
	jobs, err := trace.ParseFile(filepath.Join(dir, "traces", "120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := throughput.LoadFile(filepath.Join(dir, "tacc_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	req := ShockwavePlanRequest{GPUs: gpus, Round: 45, Reestimate: true}
	for i := 0; i < n; i++ {
		p, err := trace.Derive(&jobs[i], tab, trace.DeriveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		req.Jobs = append(req.Jobs, ShockwaveJob{ID: jobs[i].ID, GPUs: jobs[i].GPUs, SubmitS: jobs[i].Arrival,
			Progress: (i * 13) % (p.Epochs() / 2), EpochBS: p.EpochBS, EpochDurS: p.MetadataDurations(nil),
			Finish: []FinishSpec{{Round: 10, EstimateS: jobs[i].Arrival + 3*jobs[i].Duration}}})
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
	out, err := Call(context.Background(), "shockwave.plan", req)
	if err != nil {
		t.Fatal(err)
	}
	var r ShockwavePlanResponse
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	var q ShockwavePlanRequest
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
		again, err := Call(context.Background(), "shockwave.plan", req)
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
		out, err := Call(context.Background(), "shockwave.plan", req)
		// shockwave.predict checks the same state the same way.
		pout, perr := Call(context.Background(), "shockwave.predict", req)
		if (err == nil) != (perr == nil) || (err != nil && err.Error() != perr.Error()) {
			t.Fatalf("plan error %v, predict error %v", err, perr)
		}
		if err != nil {
			var we *Error
			if !errors.As(err, &we) || we.Code == CodeInternal || we.Message == "" {
				t.Fatalf("bad error %v", err)
			}
			if we.Code != CodeMalformed {
				if err := resolveJSON(reflect.TypeFor[ShockwavePlanRequest](), we.Field); we.Field != "" && err != nil {
					t.Fatalf("%v: the field is not in the request: %v", we, err)
				}
			}
			return
		}
		var pr ShockwavePredictResponse
		if json.Unmarshal(pout, &pr) != nil {
			t.Fatalf("undecodable prediction: %s", pout)
		}
		var q ShockwavePlanRequest
		var r ShockwavePlanResponse
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

// TestJSONKeys: every field of round.State (the engine names no other:
// package round's TestFieldNames) has a JSON path in the request
// (jsonPath, from the round and json tags of ShockwavePlanRequest's
// types), a list where the Go field is a slice, and every round tag names
// a field of round.State. A field missing here would fail every error
// naming it with code "internal".
func TestJSONKeys(t *testing.T) {
	req := reflect.TypeFor[ShockwavePlanRequest]()
	state := reflect.TypeFor[round.State]()
	seen := 0
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			return
		}
		for f := range typ.Fields() {
			seen++
			p := f.Name
			if path != "" {
				p = path + "." + p
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			jp, ok := jsonPath(&round.FieldError{Job: -1, Field: p})
			if !ok {
				t.Errorf("round.State field %s has no JSON path", p)
			} else if jt, err := jsonType(req, jp); err != nil {
				t.Errorf("%s is %s: %v", p, jp, err)
			} else if (ft.Kind() == reflect.Slice) != (jt.Kind() == reflect.Slice) || (ft.Kind() == reflect.Struct) != (jt.Kind() == reflect.Struct) {
				t.Errorf("%s is a %v, its JSON path %s a %v", p, ft.Kind(), jp, jt.Kind())
			}
			if ft.Kind() == reflect.Slice {
				p += "[0]"
				ft = ft.Elem()
			}
			walk(ft, p)
		}
	}
	walk(state, "")
	if seen < 45 {
		t.Fatalf("only %d fields walked", seen)
	}
	// Every round tag of the request's types names a field of the State
	// (under the field of its parent's type).
	var tags func(reflect.Type, reflect.Type, string)
	tags = func(wire, st reflect.Type, at string) {
		for wire.Kind() == reflect.Pointer || wire.Kind() == reflect.Slice {
			wire = wire.Elem()
		}
		for st.Kind() == reflect.Pointer || st.Kind() == reflect.Slice {
			st = st.Elem()
		}
		if wire.Kind() != reflect.Struct {
			return
		}
		for f := range wire.Fields() {
			name := f.Tag.Get("round")
			switch name {
			case "-":
				continue
			case "":
				name = f.Name
			}
			sub := st
			for part := range strings.SplitSeq(name, ".") {
				for sub.Kind() == reflect.Pointer || sub.Kind() == reflect.Slice {
					sub = sub.Elem()
				}
				sf, ok := sub.FieldByName(part)
				if sub.Kind() != reflect.Struct || !ok {
					t.Errorf("%s%s.%s: round tag %q names no field of round.State", at, wire.Name(), f.Name, name)
					sub = nil
					break
				}
				sub = sf.Type
			}
			if sub != nil {
				tags(f.Type, sub, at+wire.Name()+".")
			}
		}
	}
	tags(req, state, "")
	for _, c := range []struct {
		fe   round.FieldError
		want string // "" for no path
	}{
		{round.FieldError{Job: 3, Field: "EpochDur[2]"}, "jobs[3].epoch_dur_s[2]"},
		{round.FieldError{Job: 1, Field: "Timeline[0].ItPerSec"}, "jobs[1].timeline[0].it_per_s"},
		{round.FieldError{Job: 2, Field: "Known.MeanEpoch"}, "jobs[2].known.mean_epoch_s"},
		{round.FieldError{Job: 0, Field: "Finish"}, "jobs[0].finish"},
		{round.FieldError{Job: -1, Field: "Config.Market.Breakpoints[1]"}, "config.breakpoints[1]"},
		{round.FieldError{Job: -1, Field: "Config.Predictor.PriorStrength"}, "config.prior_strength"},
		{round.FieldError{Job: -1, Field: "GPUs"}, "gpus"},
		{round.FieldError{Job: -1, Field: "Config.ReoptRounds"}, "config.reopt_rounds"},
		{round.FieldError{Job: -1, Field: "Config.Market[1]"}, ""},
		{round.FieldError{Job: 0, Field: "unmapped market Foo"}, ""},
		{round.FieldError{Job: -1, Field: "j.GPUs"}, ""},
	} {
		got, ok := jsonPath(&c.fe)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("jsonPath(%+v) = %q, %v; want %q", c.fe, got, ok, c.want)
		}
	}
	// A name the table lacks is an internal error, never a silent guess.
	err := planError(&round.FieldError{Job: 0, ID: 7, Field: "Nope", Err: round.ErrInvalid})
	var we *Error
	if !errors.As(err, &we) || we.Code != CodeInternal || we.Field != "" {
		t.Errorf("unknown field: %v (%+v), want code internal without a field", err, we)
	}
}

// jsonType returns the type at a JSON path of t ("jobs[1].timeline[0].bs"),
// following JSON tags.
func jsonType(t reflect.Type, path string) (reflect.Type, error) {
	for seg := range strings.SplitSeq(path, ".") {
		name, index, _ := strings.Cut(seg, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil, errors.New(seg + " is not in an object")
		}
		var found bool
		for f := range t.Fields() {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == name {
				t, found = f.Type, true
				break
			}
		}
		if !found {
			return nil, errors.New(name + " is not a key of " + t.String())
		}
		if index != "" {
			if _, err := strconv.Atoi(strings.TrimSuffix(index, "]")); err != nil || !strings.HasSuffix(index, "]") {
				return nil, errors.New(seg + ": bad index")
			}
			if t.Kind() != reflect.Slice {
				return nil, errors.New(seg + " indexes a " + t.Kind().String())
			}
			t = t.Elem()
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, nil
}

// resolveJSON checks that path is a JSON path of t.
func resolveJSON(t reflect.Type, path string) error {
	_, err := jsonType(t, path)
	return err
}
