package orrerywasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/abi"
)

// Session is one instance of the module kept apart from the pool, for the
// stateful operations: their handles live in the instance that made them
// (it is an orrery.Session), so every call on a handle must reach that
// instance. A Session is safe for concurrent use; its calls run one at a
// time. Close it when done.
//
// An instance that traps loses its handles: the Session is then closed,
// and its calls return errors wrapping [ErrTrap].
type Session struct {
	m  *Module
	mu sync.Mutex
	in *instance // nil once closed
}

// NewSession starts an instance of its own (a few milliseconds) outside
// the pool.
func (m *Module) NewSession(ctx context.Context) (*Session, error) {
	if m.closed.Load() {
		return nil, errClosed
	}
	in, err := m.instantiate(ctx)
	if err != nil {
		return nil, err
	}
	return &Session{m: m, in: in}, nil
}

// Handle runs one envelope in the session's instance, as [Module.Handle]
// does in a pooled one.
func (s *Session) Handle(ctx context.Context, envelope []byte) ([]byte, error) {
	if len(envelope) > orrery.MaxRequestBytes {
		return orrery.Handle(ctx, envelope), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.in == nil || s.m.closed.Load() {
		return nil, errClosed
	}
	out, err := s.in.handle(ctx, envelope)
	switch {
	case errors.Is(err, ErrTrap):
		s.in.mod.Close(context.WithoutCancel(ctx))
		s.in = nil
	case errors.Is(err, errNoRoom):
		return nil, fmt.Errorf("orrerywasm: no room for a %d-byte request (the module allows %d)", len(envelope), abi.MaxBlock)
	}
	return out, err
}

// Call runs op on the JSON request in the session's instance, as
// [Module.Call] does.
func (s *Session) Call(ctx context.Context, op string, request []byte) ([]byte, error) {
	return callWith(ctx, s.Handle, op, request)
}

// Close closes the session's instance and with it every handle.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.in == nil {
		return nil
	}
	err := s.in.mod.Close(ctx)
	s.in = nil
	return err
}

// invoke is Invoke on the session.
func invokeSession[Resp any](ctx context.Context, s *Session, op string, request any) (Resp, error) {
	var resp Resp
	req, err := json.Marshal(request)
	if err != nil {
		return resp, fmt.Errorf("orrerywasm: %s: encoding the request: %w", op, err)
	}
	out, err := s.Call(ctx, op, req)
	if err != nil {
		return resp, err
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return resp, fmt.Errorf("orrerywasm: %s: decoding the response: %w", op, err)
	}
	return resp, nil
}

// Scheduler is orrery.Scheduler, Shockwave's incremental round scheduler,
// running in the module: the same methods with the same answers, each one
// call of a "shockwave.scheduler.*" operation. Its job ids are integers,
// as orrery.Scheduler's are (the schema also takes strings; see
// orrery.SchedulerJob). It is safe for concurrent use, its calls running
// one at a time. Close it when done.
type Scheduler struct {
	s      *Session
	own    bool // the Session is the Scheduler's own: Close closes it
	handle int64
}

