package orrery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/codec"
	"github.com/orrery/orrery/internal/deadline"
)

// JobSpec is one job's per-iteration bandwidth demand: phases, or samples at
// a fixed interval, or what a user measures (a long bandwidth series, or
// communication events) for the iteration to be found in (exactly one of
// the four).
type JobSpec struct {
	ID       string       `json:"id"`
	PeriodMs *float64     `json:"period_ms,omitempty"` // iteration time; optional, must equal the phases' sum when given
	Phases   []PhaseSpec  `json:"phases,omitempty"`
	Samples  *SamplesSpec `json:"samples,omitempty"`
	Series   *SeriesSpec  `json:"series,omitempty"` // see profile_sources.go
	Events   *EventsSpec  `json:"events,omitempty"`
}

// PhaseSpec is a stretch of an iteration at constant bandwidth.
type PhaseSpec struct {
	Ms   float64 `json:"ms"`
	Gbps float64 `json:"gbps"`
}

// SamplesSpec is a bandwidth series, one value per interval.
type SamplesSpec struct {
	IntervalMs float64   `json:"interval_ms"`
	Gbps       []float64 `json:"gbps"`
}

// SearchSpec holds the options every CASSINI request shares. Zero values
// mean the defaults.
type SearchSpec struct {
	TickMs            float64 `json:"tick_ms,omitempty"`             // time quantum; default 1
	UnitMbps          float64 `json:"unit_mbps,omitempty"`           // bandwidth quantum; default 1
	Mode              string  `json:"mode,omitempty"`                // "exact" (default) or "paper"
	MaxPerimeterTicks int     `json:"max_perimeter_ticks,omitempty"` // cap on each period and on the shared circle a search builds; default 1048576, at most 16777216
	RoundPeriods      bool    `json:"round_periods,omitempty"`       // past the cap, round periods up instead of failing (the response then says so)
	Budget            int64   `json:"budget,omitempty"`              // pair evaluations per link search; 0 the default (link.DefaultBudget), -1 unlimited, below -1 invalid
	Restarts          int     `json:"restarts,omitempty"`            // coordinate-descent starts
	Seed              uint64  `json:"seed,omitempty"`                // seed of the restarts
	TimeLimitMs       float64 `json:"time_limit_ms,omitempty"`       // wall-clock limit; 0 none (results then depend on the host's speed)
}

// LinkRequest is the request of "cassini.link": the jobs sharing one link.
type LinkRequest struct {
	CapacityGbps float64   `json:"capacity_gbps"`
	Jobs         []JobSpec `json:"jobs"`
	SearchSpec
}

