package round

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/scratch"
)

// Scheduler is the incremental form of the planner, the counterpart of the
// authors' ShockwaveScheduler: jobs arrive and leave, report progress and
// throughput, and each round asks for its jobs. It re-plans, as the authors
// do, when a job arrives or completes, every ReoptRounds rounds, when the
// caller asks (Resolve), and when the current round has left the cached
// window; otherwise it returns the cached plan's round.
//
//	add_metadata          → Add
//	remove_metadata       → Remove
//	schedule_progress     → Progress
//	(throughput timeline) → Observe
//	increment_round_ptr   → EndRound
//	set_resolve           → Resolve
//	round_schedule        → Schedule
//
// A Scheduler is not safe for concurrent use.
type Scheduler struct {
	gpus   int
	cfg    Config
	round  int
	jobs   []Job    // owned copies, in arrival order
	trk    []*track // each job's incremental predictions, parallel to jobs
	given  []given  // the trackers' answers for the next plan
	dur    []float64
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
	bytes  int64 // the jobs' state, as JobBytes counts it
	plans  int   // plans made
}

// JobBytes is what a [Scheduler] keeps for job j, in bytes, as its
// [Scheduler.Bytes] counts it: its lists (profile, timeline, finish
// history), the predictor's and the calibrator's tables on the profile,
// and a fixed part. It tracks the heap a job holds within a factor of
// about two (TestSchedulerBytes measures it).
func JobBytes(j *Job) int64 {
	n := int64(len(j.EpochBS))
	lists := 8*(n+int64(len(j.EpochDur))+int64(len(j.Modes))+int64(len(j.ModeDur))) +
		8*max(int64(len(j.ProfiledDur)), int64(len(j.EpochDur))) + 24*int64(len(j.Timeline)) + 16*int64(len(j.Finish))
	tables := int64(0)
	if j.Known == nil {
		tables = 64*n + 8*int64(len(j.Modes)) // the tracker's and calibrator's sums and copies
	}
	return jobOverhead + lists + tables
}

// jobOverhead is the fixed part of a job's state: the Job, its tracker
// and the slots of the Scheduler's per-job slices.
const jobOverhead = 1024

// Bytes returns the state the Scheduler keeps for its active jobs, the
// sum of their JobBytes: it grows with Add, Observe and the finish
// estimates a re-plan records (16 bytes a job when it re-estimates), and
// shrinks with Remove.
func (s *Scheduler) Bytes() int64 { return s.bytes }

// Plans returns how many plans the Scheduler has made: [Scheduler.LastPlan]
// changes only when it grows.
func (s *Scheduler) Plans() int { return s.plans }

// New returns a Scheduler for a cluster of gpus GPUs, at round 0.
func New(gpus int, cfg Config) (*Scheduler, error) {
	if gpus < 1 {
		return nil, argErr("gpus", ErrInvalid, "%d GPUs (want ≥ 1)", gpus)
	}
	if cfg.ReoptRounds < -1 {
		return nil, argErr("cfg.ReoptRounds", ErrInvalid, "%d (want ≥ 0, or -1 for none)", cfg.ReoptRounds)
	}
	if _, err := checkState(&State{GPUs: gpus, Config: cfg}); err != nil {
		return nil, err
	}
	return &Scheduler{gpus: gpus, cfg: cfg, dirty: true}, nil
}

// track is what the Scheduler keeps per job so that a re-plan does not redo
// the predictor's work: the posterior changes only when the job's progress
// does, and the calibration only when its timeline does (or when the last
// check rescaled the durations, as the authors' partial-epoch quirk can
// then rescale again). Its answers are Plan's, bit for bit.
type track struct {
	pred    predictor.Tracker
	cal     predictor.Calibrator
	calErr  error // why the timeline cannot be calibrated (Calibrator.Reset)
	recheck bool  // the timeline grew, or the last check rescaled
	estF    int   // progress of est; −1 when est is stale
	est     predictor.Estimate
	// checked: a plan has checked the job's profile (checkProfile) as it
	// stands; only a rescale of EpochDur changes it after Add.
	checked bool
	// reload: the predictor must be loaded again with the job's
	// durations before its next estimate (a plan failed after it was
	// loaded with rescaled ones; see resync).
	reload bool
}

// newTrack loads j (checked by admissible) into a track.
func (s *Scheduler) newTrack(j *Job) (*track, error) {
	t := &track{estF: -1, recheck: len(j.Timeline) > 0}
	if j.Known != nil {
		return t, nil
	}
	if err := t.pred.Reset(predictorJob(j, j.EpochDur), s.cfg.Predictor); err != nil {
		return nil, err
	}
	if j.SamplesPerEpoch > 0 {
		t.calErr = t.cal.Reset(j.ProfiledDur, j.SamplesPerEpoch, s.calibrateOptions())
		for _, x := range j.Timeline {
			if t.calErr == nil {
				t.calErr = t.cal.Observe(x)
			}
		}
	}
	return t, nil
}

