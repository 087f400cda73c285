package orrery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/orrery/orrery"
)

// Issue 29, item 4: every bound on a time (and on the values that feed
// the same arithmetic) is derived from that arithmetic: a value at the
// bound is accepted and answered in range, one past it is refused naming
// its field and the bound.

// lastInstantMs is the last instant cassini.agent.* takes: int64
// nanoseconds end at 9223372036854.775807 ms, and an answer is up to two
// periods (of at most a day) after the latest instant given.
const lastInstantMs = 9223199236854.0

func TestInstantBounds(t *testing.T) {
	day := 86400000.0
	// The latest slot: a period of a day, shifted by all but a
	// millisecond of it, from the epoch.
	newAgent := fmt.Sprintf(`{"op":"cassini.agent.new","request":{"period_ms":%v,"shift_ms":%v,"reference_unix_ms":0}}`, day, day-1)
	for _, c := range []struct {
		name, line string
		ok         bool
		field      string
	}{
		{"ready at the bound", `{"op":"cassini.agent.next","request":{"handle":1,"ready_unix_ms":9223199236854}}`, true, ""},
		{"ready past the bound", `{"op":"cassini.agent.next","request":{"handle":1,"ready_unix_ms":9223199236855}}`, false, "ready_unix_ms"},
		{"ready of the issue", `{"op":"cassini.agent.next","request":{"handle":1,"ready_unix_ms":9.3e12}}`, false, "ready_unix_ms"},
		{"old bound", `{"op":"cassini.agent.next","request":{"handle":1,"ready_unix_ms":9.2e15}}`, false, "ready_unix_ms"},
		{"communicating at the bound", `{"op":"cassini.agent.communicating","request":{"handle":1,"at_unix_ms":9223199236854}}`, true, ""},
		{"communicating past it", `{"op":"cassini.agent.communicating","request":{"handle":1,"at_unix_ms":9223199236854.5}}`, false, "at_unix_ms"},
		{"reference at the bound", `{"op":"cassini.agent.set_plan","request":{"handle":1,"plan":{"period_ms":86400000,"shift_ms":86399999,"reference_unix_ms":9223199236854}}}`, true, ""},
		{"reference past it", `{"op":"cassini.agent.set_plan","request":{"handle":1,"plan":{"period_ms":86400000,"reference_unix_ms":9223199236855}}}`, false, "plan.reference_unix_ms"},
		{"period of a day", `{"op":"cassini.agent.set_plan","request":{"handle":1,"plan":{"period_ms":86400000}}}`, true, ""},
		{"period past a day", `{"op":"cassini.agent.set_plan","request":{"handle":1,"plan":{"period_ms":86400000.001}}}`, false, "plan.period_ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := orrery.NewSession()
			defer s.Close()
			if a := decodeAnswer(t, s.Handle(context.Background(), []byte(newAgent))); a.Error != nil {
				t.Fatal(a.Error)
			}
			a := decodeAnswer(t, s.Handle(context.Background(), []byte(c.line)))
			if !c.ok {
				if a.Error == nil || a.Error.Field != c.field {
					t.Fatalf("answer %s %+v, want an error naming %s", a.Response, a.Error, c.field)
				}
				return
			}
			if a.Error != nil {
				t.Fatal(a.Error)
			}
			// The next decision, from the instant at the bound, lands
			// before int64 nanoseconds end, and after the instant.
			next := decodeAnswer(t, s.Handle(context.Background(), []byte(`{"op":"cassini.agent.next","request":{"handle":1,"ready_unix_ms":9223199236854}}`)))
			var d orrery.AgentDecision
			if next.Error != nil || json.Unmarshal(next.Response, &d) != nil {
				t.Fatalf("next: %s %+v", next.Response, next.Error)
			}
			if !(d.StartUnixMs >= lastInstantMs && d.StartUnixMs <= float64(math.MaxInt64)/1e6 && d.DelayMs >= 0 && d.DelayMs <= 2*day) {
				t.Errorf("next from the last instant: %+v", d)
			}
		})
	}
}