// LinkResponse is the response of "cassini.link".
type LinkResponse struct {
	Score          float64            `json:"score"`           // of the returned shifts, 1 = never over capacity
	UnshiftedScore float64            `json:"unshifted_score"` // every job at shift 0
	Bound          float64            `json:"bound"`           // upper bound on the optimal score; = score when optimal
	Status         string             `json:"status"`          // "optimal", "budget" or "time_limit"
	Mode           string             `json:"mode"`
	ExcessGbit     float64            `json:"excess_gbit"` // traffic above capacity over one unified circle (in paper mode, estimated from the 72 points)
	PerimeterMs    float64            `json:"perimeter_ms"`
	Points         int                `json:"points"`
	ShiftsMs       map[string]float64 `json:"shifts_ms"`     // delay of each job's next iteration
	RotationsDeg   map[string]float64 `json:"rotations_deg"` // the same, as a rotation of the unified circle
	PeriodsMs      map[string]float64 `json:"periods_ms"`    // quantized (and rounded) iteration times
	// CommOffsetsMs is where each job's communication starts in its
	// iteration (profile.Profile.CommOffset): the comm_offset_ms of its
	// agent's plan.
	CommOffsetsMs map[string]float64 `json:"comm_offsets_ms"`
	GridMs        float64            `json:"grid_ms,omitempty"`

	// CentredShiftsMs are the shifts to hold: each job's moved to the
	// middle of the range of shifts the link tolerates (link.Centre).
	// shifts_ms is the search's tie-break, the smallest shift vector,
	// which sits at the edge of that range (two all-reduces back to back,
	// the whole gap after one); centred, every job may run late or early
	// by its room without the excess passing the score's. They score what
	// shifts_ms does. ShiftRoomMs is each job's room around its centred
	// shift, the others held (an agent's slack is its late_ms).
	CentredShiftsMs map[string]float64   `json:"centred_shifts_ms"`
	ShiftRoomMs     map[string]ShiftRoom `json:"shift_room_ms"`

	// When the periods were rounded (grid_ms): score, bound, unshifted
	// score, excess and perimeter are for the rounded periods, which
	// ScorePeriods says ("rounded"), and the same shifts scored on the
	// jobs' own periods follow. The unrounded fields are absent when that
	// circle would pass the cell limit or the budget.
	ScorePeriods         string   `json:"score_periods,omitempty"`
	UnroundedScore       *float64 `json:"unrounded_score,omitempty"`
	UnroundedExcessGbit  *float64 `json:"unrounded_excess_gbit,omitempty"`
	UnroundedPerimeterMs *float64 `json:"unrounded_perimeter_ms,omitempty"`

	Evaluations int64 `json:"evaluations"`

	// Warnings are values the call accepted but changed or doubts (see
	// Warning); absent when there are none.
	Warnings []Warning `json:"warnings,omitempty"`
}

// ShiftRoom is how far a job's centred shift may move, the others held,
// before the excess of one of its links passes the plan's: every shift
// from centred-early_ms to centred+late_ms scores the same (each side at
// most half the period). Partial says the search's budget or time limit
// ended the walk first: the room is at least this.
type ShiftRoom struct {
	EarlyMs float64 `json:"early_ms"`
	LateMs  float64 `json:"late_ms"`
	Partial bool    `json:"partial,omitempty"`
}

// maxPerimeterTicks is the largest max_perimeter_ticks a request may set.
// An exact search holds a few int32s per tick of the unified circle for
// every job, so the cap bounds the memory one request can claim (an
// unbounded cap let a tiny request ask for terabytes, and an out-of-memory
// error kills the process rather than returning an error).
const maxPerimeterTicks = profile.MaxPeriodTicks

// maxUnitMbps bounds unit_mbps (1 Pbps): a coarser unit than any link's
// capacity measures nothing.
const maxUnitMbps = 1e9

// maxMs bounds every duration in a request (about 11.6 days), far above any
// iteration, so conversions to nanoseconds cannot overflow.
const maxMs = 1e9

// quantum is the request's grid and search options, validated.
type quantum struct {
	q       profile.Quantum
	opt     link.Options
	timeout time.Duration
}