func predictorJob(j *Job, dur []float64) *predictor.Job {
	return &predictor.Job{Epochs: j.Epochs, EpochBS: j.EpochBS, EpochDur: dur, Modes: j.Modes, ModeDur: j.ModeDur}
}

func (s *Scheduler) calibrateOptions() predictor.CalibrateOptions {
	delta := s.cfg.Market.RoundSeconds
	if delta == 0 {
		delta = market.DefaultRoundSeconds
	}
	return calibrateOptions(delta, s.cfg.Tolerance)
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
	if err := CheckSize(s.gpus, len(s.jobs)+1, s.cfg); err != nil {
		// A job past the size limits would make every Schedule fail.
		var fe *FieldError
		errors.As(err, &fe)
		why := strings.TrimPrefix(fe.Err.Error(), market.ErrLimit.Error()+": ")
		return argErr("j", market.ErrLimit, "%s, with this job and the %d active", why, len(s.jobs))
	}
	if err := checkJob(-1, &j, s.gpus, s.round, s.cfg.Predictor.Estimator, false); err != nil {
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
	t, err := s.newTrack(&j)
	if err != nil {
		return jobErr(-1, &j, "", err) // unreachable: admissible predicted j
	}
	s.jobs = append(s.jobs, j)
	s.trk = append(s.trk, t)
	s.bytes += JobBytes(&j)
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
	s.bytes -= JobBytes(&s.jobs[i])
	s.jobs = slices.Delete(s.jobs, i, i+1)
	s.trk = slices.Delete(s.trk, i, i+1)
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
	// The next plan predicts at this progress: a profile declared up to
	// the epochs seen so far (Modes) must reach it.
	if j.Known == nil {
		if _, err := s.trk[i].pred.Estimate(epochs); err != nil {
			return argErr("epochs", ErrInvalid, "%d: the job's profile states %d epochs, and a prediction at progress %d needs epochs 0..%d", epochs, len(j.EpochBS), epochs, min(epochs, E-1))
		}
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
	prev := -1
	if n := len(j.Timeline); n > 0 {
		prev = j.Timeline[n-1].Round
	}
	if err := checkSample(sample, prev, s.round); err != nil {
		return err
	}
	switch {
	case j.Known != nil:
		return argErr("id", ErrInvalid, "job %d was added with known predictions: it has no profile to calibrate against a sample", id)
	case !(j.SamplesPerEpoch > 0):
		return argErr("id", ErrInvalid, "job %d was added without its dataset size (samples per epoch), which calibrating against a sample needs", id)
	}
	// Only calibration reads the timeline: check it with the sample exactly
	// as the next plan will run it (the job's calibrator in O(log E)), and
	// keep the calibrator as it was if that fails.
	t := s.trk[i]
	if t.calErr != nil {
		return argErr("sample", ErrInvalid, "the job's timeline cannot be calibrated: %w", t.calErr)
	}
	saved := t.cal // Observe changes only its counters
	err := t.cal.Observe(sample)
	if err == nil {
		_, _, err = t.cal.Factor(j.EpochDur)
	}
	if err != nil {
		t.cal = saved
		return argErr("sample", ErrInvalid, "%w", err)
	}
	j.Timeline = append(j.Timeline, sample)
	s.bytes += 24
	t.recheck = true
	return nil
}

// EndRound advances to the next round (increment_round_ptr) and forces a
// re-plan every ReoptRounds rounds, as the authors' simulator does (never
// with ReoptRounds -1). Past market.MaxRound it fails and the round stays.
func (s *Scheduler) EndRound() error {
	if s.round >= market.MaxRound {
		return argErr("round", ErrInvalid, "%d is the last round a plan may have", s.round)
	}
	s.round++
	s.since++
	period := s.cfg.ReoptRounds
	switch period {
	case -1:
		return nil
	case 0:
		period = DefaultReoptRounds
	}
	if s.since >= period {
		s.since = 0
		s.dirty = true
	}
	return nil
}

// Resolve forces a re-plan at the next Schedule (set_resolve): what the
// authors' simulator calls after a completion or every REOPT_ROUNDS
// rounds, for a caller that keeps that count itself (ReoptRounds -1). It
// restarts the periodic count.
func (s *Scheduler) Resolve() {
	s.since = 0
	s.dirty = true
}

// Schedule returns the IDs of the jobs to run in the current round (the
// planned ones, then the backfilled ones), re-planning when due. The slice
// is valid until the next re-plan. When ctx ends during a re-plan the best
// plan found is used; when it ends before the re-plan has a first plan,
// the cached plan answers if it covers the round (the re-plan stays due),
// and otherwise Schedule fails with an error wrapping market.ErrTimeLimit.
// Other errors come only from invalid jobs.
func (s *Scheduler) Schedule(ctx context.Context) ([]int, error) {
	if !s.dirty && s.round >= s.from && s.round < s.from+len(s.cached) {
		return s.cached[s.round-s.from], nil
	}
	if len(s.jobs) == 0 {
		s.cached, s.from, s.dirty = s.cached[:0], s.round, true
		return nil, nil
	}
	s.state = State{GPUs: s.gpus, Round: s.round, Reestimate: s.reest, Jobs: s.jobs, Config: s.cfg}
	err := s.track(ctx)
	var res *Result
	if err == nil {
		res, err = s.ws.plan(ctx, &s.state, s.given)
	}
	if err != nil {
		s.resync()
		if errors.Is(err, market.ErrTimeLimit) && s.round >= s.from && s.round < s.from+len(s.cached) {
			// Out of time before a first plan: the cached one stands
			// for this round, and the re-plan stays due.
			return s.cached[s.round-s.from], nil
		}
		return nil, err
	}
	for i := range s.jobs {
		j, jr := &s.jobs[i], &res.Jobs[i]
		if jr.Estimate != 0 {
			j.Finish = append(j.Finish, FinishPoint{Round: s.round, Estimate: jr.Estimate})
			s.bytes += 16
		}
		// Keep the calibrated durations, as the authors' JobMetaData does
		// (the tracker already predicts with them).
		s.trk[i].checked = true
		if jr.Calibration != 1 {
			for e := range j.EpochDur {
				j.EpochDur[e] = j.ProfiledDur[e] * jr.Calibration
			}
			s.trk[i].checked = false // the next plan checks the rescaled durations
		}
	}
	s.plan, s.cached, s.from = res, res.Rounds, s.round
	s.plans++
	s.dirty, s.reest = false, false
	return s.cached[0], nil
}

// track brings every job's tracker up to date for the plan of s.state and
// fills s.given: the calibration is checked again only when the timeline
// grew or the last check rescaled, the posterior only when the progress
// moved, and a rescale reloads the durations. Errors are Plan's, and
// market.ErrTimeLimit when ctx ends first (for a plan Plan watches: each
// tracker is brought up to date whole, so stopping between them loses
// nothing).
func (s *Scheduler) track(ctx context.Context) error {
	s.given = scratch.Resize(s.given, len(s.jobs))
	T := s.cfg.Market.Rounds
	if T <= 0 {
		T = market.DefaultRounds
	}
	watch := int64(len(s.jobs))*int64(T+1) >= market.WatchedCells
	for i := range s.jobs {
		if watch && i%predictEvery == predictEvery-1 && deadline.Done(ctx) {
			return market.ErrTimeLimit
		}
		j, t := &s.jobs[i], s.trk[i]
		s.given[i] = given{}
		if j.Known != nil {
			continue // Plan takes the caller's predictions
		}
		if t.reload {
			if err := t.pred.Reset(predictorJob(j, j.EpochDur), s.cfg.Predictor); err != nil {
				return fromPredictor(&s.state, i, -1, err) // unreachable: loaded before with these durations' shape
			}
			t.reload = false
		}
		cal := 1.0
		if t.recheck && len(j.Timeline) > 0 {
			if t.calErr != nil {
				return fromPredictor(&s.state, i, -1, t.calErr)
			}
			f, applied, err := t.cal.Factor(j.EpochDur)
			if err != nil {
				return fromPredictor(&s.state, i, -1, err)
			}
			t.recheck = applied
			if applied {
				cal = f
				s.dur = s.dur[:0]
				for _, d := range j.ProfiledDur {
					s.dur = append(s.dur, d*f)
				}
				if err := t.pred.Reset(predictorJob(j, s.dur), s.cfg.Predictor); err != nil {
					return fromPredictor(&s.state, i, -1, err)
				}
				t.estF = -1
			}
		}
		if t.estF != j.Progress {
			est, err := t.pred.Estimate(j.Progress)
			if err != nil {
				return fromPredictor(&s.state, i, -1, err)
			}
			t.est, t.estF = est, j.Progress
		}
		e := &t.est
		s.given[i] = given{ok: true, remaining: e.Remaining, std: e.Std(), meanEpoch: e.MeanEpoch, elapsed: e.Elapsed, calibration: cal,
			checked: t.checked}
	}
	return nil
}

// resync makes the trackers start over from the jobs' state after a plan
// that failed (its rescaled durations were not kept). The predictors are
// reloaded by the next track, job by job, so that a plan out of time does
// not spend a reload of every job past its deadline.
func (s *Scheduler) resync() {
	for i := range s.jobs {
		j, t := &s.jobs[i], s.trk[i]
		t.estF, t.recheck = -1, len(j.Timeline) > 0
		t.reload = j.Known == nil
	}
}
