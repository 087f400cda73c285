package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
)

// Defaults of [Options], the authors' simulator's.
const (
	DefaultRoundSeconds   = 120.0 // --time_per_iteration
	DefaultRestartPenalty = 20.0  // checkpoint + restore overhead of a resumed job, s
	DefaultForceComplete  = 1.5   // a job is done once it ran 1.5× its isolated time
	DefaultMaxRounds      = 1 << 20
	// penaltyWindow: the penalty applies only to leases longer than
	// Δ − 5 s (upstream: a shorter lease means the job is finishing).
	penaltyWindow = 5.0
	// maxIdleRounds bounds consecutive rounds in which active jobs are left
	// idle with no arrival to wait for.
	maxIdleRounds = 100000
)

// Options configure a run. The zero value of each field means the
// authors' setting; only GPUs is required.
type Options struct {
	GPUs int // M, GPUs in the cluster (single-GPU servers)
	// RoundSeconds is the round length Δ; 0 means 120 s.
	RoundSeconds float64
	// RestartPenalty is the time lost by a job that did not run in the
	// previous round; 0 means 20 s, a negative value disables it.
	RestartPenalty float64
	// ForceComplete is the factor of the authors' "over the deadline" hack:
	// a job whose booked run time exceeds ⌊factor·T_iso⌋ is completed even
	// with steps left. 0 means 1.5; a negative value disables the hack.
	ForceComplete float64
	// MaxRounds stops a run that has not finished after this many rounds
	// (ErrStalled); 0 means 2^20.
	MaxRounds int
	// RecordSchedule keeps the IDs of the jobs run in every round in
	// [Result.Schedule].
	RecordSchedule bool
	// AuthorsRescaleDrop keeps a flaw of the authors' batch-size change,
	// for comparisons with their result files. The change rounds the
	// completed epochs up, so a job that changes batch size in its last
	// epoch can end up with more steps done than its new total. By default
	// (false) such a job completes at the end of the lease that changed its
	// batch size; with AuthorsRescaleDrop it never finishes, as upstream:
	// its leases run no step and fail, and after five it is dropped (its
	// JCT still counts, ending at its last successful lease).
	AuthorsRescaleDrop bool
	// Progress, if not nil, is called after each round with the jobs
	// finished so far and the trace's size (a long replay's progress).
	Progress func(finished, jobs int)
}

type resolved struct {
	gpus               int
	delta, pen, factor float64
	maxRounds          int
}

func (o *Options) resolve() (resolved, error) {
	r := resolved{gpus: o.GPUs, delta: o.RoundSeconds, pen: o.RestartPenalty, factor: o.ForceComplete, maxRounds: o.MaxRounds}
	bad := func(field string, v any) error { return fmt.Errorf("%w: Options.%s = %v", ErrInvalid, field, v) }
	switch {
	case o.GPUs < 1 || o.GPUs > 1<<20:
		return r, bad("GPUs", o.GPUs)
	case math.IsNaN(o.RoundSeconds) || o.RoundSeconds < 0 || o.RoundSeconds > 1e7:
		return r, bad("RoundSeconds", o.RoundSeconds)
	case math.IsNaN(o.RestartPenalty) || math.IsInf(o.RestartPenalty, 0):
		return r, bad("RestartPenalty", o.RestartPenalty)
	case math.IsNaN(o.ForceComplete) || math.IsInf(o.ForceComplete, 0):
		return r, bad("ForceComplete", o.ForceComplete)
	case o.MaxRounds < 0:
		return r, bad("MaxRounds", o.MaxRounds)
	}
	if r.delta == 0 {
		r.delta = DefaultRoundSeconds
	}
	if r.pen == 0 {
		r.pen = DefaultRestartPenalty
	}
	if r.pen > r.delta-penaltyWindow {
		return r, bad("RestartPenalty", o.RestartPenalty)
	}
	if r.factor == 0 {
		r.factor = DefaultForceComplete
	}
	if r.maxRounds == 0 {
		r.maxRounds = DefaultMaxRounds
	}
	return r, nil
}

// running is a job dispatched in the current round.
type running struct {
	k      int // index into sim.jobs
	finish float64
	steps  int64
}

type sim struct {
	w      *Workload
	p      Policy
	o      resolved
	record bool
	drop   bool // Options.AuthorsRescaleDrop
	report func(finished, jobs int)
	jobs   []job
	byID   map[int]int
	taken  []bool

	round, next, finished int
	now, start            float64
	active                []int // indices of active jobs, admission order
	run                   []running
	counts                []int // active jobs when each round was scheduled
	views                 []Job
	leases                []Lease
	sched                 []int
	seen                  []bool
	res                   *Result
}