func (s SearchSpec) parse() (quantum, error) {
	var r quantum
	if !(s.TickMs >= 0) || s.TickMs > maxMs {
		return r, fieldError("tick_ms", fmt.Errorf("%w: %v ms", profile.ErrInvalidQuantum, s.TickMs))
	}
	if s.TickMs > 0 {
		r.q.Tick = time.Duration(math.Round(s.TickMs * 1e6))
		if r.q.Tick <= 0 {
			return r, fieldError("tick_ms", fmt.Errorf("%w: %v ms is under a nanosecond", profile.ErrInvalidQuantum, s.TickMs))
		}
	}
	if !(s.UnitMbps >= 0) || s.UnitMbps > maxUnitMbps {
		return r, fieldError("unit_mbps", fmt.Errorf("%w: %v Mbps (want 0..%v)", profile.ErrInvalidQuantum, s.UnitMbps, float64(maxUnitMbps)))
	}
	r.q.Unit = s.UnitMbps * profile.Mbps
	q, err := r.q.Normalize()
	if err != nil {
		return r, fieldError("unit_mbps", err)
	}
	r.q = q
	mode, err := link.ParseMode(s.Mode)
	if err != nil {
		return r, fieldError("mode", err)
	}
	if s.MaxPerimeterTicks < 0 || s.MaxPerimeterTicks > maxPerimeterTicks {
		return r, fieldError("max_perimeter_ticks", fmt.Errorf("%w: %d (want 0..%d)", link.ErrInvalidOption, s.MaxPerimeterTicks, maxPerimeterTicks))
	}
	if s.Budget < -1 {
		return r, fieldError("budget", fmt.Errorf("%w: %d (want -1 for unlimited, 0 for the default, or a positive count)", link.ErrInvalidOption, s.Budget))
	}
	if s.Restarts < 0 || s.Restarts > 1<<16 {
		return r, fieldError("restarts", fmt.Errorf("%w: %d (want 0..65536)", link.ErrInvalidOption, s.Restarts))
	}
	if !(s.TimeLimitMs >= 0) || s.TimeLimitMs > maxMs {
		return r, fieldError("time_limit_ms", fmt.Errorf("%w: %v", link.ErrInvalidOption, s.TimeLimitMs))
	}
	r.timeout = limit(s.TimeLimitMs)
	r.opt = link.Options{
		Mode:     mode,
		Circle:   circle.Options{MaxPerimeter: s.MaxPerimeterTicks, Round: s.RoundPeriods},
		Budget:   s.Budget,
		Restarts: s.Restarts,
		Seed:     s.Seed,
	}
	return r, nil
}

// limit converts a request's time_limit_ms (already checked: 0..maxMs, not
// NaN). A positive limit is a limit: one under a nanosecond is rounded up
// to one, not truncated to 0, which means none.
func limit(ms float64) time.Duration {
	return time.Duration(math.Ceil(ms * 1e6))
}

// withLimit bounds ctx by a request's time limit, from the call's start
// (see callStart); 0 means none.
func withLimit(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit > 0 {
		return context.WithDeadline(ctx, callStart(ctx).Add(limit))
	}
	return ctx, func() {}
}

// gbit converts unit-ticks to gigabits.
func (r quantum) gbit(unitTicks float64) float64 {
	return unitTicks * r.q.Unit * r.q.Tick.Seconds() / profile.Gbps
}

// ms converts ticks to milliseconds.
func (r quantum) ms(ticks float64) float64 {
	return ticks * float64(r.q.Tick) / 1e6
}

// capacityUnits converts a capacity in Gbps to units.
func (r quantum) capacityUnits(field string, gbps float64) (int32, error) {
	if !(gbps > 0) || math.IsInf(gbps, 0) {
		return 0, fieldError(field, fmt.Errorf("%w: %v Gbps", link.ErrCapacity, gbps))
	}
	u := r.q.Units(gbps * profile.Gbps)
	if u < 1 || u > profile.MaxUnits {
		return 0, fieldError(field, fmt.Errorf("%w: %v Gbps is %s units of %v Mbps", link.ErrCapacity, gbps, unitsText(u), r.q.Unit/profile.Mbps))
	}
	return int32(u), nil
}

// unitsText prints a unit count for an error, saying "more than" the
// largest representable count rather than printing an overflowed +Inf.
func unitsText(u float64) string {
	if u > profile.MaxUnits {
		return fmt.Sprintf("more than %d", int64(profile.MaxUnits))
	}
	return strconv.FormatFloat(u, 'g', -1, 64)
}

// duration converts a non-negative millisecond value.
func duration(field string, ms float64) (time.Duration, error) {
	if !(ms >= 0) || ms > maxMs {
		return 0, fieldError(field, fmt.Errorf("%w: %v ms (want 0..%v)", profile.ErrInvalidDuration, ms, maxMs))
	}
	return time.Duration(math.Round(ms * 1e6)), nil
}