// TestShockwaveBounds: every time a Shockwave request states, and the
// values calibration multiplies with them, at and past its bound
// (round.MaxSeconds and the others, shockwave.go's doc), in a plan and
// in a scheduler's add or observe.
func TestShockwaveBounds(t *testing.T) {
	// job is a job with the given fields in place of its own.
	job := func(extra string) string {
		var j map[string]json.RawMessage
		base := `{"id":1,"gpus":1,"submit_s":60,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[36,36],"samples_per_epoch":50000}`
		if err := json.Unmarshal([]byte(base[:len(base)-1]+extra+"}"), &j); err != nil {
			panic(err)
		}
		b, _ := json.Marshal(j)
		return string(b)
	}
	plan := func(config, j string) string {
		return `{"gpus":4,"round":3,"config":{` + config + `},"jobs":[` + j + `]}`
	}
	for _, c := range []struct {
		name, req string
		field     string // "" accepted
	}{
		{"epoch of 1e15 s", plan("", job(`,"epoch_dur_s":[1e15,36]`)), ""},
		{"epoch past it", plan("", job(`,"epoch_dur_s":[1.0000000000000002e15,36]`)), "jobs[0].epoch_dur_s[0]"},
		{"submission at 1e15 s", plan("", job(`,"submit_s":1e15`)), ""},
		{"submission past it", plan("", job(`,"submit_s":1.0000000000000002e15`)), "jobs[0].submit_s"},
		{"round of 1e15 s", plan(`"round_s":1e15`, job("")), ""},
		{"round past it", plan(`"round_s":1.0000000000000002e15`, job("")), "config.round_s"},
		{"k of 1e6", plan(`"k":1e6`, job("")), ""},
		{"k past it", plan(`"k":1000000.0000000001`, job("")), "config.k"},
		{"throughput of 1e12", plan("", job(`,"timeline":[{"round":2,"it_per_s":1e12,"bs":9223372036854775807}]`)), ""},
		{"throughput past it", plan("", job(`,"timeline":[{"round":2,"it_per_s":1.0000000000000002e12,"bs":32}]`)), "jobs[0].timeline[0].it_per_s"},
		{"sample of the next round", plan("", job(`,"timeline":[{"round":4,"it_per_s":9,"bs":32}]`)), ""},
		{"sample past it", plan("", job(`,"timeline":[{"round":5,"it_per_s":9,"bs":32}]`)), "jobs[0].timeline[0].round"},
		{"dataset of 1e15", plan("", job(`,"samples_per_epoch":1e15,"timeline":[{"round":2,"it_per_s":1e-300,"bs":1}]`)), ""},
		{"dataset past it", plan("", job(`,"samples_per_epoch":1.0000000000000002e15`)), "jobs[0].samples_per_epoch"},
		{"finish estimate of 1e100", plan("", job(`,"finish":[{"round":1,"estimate_s":1e100}]`)), ""},
		{"finish estimate past it", plan("", job(`,"finish":[{"round":1,"estimate_s":1.0000000000000002e100}]`)), "jobs[0].finish[0].estimate_s"},
		{"prior strength of 2^40", plan(`"prior_strength":1099511627776`, job("")), ""},
		{"prior strength past it", plan(`"prior_strength":1099511627777`, job("")), "config.prior_strength"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := orrery.Call(context.Background(), "shockwave.plan", []byte(c.req))
			checkBound(t, c.field, b, err)
			// The same state through a scheduler: new, add (at round 3),
			// schedule.
			var req orrery.ShockwavePlanRequest
			if err := json.Unmarshal([]byte(c.req), &req); err != nil {
				t.Fatal(err)
			}
			cfg, _ := json.Marshal(req.Config)
			jb, _ := json.Marshal(req.Jobs[0])
			s := orrery.NewSession()
			defer s.Close()
			lines := []string{`{"op":"shockwave.scheduler.new","request":{"gpus":4,"config":` + string(cfg) + `}}`,
				`{"op":"shockwave.scheduler.end_round","request":{"handle":1}}`,
				`{"op":"shockwave.scheduler.end_round","request":{"handle":1}}`,
				`{"op":"shockwave.scheduler.end_round","request":{"handle":1}}`,
				`{"op":"shockwave.scheduler.add","request":{"handle":1,"job":` + string(jb) + `}}`,
				`{"op":"shockwave.scheduler.schedule","request":{"handle":1}}`}
			for i, l := range lines {
				a := decodeAnswer(t, s.Handle(context.Background(), []byte(l)))
				if a.Error == nil {
					continue
				}
				field := strings.Replace(strings.Replace(c.field, "jobs[0].", "job.", 1), "config.", "config.", 1)
				if c.field == "" || a.Error.Field != field || (i != 0 && i != 4) {
					t.Fatalf("scheduler line %d: %+v (want field %q at new or add)", i, a.Error, field)
				}
				return
			}
			if c.field != "" {
				t.Fatalf("the scheduler took what plan refuses (%s)", c.field)
			}
		})
	}
}

// checkBound checks a call's outcome: accepted when field is "", else
// refused naming field.
func checkBound(t *testing.T, field string, resp []byte, err error) {
	t.Helper()
	var we *orrery.Error
	switch {
	case field == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case field == "":
		var p orrery.ShockwavePlanResponse
		if err := json.Unmarshal(resp, &p); err != nil || p.Status == "" {
			t.Fatalf("answer %.200s: %v", resp, err)
		}
	case err == nil:
		t.Fatalf("accepted, want an error naming %s: %.200s", field, resp)
	case !asError(err, &we) || we.Field != field:
		t.Fatalf("error %v, want one naming %s", err, field)
	}
}

func asError(err error, we **orrery.Error) bool {
	e, ok := err.(*orrery.Error)
	*we = e
	return ok
}
