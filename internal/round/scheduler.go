package round

import (
	"context"
	"errors"
	"slices"

	"github.com/orrery/orrery/internal/market"
	"github.com/orrery/orrery/internal/predictor"
)

// Scheduler is the incremental form of the planner, the counterpart of the
// authors' ShockwaveScheduler: jobs arrive and leave, report progress and
// throughput, and each round asks for its jobs. It re-plans, as the authors
// do, when a job arrives or completes, every ReoptRounds rounds, and when
// the current round has left the cached window; otherwise it returns the
// cached plan's round.
//
//	add_metadata          → Add
//	remove_metadata       → Remove
//	schedule_progress     → Progress
//	(throughput timeline) → Observe
//	increment_round_ptr   → EndRound
//	round_schedule        → Schedule
//
// A Scheduler is not safe for concurrent use.
type Scheduler struct {
	gpus   int
	cfg    Config
	round  int
	jobs   []Job // owned copies, in arrival order
	state  State
	plan   *Result
	cached [][]int // cached[t]: IDs of round cacheFrom+t
	from   int
	since  int  // rounds since the last periodic re-plan
	dirty  bool // a re-plan is due
	reest  bool // the next re-plan re-estimates FT* (arrival or completion)
	ws     Workspace
	check  Workspace // for admissible, so that checking never overwrites a cached plan
	probe  State
}

// New returns a Scheduler for a cluster of gpus GPUs, at round 0.
func New(gpus int, cfg Config) (*Scheduler, error) {
	if gpus < 1 {
		return nil, argErr("gpus", ErrInvalid, "%d GPUs (want ≥ 1)", gpus)
	}
	if cfg.ReoptRounds < 0 {
		return nil, argErr("cfg.ReoptRounds", ErrInvalid, "%d (want ≥ 0)", cfg.ReoptRounds)
	}
	if _, err := checkState(&State{GPUs: gpus, Config: cfg}); err != nil {
		return nil, err
	}
	return &Scheduler{gpus: gpus, cfg: cfg, dirty: true}, nil
}

// admissible checks job j as Plan checks each job, alone on the cluster at
// the current round, so that what the Scheduler admits can never make a
// later Schedule fail. Errors name j's fields as the argument of Add does
// ("j.EpochDur[2]").
func (s *Scheduler) admissible(j *Job) error {
	s.probe = State{GPUs: s.gpus, Round: s.round, Jobs: append(s.probe.Jobs[:0], *j), Config: s.cfg}
	_, err := s.check.Predict(&s.probe)
	s.probe.Jobs[0] = Job{} // keep no reference to the caller's slices
	var fe *FieldError
	if errors.As(err, &fe) && fe.Job == 0 {
		return jobErr(-1, j, fe.Field, fe.Err)
	}
	return err
}

// Round returns the index of the current round.
func (s *Scheduler) Round() int { return s.round }

// Len returns the number of active jobs.
func (s *Scheduler) Len() int { return len(s.jobs) }

// LastPlan returns the most recent plan, or nil before the first. It is
// overwritten by the next re-plan.
func (s *Scheduler) LastPlan() *Result { return s.plan }

// find returns the index of job id in s.jobs, or −1.
func (s *Scheduler) find(id int) int {
	for i := range s.jobs {
		if s.jobs[i].ID == id {
			return i
		}
	}
	return -1
}

// Add admits a job (the authors' add_metadata): the next Schedule re-plans
// and re-estimates every job's finish time. The Scheduler keeps a copy of
// j's slices.
func (s *Scheduler) Add(j Job) error {
	if s.find(j.ID) >= 0 {
		return argErr("j.ID", ErrDuplicate, "%d is already active", j.ID)
	}
	if err := checkJob(-1, &j, s.gpus, s.round); err != nil {
		return err
	}
	if err := s.admissible(&j); err != nil {
		return err
	}
	j.EpochBS = slices.Clone(j.EpochBS)
	j.EpochDur = slices.Clone(j.EpochDur)
	j.Modes = slices.Clone(j.Modes)
	j.ModeDur = slices.Clone(j.ModeDur)
	j.ProfiledDur = slices.Clone(j.ProfiledDur)
	if j.ProfiledDur == nil {
		// Calibration rescales EpochDur from the pre-profiled durations,
		// which must stay as they were at admission.
		j.ProfiledDur = slices.Clone(j.EpochDur)
	}
	j.Timeline = slices.Clone(j.Timeline)
	j.Finish = slices.Clone(j.Finish)
	if j.Known != nil {
		k := *j.Known
		j.Known = &k
	}
	s.jobs = append(s.jobs, j)
	s.dirty, s.reest = true, true
	return nil
}

// Remove retires a completed (or cancelled) job (remove_metadata): the
// next Schedule re-plans and re-estimates.
func (s *Scheduler) Remove(id int) error {
	i := s.find(id)
	if i < 0 {
		return argErr("id", ErrUnknownID, "%d", id)
	}
	s.jobs = slices.Delete(s.jobs, i, i+1)
	s.dirty, s.reest = true, true
	return nil
}