// MaxProfileTicks bounds the ticks the jobs of one request quantize to, in
// all (64 MiB of demand): the profiles are built only once every job's
// period is known from the request's numbers and within it (and, for
// cassini.link, within the search's limits), so a request of a few bytes
// cannot claim gigabytes before it is refused.
const MaxProfileTicks = 1 << 24

// source is one job of a request, validated from its numbers: the phases
// its profile is quantized from, and what they quantize to. Nothing of the
// size of its period has been allocated for it.
type source struct {
	period time.Duration // of FromPhases: 0 for the phases' sum
	phases []profile.Phase
	sum    profile.Summary
	fit    *profile.Fit // of a series or events

	warns     []Warning // what quantizing its phases changes (units.go)
	peakField string    // the JSON path of its largest demand ("" for none)
	peakBps   float64   // that demand, in bits per second
}

// sources validates the job specs, in order, and their sizes: each period
// within the perimeter cap and all of them within MaxProfileTicks.
func (r quantum) sources(specs []JobSpec) ([]source, map[string]int, error) {
	if len(specs) == 0 {
		return nil, nil, fieldError("jobs", link.ErrNoJobs)
	}
	index := make(map[string]int, len(specs))
	out := make([]source, len(specs))
	total := 0
	for i, s := range specs {
		f := elemPath("jobs", i, "")
		if s.ID == "" {
			return nil, nil, fieldError(f+".id", ErrEmptyID)
		}
		if j, dup := index[s.ID]; dup {
			return nil, nil, fieldError(f+".id", fmt.Errorf("%w: %q is also jobs[%d]", ErrDuplicateID, s.ID, j))
		}
		index[s.ID] = i
		src, err := r.source(f, s)
		if err != nil {
			return nil, nil, err
		}
		if total += src.sum.Period; total > MaxProfileTicks {
			return nil, nil, fieldError(f, fmt.Errorf("%w: the jobs up to this one are %d ticks of %v, more than the %d a request's profiles may hold in all (use coarser ticks)",
				ErrTooManyTicks, total, r.q.Tick, MaxProfileTicks))
		}
		out[i] = src
	}
	return out, index, nil
}

// build quantizes the sources (validated: it cannot fail), checking the
// context between jobs, when they are link.WatchedTicks ticks or more in
// all, so that a time limit covers the profiles too.
func (r quantum) build(ctx context.Context, srcs []source) ([]profile.Profile, error) {
	out := make([]profile.Profile, len(srcs))
	ticks := 0
	for _, s := range srcs {
		ticks += s.sum.Period
	}
	for i, s := range srcs {
		if ticks >= link.WatchedTicks && deadline.Done(ctx) {
			return nil, r.late("profiles")
		}
		p, err := profile.FromPhases(s.period, s.phases, r.q)
		if err != nil {
			return nil, &Error{Code: CodeInternal, Field: fmt.Sprintf("jobs[%d]", i), Message: "a validated job failed to quantize: " + message(err), err: err}
		}
		out[i] = p
	}
	return out, nil
}

// late is the error of a call whose time limit ended before it had a first
// answer (during what): there is no best-so-far to return yet.
func (r quantum) late(what string) *Error {
	return timeLimitError("time_limit_ms", r.timeout, what)
}

// timeLimitError reports that the time limit of field ended during what,
// before the first answer.
func timeLimitError(field string, limit time.Duration, what string) *Error {
	err := fmt.Errorf("%w: the %v limit ended while building the %s, before a first answer", ErrTimeLimit, limit, what)
	return &Error{Code: CodeLimit, Field: field, Message: message(err) + " (raise the limit: there is no best-so-far yet)", err: err}
}

