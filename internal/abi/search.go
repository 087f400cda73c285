package abi

import (
	"context"
	"fmt"
	"math"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/scratch"
)

// MaxSearchCells is link_search's link.Options.MaxCells: it bounds an
// exact search's jobs times perimeter (ticks of the unified circle). The
// workspace holds about four int32s per cell, so this keeps one search
// within about 512 MiB, far inside a 32-bit linear memory; larger searches
// are Limit errors instead of an out-of-memory trap.
const MaxSearchCells = 1 << 25

// Limits of the options, the same as the JSON schema's.
const (
	maxPerimeter = profile.MaxPeriodTicks
	maxRestarts  = 1 << 16
)

// DemandLen returns how many int32 values the demand array of a search
// with these periods holds (their sum), or -1 when a period is outside
// [1, profile.MaxPeriodTicks]: then Search reports the bad period without
// reading the demand, so a host must not read (or check) that array.
func DemandLen(periods []int32) int {
	total := 0
	for _, t := range periods {
		if t < 1 || t > profile.MaxPeriodTicks {
			return -1
		}
		total += int(t)
	}
	return total
}

// Searcher runs link_search: the rotation search of package link on flat
// int32 arrays. It keeps its link.Workspace across calls, so once it has
// seen a problem of a given size, searching problems of that size or
// smaller allocates nothing. It is not safe for concurrent use. The zero
// value is ready.
type Searcher struct {
	w     link.Workspace
	jobs  []profile.Profile
	fixed []int
	dst   []int
}

// Search solves the link problem of len(periods) jobs whose per-tick
// demands are concatenated in demand, on a link of the given capacity
// (units), writes each job's shift (ticks) into shifts and the rest into
// res. fixed is nil or one shift per job (-1: free); opt nil means the
// defaults. On an error it writes the reason into res.Message and leaves
// shifts unspecified. It never panics: a panic in the engine is Internal.
func (s *Searcher) Search(periods, demand []int32, capacity int32, fixed []int32, opt *LinkOptions, shifts []int32, res *LinkResult) (code Code) {
	defer func() {
		if p := recover(); p != nil {
			*res = LinkResult{}
			res.setMessage(fmt.Sprintf("internal: panic: %v", p))
			code = Internal
		}
		for j := range s.jobs {
			s.jobs[j].Demand = nil // do not keep the caller's memory alive
		}
	}()
	*res = LinkResult{}
	k := len(periods)
	if k == 0 {
		return fail(res, Invalid, "k", link.ErrNoJobs)
	}
	if len(shifts) != k {
		return fail(res, Invalid, "shifts", fmt.Errorf("%w: %d shifts for %d jobs", link.ErrFixed, len(shifts), k))
	}
	if fixed != nil && len(fixed) != k {
		return fail(res, Invalid, "fixed", fmt.Errorf("%w: %d entries for %d jobs", link.ErrFixed, len(fixed), k))
	}
	var o LinkOptions
	if opt != nil {
		o = *opt
	}
	lo, code, err := o.linkOptions()
	if err != nil {
		return fail(res, code, "options", err)
	}
	var total int64
	for j, t := range periods {
		switch {
		case t < 1:
			return fail(res, Invalid, "periods", fmt.Errorf("job %d: %w", j, profile.ErrZeroPeriod))
		case t > profile.MaxPeriodTicks:
			return fail(res, Limit, "periods", fmt.Errorf("job %d: %w: %d ticks", j, profile.ErrPeriodTooLong, t))
		}
		total += int64(t)
	}
	if total != int64(len(demand)) {
		return fail(res, Invalid, "demand", fmt.Errorf("%w: %d demands for periods summing to %d ticks", profile.ErrPeriodMismatch, len(demand), total))
	}

	s.jobs = scratch.Resize(s.jobs, k)
	var off int
	for j, t := range periods {
		s.jobs[j] = profile.Profile{Period: int(t), Demand: demand[off : off+int(t) : off+int(t)]}
		off += int(t)
	}
	pr := link.Problem{Jobs: s.jobs, Capacity: capacity}
	if fixed != nil {
		s.fixed = scratch.Resize(s.fixed, k)
		for j, t := range fixed {
			s.fixed[j] = int(t)
		}
		pr.Fixed = s.fixed
	}
	r, err := s.w.Search(context.Background(), pr, lo, s.dst)
	if err != nil {
		return fail(res, classify(err), "", err)
	}
	if r.Circle.Perimeter > math.MaxInt32 {
		// The result's fields are int32; the search itself is fine.
		return fail(res, Limit, "", fmt.Errorf("%w: the unified circle of %d ticks does not fit the result's int32 perimeter", circle.ErrPerimeterTooLarge, r.Circle.Perimeter))
	}
	s.dst = r.Shifts
	for j, t := range r.Shifts {
		shifts[j] = int32(t)
	}
	*res = LinkResult{
		Status:      int32(r.Status),
		Points:      int32(r.Points),
		Perimeter:   int32(r.Circle.Perimeter),
		Grid:        int32(r.Circle.Grid),
		Excess:      r.Excess,
		Evaluations: r.Evaluated,
		Score:       r.Score,
		Bound:       r.Bound,
		Unshifted:   r.Unshifted,
	}
	return OK
}

// linkOptions validates o and converts it.
func (o LinkOptions) linkOptions() (link.Options, Code, error) {
	var lo link.Options
	switch o.Mode {
	case 0:
		lo.Mode = link.Exact
	case 1:
		lo.Mode = link.Paper
	default:
		return lo, Invalid, fmt.Errorf("%w: mode %d (want 0 exact or 1 paper)", link.ErrInvalidOption, o.Mode)
	}
	if o.MaxPerimeter < 0 || o.MaxPerimeter > maxPerimeter {
		return lo, Invalid, fmt.Errorf("%w: max_perimeter %d (want 0..%d)", link.ErrInvalidOption, o.MaxPerimeter, maxPerimeter)
	}
	if o.RoundPeriods != 0 && o.RoundPeriods != 1 {
		return lo, Invalid, fmt.Errorf("%w: round_periods %d (want 0 or 1)", link.ErrInvalidOption, o.RoundPeriods)
	}
	if o.Budget < -1 {
		return lo, Invalid, fmt.Errorf("%w: budget %d (want -1 unlimited, 0 default, or > 0)", link.ErrInvalidOption, o.Budget)
	}
	if o.Restarts < 0 || o.Restarts > maxRestarts {
		return lo, Invalid, fmt.Errorf("%w: restarts %d (want 0..%d)", link.ErrInvalidOption, o.Restarts, maxRestarts)
	}
	lo.Circle = circle.Options{MaxPerimeter: int(o.MaxPerimeter), Round: o.RoundPeriods == 1}
	lo.Budget = o.Budget
	lo.Restarts = int(o.Restarts)
	lo.Seed = o.Seed
	lo.MaxCells = MaxSearchCells
	return lo, OK, nil
}

// classify maps an engine error to a code, as the JSON schema does.
func classify(err error) Code {
	if link.IsLimit(err) {
		return Limit
	}
	return Invalid
}

func fail(res *LinkResult, c Code, field string, err error) Code {
	msg := err.Error()
	if field != "" {
		msg = field + ": " + msg
	}
	res.setMessage(msg)
	return c
}
