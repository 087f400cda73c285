package orrery

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/round"
)

// observeBytes is what a sample adds to a job's state.
const observeBytes = 24

// The stateful operations of schema v1: Shockwave's incremental
// [Scheduler] across the JSON boundary, so that every host (the
// WebAssembly module, the C library, JavaScript, Python) runs the Go
// scheduler itself. They run on a [Session]:
//
//	shockwave.scheduler.new        {"gpus": 32, "config": {...}}          → {"handle": 1}
//	shockwave.scheduler.add        {"handle": 1, "job": {...}}            → {"round": 0, "active": 1}
//	shockwave.scheduler.remove     {"handle": 1, "id": 7}                 → {"round": 0, "active": 0}
//	shockwave.scheduler.progress   {"handle": 1, "id": 7, "epochs": 12}   → {"round": 0, "active": 1}
//	shockwave.scheduler.observe    {"handle": 1, "id": 7, "sample": {"round": 3, "it_per_s": 10.5, "bs": 32}}
//	shockwave.scheduler.end_round  {"handle": 1}                          → {"round": 1, "active": 1}
//	shockwave.scheduler.resolve    {"handle": 1}                          → {"round": 1, "active": 1}
//	shockwave.scheduler.schedule   {"handle": 1}                          → {"round": 1, "jobs": [7, 9]}
//	shockwave.scheduler.last_plan  {"handle": 1}                          → {"plan": {...}} or {}
//	shockwave.scheduler.close      {"handle": 1}                          → {"round": 1, "active": 1}
//
// "config" is shockwave.plan's, with "reopt_rounds"; a job is
// shockwave.plan's job whose "id" is an integer or a string (one kind per
// scheduler, fixed by its first add). Errors name the request's field by
// its JSON path ("job.epoch_dur_s[3]", "sample.it_per_s", "id",
// "handle"); a refused call changes nothing.

// SchedulerNewRequest is the request of "shockwave.scheduler.new": a
// cluster of GPUs GPUs at round 0, planned with Config.
type SchedulerNewRequest struct {
	GPUs   int             `json:"gpus"`
	Config ShockwaveConfig `json:"config"`
}

// SchedulerHandle is the response of "shockwave.scheduler.new".
type SchedulerHandle struct {
	Handle int64 `json:"handle"`
}

// SchedulerRequest is the request of the operations that take only the
// handle: end_round, resolve, schedule, last_plan and close.
type SchedulerRequest struct {
	Handle int64 `json:"handle"`
}

// SchedulerJob is a job of "shockwave.scheduler.add": shockwave.plan's
// job with an integer or string id. The embedded job's own ID is not part
// of the schema (this ID shadows it).
type SchedulerJob struct {
	ID JobID `json:"id"`
	ShockwaveJob
}

// SchedulerAddRequest is the request of "shockwave.scheduler.add".
type SchedulerAddRequest struct {
	Handle int64        `json:"handle"`
	Job    SchedulerJob `json:"job"`
}

// SchedulerRemoveRequest is the request of "shockwave.scheduler.remove".
type SchedulerRemoveRequest struct {
	Handle int64 `json:"handle"`
	ID     JobID `json:"id"`
}

// SchedulerProgressRequest is the request of
// "shockwave.scheduler.progress": job ID has completed Epochs epochs.
type SchedulerProgressRequest struct {
	Handle int64 `json:"handle"`
	ID     JobID `json:"id"`
	Epochs int   `json:"epochs"`
}

// SchedulerObserveRequest is the request of "shockwave.scheduler.observe":
// a throughput sample of job ID's lease.
type SchedulerObserveRequest struct {
	Handle int64          `json:"handle"`
	ID     JobID          `json:"id"`
	Sample ThroughputSpec `json:"sample"`
}

// SchedulerState is the response of the operations that change a
// scheduler: its current round and number of active jobs afterwards.
type SchedulerState struct {
	Round  int `json:"round"`
	Active int `json:"active"`
}

// SchedulerSchedule is the response of "shockwave.scheduler.schedule": the
// ids of the jobs to run in round Round, planned ones first.
type SchedulerSchedule struct {
	Round int     `json:"round"`
	Jobs  []JobID `json:"jobs"`
}

// SchedulerLastPlan is the response of "shockwave.scheduler.last_plan":
// the most recent plan, absent before the first.
type SchedulerLastPlan struct {
	Plan *SchedulerPlan `json:"plan,omitempty"`
}

// SchedulerPlan is shockwave.plan's response with the scheduler's ids. Of
// a scheduler with integer ids it is byte for byte what shockwave.plan
// answers for the same state.
type SchedulerPlan struct {
	ShockwavePlanResponse
	Rounds   [][]JobID          `json:"rounds"`
	Backfill [][]JobID          `json:"backfill"`
	Jobs     []SchedulerJobPlan `json:"jobs"`
}

// SchedulerJobPlan is one job's part of a SchedulerPlan.
type SchedulerJobPlan struct {
	ID JobID `json:"id"`
	ShockwaveJobPlan
}

func schedulerNew(_ context.Context, s *Session, req SchedulerNewRequest) (SchedulerHandle, error) {
	sc, err := NewScheduler(req.GPUs, req.Config)
	if err != nil {
		return SchedulerHandle{}, err
	}
	window := market.DefaultRounds
	if req.Config.Rounds != nil {
		window = *req.Config.Rounds
	}
	h, err := s.open(&idScheduler{s: sc, window: window})
	return SchedulerHandle{Handle: h}, err
}

// state is the response of a call that changed scheduler m.
func (m *idScheduler) state() SchedulerState {
	return SchedulerState{Round: m.s.Round(), Active: m.s.Len()}
}