// Run replays the workload under the policy and returns the per-job
// records and the paper's metrics. The round loop follows the authors'
// simulator (see the package doc). When ctx ends, Run returns the jobs
// finished so far with an error wrapping ErrCanceled and the context's
// error.
func Run(ctx context.Context, w *Workload, p Policy, opts Options) (*Result, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if w == nil || len(w.Jobs) == 0 || len(w.Profiles) != len(w.Jobs) {
		return nil, fmt.Errorf("%w: empty workload (use NewWorkload)", ErrInvalid)
	}
	if p == nil {
		return nil, fmt.Errorf("%w: no policy", ErrInvalid)
	}
	s := &sim{w: w, p: p, o: o, record: opts.RecordSchedule, drop: opts.AuthorsRescaleDrop, report: opts.Progress, jobs: make([]job, len(w.Jobs)),
		byID: make(map[int]int, len(w.Jobs)), taken: make([]bool, o.gpus),
		seen: make([]bool, len(w.Jobs))}
	for i := range w.Jobs {
		tj := &w.Jobs[i]
		if _, dup := s.byID[tj.ID]; dup {
			return nil, &JobError{ID: tj.ID, Line: tj.Line, Field: "id", Err: fmt.Errorf("%w: duplicate job ID", ErrInvalid)}
		}
		s.byID[tj.ID] = i
		if tj.GPUs > o.gpus {
			return nil, &JobError{ID: tj.ID, Line: tj.Line, Field: "scale_factor",
				Err: fmt.Errorf("%w: %d GPUs on a %d-GPU cluster", ErrInvalid, tj.GPUs, o.gpus)}
		}
		prof := &w.Profiles[i]
		tput, ok := w.aloneThroughput(tj.Model, tj.BatchSize, tj.GPUs)
		if !ok {
			return nil, &JobError{ID: tj.ID, Line: tj.Line, Field: "job_type",
				Err: fmt.Errorf("%w: no positive throughput for %s on %d GPUs", ErrInvalid, tj.JobType, tj.GPUs)}
		}
		deadline := math.Inf(1)
		if o.factor > 0 {
			deadline = math.Trunc(o.factor * prof.Isolated())
		}
		s.jobs[i] = job{w: w, idx: i, tj: tj, prof: prof, bs: tj.BatchSize, bs0: tj.BatchSize, tput: tput,
			total: tj.TotalSteps, deadline: deadline, lastRound: -1, prevRound: -1}
	}
	s.res = &Result{Policy: p.Name(), GPUs: o.gpus, TraceJobs: len(w.Jobs)}
	err = s.loop(ctx)
	if ferr := s.finish(); err == nil {
		err = ferr
	}
	return s.res, err
}

func (s *sim) loop(ctx context.Context) error {
	n := len(s.jobs)
	s.now = s.jobs[0].tj.Arrival
	idle := 0
	for s.finished < n {
		if err := deadline.Err(ctx); err != nil {
			return fmt.Errorf("%w after %d rounds: %w", ErrCanceled, s.round, err)
		}
		if s.round >= s.o.maxRounds {
			return fmt.Errorf("%w: %d rounds and %d of %d jobs unfinished", ErrStalled, s.round, n-s.finished, n)
		}
		// The round ends when its last job finishes; with nothing running
		// the next boundary is the next arrival (or one round later).
		s.leases = s.leases[:0]
		if len(s.run) > 0 {
			idle = 0
			end := s.now
			for _, r := range s.run {
				end = max(end, r.finish)
			}
			s.now = end
			s.complete()
		} else if s.round > 0 {
			if s.next < n {
				s.now = max(s.now, s.jobs[s.next].tj.Arrival)
			} else {
				if idle++; idle > maxIdleRounds {
					return fmt.Errorf("%w: %d active jobs left idle for %d rounds", ErrStalled, len(s.active), idle-1)
				}
				s.now += s.o.delta
			}
		}
		for _, k := range s.active {
			s.jobs[k].adapt()
		}
		if s.round > 0 {
			if err := s.p.EndRound(&Report{Round: s.round, Now: s.now, Leases: s.leases}); err != nil {
				return fmt.Errorf("%w: %s: end of round %d: %w", ErrPolicy, s.p.Name(), s.round-1, err)
			}
		}
		if err := s.admit(); err != nil {
			return err
		}
		for len(s.active) == 0 && s.next < n {
			// Empty cluster: wait for the next arrival (upstream would stop).
			s.now = s.jobs[s.next].tj.Arrival
			if err := s.admit(); err != nil {
				return err
			}
		}
		if len(s.active) == 0 {
			break
		}
		if err := s.dispatch(ctx); err != nil {
			return err
		}
		if s.report != nil {
			s.report(s.finished, n)
		}
		s.round++
	}
	return nil
}

// admit lets in every job that has arrived by now, in trace order.
func (s *sim) admit() error {
	for s.next < len(s.jobs) && s.jobs[s.next].tj.Arrival <= s.now {
		j := &s.jobs[s.next]
		j.state, j.admitted, j.admitRound = active, s.now, s.round
		s.active = append(s.active, s.next)
		s.next++
		var v Job
		j.view(&v)
		if err := s.p.Admit(&v); err != nil {
			return fmt.Errorf("%w: %s: admitting job %d: %w", ErrPolicy, s.p.Name(), j.tj.ID, err)
		}
	}
	return nil
}