// NewScheduler starts a Scheduler for a cluster of gpus GPUs at round 0
// ("shockwave.scheduler.new") in an instance of its own.
func (m *Module) NewScheduler(ctx context.Context, gpus int, cfg orrery.ShockwaveConfig) (*Scheduler, error) {
	s, err := m.NewSession(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := s.NewScheduler(ctx, gpus, cfg)
	if err != nil {
		s.Close(ctx)
		return nil, err
	}
	sc.own = true
	return sc, nil
}

// NewScheduler starts a Scheduler in the session; closing the session
// closes it.
func (s *Session) NewScheduler(ctx context.Context, gpus int, cfg orrery.ShockwaveConfig) (*Scheduler, error) {
	r, err := invokeSession[orrery.SchedulerHandle](ctx, s, "shockwave.scheduler.new", orrery.SchedulerNewRequest{GPUs: gpus, Config: cfg})
	if err != nil {
		return nil, err
	}
	return &Scheduler{s: s, handle: r.Handle}, nil
}

// Handle returns the scheduler's handle in its session.
func (sc *Scheduler) Handle() int64 { return sc.handle }

// Add admits a job ("shockwave.scheduler.add", add_metadata).
func (sc *Scheduler) Add(ctx context.Context, job orrery.ShockwaveJob) error {
	_, err := invokeSession[orrery.SchedulerState](ctx, sc.s, "shockwave.scheduler.add",
		orrery.SchedulerAddRequest{Handle: sc.handle, Job: orrery.SchedulerJob{ID: orrery.IntID(job.ID), ShockwaveJob: job}})
	return err
}

// Remove retires a job ("shockwave.scheduler.remove", remove_metadata).
func (sc *Scheduler) Remove(ctx context.Context, id int) error {
	_, err := invokeSession[orrery.SchedulerState](ctx, sc.s, "shockwave.scheduler.remove",
		orrery.SchedulerRemoveRequest{Handle: sc.handle, ID: orrery.IntID(id)})
	return err
}

// Progress sets a job's completed epochs ("shockwave.scheduler.progress",
// schedule_progress).
func (sc *Scheduler) Progress(ctx context.Context, id, epochs int) error {
	_, err := invokeSession[orrery.SchedulerState](ctx, sc.s, "shockwave.scheduler.progress",
		orrery.SchedulerProgressRequest{Handle: sc.handle, ID: orrery.IntID(id), Epochs: epochs})
	return err
}

// Observe records a job's measured throughput
// ("shockwave.scheduler.observe").
func (sc *Scheduler) Observe(ctx context.Context, id int, sample orrery.ThroughputSpec) error {
	_, err := invokeSession[orrery.SchedulerState](ctx, sc.s, "shockwave.scheduler.observe",
		orrery.SchedulerObserveRequest{Handle: sc.handle, ID: orrery.IntID(id), Sample: sample})
	return err
}

// EndRound advances to the next round ("shockwave.scheduler.end_round",
// increment_round_ptr) and returns it.
func (sc *Scheduler) EndRound(ctx context.Context) (int, error) {
	r, err := invokeSession[orrery.SchedulerState](ctx, sc.s, "shockwave.scheduler.end_round", orrery.SchedulerRequest{Handle: sc.handle})
	return r.Round, err
}

// Resolve forces a re-plan at the next Schedule
// ("shockwave.scheduler.resolve", set_resolve).
func (sc *Scheduler) Resolve(ctx context.Context) error {
	_, err := invokeSession[orrery.SchedulerState](ctx, sc.s, "shockwave.scheduler.resolve", orrery.SchedulerRequest{Handle: sc.handle})
	return err
}

// Schedule returns the ids of the jobs to run in the current round
// ("shockwave.scheduler.schedule", round_schedule).
func (sc *Scheduler) Schedule(ctx context.Context) ([]int, error) {
	r, err := invokeSession[struct {
		Jobs []int `json:"jobs"`
	}](ctx, sc.s, "shockwave.scheduler.schedule", orrery.SchedulerRequest{Handle: sc.handle})
	return r.Jobs, err
}

// LastPlan returns the most recent plan ("shockwave.scheduler.last_plan"),
// and false before the first.
func (sc *Scheduler) LastPlan(ctx context.Context) (orrery.ShockwavePlanResponse, bool, error) {
	r, err := invokeSession[struct {
		Plan *orrery.ShockwavePlanResponse `json:"plan"`
	}](ctx, sc.s, "shockwave.scheduler.last_plan", orrery.SchedulerRequest{Handle: sc.handle})
	if err != nil || r.Plan == nil {
		return orrery.ShockwavePlanResponse{}, false, err
	}
	return *r.Plan, true, nil
}

// Close releases the scheduler ("shockwave.scheduler.close"), and its
// instance when it has one of its own.
func (sc *Scheduler) Close(ctx context.Context) error {
	_, err := invokeSession[orrery.SchedulerState](ctx, sc.s, "shockwave.scheduler.close", orrery.SchedulerRequest{Handle: sc.handle})
	if sc.own {
		if cerr := sc.s.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}
