package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// ErrInvalid reports an invalid plan or option.
var ErrInvalid = errors.New("agent: invalid")

// MaxPeriod is the longest period a plan may have.
const MaxPeriod = 24 * time.Hour

// DefaultThreshold is the paper's re-alignment trigger: five percent of the
// period.
const DefaultThreshold = 0.05

// Mode selects how an agent keeps its job on its slots.
type Mode int

const (
	// Elastic (the default) holds the job's phase relative to the jobs it
	// is interleaved with: their agents share a [Group] whose slots stretch
	// to the slowest member's pace and slide when one falls behind, and the
	// agent gives the shift up when holding it costs more than it gains.
	Elastic Mode = iota
	// Pad starts every iteration on its slot of a fixed period and
	// re-aligns to the next slot when late past the threshold.
	Pad
	// Free runs iterations back to back and re-aligns when the
	// communication phase is off by more than the threshold: the paper's
	// rule.
	Free
)

func (m Mode) String() string {
	switch m {
	case Elastic:
		return "elastic"
	case Pad:
		return "pad"
	case Free:
		return "free"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "elastic", "pad" or "free"; "" is Elastic.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "elastic":
		return Elastic, nil
	case "pad":
		return Pad, nil
	case "free":
		return Free, nil
	}
	return 0, fmt.Errorf("%w: mode %q (want elastic, pad or free)", ErrInvalid, s)
}

