package orrery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
)

// The time-shift agent across the JSON boundary: a training loop in any
// language asks the Go agent (engine/cassini/agent) when each iteration starts and
// sleeps until then itself. The agent takes instants explicitly, so the
// decisions are the Go agent's for the same instants; times are
// milliseconds since the Unix epoch (a float64 resolves them to a quarter
// of a microsecond).
//
//	cassini.agent.new            {"period_ms": 72, "shift_ms": 30, ...}        → {"handle": 1}
//	cassini.agent.next           {"handle": 1, "ready_unix_ms": ..., "comm_ms"} → {"start_unix_ms", "delay_ms", "late_ms", "adjusted", "released"}
//	cassini.agent.communicating  {"handle": 1, "at_unix_ms": ...}               → {"drift_ms": -0.4}
//	cassini.agent.set_plan       {"handle": 1, "plan": {...}}                   → {}
//	cassini.agent.stats          {"handle": 1}                                  → {...}
//	cassini.agent.close          {"handle": 1}                                  → {}

// AgentPlan is where a job's iterations belong: iteration n starts at
// reference + shift + n·period.
type AgentPlan struct {
	PeriodMs        float64 `json:"period_ms"`                   // T, the (quantized) iteration time cassini ranked with
	ShiftMs         float64 `json:"shift_ms"`                    // t_j, in [0, period): best the centred shift (cassini.link's centred_shifts_ms)
	CommOffsetMs    float64 `json:"comm_offset_ms,omitempty"`    // where communication starts within an iteration
	ReferenceUnixMs float64 `json:"reference_unix_ms,omitempty"` // R; 0 is the Unix epoch, which synchronized clocks share
	// Elastic only: SlackMs is how late the job may start before its
	// communication overlaps a partner's more than planned (the room's
	// late_ms), FreeCommMs its communication time without the shift (0:
	// the agent never gives its shift up).
	SlackMs    float64 `json:"slack_ms,omitempty"`
	FreeCommMs float64 `json:"free_comm_ms,omitempty"`
}

// AgentNewRequest is the request of "cassini.agent.new".
type AgentNewRequest struct {
	AgentPlan
	// Mode is "pad" (the default: an Elastic agent without a clock holds
	// its slots as Pad does), "free" (the paper's rule) or
	// "elastic": on the plan's clock (agent.NewPlanGroup), which every
	// agent built from the same reference shares without sharing memory
	// (the ranks of a job in processes or hosts of their own), with the
	// plan's slack and, with free_comm_ms, the give-up.
	Mode       string  `json:"mode,omitempty"`
	Threshold  float64 `json:"threshold,omitempty"` // re-alignment trigger, fraction of the period; 0: 0.05
	CooldownMs float64 `json:"cooldown_ms,omitempty"`
	GiveUp     string  `json:"give_up,omitempty"` // elastic: "group" (default) or "own"
}

// AgentHandle is the response of "cassini.agent.new".
type AgentHandle struct {
	Handle int64 `json:"handle"`
}

// AgentRequest is the request of "cassini.agent.stats" and
// "cassini.agent.close".
type AgentRequest struct {
	Handle int64 `json:"handle"`
}

// AgentNextRequest is the request of "cassini.agent.next": the loop is
// ready to start its next iteration at ReadyUnixMs. CommMs, if positive, is
// how long the iteration's communication took (an Elastic agent weighs it
// against free_comm_ms; others ignore it).
type AgentNextRequest struct {
	Handle      int64   `json:"handle"`
	ReadyUnixMs float64 `json:"ready_unix_ms"`
	CommMs      float64 `json:"comm_ms,omitempty"`
}

// AgentDecision is the response of "cassini.agent.next".
type AgentDecision struct {
	StartUnixMs float64 `json:"start_unix_ms"`      // start the iteration then (never before ready)
	DelayMs     float64 `json:"delay_ms"`           // how long to wait from ready
	LateMs      float64 `json:"late_ms"`            // how far after its slot it starts
	Adjusted    bool    `json:"adjusted"`           // the wait re-aligns the job after a drift past the threshold
	Released    bool    `json:"released,omitempty"` // an elastic agent gave its shift up: the job runs free from now on
}

// AgentCommRequest is the request of "cassini.agent.communicating": the
// iteration's communication started at AtUnixMs.
type AgentCommRequest struct {
	Handle   int64   `json:"handle"`
	AtUnixMs float64 `json:"at_unix_ms"`
}

// AgentDrift is the response of "cassini.agent.communicating".
type AgentDrift struct {
	DriftMs float64 `json:"drift_ms"` // phase error from the planned angle, in [-T/2, T/2)
}

// AgentPlanRequest is the request of "cassini.agent.set_plan".
type AgentPlanRequest struct {
	Handle int64     `json:"handle"`
	Plan   AgentPlan `json:"plan"`
}

