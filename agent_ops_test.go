package orrery_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/agent"
)

// The agent behind a handle decides, for the same instants, what the Go
// agent decides: a jittery loop of 300 iterations in both modes.
func TestAgentOpsAreTheAgent(t *testing.T) {
	ref := time.UnixMilli(1_700_000_000_000)
	for _, mode := range []string{"pad", "free"} {
		m, _ := agent.ParseMode(mode)
		native, err := agent.New(agent.Plan{Reference: ref, Shift: 30 * time.Millisecond, Period: 72 * time.Millisecond, CommOffset: 40 * time.Millisecond}, agent.Options{Mode: m})
		if err != nil {
			t.Fatal(err)
		}
		s := orrery.NewSession()
		var h orrery.AgentHandle
		json.Unmarshal(sessionCall(t, s, "cassini.agent.new", orrery.AgentNewRequest{AgentPlan: orrery.AgentPlan{PeriodMs: 72, ShiftMs: 30, CommOffsetMs: 40,
			ReferenceUnixMs: float64(ref.UnixMilli())}, Mode: mode}), &h)
		r := rand.New(rand.NewPCG(5, 6))
		now := ref.Add(time.Second)
		for i := range 300 {
			want := native.Next(now)
			var got orrery.AgentDecision
			json.Unmarshal(sessionCall(t, s, "cassini.agent.next", orrery.AgentNextRequest{Handle: h.Handle, ReadyUnixMs: float64(now.UnixNano()) / 1e6}), &got)
			if math.Abs(got.StartUnixMs-float64(want.Start.UnixNano())/1e6) > 1e-3 || got.Adjusted != want.Adjusted || math.Abs(got.DelayMs-float64(want.Delay)/1e6) > 1e-3 {
				t.Fatalf("%s, iteration %d: %+v, want %+v", mode, i, got, want)
			}
			comm := want.Start.Add(40*time.Millisecond + time.Duration(r.NormFloat64()*2e6))
			e := native.Communicating(comm)
			var d orrery.AgentDrift
			json.Unmarshal(sessionCall(t, s, "cassini.agent.communicating", orrery.AgentCommRequest{Handle: h.Handle, AtUnixMs: float64(comm.UnixNano()) / 1e6}), &d)
			if math.Abs(d.DriftMs-float64(e)/1e6) > 1e-3 {
				t.Fatalf("%s, iteration %d: drift %v, want %v", mode, i, d.DriftMs, e)
			}
			// The iteration takes 60-80 ms, with a straggler now and then.
			now = want.Start.Add(time.Duration(60e6 + r.Float64()*20e6))
			if r.IntN(40) == 0 {
				now = now.Add(25 * time.Millisecond)
			}
		}
		var st orrery.AgentStats
		json.Unmarshal(sessionCall(t, s, "cassini.agent.stats", orrery.AgentRequest(h)), &st)
		ns := native.Stats()
		if st.Iterations != 300 || st.Adjustments != ns.Adjustments || st.Samples != ns.Samples || math.Abs(st.PaddingMs-float64(ns.Padding)/1e6) > 1e-3 {
			t.Fatalf("%s: stats %+v, native %+v", mode, st, ns)
		}
		if mode == "pad" && st.Adjustments == 0 {
			t.Fatalf("no adjustment in 300 jittery iterations: %+v", st)
		}
	}
}

// Bad plans name their field; an agent's handle is no scheduler's.
func TestAgentOpsErrors(t *testing.T) {
	s := orrery.NewSession()
	for _, c := range []struct{ req, field string }{
		{`{"period_ms": 0, "shift_ms": 0}`, "period_ms"},
		{`{"period_ms": 72, "shift_ms": 72}`, "shift_ms"},
		{`{"period_ms": 72, "shift_ms": 1, "comm_offset_ms": 80}`, "comm_offset_ms"},
		{`{"period_ms": 72, "shift_ms": 1, "mode": "slow"}`, "mode"},
		{`{"period_ms": 72, "shift_ms": 1, "threshold": 0.9}`, "threshold"},
		{`{"period_ms": 72, "shift_ms": 1, "reference_unix_ms": -5}`, "reference_unix_ms"},
	} {
		if e := sessionErr(t, s, "cassini.agent.new", c.req); e.Field != c.field || !errors.Is(e, orrery.ErrInvalid) {
			t.Errorf("%s: %v, want field %s", c.req, e, c.field)
		}
	}
	sessionCall(t, s, "cassini.agent.new", map[string]any{"period_ms": 72, "shift_ms": 1})
	if e := sessionErr(t, s, "shockwave.scheduler.schedule", `{"handle": 1}`); e.Field != "handle" || !errors.Is(e, orrery.ErrUnknownHandle) {
		t.Errorf("a scheduler op on an agent: %v", e)
	}
	if e := sessionErr(t, s, "cassini.agent.set_plan", `{"handle": 1, "plan": {"period_ms": 10, "shift_ms": 20}}`); e.Field != "plan.shift_ms" {
		t.Errorf("set_plan: %v", e)
	}
	sessionCall(t, s, "cassini.agent.close", map[string]any{"handle": 1})
	if s.Len() != 0 {
		t.Fatal("close left the handle")
	}
}
