package orrery

import (
	"context"
	"reflect"
	"slices"
	"strings"
)

// Op describes one operation of schema v1.
type Op struct {
	Name    string // "cassini.link": the envelope's "op"; the command line's "orrery cassini link"
	Func    string // "Link": the typed function of this package that runs it
	Summary string // one line: what it does

	// Session marks a stateful operation: it runs only on a [Session]
	// (Func is then "NewScheduler" or a method, "Scheduler.Add"), and
	// the command line has no command for it.
	Session bool
}

// op is an entry of the registry: an Op and how to run it on a JSON request.
type op struct {
	Op
	handler
}

// handler runs an operation on a JSON request; req and resp are its
// request and response types, for the published JSON Schema. exec's
// checked says the request's syntax was checked already, with the
// envelope around it (see decodeRequest).
type handler struct {
	exec      func(ctx context.Context, s *Session, request []byte, checked bool) (any, error)
	req, resp reflect.Type
	timed     bool // its request may carry a time limit, which counts from the call's start
}

// timed marks h's requests as carrying a time limit.
func timed(h handler) handler {
	h.timed = true
	return h
}

// run runs the operation on a request nothing has checked yet.
func (h handler) run(ctx context.Context, s *Session, request []byte) (any, error) {
	return h.exec(ctx, s, request, false)
}

// registry is the one table of operations. Call and Handle dispatch through
// it, the command line builds its JSON commands from Ops, the WebAssembly
// module and the C library answer through Handle, and a test fails when a
// binding (Go, JavaScript with its types, Python) lacks an entry. Sorted by
// name.
var registry = []op{
	{Op{"cassini.agent.close", "Agent.Close", "release an agent's handle", true}, sessionOp[AgentRequest, Empty](agentClose)},
	{Op{"cassini.agent.communicating", "Agent.Communicating", "record that an iteration's communication started; answers its drift", true}, sessionOp[AgentCommRequest, AgentDrift](agentCommunicating)},
	{Op{"cassini.agent.new", "NewAgent", "start CASSINI's time-shift agent for a job; answers its handle", true}, sessionOp[AgentNewRequest, AgentHandle](agentNew)},
	{Op{"cassini.agent.next", "Agent.Next", "when a job's next iteration starts (the loop sleeps until then)", true}, sessionOp[AgentNextRequest, AgentDecision](agentNext)},
	{Op{"cassini.agent.set_plan", "Agent.SetPlan", "install an agent's new shift or period", true}, sessionOp[AgentPlanRequest, Empty](agentSetPlan)},
	{Op{"cassini.agent.stats", "Agent.Stats", "an agent's counters: adjustments, padding, drift", true}, sessionOp[AgentRequest, AgentStats](agentStats)},
	{Op{"cassini.link", "Link", "optimize the time shifts of jobs sharing one link", false}, timed(jsonOp(linkOp))},
	{Op{"cassini.profile", "Profile", "a job's quantized iteration, and the period found in a measured series or events", false}, timed(jsonOp(profileOp))},
	{Op{"cassini.rank", "Rank", "rank placement candidates by link compatibility", false}, timed(jsonOp(rankOp))},
	{Op{"shockwave.plan", "Plan", "plan the next rounds of a GPU cluster with Shockwave", false}, timed(jsonOp(planOp))},
	{Op{"shockwave.predict", "Predict", "predict the jobs' remaining runtimes and fair finish times", false}, jsonOp(predictOp)},
	{Op{"shockwave.scheduler.add", "Scheduler.Add", "admit a job to a scheduler (add_metadata)", true}, sessionOp[SchedulerAddRequest, SchedulerState](schedulerAdd)},
	{Op{"shockwave.scheduler.close", "Scheduler.Close", "release a scheduler's handle", true}, sessionOp[SchedulerRequest, SchedulerState](schedulerClose)},
	{Op{"shockwave.scheduler.end_round", "Scheduler.EndRound", "advance a scheduler to its next round (increment_round_ptr)", true}, sessionOp[SchedulerRequest, SchedulerState](schedulerEndRound)},
	{Op{"shockwave.scheduler.last_plan", "Scheduler.LastPlan", "a scheduler's most recent plan", true}, sessionOp[SchedulerRequest, SchedulerLastPlan](schedulerLastPlan)},
	{Op{"shockwave.scheduler.new", "NewScheduler", "start Shockwave's incremental scheduler; answers its handle", true}, sessionOp[SchedulerNewRequest, SchedulerHandle](schedulerNew)},
	{Op{"shockwave.scheduler.observe", "Scheduler.Observe", "record a job's measured throughput, for calibration", true}, sessionOp[SchedulerObserveRequest, SchedulerState](schedulerObserve)},
	{Op{"shockwave.scheduler.progress", "Scheduler.Progress", "set a job's completed epochs (schedule_progress)", true}, sessionOp[SchedulerProgressRequest, SchedulerState](schedulerProgress)},
	{Op{"shockwave.scheduler.remove", "Scheduler.Remove", "retire a job from a scheduler (remove_metadata)", true}, sessionOp[SchedulerRemoveRequest, SchedulerState](schedulerRemove)},
	{Op{"shockwave.scheduler.resolve", "Scheduler.Resolve", "force a re-plan at a scheduler's next schedule (set_resolve)", true}, sessionOp[SchedulerRequest, SchedulerState](schedulerResolve)},
	{Op{"shockwave.scheduler.schedule", "Scheduler.Schedule", "the jobs to run in a scheduler's current round (round_schedule)", true}, timed(sessionOp[SchedulerRequest, SchedulerSchedule](schedulerSchedule))},
}