// AgentStats is the response of "cassini.agent.stats" (engine/cassini/agent.Stats).
type AgentStats struct {
	Iterations    int64   `json:"iterations"`
	Adjustments   int64   `json:"adjustments"`
	PerMinute     float64 `json:"adjustments_per_minute"`
	Replans       int64   `json:"replans"`
	PaddingMs     float64 `json:"padding_ms"`
	AdjustDelayMs float64 `json:"adjust_delay_ms"`
	Samples       int64   `json:"samples"`
	Over          int64   `json:"over_threshold"`
	MeanAbsMs     float64 `json:"mean_abs_drift_ms"`
	MaxAbsMs      float64 `json:"max_abs_drift_ms"`
	LastDriftMs   float64 `json:"last_drift_ms"`
}

// Empty is the response of an operation with nothing to answer ({}).
type Empty struct{}

// agentEntry is an agent behind a handle.
type agentEntry struct {
	a       *agent.Agent
	elastic bool // every plan gets the plan's clock
}

// maxUnixMs bounds an instant (in April 2262), derived from the
// arithmetic it feeds: every instant is converted to int64 nanoseconds
// since the Unix epoch, which end at math.MaxInt64 ns =
// 9223372036854.775807 ms, and an answer's instant is at most two periods
// after the latest instant the agent was given (the slot after the one a
// decision at that instant took; a later call may give an earlier
// instant, which waits for that slot). So an instant is at most that end
// less two agent.MaxPeriod, in whole milliseconds. (It was 9.2e15 ms,
// 1000 times too far: 9.3e12 answered a start before the epoch.)
const maxUnixMs = float64((math.MaxInt64 - 2*int64(agent.MaxPeriod)) / 1e6)

func unixMs(field string, ms float64) (time.Time, error) {
	if !(ms >= 0 && ms <= maxUnixMs) {
		return time.Time{}, fieldError(field, fmt.Errorf("%w: %v ms since the Unix epoch (want 0..%.0f: an answer up to two periods later must be an instant before 2262)", ErrInvalid, ms, maxUnixMs))
	}
	// Whole milliseconds and the fraction apart: ms·1e6 itself is past
	// float64's integers, and would round the instant by up to 128 ns.
	whole := math.Floor(ms)
	return time.Unix(0, int64(whole)*1e6+int64(math.Round((ms-whole)*1e6))), nil
}

// unixMsOf is the inverse of unixMs, to float64's resolution.
func unixMsOf(t time.Time) float64 {
	ns := t.UnixNano()
	return float64(ns/1e6) + float64(ns%1e6)/1e6
}

func toMs(d time.Duration) float64 { return float64(d) / 1e6 }

func (p AgentPlan) plan(prefix string) (agent.Plan, error) {
	period, err := duration(prefix+"period_ms", p.PeriodMs)
	if err != nil {
		return agent.Plan{}, err
	}
	shift, err := duration(prefix+"shift_ms", p.ShiftMs)
	if err != nil {
		return agent.Plan{}, err
	}
	comm, err := duration(prefix+"comm_offset_ms", p.CommOffsetMs)
	if err != nil {
		return agent.Plan{}, err
	}
	slack, err := duration(prefix+"slack_ms", p.SlackMs)
	if err != nil {
		return agent.Plan{}, err
	}
	free, err := duration(prefix+"free_comm_ms", p.FreeCommMs)
	if err != nil {
		return agent.Plan{}, err
	}
	ref, err := unixMs(prefix+"reference_unix_ms", p.ReferenceUnixMs)
	if err != nil {
		return agent.Plan{}, err
	}
	pl := agent.Plan{Reference: ref, Shift: shift, Period: period, CommOffset: comm, Slack: slack, FreeComm: free}
	switch {
	case period <= 0 || period > agent.MaxPeriod:
		return pl, fieldError(prefix+"period_ms", fmt.Errorf("%w: %v ms (want a period in (0, %v] ms)", agent.ErrInvalid, p.PeriodMs, float64(agent.MaxPeriod/time.Millisecond)))
	case shift >= period:
		return pl, fieldError(prefix+"shift_ms", fmt.Errorf("%w: %v ms is not below the period, %v ms", agent.ErrInvalid, p.ShiftMs, p.PeriodMs))
	case comm >= period:
		return pl, fieldError(prefix+"comm_offset_ms", fmt.Errorf("%w: %v ms is not below the period, %v ms", agent.ErrInvalid, p.CommOffsetMs, p.PeriodMs))
	case slack >= period:
		return pl, fieldError(prefix+"slack_ms", fmt.Errorf("%w: %v ms is not below the period, %v ms", agent.ErrInvalid, p.SlackMs, p.PeriodMs))
	case free > agent.MaxPeriod:
		return pl, fieldError(prefix+"free_comm_ms", fmt.Errorf("%w: %v ms", agent.ErrInvalid, p.FreeCommMs))
	}
	return pl, nil
}