// source validates one job and returns its phases.
func (r quantum) source(f string, s JobSpec) (source, error) {
	if s.Series != nil || s.Events != nil {
		return r.measured(f, s)
	}
	var period time.Duration
	if s.PeriodMs != nil {
		d, err := duration(f+".period_ms", *s.PeriodMs)
		if err != nil {
			return source{}, err
		}
		if d == 0 {
			return source{}, fieldError(f+".period_ms", profile.ErrZeroPeriod)
		}
		period = d
	}
	switch {
	case len(s.Phases) > 0 && s.Samples != nil:
		return source{}, fieldError(f, ErrPhasesAndSamples)
	case s.Samples != nil:
		return r.samples(f, period, s.Samples)
	default:
		return r.phases(f, period, s.Phases)
	}
}

// samples validates a job given as samples.
func (r quantum) samples(f string, period time.Duration, s *SamplesSpec) (source, error) {
	iv, err := duration(f+".samples.interval_ms", s.IntervalMs)
	if err != nil {
		return source{}, err
	}
	if iv == 0 && s.IntervalMs > 0 {
		return source{}, fieldError(f+".samples.interval_ms", fmt.Errorf("%w: %v ms is under a nanosecond", profile.ErrInvalidDuration, s.IntervalMs))
	}
	if iv > 0 && len(s.Gbps) > 0 {
		total := time.Duration(math.MaxInt64)
		if int64(len(s.Gbps)) <= math.MaxInt64/int64(iv) {
			total = time.Duration(len(s.Gbps)) * iv
		}
		if err := r.fits(f+".period_ms", total); err != nil {
			return source{}, err
		}
	}
	if iv <= 0 {
		return source{}, profileError(f, "samples.interval_ms", "samples.gbps", fmt.Errorf("%w: sample interval %v", profile.ErrInvalidDuration, iv))
	}
	if len(s.Gbps) == 0 {
		return source{}, profileError(f, "samples.interval_ms", "samples.gbps", profile.ErrNoPhases)
	}
	phases := make([]profile.Phase, len(s.Gbps))
	for k, g := range s.Gbps {
		b, err := r.demand("", g)
		if err != nil {
			return source{}, withField(err, elemPath(f+".samples.gbps", k, ""))
		}
		phases[k] = profile.Phase{Duration: iv, Bandwidth: b}
	}
	sum, err := profile.Summarize(0, phases, r.q)
	if err != nil {
		return source{}, profileError(f, "samples.interval_ms", "samples.gbps", err)
	}
	total := time.Duration(len(phases)) * iv
	if period != 0 && total != period {
		return source{}, fieldError(f+".period_ms", fmt.Errorf("%w: %d samples of %v is not %v", profile.ErrPeriodMismatch, len(phases), iv, period))
	}
	field := f + ".samples.interval_ms"
	if period != 0 {
		field = f + ".period_ms"
	}
	var w warnings
	if err := r.shortPeriod(&w, field, total, sum.Period); err != nil {
		return source{}, err
	}
	src := source{phases: phases, sum: sum}
	r.tickWarnings(&w, field, total, sum.Period, phases[:1], func(int) string { return f + ".samples.interval_ms" })
	src.warns = w.list
	if k := peak(phases); k >= 0 {
		src.peakField, src.peakBps = elemPath(f+".samples.gbps", k, ""), phases[k].Bandwidth
	}
	return src, nil
}