// Clock is the time source of [Agent.Wait].
type Clock interface {
	Now() time.Time
	// Sleep returns after d has passed, or early with ctx's error.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits for d or for ctx to end.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Plan is where a job's iterations belong.
type Plan struct {
	Reference time.Time     // R: the instant every job's shift counts from; not the zero Time
	Shift     time.Duration // t_j: the job's delay, in [0, Period)
	Period    time.Duration // T: the (quantized, padded) period, > 0
	// CommOffset is where the job's (first) communication phase starts
	// within an iteration, in [0, Period): its planned angle.
	CommOffset time.Duration
	// Group is the clock an Elastic agent shares with the agents of the
	// jobs it is interleaved with; its Reference must be the plan's. An
	// Elastic agent without one holds its slots as Pad does; agents whose
	// partners run elsewhere share the plan's clock (NewPlanGroup), built
	// by each from the plan's reference. Pad and Free agents ignore it.
	Group *Group
	// Slack (Elastic) is how far after its slot the job's iteration may
	// start before its communication overlaps a partner's more than the
	// plan has it: the interleaving's slack on the unified circle (for two
	// jobs, the gap after the job's communication phase). A lateness within
	// it stands (nobody waits, and the job drains it when it runs faster
	// than the group's pace); past it, the group's clock moves by the
	// lateness beyond the slack, an adjustment when that is past the
	// threshold. In [0, Period); 0 means no slack: every lateness moves the
	// clock.
	Slack time.Duration
	// FreeComm is how long the job's communication phases are expected
	// to take per iteration if it ran without its shift (at a random phase
	// against the jobs sharing its links): an Elastic agent gives the
	// shift up when the time it waits exceeds what holding the shift saves
	// against this. 0 means the agent never gives up.
	FreeComm time.Duration
}

func (p Plan) validate() error {
	switch {
	case p.Reference.IsZero():
		return fmt.Errorf("%w: no reference instant", ErrInvalid)
	case p.Period <= 0 || p.Period > MaxPeriod:
		return fmt.Errorf("%w: period %v is outside (0, %v]", ErrInvalid, p.Period, MaxPeriod)
	case p.Shift < 0 || p.Shift >= p.Period:
		return fmt.Errorf("%w: shift %v is outside [0, period %v)", ErrInvalid, p.Shift, p.Period)
	case p.CommOffset < 0 || p.CommOffset >= p.Period:
		return fmt.Errorf("%w: communication offset %v is outside [0, period %v)", ErrInvalid, p.CommOffset, p.Period)
	case p.Slack < 0 || p.Slack >= p.Period:
		return fmt.Errorf("%w: slack %v is outside [0, period %v)", ErrInvalid, p.Slack, p.Period)
	case p.FreeComm < 0 || p.FreeComm > MaxPeriod:
		return fmt.Errorf("%w: free communication time %v is outside [0, %v]", ErrInvalid, p.FreeComm, MaxPeriod)
	case p.Group != nil && !p.Group.Reference().Equal(p.Reference):
		return fmt.Errorf("%w: the plan's reference %v is not its group's %v", ErrInvalid, p.Reference, p.Group.Reference())
	}
	return nil
}

// DefaultMargin is an Elastic group's slack factor: under Gaussian noise a
// member is late past the threshold on about exp(-2), 14%, of the iterations
// that are not nudged back first (see [Group]).
const DefaultMargin = 1.0

// Options configure an Agent. The zero value is Elastic mode, the paper's 5%
// threshold, no cooldown, DefaultMargin and the system clock.
type Options struct {
	Mode Mode
	// Threshold is the re-alignment trigger as a fraction of the period,
	// in (0, 0.5]; 0 means DefaultThreshold.
	Threshold float64
	// Cooldown is the least time between two adjustments (Pad and Free);
	// a drift past the threshold within it is tolerated. 0 means none.
	Cooldown time.Duration
	// Margin (Elastic) sets the slack of a group's slots above its
	// slowest member's typical pace: Margin·σ²/Threshold, σ the spread of
	// the member's recent iteration times over its period (see [Group]).
	// Under Gaussian noise a member is then late past the threshold on
	// about exp(-2·Margin) of its iterations. 0 means DefaultMargin;
	// negative means no slack.
	Margin float64
	// GiveUp (Elastic) is who decides that a shift does not pay:
	// GiveUpGroup (the zero value) gives up every member's shift at once
	// when the group's members together wait longer than holding saves
	// them, or one of them loses more than the threshold; GiveUpOwn gives
	// up one member's when it waits longer than holding saves it.
	GiveUp GiveUp
	// Budget (Elastic) caps the agent's adjustments per minute: a token
	// bucket that fills at Budget per minute from the first decision, holds
	// at most budgetBurst tokens and starts empty, so that over any span
	// from the first decision the agent adjusts at most Budget times a
	// minute. A drift past the threshold with no token left is tolerated:
	// the iteration starts when ready and its lateness stands (it overlaps
	// its partners' communication more than planned, and drains when the
	// job runs faster than the group's pace) until a token is there. On the
	// plan's clock (NewPlanGroup) nothing drains a lateness that stands
	// (the clock does not follow the job's pace), so the budget does not
	// apply there: a drift past the threshold is corrected at once. 0
	// means DefaultBudget; negative means no cap.
	Budget float64
	// FullBudget starts the budget with its token: the first drift past
	// the threshold is corrected whenever it comes, where the empty start
	// lets it stand for a token's worth of time (30 s at the default
	// budget). Its ablation: in the simulator it gains nothing (Fig. 2 and
	// snapshots 3 and 4 under the Alibaba replay, eight seeds: within
	// 0.2%) and adds the adjustment that short-lived agents make before
	// they give their shifts up (a Poisson trace: 0 to 5.2 adjustments per
	// job-minute).
	FullBudget bool
	// MeanGiveUp (Elastic) weighs a shift's cost and saving by moving
	// averages, every iteration alike, the rule before (its ablation): by
	// default the estimates leave out the few worst iterations of their
	// window, so a transient stall of the host does not give a shift up.
	MeanGiveUp bool
	// PlanBudget applies the budget on the plan's clock too, the rule
	// before (its ablation): a drift past the threshold then stands until
	// a token is there, though on that clock nothing drains it.
	PlanBudget bool
	Clock      Clock // nil means SystemClock
}

// DefaultBudget is an Elastic agent's adjustments per minute at most: the
// rate the paper reports for its agents (under 2 a minute, Fig. 17).
const DefaultBudget = 2.0

// budgetBurst is the most adjustments an Elastic agent may make in a row
// after a quiet spell.
const budgetBurst = 1.0

// GiveUp is the rule by which Elastic agents give up shifts that do not
// pay.
type GiveUp int

const (
	// GiveUpGroup weighs the group's summed wait against its summed
	// saving, each member's as a fraction of its period, and gives up when
	// the wait is larger or when one member's own wait exceeds its own
	// saving by more than the threshold: the job that waits for a slower
	// partner is often not the one the interleaving helps most, and a
	// member weighing only itself gives up shifts that pay the group.
	GiveUpGroup GiveUp = iota
	// GiveUpOwn weighs each member's own wait against its own saving.
	GiveUpOwn
)

func (g GiveUp) String() string {
	switch g {
	case GiveUpGroup:
		return "group"
	case GiveUpOwn:
		return "own"
	}
	return fmt.Sprintf("GiveUp(%d)", int(g))
}

// ParseGiveUp parses "group" or "own"; "" is GiveUpGroup.
func ParseGiveUp(s string) (GiveUp, error) {
	switch s {
	case "", "group":
		return GiveUpGroup, nil
	case "own":
		return GiveUpOwn, nil
	}
	return 0, fmt.Errorf("%w: give-up rule %q (want group or own)", ErrInvalid, s)
}

// Decision says when the next iteration starts.
type Decision struct {
	Start    time.Time     // when the iteration starts (never before the loop is ready)
	Delay    time.Duration // Start minus the instant the loop was ready
	Late     time.Duration // how far after its slot the iteration starts (0 when on the slot)
	Adjusted bool          // the decision re-aligns the job after a drift past the threshold
	// Released is set on the decision at which an Elastic agent gave its
	// shift up: from then on the job runs free (every iteration starts when
	// ready) until a new plan is installed. Tell the scheduler.
	Released bool
}

// Stats are an agent's counters.
type Stats struct {
	Iterations  int64         // decisions made
	Adjustments int64         // re-alignments after a drift past the threshold
	Replans     int64         // plans installed after the first (SetPlan)
	Padding     time.Duration // waiting for slots (initial and re-plan alignment included)
	AdjustDelay time.Duration // waiting caused by adjustments
	Span        time.Duration // from the first decision to the last
	// Elastic: Slides counts the adjustments that moved the group's slots
	// later instead of making this job wait, Nudges the late starts within
	// the threshold that moved them by the lateness; Released says the agent
	// gave its shift up, Saved is the communication time holding the shift
	// saved (FreeComm minus the measured time, summed over the iterations it
	// held).
	Slides   int64
	Nudges   int64
	Deferred int64 // drifts past the threshold tolerated for want of budget
	Released bool
	Saved    time.Duration

	// Drift of the communication-phase starts from their planned angle.
	Samples   int64         // communication starts observed
	Over      int64         // of those, off by more than the threshold
	MeanAbs   time.Duration // mean absolute phase error
	MaxAbs    time.Duration // largest absolute phase error
	LastDrift time.Duration // the latest phase error, in [-T/2, T/2)
}

// PerMinute returns the adjustments per minute over the span of the
// decisions (0 for a span under a millisecond).
func (s Stats) PerMinute() float64 {
	if s.Span < time.Millisecond {
		return 0
	}
	return float64(s.Adjustments) / s.Span.Minutes()
}

// Agent applies one job's time shift. Create it with [New].
type Agent struct {
	mu        sync.Mutex
	plan      Plan
	opt       Options
	thr       time.Duration // threshold in time
	aligned   bool          // an iteration has started under the current plan
	slot      int64         // index of the current iteration's slot
	first     time.Time     // instant of the first decision
	haveFirst bool
	lastAdj   time.Time
	haveAdj   bool
	commErr   time.Duration // phase error of the last communication start
	haveComm  bool
	sumAbs    float64 // sum of absolute phase errors, ns
	stats     Stats

	// Elastic.
	group    *Group
	member   int       // index in group
	started  time.Time // start of the current iteration under the plan
	released bool
	tokens   float64   // adjustments the budget allows now
	filled   time.Time // instant tokens was last brought up to date
}

// New returns an agent for plan.
func New(plan Plan, opt Options) (*Agent, error) {
	if err := plan.validate(); err != nil {
		return nil, err
	}
	if opt.Threshold == 0 {
		opt.Threshold = DefaultThreshold
	}
	if !(opt.Threshold > 0 && opt.Threshold <= 0.5) {
		return nil, fmt.Errorf("%w: threshold %v is outside (0, 0.5]", ErrInvalid, opt.Threshold)
	}
	if opt.Mode != Elastic && opt.Mode != Pad && opt.Mode != Free {
		return nil, fmt.Errorf("%w: mode %d", ErrInvalid, opt.Mode)
	}
	if opt.GiveUp != GiveUpGroup && opt.GiveUp != GiveUpOwn {
		return nil, fmt.Errorf("%w: give-up rule %d", ErrInvalid, opt.GiveUp)
	}
	if opt.Cooldown < 0 {
		return nil, fmt.Errorf("%w: cooldown %v is negative", ErrInvalid, opt.Cooldown)
	}
	switch {
	case opt.Margin == 0:
		opt.Margin = DefaultMargin
	case opt.Margin < 0:
		opt.Margin = 0
	case !(opt.Margin <= 100):
		return nil, fmt.Errorf("%w: margin %v is past 100", ErrInvalid, opt.Margin)
	}
	switch {
	case opt.Budget == 0:
		opt.Budget = DefaultBudget
	case math.IsNaN(opt.Budget) || math.IsInf(opt.Budget, 1):
		return nil, fmt.Errorf("%w: budget %v adjustments per minute", ErrInvalid, opt.Budget)
	}
	if opt.Clock == nil {
		opt.Clock = SystemClock{}
	}
	a := &Agent{opt: opt}
	a.install(plan)
	return a, nil
}

func (a *Agent) install(p Plan) {
	if a.group != nil {
		a.group.leave(a.member)
		a.group = nil
	}
	a.plan = p
	a.thr = time.Duration(math.Round(a.opt.Threshold * float64(p.Period)))
	a.aligned = false
	a.haveComm = false
	a.released = false
	if a.opt.Mode == Elastic && p.Group != nil {
		a.group = p.Group
		a.member = a.group.join(a.opt.Margin, a.opt.Threshold, p.Period, p.FreeComm > 0, a.opt.MeanGiveUp)
	}
}

// mode is the rule in force: Elastic needs a group (its partners' clock);
// without one, the reference is the only clock the jobs share and the agent
// holds its slots as Pad does.
func (a *Agent) mode() Mode {
	if a.opt.Mode == Elastic && a.plan.Group == nil {
		return Pad
	}
	return a.opt.Mode
}

// SetPlan installs a new plan (new shifts, say, at an epoch start). The next
// iteration waits for the first slot of the new plan; that wait is padding,
// not an adjustment.
func (a *Agent) SetPlan(p Plan) error {
	if err := p.validate(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.install(p)
	a.stats.Replans++
	return nil
}

// Plan returns the current plan.
func (a *Agent) Plan() Plan {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.plan
}

// Released reports whether an Elastic agent has given its shift up under
// the current plan.
func (a *Agent) Released() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.released
}

// Leave releases the agent's place in its group: call it when the job
// stops (finishes, is preempted or moved), so the group no longer paces
// itself on the job.
func (a *Agent) Leave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.group != nil {
		a.group.leave(a.member)
		a.group = nil
	}
	a.released = true
}