func agentNew(_ context.Context, s *Session, req AgentNewRequest) (AgentHandle, error) {
	pl, err := req.AgentPlan.plan("")
	if err != nil {
		return AgentHandle{}, err
	}
	mode := agent.Pad // an Elastic agent without a clock would hold its slots as Pad does
	if req.Mode != "" {
		if mode, err = agent.ParseMode(req.Mode); err != nil {
			return AgentHandle{}, fieldError("mode", err)
		}
	}
	giveUp, err := agent.ParseGiveUp(req.GiveUp)
	if err != nil {
		return AgentHandle{}, fieldError("give_up", err)
	}
	cd, err := duration("cooldown_ms", req.CooldownMs)
	if err != nil {
		return AgentHandle{}, err
	}
	e := &agentEntry{elastic: mode == agent.Elastic}
	e.clock(&pl)
	a, err := agent.New(pl, agent.Options{Mode: mode, Threshold: req.Threshold, Cooldown: cd, GiveUp: giveUp, Clock: noClock{}})
	if errors.Is(err, agent.ErrInvalid) {
		return AgentHandle{}, fieldError("threshold", err)
	}
	if err != nil {
		return AgentHandle{}, err
	}
	e.a = a
	h, err := s.open(e)
	return AgentHandle{Handle: h}, err
}

// clock gives an Elastic agent's plan the plan's clock: the agents of a
// group live in different processes (or sessions), and the plan is what
// they share.
func (e *agentEntry) clock(p *agent.Plan) {
	if e.elastic {
		p.Group = agent.NewPlanGroup(p.Reference)
	}
}

// noClock is the clock of an agent behind a handle: its caller passes
// every instant, so nothing may read the host's clock.
type noClock struct{}

func (noClock) Now() time.Time                                   { panic("orrery: an agent behind a handle has no clock") }
func (noClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func withAgent(s *Session, h int64, f func(*agentEntry) (any, error)) (any, error) {
	return withKind(s, h, "agent", f)
}

func agentNext(_ context.Context, s *Session, req AgentNextRequest) (any, error) {
	ready, err := unixMs("ready_unix_ms", req.ReadyUnixMs)
	if err != nil {
		return nil, err
	}
	comm, err := duration("comm_ms", req.CommMs)
	if err != nil {
		return nil, err
	}
	return withAgent(s, req.Handle, func(e *agentEntry) (any, error) {
		if comm > 0 {
			e.a.Communicated(comm)
		}
		d := e.a.Next(ready)
		return AgentDecision{StartUnixMs: unixMsOf(d.Start), DelayMs: toMs(d.Delay), LateMs: toMs(d.Late), Adjusted: d.Adjusted, Released: d.Released}, nil
	})
}

func agentCommunicating(_ context.Context, s *Session, req AgentCommRequest) (any, error) {
	at, err := unixMs("at_unix_ms", req.AtUnixMs)
	if err != nil {
		return nil, err
	}
	return withAgent(s, req.Handle, func(e *agentEntry) (any, error) {
		return AgentDrift{DriftMs: toMs(e.a.Communicating(at))}, nil
	})
}

func agentSetPlan(_ context.Context, s *Session, req AgentPlanRequest) (any, error) {
	pl, err := req.Plan.plan("plan.")
	if err != nil {
		return nil, err
	}
	return withAgent(s, req.Handle, func(e *agentEntry) (any, error) {
		e.clock(&pl)
		if err := e.a.SetPlan(pl); err != nil {
			return nil, fieldError("plan", err)
		}
		return Empty{}, nil
	})
}

func agentStats(_ context.Context, s *Session, req AgentRequest) (any, error) {
	return withAgent(s, req.Handle, func(e *agentEntry) (any, error) {
		st := e.a.Stats()
		return AgentStats{Iterations: st.Iterations, Adjustments: st.Adjustments, PerMinute: st.PerMinute(), Replans: st.Replans,
			PaddingMs: toMs(st.Padding), AdjustDelayMs: toMs(st.AdjustDelay), Samples: st.Samples, Over: st.Over,
			MeanAbsMs: toMs(st.MeanAbs), MaxAbsMs: toMs(st.MaxAbs), LastDriftMs: toMs(st.LastDrift)}, nil
	})
}

func agentClose(_ context.Context, s *Session, req AgentRequest) (any, error) {
	if _, err := withAgent(s, req.Handle, func(*agentEntry) (any, error) { return nil, nil }); err != nil {
		return nil, err
	}
	return Empty{}, s.close(req.Handle)
}
