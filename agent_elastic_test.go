package orrery_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/agent"
)

// An elastic agent behind a handle is the Go agent on the plan's clock
// (agent.NewPlanGroup), its comm_ms the Go agent's Communicated: the same
// decisions for the same instants, the give-up included. Two handles of
// one plan, in two sessions (two processes), ready a little apart, start
// every iteration on the same slot.
func TestAgentOpsElastic(t *testing.T) {
	ref := time.UnixMilli(1_700_000_000_000)
	plan := orrery.AgentPlan{PeriodMs: 100, ShiftMs: 30, CommOffsetMs: 40, ReferenceUnixMs: float64(ref.UnixMilli()), SlackMs: 8, FreeCommMs: 50}
	native, err := agent.New(agent.Plan{Reference: ref, Shift: 30 * time.Millisecond, Period: 100 * time.Millisecond, CommOffset: 40 * time.Millisecond,
		Slack: 8 * time.Millisecond, FreeComm: 50 * time.Millisecond, Group: agent.NewPlanGroup(ref)}, agent.Options{Mode: agent.Elastic})
	if err != nil {
		t.Fatal(err)
	}
	sessions := []*orrery.Session{orrery.NewSession(), orrery.NewSession()}
	handles := make([]int64, 2)
	for i, s := range sessions {
		var h orrery.AgentHandle
		json.Unmarshal(sessionCall(t, s, "cassini.agent.new", orrery.AgentNewRequest{AgentPlan: plan, Mode: "elastic"}), &h)
		handles[i] = h.Handle
	}
	ms := func(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }
	r := rand.New(rand.NewPCG(8, 8))
	now := ref.Add(time.Second)
	var comm time.Duration
	released := -1
	for i := range 300 {
		if comm > 0 {
			native.Communicated(comm)
		}
		want := native.Next(now)
		for k, s := range sessions {
			ready := now.Add(time.Duration(k) * 200 * time.Microsecond) // rank 1 a little later
			var got orrery.AgentDecision
			json.Unmarshal(sessionCall(t, s, "cassini.agent.next", orrery.AgentNextRequest{Handle: handles[k], ReadyUnixMs: ms(ready), CommMs: float64(comm) / 1e6}), &got)
			if k == 0 && (math.Abs(got.StartUnixMs-ms(want.Start)) > 1e-3 || got.Adjusted != want.Adjusted || got.Released != want.Released) {
				t.Fatalf("iteration %d: %+v, want %+v", i, got, want)
			}
			if k == 1 && want.Delay > time.Millisecond && math.Abs(got.StartUnixMs-ms(want.Start)) > 1e-3 {
				t.Fatalf("iteration %d: rank 1 starts at %v, rank 0 at %v: not the same slot", i, got.StartUnixMs, ms(want.Start))
			}
		}
		if want.Released && released < 0 {
			released = i
		}
		// 95-105 ms iterations; from iteration 150 on the shift stops
		// paying (communication 60 ms against a free 50).
		comm = 30 * time.Millisecond
		if i >= 150 {
			comm = 60 * time.Millisecond
		}
		now = want.Start.Add(time.Duration(95e6 + r.Float64()*10e6))
	}
	if released < 150 || released > 200 {
		t.Errorf("released at iteration %d, want soon after the shift stopped paying at 150", released)
	}
}
