package orrery

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/round"
)

// Scheduler is Shockwave's incremental round scheduler, the counterpart of
// the authors' ShockwaveScheduler (scheduler/shockwave.py): jobs arrive and
// leave, report progress and throughput, and each round asks which jobs
// run. It keeps the history [Plan] takes from its caller (each job's
// finish-time estimates, throughput samples and calibrated durations) and
// re-plans as the authors do: when a job arrives or completes (both also
// re-estimate the fair finish times), every ReoptRounds rounds (8), and
// when the current round leaves the cached window; otherwise it answers
// from the cached plan.
//
//	add_metadata          → Add
//	remove_metadata       → Remove
//	schedule_progress     → Progress
//	(throughput timeline) → Observe
//	increment_round_ptr   → EndRound
//	round_schedule        → Schedule
//
// What Add and Observe accept can never make a later Schedule fail: a job
// or a sample is checked at the door, as Plan checks a job, and a refused
// call leaves the Scheduler as it was. Errors are *Error values naming the
// argument's field in the schema's words ("job.epoch_dur_s[3]",
// "sample.it_per_s", "epochs").
//
// A Scheduler is not safe for concurrent use.
type Scheduler struct {
	s     *round.Scheduler
	limit time.Duration // of each re-plan
	ids   []int         // the last Schedule's answer, owned by the caller
}

// NewScheduler returns a Scheduler for a cluster of gpus GPUs at round 0.
// cfg is shockwave.plan's configuration, with ReoptRounds for the
// periodic re-plan; its time limit bounds each re-plan.
func NewScheduler(gpus int, cfg ShockwaveConfig) (*Scheduler, error) {
	if err := checkFloats("config", &cfg); err != nil {
		return nil, err
	}
	rc, limit, err := cfg.config()
	if err != nil {
		return nil, err
	}
	s, err := round.New(gpus, rc)
	if err != nil {
		return nil, schedulerError(err)
	}
	return &Scheduler{s: s, limit: limit}, nil
}

// Add admits a job (add_metadata): the next Schedule re-plans and
// re-estimates every job's finish time. Its finish and timeline histories,
// if any, are taken as the job's own. The Scheduler keeps copies of the
// job's lists.
func (s *Scheduler) Add(job ShockwaveJob) error {
	if err := checkFloats("job", &job); err != nil {
		return err
	}
	return schedulerError(s.s.Add(job.job()))
}

// Remove retires a completed or cancelled job (remove_metadata): the next
// Schedule re-plans and re-estimates.
func (s *Scheduler) Remove(id int) error { return schedulerError(s.s.Remove(id)) }

// Progress sets a job's completed epochs (schedule_progress). It does not
// trigger a re-plan.
func (s *Scheduler) Progress(id, epochs int) error {
	return schedulerError(s.s.Progress(id, epochs))
}

// Observe records the throughput of a job's lease, for calibration: the
// lease that ended in sample.Round (the current round's lease ends in
// Round()+1), at sample.ItPerS iterations per second with batch size
// sample.BS. Rounds must increase.
func (s *Scheduler) Observe(id int, sample ThroughputSpec) error {
	if err := checkFloats("sample", &sample); err != nil {
		return err
	}
	return schedulerError(s.s.Observe(id, sample.sample()))
}

// EndRound advances to the next round (increment_round_ptr); every
// ReoptRounds rounds it forces a re-plan. It fails only past the last
// round a plan may have (2^40), leaving the round as it was.
func (s *Scheduler) EndRound() error { return schedulerError(s.s.EndRound()) }

// Resolve forces a re-plan at the next Schedule (set_resolve), for a
// caller that decides when (ReoptRounds -1 turns the periodic re-plan off).
func (s *Scheduler) Resolve() { s.s.Resolve() }

// Round returns the index of the current round.
func (s *Scheduler) Round() int { return s.s.Round() }

// Len returns the number of active jobs.
func (s *Scheduler) Len() int { return s.s.Len() }

// Schedule returns the IDs of the jobs to run in the current round: the
// planned ones, then the backfilled ones. It re-plans when due; a context
// that ends during a re-plan (or the configuration's time limit) gives the
// best plan found. The slice is the caller's until the next Schedule.
func (s *Scheduler) Schedule(ctx context.Context) ([]int, error) {
	ctx, cancel := withLimit(ctx, s.limit)
	defer cancel()
	ids, err := s.s.Schedule(ctx)
	if errors.Is(err, market.ErrTimeLimit) {
		return nil, timeLimitError("config.time_limit_ms", s.limit, "re-plan (predictions and the market's tables)")
	}
	if err != nil {
		return nil, schedulerError(err)
	}
	s.ids = append(s.ids[:0], ids...)
	return slices.Clip(s.ids), nil
}

// LastPlan returns the most recent plan, as shockwave.plan answers it, and
// false before the first.
func (s *Scheduler) LastPlan() (ShockwavePlanResponse, bool) {
	res := s.s.LastPlan()
	if res == nil {
		return ShockwavePlanResponse{}, false
	}
	return planResponse(res), true
}

// schedulerError names a Scheduler error's field in the schema's words:
// Add's argument is "job", Observe's "sample", the rest keep their names.
func schedulerError(err error) error {
	if err == nil {
		return nil
	}
	var fe *round.FieldError
	if !errors.As(err, &fe) {
		return &Error{Code: CodeInvalid, Message: message(err), err: err}
	}
	var field string
	var ok bool
	switch {
	case strings.HasPrefix(fe.Field, "j."):
		var p string
		p, ok = jsonPath(&round.FieldError{Job: 0, Field: fe.Field[2:]})
		field = "job" + strings.TrimPrefix(p, "jobs[0]")
	case strings.HasPrefix(fe.Field, "sample."):
		var p string
		p, ok = jsonPath(&round.FieldError{Job: 0, Field: "Timeline[0]." + fe.Field[len("sample."):]})
		field = "sample." + strings.TrimPrefix(p, "jobs[0].timeline[0].")
	case fe.Field == "sample" || fe.Field == "id" || fe.Field == "epochs" || fe.Field == "gpus":
		field, ok = fe.Field, true
	case fe.Field == "round": // EndRound's: the scheduler's own round
		field, ok = "", true
	case fe.Field == "j": // the job as a whole: one too many
		field, ok = "job", true
	case fe.Field == "cfg.ReoptRounds":
		field, ok = jsonPath(&round.FieldError{Job: -1, Field: "Config.ReoptRounds"})
	default:
		field, ok = jsonPath(fe) // the configuration, checked by NewScheduler
	}
	if !ok {
		return &Error{Code: CodeInternal, Message: "no schema name for " + err.Error(), err: err}
	}
	code := CodeInvalid
	if errors.Is(err, market.ErrLimit) {
		code = CodeLimit
	}
	return &Error{Code: code, Field: field, Message: fieldMessage(fe.Err), err: err}
}