func schedulerAdd(_ context.Context, s *Session, req SchedulerAddRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		n, active, err := m.internal("job.id", &req.Job.ID)
		if err != nil {
			return nil, err
		}
		if active {
			return nil, fieldError("job.id", fmt.Errorf("%w: %s is already active", ErrDuplicateID, req.Job.ID))
		}
		str, isStr := req.Job.ID.Str()
		idBytes := int64(idCost / 2)
		if isStr {
			n, idBytes = m.nextID, int64(len(str))+idCost
		}
		if ids := (m.planBytes + jsonLen(req.Job.ID)) * int64(2*m.window+1); ids > MaxPlanIDBytes {
			return nil, fieldError("job.id", fmt.Errorf("%w: with this job, a plan of this scheduler would list %d bytes of ids (%d rounds, twice each, and the jobs), above %d", ErrTooLarge, ids, m.window, MaxPlanIDBytes))
		}
		job := req.Job.ShockwaveJob
		job.ID = n
		rj := job.job()
		need := round.JobBytes(&rj) + idBytes
		if err := s.reserve(need, 1); err != nil {
			return nil, fieldError("job", err)
		}
		if err := m.s.Add(job); err != nil {
			s.release(need, 1)
			return nil, err
		}
		m.counted += need
		m.idBytes += idBytes
		m.planBytes += jsonLen(req.Job.ID)
		switch {
		case isStr:
			if m.ints == nil {
				m.ints, m.names = map[string]int{}, map[int]string{}
			}
			m.kind, m.ints[str], m.names[n] = kindStr, n, str
			m.nextID++
		default:
			if m.live == nil {
				m.live = map[int]bool{}
			}
			m.kind, m.live[n] = kindInt, true
		}
		m.sync(s)
		return m.state(), nil
	})
}

func schedulerRemove(_ context.Context, s *Session, req SchedulerRemoveRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		n, err := m.active("id", &req.ID)
		if err != nil {
			return nil, err
		}
		if err := m.s.Remove(n); err != nil {
			return nil, err
		}
		if str, ok := req.ID.Str(); ok {
			// names keeps it until a plan made after this one replaces
			// the last, which may list it.
			delete(m.ints, str)
			m.idBytes -= idCost / 2
			if m.forget(); n >= m.planned {
				// Added since the last plan: no plan lists it.
				m.idBytes -= int64(len(str)) + idCost/2
				delete(m.names, n)
			} else {
				m.retired, m.retiredAt = append(m.retired, n), m.s.s.Plans()
			}
		} else {
			delete(m.live, n)
			m.idBytes -= idCost / 2
		}
		m.planBytes -= jsonLen(req.ID)
		s.jobs.Add(-1)
		m.sync(s)
		return m.state(), nil
	})
}

func schedulerProgress(_ context.Context, s *Session, req SchedulerProgressRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		n, err := m.active("id", &req.ID)
		if err != nil {
			return nil, err
		}
		if err := m.s.Progress(n, req.Epochs); err != nil {
			return nil, err
		}
		return m.state(), nil
	})
}

func schedulerObserve(_ context.Context, s *Session, req SchedulerObserveRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		n, err := m.active("id", &req.ID)
		if err != nil {
			return nil, err
		}
		if err := s.reserve(observeBytes, 0); err != nil {
			return nil, fieldError("sample", err)
		}
		if err := m.s.Observe(n, req.Sample); err != nil {
			s.release(observeBytes, 0)
			return nil, err
		}
		m.counted += observeBytes
		m.sync(s)
		return m.state(), nil
	})
}

func schedulerEndRound(_ context.Context, s *Session, req SchedulerRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		if err := m.s.EndRound(); err != nil {
			return nil, err
		}
		return m.state(), nil
	})
}

func schedulerResolve(_ context.Context, s *Session, req SchedulerRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		m.s.Resolve()
		return m.state(), nil
	})
}

func schedulerSchedule(ctx context.Context, s *Session, req SchedulerRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		ids, err := m.s.Schedule(ctx)
		m.forget()
		m.sync(s)
		if err != nil {
			return nil, err
		}
		return SchedulerSchedule{Round: m.s.Round(), Jobs: m.externals(ids)}, nil
	})
}

func schedulerLastPlan(_ context.Context, s *Session, req SchedulerRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		p, ok := m.s.LastPlan()
		if !ok {
			return SchedulerLastPlan{}, nil
		}
		sp := &SchedulerPlan{ShockwavePlanResponse: p, Rounds: make([][]JobID, len(p.Rounds)),
			Backfill: make([][]JobID, len(p.Backfill)), Jobs: make([]SchedulerJobPlan, len(p.Jobs))}
		for t := range p.Rounds {
			sp.Rounds[t] = m.externals(p.Rounds[t])
			sp.Backfill[t] = m.externals(p.Backfill[t])
		}
		for i, j := range p.Jobs {
			sp.Jobs[i] = SchedulerJobPlan{ID: m.external(j.ID), ShockwaveJobPlan: j}
		}
		sp.ShockwavePlanResponse.Rounds, sp.ShockwavePlanResponse.Backfill, sp.ShockwavePlanResponse.Jobs = nil, nil, nil
		return SchedulerLastPlan{Plan: sp}, nil
	})
}

func schedulerClose(_ context.Context, s *Session, req SchedulerRequest) (any, error) {
	return s.with(req.Handle, func(m *idScheduler) (any, error) {
		// Closed under the handle's lock, so that no call on it runs
		// between the count given back and the close.
		if err := s.close(req.Handle); err != nil {
			return nil, err
		}
		st := m.state()
		s.release(m.counted, int64(st.Active))
		return st, nil
	})
}