// phases validates a job given as phases.
func (r quantum) phases(f string, period time.Duration, specs []PhaseSpec) (source, error) {
	phases := make([]profile.Phase, len(specs))
	for k, ph := range specs {
		d, err := duration("", ph.Ms)
		if err != nil {
			return source{}, withField(err, elemPath(f+".phases", k, ".ms"))
		}
		b, err := r.demand("", ph.Gbps)
		if err != nil {
			return source{}, withField(err, elemPath(f+".phases", k, ".gbps"))
		}
		phases[k] = profile.Phase{Duration: d, Bandwidth: b}
	}
	total := period
	if total == 0 {
		for _, ph := range phases {
			total = min(total, math.MaxInt64-ph.Duration) + ph.Duration // saturates
		}
	}
	if err := r.fits(f+".period_ms", total); err != nil {
		return source{}, err
	}
	sum, err := profile.Summarize(period, phases, r.q)
	if err != nil {
		return source{}, profileError(f, "phases", "phases", err)
	}
	field := f + ".phases"
	if period != 0 {
		field = f + ".period_ms"
	}
	var w warnings
	if err := r.shortPeriod(&w, field, total, sum.Period); err != nil {
		return source{}, err
	}
	src := source{period: period, phases: phases, sum: sum}
	r.tickWarnings(&w, field, total, sum.Period, phases, func(k int) string { return elemPath(f+".phases", k, ".ms") })
	src.warns = w.list
	if k := peak(phases); k >= 0 {
		src.peakField, src.peakBps = elemPath(f+".phases", k, ".gbps"), phases[k].Bandwidth
	}
	return src, nil
}

// bitsPerSecond converts a bandwidth in Gbps. A finite value too large for
// bits per second is too large a demand, not an infinite one.
func bitsPerSecond(field string, gbps float64) (float64, error) {
	b := gbps * profile.Gbps
	if math.IsInf(b, 0) && !math.IsInf(gbps, 0) {
		if b < 0 {
			return 0, fieldError(field, fmt.Errorf("%w: %v Gbps", profile.ErrInvalidBandwidth, gbps))
		}
		return 0, fieldError(field, fmt.Errorf("%w: %v Gbps", profile.ErrDemandTooLarge, gbps))
	}
	return b, nil
}

// fits checks, before a profile is quantized, that a period is no longer
// than the perimeter cap: no unified circle could hold it, and quantizing it
// first would let a small request allocate gigabytes.
func (r quantum) fits(field string, period time.Duration) error {
	limit := r.opt.Circle.PerimeterCap()
	tick := r.q.Tick
	ticks := period / tick
	if period%tick != 0 {
		ticks++
	}
	if ticks > time.Duration(limit) {
		return fieldError(field, fmt.Errorf("%w: a period of %v is %d ticks of %v, more than the %d-tick cap (max_perimeter_ticks)", circle.ErrPerimeterTooLarge, period, int64(ticks), tick, limit))
	}
	return nil
}

// profileError names the field of a profile error.
func profileError(job, durations, bandwidths string, err error) *Error {
	var pe *profile.PhaseError
	if errors.As(err, &pe) {
		field := "ms"
		if durations != "phases" {
			return fieldError(fmt.Sprintf("%s.%s[%d]", job, bandwidths, pe.Index), err)
		}
		if !errors.Is(pe.Err, profile.ErrInvalidDuration) {
			field = "gbps"
		}
		return fieldError(fmt.Sprintf("%s.phases[%d].%s", job, pe.Index, field), err)
	}
	switch {
	case errors.Is(err, profile.ErrNoPhases):
		return fieldError(job+"."+bandwidths, err)
	case errors.Is(err, profile.ErrInvalidDuration):
		return fieldError(job+"."+durations, err)
	case errors.Is(err, profile.ErrPeriodMismatch), errors.Is(err, profile.ErrPeriodTooLong), errors.Is(err, profile.ErrZeroPeriod):
		return fieldError(job+".period_ms", err)
	}
	return fieldError(job, err)
}

// workspaces keeps link-search workspaces between calls: a warm one searches
// without allocating its unified circles again. It holds no state a caller
// could observe.
var workspaces = sync.Pool{New: func() any { return new(link.Workspace) }}

// rankers does the same for rankings.
var rankers = sync.Pool{New: func() any { return new(candidate.Workspace) }}

// Problem returns the link search the request describes, quantized to its
// tick and unit, and the search options it sets: what "cassini.link" runs,
// for callers that drive a link.Workspace (or the module's link_search fast
// path) themselves. Its time_limit_ms has no link.Options field and is left
// to the caller's context. A bad request gives the same *Error as the op.
func (req LinkRequest) Problem() (link.Problem, link.Options, error) {
	pr, r, _, err := req.problem()
	if err != nil {
		return link.Problem{}, link.Options{}, err
	}
	return pr, r.opt, nil
}

