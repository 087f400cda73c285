package orrerywasm

import (
	"context"

	"github.com/orrery/orrery"
)

// Agent is CASSINI's time-shift agent (engine/cassini/agent) behind a handle of a
// Session: the module decides when each iteration starts for the instants
// the caller passes ("cassini.agent.*"). Go training loops use
// engine/cassini/agent directly; this type is the module's counterpart, for hosts
// that embed the module.
type Agent struct {
	s      *Session
	handle int64
}

// NewAgent starts an agent in the session ("cassini.agent.new").
func (s *Session) NewAgent(ctx context.Context, req orrery.AgentNewRequest) (*Agent, error) {
	r, err := invokeSession[orrery.AgentHandle](ctx, s, "cassini.agent.new", req)
	if err != nil {
		return nil, err
	}
	return &Agent{s: s, handle: r.Handle}, nil
}

// NewAgent starts an agent in a session of its own; closing the agent
// does not close it: use [Module.NewSession] and [Session.NewAgent] to
// share one.
func (m *Module) NewAgent(ctx context.Context, req orrery.AgentNewRequest) (*Agent, *Session, error) {
	s, err := m.NewSession(ctx)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.NewAgent(ctx, req)
	if err != nil {
		s.Close(ctx)
		return nil, nil, err
	}
	return a, s, nil
}

// Next decides when the iteration the loop is ready to start at
// readyUnixMs starts ("cassini.agent.next").
func (a *Agent) Next(ctx context.Context, readyUnixMs float64) (orrery.AgentDecision, error) {
	return invokeSession[orrery.AgentDecision](ctx, a.s, "cassini.agent.next", orrery.AgentNextRequest{Handle: a.handle, ReadyUnixMs: readyUnixMs})
}

// NextAfter is Next for a loop that also reports how long its last
// iteration's communication took (an elastic agent weighs it against its
// plan's free_comm_ms).
func (a *Agent) NextAfter(ctx context.Context, readyUnixMs, commMs float64) (orrery.AgentDecision, error) {
	return invokeSession[orrery.AgentDecision](ctx, a.s, "cassini.agent.next", orrery.AgentNextRequest{Handle: a.handle, ReadyUnixMs: readyUnixMs, CommMs: commMs})
}

// Communicating records a communication start and returns its drift
// ("cassini.agent.communicating").
func (a *Agent) Communicating(ctx context.Context, atUnixMs float64) (float64, error) {
	r, err := invokeSession[orrery.AgentDrift](ctx, a.s, "cassini.agent.communicating", orrery.AgentCommRequest{Handle: a.handle, AtUnixMs: atUnixMs})
	return r.DriftMs, err
}

// SetPlan installs a new plan ("cassini.agent.set_plan").
func (a *Agent) SetPlan(ctx context.Context, plan orrery.AgentPlan) error {
	_, err := invokeSession[struct{}](ctx, a.s, "cassini.agent.set_plan", orrery.AgentPlanRequest{Handle: a.handle, Plan: plan})
	return err
}

// Stats returns the agent's counters ("cassini.agent.stats").
func (a *Agent) Stats(ctx context.Context) (orrery.AgentStats, error) {
	return invokeSession[orrery.AgentStats](ctx, a.s, "cassini.agent.stats", orrery.AgentRequest{Handle: a.handle})
}

// Close releases the agent's handle ("cassini.agent.close").
func (a *Agent) Close(ctx context.Context) error {
	_, err := invokeSession[struct{}](ctx, a.s, "cassini.agent.close", orrery.AgentRequest{Handle: a.handle})
	return err
}
