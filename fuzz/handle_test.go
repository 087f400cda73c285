package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orrery/orrery"
)

// Limits tame applies to a request before it runs.
const (
	fuzzMaxPerimeter = 512     // ticks of the unified circle
	fuzzBudget       = 1 << 16 // pair evaluations per link search
	fuzzRestarts     = 4
	fuzzWorkers      = 2
)

// tame clamps the settings that decide how long one request may run. An
// envelope that is not an object holding a request object is left as is
// (it fails to decode in microseconds).
func tame(env []byte) []byte {
	var e map[string]json.RawMessage
	if json.Unmarshal(env, &e) != nil {
		return env
	}
	var req map[string]json.RawMessage
	if json.Unmarshal(e["request"], &req) != nil || req == nil {
		return env
	}
	clampInt(req, "max_perimeter_ticks", fuzzMaxPerimeter, fuzzMaxPerimeter)
	clampInt(req, "budget", fuzzBudget, fuzzBudget)
	clampInt(req, "restarts", 0, fuzzRestarts)
	clampInt(req, "workers", 0, fuzzWorkers)
	r, err := json.Marshal(req)
	if err != nil {
		return env
	}
	e["request"] = r
	out, err := json.Marshal(e)
	if err != nil {
		return env
	}
	return out
}

// clampInt makes req[key] (matched case-insensitively, so the harness stays
// fast even if the decoder's case check regressed) a number in [1, hi], def
// if it is missing, not positive or too large. A value that is not a number
// stays: the request then fails to decode, quickly.
func clampInt(req map[string]json.RawMessage, key string, def, hi int64) {
	v := strconv.FormatInt(def, 10)
	for k, raw := range req {
		if !strings.EqualFold(k, key) {
			continue
		}
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return // not a number: a decoding error
		}
		if i, err := n.Int64(); err == nil && i >= 1 && i <= hi {
			v = n.String()
		}
		delete(req, k)
	}
	req[key] = json.RawMessage(v)
}

// checkedReply is Handle's envelope, decoded strictly.
type checkedReply struct {
	Version  int             `json:"version"`
	Op       string          `json:"op"`
	Response json.RawMessage `json:"response"`
	Error    *orrery.Error   `json:"error"`
}

func FuzzHandle(f *testing.F) {
	f.Add([]byte(`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": 72, "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}, {"id": "b", "period_ms": 72, "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}]}}`))
	f.Fuzz(func(t *testing.T, env []byte) {
		env = tame(env)
		out := orrery.Handle(context.Background(), env)
		r := checkReply(t, env, out)
		if r.Error != nil {
			return
		}
		if !bytes.Contains(bytes.ToLower(env), []byte("time_limit_ms")) {
			if again := orrery.Handle(context.Background(), env); !bytes.Equal(out, again) {
				t.Fatalf("same envelope, different answers:\n%s\n%s", out, again)
			}
		}
		switch r.Op {
		case "cassini.link":
			checkLink(t, r.Response)
		case "cassini.rank":
			checkRank(t, r.Response)
		}
	})
}

// checkReply checks the envelope contract: valid JSON, version 1, exactly
// one of response and error, and an error that is not a bug.
func checkReply(t *testing.T, env, out []byte) checkedReply {
	t.Helper()
	var r checkedReply
	d := json.NewDecoder(bytes.NewReader(out))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil || !json.Valid(out) {
		t.Fatalf("Handle(%q) = %q: not a valid envelope: %v", env, out, err)
	}
	if r.Version != orrery.Version || (r.Response == nil) == (r.Error == nil) {
		t.Fatalf("Handle(%q) = %s: want version 1 and exactly one of response and error", env, out)
	}
	if e := r.Error; e != nil {
		if !slices.Contains([]string{orrery.CodeMalformed, orrery.CodeInvalid, orrery.CodeUnknownOp, orrery.CodeLimit}, e.Code) || e.Message == "" {
			t.Fatalf("Handle(%q): error %+v", env, e)
		}
	}
	return r
}