// jsonOp adapts a typed operation to JSON: the request is decoded strictly
// (see Call) into a Req, and the typed function's response is what Call
// encodes. f is the typed function without its first check (checkFloats:
// the decoded request cannot hold NaN, an infinity or a subnormal, which the
// key scan refused already); the JSON form adds nothing but decoding, so
// the two have the same semantics by construction.
func jsonOp[Req, Resp any](f func(context.Context, Req) (Resp, error)) handler {
	return handler{req: reflect.TypeFor[Req](), resp: reflect.TypeFor[Resp](), exec: func(ctx context.Context, _ *Session, data []byte, checked bool) (any, error) {
		var req Req
		if err := decodeRequest(data, &req, checked); err != nil {
			return nil, err
		}
		resp, err := f(ctx, req)
		if err != nil {
			return nil, err
		}
		return resp, nil
	}}
}

// sessionOp is jsonOp for a stateful operation: it needs a Session. Its
// function answers a Resp (declared for the schema; TestSessionResponses
// decodes every session answer of the corpus into it strictly).
func sessionOp[Req, Resp any, F any](f func(context.Context, *Session, Req) (F, error)) handler {
	return handler{req: reflect.TypeFor[Req](), resp: reflect.TypeFor[Resp](), exec: func(ctx context.Context, s *Session, data []byte, checked bool) (any, error) {
		if s == nil {
			return nil, &Error{Code: CodeInvalid, Field: "op", Message: "a stateful operation keeps its scheduler between calls: run it on a Session (orrery.NewSession), as the WebAssembly module, the C library and the bindings do"}
		}
		var req Req
		if err := decodeRequest(data, &req, checked); err != nil {
			return nil, err
		}
		resp, err := f(ctx, s, req)
		if err != nil {
			return nil, err
		}
		return resp, nil
	}}
}

// Ops lists the operations of schema v1, sorted by name.
func Ops() []Op {
	out := make([]Op, len(registry))
	for i, o := range registry {
		out[i] = o.Op
	}
	return out
}

func lookup(name string) (op, bool) {
	i, ok := slices.BinarySearchFunc(registry, name, func(o op, name string) int { return strings.Compare(o.Name, name) })
	if !ok {
		return op{}, false
	}
	return registry[i], true
}

func opNames() []string {
	names := make([]string, len(registry))
	for i, o := range registry {
		names[i] = o.Name
	}
	return names
}