// measure and limits refuse a link of more than link.MaxJobs jobs before
// it is decoded.
func (req *LinkRequest) measure() []string { return []string{"jobs"} }

func (req *LinkRequest) limits(m *codec.Measures) error {
	if _, n := m.Get("jobs"); n > link.MaxJobs {
		return fieldError("jobs", link.Options{}.Check(make([]int, n), 0))
	}
	return nil
}

func (req LinkRequest) problem() (link.Problem, quantum, []Warning, error) {
	return req.problemBy(context.Background())
}

// problemBy is problem with a context: building the profiles stops when it
// ends. It also returns the request's warnings.
func (req LinkRequest) problemBy(ctx context.Context) (link.Problem, quantum, []Warning, error) {
	r, err := req.SearchSpec.parse()
	if err != nil {
		return link.Problem{}, r, nil, err
	}
	c, err := r.capacityUnits("capacity_gbps", req.CapacityGbps)
	if err != nil {
		return link.Problem{}, r, nil, err
	}
	if len(req.Jobs) > link.MaxJobs {
		return link.Problem{}, r, nil, fieldError("jobs", link.Options{}.Check(make([]int, len(req.Jobs)), 0))
	}
	srcs, _, err := r.sources(req.Jobs)
	if err != nil {
		return link.Problem{}, r, nil, err
	}
	var w warnings
	where := fmt.Sprintf("the link's capacity of %s Gbps", strconv.FormatFloat(req.CapacityGbps, 'g', -1, 64))
	for _, s := range srcs {
		for _, x := range s.warns {
			w.add(x.Field, "%s", x.Message)
		}
		r.demandWarning(&w, s, c, where)
	}
	// Every limit of the search, from the periods and peaks alone, before
	// a profile is built: a refused link costs what its request's bytes do.
	periods := make([]int, len(srcs))
	var peak int64
	for j, s := range srcs {
		periods[j], peak = s.sum.Period, peak+int64(s.sum.Peak)
	}
	if err := r.opt.Check(periods, peak); err != nil {
		return link.Problem{}, r, nil, fieldError("jobs", err)
	}
	jobs, err := r.build(ctx, srcs)
	if err != nil {
		return link.Problem{}, r, nil, err
	}
	return link.Problem{Jobs: jobs, Capacity: c}, r, w.done(), nil
}

// Link runs "cassini.link": the rotation search of the jobs sharing one
// link, the paper's Table 1. Errors are *Error values naming the request's
// field by its JSON path ("jobs[1].phases[0].gbps"). The time limit covers
// the whole call: the profiles, the search's setup and the search.
func Link(ctx context.Context, req LinkRequest) (LinkResponse, error) {
	if err := checkFloats("", &req); err != nil {
		return LinkResponse{}, err
	}
	return linkOp(ctx, req)
}