// checkLink checks a cassini.link response's invariants.
func checkLink(t *testing.T, resp []byte) {
	t.Helper()
	var r orrery.LinkResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("response %s: %v", resp, err)
	}
	if !(r.UnshiftedScore <= r.Score && r.Score <= r.Bound && r.Bound <= 1) {
		t.Fatalf("want unshifted_score <= score <= bound <= 1: %s", resp)
	}
	if r.Status == "optimal" && r.Bound != r.Score {
		t.Fatalf("optimal with bound %v != score %v", r.Bound, r.Score)
	}
	if !slices.Contains([]string{"optimal", "budget", "time_limit"}, r.Status) || !slices.Contains([]string{"exact", "paper"}, r.Mode) {
		t.Fatalf("status %q mode %q", r.Status, r.Mode)
	}
	if len(r.ShiftsMs) == 0 || len(r.ShiftsMs) != len(r.PeriodsMs) || len(r.ShiftsMs) != len(r.RotationsDeg) {
		t.Fatalf("shifts, periods and rotations do not match: %s", resp)
	}
	if !(r.PerimeterMs > 0) || r.Points < 1 || r.ExcessGbit < 0 || math.IsInf(r.ExcessGbit, 0) {
		t.Fatalf("perimeter %v points %d excess %v", r.PerimeterMs, r.Points, r.ExcessGbit)
	}
	if r.Mode == "paper" && r.Points != 72 {
		t.Fatalf("paper mode with %d points", r.Points)
	}
	for id, s := range r.ShiftsMs {
		p, ok := r.PeriodsMs[id]
		if !ok || !(s >= 0 && s < p) || p > r.PerimeterMs*(1+1e-12) {
			t.Fatalf("job %q: shift %v ms outside [0, %v) or period past the perimeter %v", id, s, p, r.PerimeterMs)
		}
		if d := r.RotationsDeg[id]; !(d >= 0 && d < 360) {
			t.Fatalf("job %q: rotation %v degrees", id, d)
		}
	}
}

// checkRank checks a cassini.rank response's invariants.
func checkRank(t *testing.T, resp []byte) {
	t.Helper()
	var r orrery.RankResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("response %s: %v", resp, err)
	}
	kept := 0
	for i, c := range r.Candidates {
		if c.Discarded {
			if c.Reason == "" || c.ShiftsMs != nil {
				t.Fatalf("candidate %d discarded without a reason, or with shifts: %+v", i, c)
			}
			continue
		}
		kept++
		if !(c.Score <= 1) || math.IsNaN(c.Score) {
			t.Fatalf("candidate %d score %v", i, c.Score)
		}
		for _, l := range c.Links {
			if !(l.Score <= 1) || len(l.Jobs) < 2 {
				t.Fatalf("candidate %d link %+v", i, l)
			}
		}
		for id, s := range c.ShiftsMs {
			if !(s >= 0) {
				t.Fatalf("candidate %d job %q shift %v", i, id, s)
			}
		}
	}
	if len(r.Ranking) != kept || (kept > 0) != (r.Best != nil) || (r.Best != nil && *r.Best != r.Ranking[0]) {
		t.Fatalf("ranking %v best %v with %d kept candidates", r.Ranking, r.Best, kept)
	}
}

// TestTame: the clamps hold whatever the request says, and leave
// non-objects alone.
func TestTame(t *testing.T) {
	for _, env := range []string{
		`{"op": "cassini.link", "request": {"MAX_PERIMETER_TICKS": 16000000, "max_perimeter_ticks": 9, "Budget": -1, "restarts": 65536}}`,
		`{"op": "cassini.link", "request": {}}`,
	} {
		out := tame([]byte(env))
		var e struct{ Request map[string]json.RawMessage }
		if err := json.Unmarshal(out, &e); err != nil {
			t.Fatal(err)
		}
		for k, v := range e.Request {
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 0 || (strings.EqualFold(k, "max_perimeter_ticks") && n > fuzzMaxPerimeter) || (strings.EqualFold(k, "budget") && (n > fuzzBudget || n < 1)) || (strings.EqualFold(k, "restarts") && n > fuzzRestarts) {
				t.Fatalf("tame(%s) = %s", env, out)
			}
		}
	}
	for _, env := range []string{``, `[]`, `{"op": "x", "request": [1]}`, `{`} {
		if out := tame([]byte(env)); string(out) != env {
			t.Fatalf("tame(%q) = %q, want it unchanged", env, out)
		}
	}
}