// rebase moves the reference by whole periods toward t when t is so far from
// it that slot arithmetic could overflow a time.Duration; the slots stay
// where they are.
func (a *Agent) rebase(t time.Time) {
	const limit = 1 << 61
	for {
		d := t.Sub(a.plan.Reference) // saturates past ±292 years
		if d <= limit && d >= -limit {
			return
		}
		m := int64(d / a.plan.Period)
		a.plan.Reference = a.plan.Reference.Add(time.Duration(m) * a.plan.Period)
		a.slot -= m
	}
}

// slotAt returns the start of slot n.
func (a *Agent) slotAt(n int64) time.Time {
	return a.plan.Reference.Add(a.plan.Shift + time.Duration(n)*a.plan.Period)
}

// firstSlot returns the index of the first slot at or after t.
func (a *Agent) firstSlot(t time.Time) int64 {
	d := t.Sub(a.plan.Reference) - a.plan.Shift
	p := a.plan.Period
	n := int64(d / p)
	if d%p > 0 {
		n++ // ceiling for d > 0
	}
	return n // for d <= 0, d/p truncates toward zero: the ceiling
}

// Next decides when the iteration the loop is ready to start at ready
// should start, and records the decision. It does not wait.
func (a *Agent) Next(ready time.Time) Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.haveFirst {
		a.first, a.haveFirst = ready, true
		a.filled = ready
		if a.opt.FullBudget {
			a.tokens = budgetBurst
		}
	}
	a.stats.Iterations++
	a.stats.Span = max(a.stats.Span, ready.Sub(a.first))
	if a.mode() == Elastic {
		return a.nextElastic(ready)
	}
	a.rebase(ready)
	if !a.aligned {
		// First iteration under this plan: wait for the first slot.
		a.aligned = true
		a.slot = a.firstSlot(ready)
		start := a.slotAt(a.slot)
		a.stats.Padding = sat(a.stats.Padding, start.Sub(ready))
		return Decision{Start: start, Delay: start.Sub(ready)}
	}
	next := a.slotAt(a.slot + 1)
	cooling := a.haveAdj && a.opt.Cooldown > 0 && ready.Sub(a.lastAdj) < a.opt.Cooldown
	var trigger bool
	switch a.mode() {
	case Pad:
		if !ready.After(next) {
			a.slot++
			a.stats.Padding = sat(a.stats.Padding, next.Sub(ready))
			return Decision{Start: next, Delay: next.Sub(ready)}
		}
		trigger = ready.Sub(next) > a.thr
	case Free:
		e := a.commErr
		if !a.haveComm {
			e = a.wrap(ready.Sub(a.plan.Reference) - a.plan.Shift)
		}
		trigger = e > a.thr || -e > a.thr
	}
	if !trigger || cooling {
		// Start at once; the slot whose time has come (or is next) is
		// the one this iteration belongs to.
		a.slot = max(a.slot+1, a.firstSlot(ready)-1)
		if a.mode() == Free {
			a.slot = a.nearestSlot(ready)
		}
		late := max(ready.Sub(a.slotAt(a.slot)), 0)
		return Decision{Start: ready, Late: late}
	}
	a.slot = a.firstSlot(ready)
	start := a.slotAt(a.slot)
	a.stats.Adjustments++
	a.stats.AdjustDelay = sat(a.stats.AdjustDelay, start.Sub(ready))
	a.lastAdj, a.haveAdj = ready, true
	a.haveComm = false
	return Decision{Start: start, Delay: start.Sub(ready), Adjusted: true}
}