// linkOp is Link on a decoded request (which holds no bad float).
func linkOp(ctx context.Context, req LinkRequest) (LinkResponse, error) {
	r, err := req.SearchSpec.parse()
	if err != nil {
		return LinkResponse{}, err
	}
	ctx, cancel := withLimit(ctx, r.timeout)
	defer cancel()
	pr, r, warns, err := req.problemBy(ctx)
	if err != nil {
		return LinkResponse{}, err
	}
	jobs := pr.Jobs
	w := workspaces.Get().(*link.Workspace)
	defer workspaces.Put(w)
	res, err := w.Search(ctx, pr, r.opt, nil)
	if errors.Is(err, link.ErrTimeLimit) {
		return LinkResponse{}, r.late("search's circle")
	}
	if err != nil {
		return LinkResponse{}, fieldError("jobs", err)
	}
	resp := LinkResponse{
		Score:          res.Score,
		UnshiftedScore: res.Unshifted,
		Bound:          res.Bound,
		Status:         res.Status.String(),
		Mode:           r.opt.Mode.String(),
		PerimeterMs:    r.ms(float64(res.Circle.Perimeter)),
		Points:         res.Points,
		ShiftsMs:       make(map[string]float64, len(jobs)),
		RotationsDeg:   make(map[string]float64, len(jobs)),
		PeriodsMs:      make(map[string]float64, len(jobs)),
		CommOffsetsMs:  make(map[string]float64, len(jobs)),
		Evaluations:    res.Evaluated,
		Warnings:       warns,
	}
	// In paper mode each of the 72 points stands for perimeter/72 ticks.
	ticks := float64(res.Excess)
	if r.opt.Mode == link.Paper {
		ticks *= float64(res.Circle.Perimeter) / link.PaperAngles
	}
	resp.ExcessGbit = r.gbit(ticks)
	if res.Circle.Rounded() {
		resp.GridMs = r.ms(float64(res.Circle.Grid))
		resp.ScorePeriods = "rounded"
		if u := res.Unrounded; u.Points > 0 {
			ticks := float64(u.Excess)
			if r.opt.Mode == link.Paper {
				ticks *= float64(u.Perimeter) / link.PaperAngles
			}
			score, gbit, ms := u.Score, r.gbit(ticks), r.ms(float64(u.Perimeter))
			resp.UnroundedScore, resp.UnroundedExcessGbit, resp.UnroundedPerimeterMs = &score, &gbit, &ms
		}
	}
	for i, s := range req.Jobs {
		resp.ShiftsMs[s.ID] = r.ms(float64(res.Shifts[i]))
		resp.RotationsDeg[s.ID] = 360 * float64(res.Shifts[i]) / float64(res.Circle.Perimeter)
		resp.PeriodsMs[s.ID] = r.ms(float64(res.Circle.Periods[i]))
		resp.CommOffsetsMs[s.ID] = r.ms(float64(jobs[i].CommOffset()))
	}
	all := make([]int, len(jobs))
	for i := range all {
		all[i] = i
	}
	centred, copt := slices.Clone(res.Shifts), r.opt
	if res.Circle.Rounded() { // the shifts are on the rounded periods: pad to them
		copt.Circle.Round = false
		pr.Jobs = slices.Clone(pr.Jobs)
		for i, p := range pr.Jobs {
			d := make([]int32, res.Circle.Periods[i])
			copy(d, p.Demand)
			pr.Jobs[i] = profile.Profile{Period: len(d), Demand: d}
		}
	}
	shared := []link.Shared{{Jobs: all, Problem: pr}}
	rooms, err := link.Centre(ctx, shared, res.Circle.Periods, centred, nil, copt)
	if err != nil {
		return LinkResponse{}, fieldError("jobs", err)
	}
	link.Anchor(shared, res.Circle.Periods, res.Shifts, centred, nil)
	resp.CentredShiftsMs, resp.ShiftRoomMs = r.centred(req.Jobs, centred, rooms)
	return resp, nil
}

// centred converts centred shifts and their rooms to the jobs' ids and
// milliseconds; a job no shared link carries has no room.
func (r quantum) centred(jobs []JobSpec, shifts []int, rooms []link.Room) (map[string]float64, map[string]ShiftRoom) {
	cs, rs := make(map[string]float64, len(jobs)), make(map[string]ShiftRoom, len(jobs))
	for i, s := range jobs {
		cs[s.ID] = r.ms(float64(shifts[i]))
		if rm := rooms[i]; rm.Bound {
			rs[s.ID] = ShiftRoom{EarlyMs: r.ms(float64(rm.Early)), LateMs: r.ms(float64(rm.Late)), Partial: rm.Partial}
		}
	}
	return cs, rs
}