// Progress sets a job's completed epochs (schedule_progress). It does not
// trigger a re-plan.
func (s *Scheduler) Progress(id, epochs int) error {
	i := s.find(id)
	if i < 0 {
		return argErr("id", ErrUnknownID, "%d", id)
	}
	j := &s.jobs[i]
	E := j.Epochs
	if E == 0 {
		E = len(j.EpochBS)
	}
	if epochs < 0 || epochs > E {
		return argErr("epochs", ErrInvalid, "%d epochs of %d", epochs, E)
	}
	j.Progress = epochs
	return nil
}

// Observe appends a throughput measurement to a job's timeline (the lease
// that ended in sample.Round, numbered as the authors' timeline is: the
// lease of the current round ends in Round()+1), used by calibration;
// rounds must increase and not pass Round()+1, and the job needs its
// SamplesPerEpoch. A rejected sample leaves the job as it was.
func (s *Scheduler) Observe(id int, sample predictor.Sample) error {
	i := s.find(id)
	if i < 0 {
		return argErr("id", ErrUnknownID, "%d", id)
	}
	j := &s.jobs[i]
	switch n := len(j.Timeline); {
	case sample.Round < 0 || sample.Round > s.round+1:
		return argErr("sample.Round", ErrInvalid, "%d (want 0..%d: a lease cannot end after the current round)", sample.Round, s.round+1)
	case n > 0 && sample.Round <= j.Timeline[n-1].Round:
		return argErr("sample.Round", ErrInvalid, "%d does not follow the previous sample's round %d", sample.Round, j.Timeline[n-1].Round)
	case !(sample.ItPerSec >= 0) || sample.ItPerSec > maxItPerSec:
		return argErr("sample.ItPerSec", ErrInvalid, "%v (want a finite throughput ≥ 0)", sample.ItPerSec)
	case sample.BatchSize < 1:
		return argErr("sample.BatchSize", ErrInvalid, "%d (want ≥ 1)", sample.BatchSize)
	case !(j.SamplesPerEpoch > 0):
		return argErr("id", ErrInvalid, "job %d was added without SamplesPerEpoch, which calibrating against a sample needs", id)
	}
	// Only calibration reads the timeline: check it with the sample, on
	// scratch, exactly as the next plan will run it.
	timeline := append(slices.Clip(j.Timeline), sample)
	pre := j.ProfiledDur
	if pre == nil {
		pre = j.EpochDur
	}
	delta := s.cfg.Market.RoundSeconds
	if delta == 0 {
		delta = market.DefaultRoundSeconds
	}
	s.check.cur = append(s.check.cur[:0], j.EpochDur...)
	if _, _, err := predictor.Calibrate(s.check.cur, pre, j.SamplesPerEpoch, timeline,
		predictor.CalibrateOptions{RoundSec: delta, Tolerance: s.cfg.Tolerance}); err != nil {
		return argErr("sample", ErrInvalid, "%v", err)
	}
	j.Timeline = timeline
	return nil
}

// maxItPerSec bounds a throughput sample (as the trace readers bound the
// tables): far above any training job, and small enough that calibration's
// sums cannot overflow.
const maxItPerSec = 1e12

// EndRound advances to the next round (increment_round_ptr) and forces a
// re-plan every ReoptRounds rounds, as the authors' simulator does.
func (s *Scheduler) EndRound() {
	s.round++
	s.since++
	period := s.cfg.ReoptRounds
	if period == 0 {
		period = DefaultReoptRounds
	}
	if s.since >= period {
		s.since = 0
		s.dirty = true
	}
}

// Schedule returns the IDs of the jobs to run in the current round (the
// planned ones, then the backfilled ones), re-planning when due. The slice
// is valid until the next re-plan. When ctx ends during a re-plan the best
// plan found is used; errors come only from invalid jobs.
func (s *Scheduler) Schedule(ctx context.Context) ([]int, error) {
	if !s.dirty && s.round >= s.from && s.round < s.from+len(s.cached) {
		return s.cached[s.round-s.from], nil
	}
	if len(s.jobs) == 0 {
		s.cached, s.from, s.dirty = s.cached[:0], s.round, true
		return nil, nil
	}
	s.state = State{GPUs: s.gpus, Round: s.round, Reestimate: s.reest, Jobs: s.jobs, Config: s.cfg}
	res, err := s.ws.Plan(ctx, &s.state)
	if err != nil {
		return nil, err
	}
	for i := range s.jobs {
		j, jr := &s.jobs[i], &res.Jobs[i]
		if jr.Estimate != 0 {
			j.Finish = append(j.Finish, FinishPoint{Round: s.round, Estimate: jr.Estimate})
		}
		// Keep the calibrated durations, as the authors' JobMetaData does.
		if jr.Calibration != 1 {
			for e := range j.EpochDur {
				j.EpochDur[e] = j.ProfiledDur[e] * jr.Calibration
			}
		}
	}
	s.plan, s.cached, s.from = res, res.Rounds, s.round
	s.dirty, s.reest = false, false
	return s.cached[0], nil
}