// complete processes the leases of the round that just ended, as upstream
// simulate and _done_callback do: the restart penalty, progress, the
// completion test (steps left, or the force-complete hack), failed leases,
// and pending batch-size changes. Leases are processed latest finish first
// (the authors' heap order), ties by job ID.
func (s *sim) complete() {
	c := s.round // rounds completed; the leases belong to round c−1
	slices.SortFunc(s.run, func(a, b running) int {
		return cmp.Or(cmp.Compare(b.finish, a.finish), cmp.Compare(s.jobs[a.k].tj.ID, s.jobs[b.k].tj.ID))
	})
	for _, r := range s.run {
		j := &s.jobs[r.k]
		exec, steps := r.finish-s.start, r.steps
		if c != 1 && j.prevRound != c-2 && exec != 0 && exec > s.o.delta-penaltyWindow && s.o.pen > 0 {
			f := (exec - s.o.pen) / exec
			exec -= s.o.pen
			steps = int64(float64(steps) * f)
			j.restarts++
			s.res.Restarts++
		}
		j.runTime += exec
		l := Lease{ID: j.tj.ID, Steps: steps, Exec: exec, BatchSize: j.bs}
		if exec > 0 {
			l.Throughput = float64(steps) / exec
		}
		ended := false
		if steps <= 0 && exec <= 0 {
			l.Failed = true
			if j.failures++; j.failures >= maxFailures {
				ended, j.dropped = true, true
			}
		} else {
			j.failures = 0
			j.run += steps
			j.busy += float64(exec * float64(j.tj.GPUs))
			if j.total-j.run <= 0 {
				ended = true
			} else if j.runTime > j.deadline {
				ended, j.forced = true, true
			}
		}
		if !ended {
			j.applyChange()
			ended = !s.drop && j.total-j.run <= 0
		}
		if ended {
			j.state, j.completion, j.endRound = done, r.finish, c
			s.finished++
		}
		l.Progress, l.Finished = j.progress(), ended
		s.leases = append(s.leases, l)
	}
	s.run = s.run[:0]
	s.active = slices.DeleteFunc(s.active, func(k int) bool { return s.jobs[k].state == done })
}

// dispatch asks the policy for the round's jobs, checks and places them,
// and starts their leases.
func (s *sim) dispatch(ctx context.Context) error {
	s.views = s.views[:0]
	for _, k := range s.active {
		s.views = append(s.views, Job{})
		s.jobs[k].view(&s.views[len(s.views)-1])
	}
	st := State{Round: s.round, Now: s.now, GPUs: s.o.gpus, RoundSeconds: s.o.delta, Jobs: s.views}
	ids, err := s.p.Schedule(ctx, &st)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w in round %d: %w", ErrCanceled, s.round, err)
		}
		return fmt.Errorf("%w: %s: round %d: %w", ErrPolicy, s.p.Name(), s.round, err)
	}
	s.sched = s.sched[:0]
	used := 0
	for _, id := range ids {
		k, ok := s.byID[id]
		if !ok || s.jobs[k].state != active {
			return fmt.Errorf("%w: %s scheduled job %d, which is not active in round %d", ErrPolicy, s.p.Name(), id, s.round)
		}
		if s.seen[k] {
			return fmt.Errorf("%w: %s scheduled job %d twice in round %d", ErrPolicy, s.p.Name(), id, s.round)
		}
		s.seen[k] = true
		used += s.jobs[k].tj.GPUs
		s.sched = append(s.sched, k)
	}
	for _, k := range s.sched {
		s.seen[k] = false
	}
	if used > s.o.gpus {
		return fmt.Errorf("%w: %s scheduled %d GPUs of %d in round %d", ErrPolicy, s.p.Name(), used, s.o.gpus, s.round)
	}
	s.counts = append(s.counts, len(s.active))
	for _, k := range s.active {
		if s.round > 0 && s.jobs[k].lastRound == s.round-1 {
			s.res.LeaseOpportunities++
		}
	}
	if err := s.place(s.sched); err != nil {
		return err
	}
	if s.record {
		ids := make([]int, len(s.sched))
		for i, k := range s.sched {
			ids[i] = s.jobs[k].tj.ID
		}
		s.res.Schedule = append(s.res.Schedule, ids)
	}
	s.start = s.now
	for _, k := range s.sched {
		j := &s.jobs[k]
		if j.extended {
			s.res.LeaseExtensions++
		}
		steps := min(int64(j.tput*s.o.delta), j.total-j.run)
		finish := max(s.now, s.now+float64(steps)/j.tput)
		j.prevRound, j.lastRound = j.lastRound, s.round
		j.leases++
		s.run = append(s.run, running{k: k, finish: finish, steps: steps})
	}
	return nil
}