// nearestSlot returns the index of the slot nearest to t.
func (a *Agent) nearestSlot(t time.Time) int64 {
	d := t.Sub(a.plan.Reference) - a.plan.Shift
	e := a.wrap(d)
	return int64((d - e) / a.plan.Period)
}

// wrap reduces d modulo the period into [-T/2, T/2).
func (a *Agent) wrap(d time.Duration) time.Duration { return wrap(d, a.plan.Period) }

func wrap(d, p time.Duration) time.Duration {
	r := d % p
	if r < 0 {
		r += p
	}
	if r >= p-p/2 {
		r -= p
	}
	return r
}

// Communicating records that the job's communication phase started at at,
// and returns its phase error: how far from its planned angle (the slot
// plus the plan's CommOffset) it started, wrapped into [-T/2, T/2) (Elastic:
// on the group's virtual clock, whose period is T however it stretches).
func (a *Agent) Communicating(at time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var e time.Duration
	if a.mode() == Elastic {
		e = a.elasticPhase(at)
	} else {
		a.rebase(at)
		e = a.wrap(at.Sub(a.plan.Reference) - a.plan.Shift - a.plan.CommOffset)
	}
	a.commErr, a.haveComm = e, true
	s := &a.stats
	abs := max(e, -e)
	s.Samples++
	a.sumAbs += float64(abs)
	s.MeanAbs = time.Duration(math.Round(a.sumAbs / float64(s.Samples)))
	s.MaxAbs = max(s.MaxAbs, abs)
	s.LastDrift = e
	if abs > a.thr {
		s.Over++
	}
	return e
}

// Communicated records how long the iteration's communication phases took
// in all (Elastic: the measure of what holding the shift saves against the
// plan's FreeComm). Other modes ignore it.
func (a *Agent) Communicated(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mode() == Elastic && !a.released && a.plan.FreeComm > 0 && a.group != nil {
		saved := a.plan.FreeComm - d
		a.stats.Saved = sat(a.stats.Saved, saved)
		a.group.communicated(a.member, saved)
	}
}

// Wait decides when the next iteration starts, as [Agent.Next] with the
// clock's current time, and sleeps until then. If ctx ends first it returns
// the decision and ctx's error.
func (a *Agent) Wait(ctx context.Context) (Decision, error) {
	now := a.opt.Clock.Now()
	d := a.Next(now)
	if d.Delay <= 0 {
		return d, ctx.Err()
	}
	return d, a.opt.Clock.Sleep(ctx, d.Start.Sub(now))
}

// Stats returns a snapshot of the counters.
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

// sat returns a + b, saturated at the ends of time.Duration's range: the
// counters sum waits the caller's instants set, which an agent behind the
// JSON boundary takes as given (a wait of 292 years back and forth would
// wrap them around).
func sat(a, b time.Duration) time.Duration {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}
