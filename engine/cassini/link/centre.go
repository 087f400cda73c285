package link

import (
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
)

// Room is how far one job's time shift may move, every other job held,
// before the excess of one of its links passes what it is at the shift:
// Early ticks earlier and Late ticks later, each at most half the job's
// period less a tick. Every shift from shift-Early to shift+Late scores
// what the shift does; the next one on either side scores worse, unless
// the half-period cap stopped the walk first.
type Room struct {
	Early, Late int
	// Bound says some link carries the job: without one nothing bounds
	// its shift, and Early and Late are 0.
	Bound bool
	// Partial says the budget or the context ended the walk: the room is
	// at least Early and Late (and the job was centred in that much).
	Partial bool
}

// Shared is one link of a [Centre] call: the jobs crossing it, as indices
// into Centre's shifts, and its problem, whose Jobs[k] is the demand of
// job Jobs[k] on it at the period the job holds (padded where the plan
// rounded periods up). Problem.Fixed is ignored.
type Shared struct {
	Jobs    []int
	Problem Problem
	// Pinned: the link's jobs get no room and are not moved (Room{Bound:
	// true}), as for jobs whose periods share no short unified circle
	// and so sweep through every relative phase whatever their shifts.
	Pinned bool
}

// Centre moves each job's shift to the middle of its room and returns
// every job's room at the centred shifts.
//
// A link search breaks ties by the smallest shift vector, which puts a
// shift at the edge of the range of shifts that score the same: two
// interleaved all-reduces back to back, the whole gap after one of them,
// so that the job before the gap may run late by the gap and the job after
// it by nothing. Centred, each gets half the gap: noise that delays either
// job by less than that leaves the links' excess where the plan has it.
//
// The jobs are centred one at a time in index order, each in its room with
// the others at their shifts so far (an earlier job's move changes a later
// one's room), and then every room is measured again at the centred
// shifts. The first job may so move earlier; [Anchor] then delays its
// group back to where it was, which changes no excess and no room. A move stays within the job's room, so the centred shifts score
// on every link at most what the given shifts do (the same, when those are
// optimal). Jobs whose hold entry is true keep their shifts (a running job
// a new placement must not move); so do jobs on no link and on a pinned
// one. periods[j] is job j's period, as its problems hold it; shifts are
// taken modulo it and updated in place.
//
// opt selects the points that are scored ([Exact] every tick, [Paper] the
// 72 angles) and the circle options the problems were searched with; its
// Budget bounds the pair evaluations the walks spend (0 DefaultBudget,
// negative none), as ctx bounds their time: a walk they stop returns a
// Partial room. A job's room on a link costs one scan of its shifts there
// (what one leaf of the search costs), or a step at a time where the scan
// would pass the budget. A link that cannot be laid out (a cell or
// perimeter limit) is an error.
func Centre(ctx context.Context, links []Shared, periods, shifts []int, hold []bool, opt Options) ([]Room, error) {
	if len(shifts) != len(periods) || (hold != nil && len(hold) != len(periods)) {
		return nil, fmt.Errorf("%w: %d shifts, %d periods and %d holds", ErrFixed, len(shifts), len(periods), len(hold))
	}
	for j, p := range periods {
		if p <= 0 {
			return nil, fmt.Errorf("%w: job %d has period %d", ErrFixed, j, p)
		}
		shifts[j] = circle.Mod(shifts[j], p)
	}
	on := make([][]int, len(periods)) // per job, the links carrying it
	c := centring{ctx: ctx, links: links, checkers: make([]Checker, len(links)), periods: periods, opt: opt, budget: opt.Budget}
	if c.budget == 0 {
		c.budget = DefaultBudget
	}
	for i, l := range links {
		if len(l.Jobs) != len(l.Problem.Jobs) {
			return nil, fmt.Errorf("%w: link %d lists %d jobs and %d demands", ErrFixed, i, len(l.Jobs), len(l.Problem.Jobs))
		}
		for k, j := range l.Jobs {
			if j < 0 || j >= len(periods) {
				return nil, fmt.Errorf("%w: link %d carries job %d of %d", ErrFixed, i, j, len(periods))
			}
			if l.Problem.Jobs[k].Period != periods[j] {
				return nil, fmt.Errorf("%w: link %d holds job %d at period %d, the job's is %d", ErrFixed, i, j, l.Problem.Jobs[k].Period, periods[j])
			}
			if slices.Contains(on[j], i) {
				return nil, fmt.Errorf("%w: link %d lists job %d twice", ErrFixed, i, j)
			}
			on[j] = append(on[j], i)
		}
		if l.Pinned {
			continue
		}
		if err := c.checkers[i].Reset(l.Problem, opt); err != nil {
			return nil, fmt.Errorf("link %d: %w", i, err)
		}
	}
	c.sub = make([]int, 0, 8)
	rooms := make([]Room, len(periods))
	for j := range periods {
		if hold != nil && hold[j] {
			continue
		}
		r := c.room(j, on[j], shifts)
		if r.Bound && r.Late != r.Early {
			// Toward zero, as the simulator's agents always have: the
			// middle, a tick early when the room is odd and late-heavy.
			shifts[j] = circle.Mod(shifts[j]+(r.Late-r.Early)/2, periods[j])
		}
	}
	for j := range periods {
		rooms[j] = c.room(j, on[j], shifts)
	}
	return rooms, nil
}

// centring is the state of one Centre call.
type centring struct {
	ctx      context.Context
	budget   int64 // pair evaluations left; negative: no limit
	links    []Shared
	checkers []Checker // one per link, reset once
	periods  []int
	opt      Options
	sub      []int   // a link's jobs' shifts
	scan     []int64 // a job's excess at each of its shifts
}

// room is job j's room at shifts, on the links on.
func (c *centring) room(j int, on []int, shifts []int) Room {
	if len(on) == 0 {
		return Room{}
	}
	per := c.periods[j]
	r := Room{Early: (per - 1) / 2, Late: (per - 1) / 2, Bound: true}
	for _, i := range on {
		l := &c.links[i]
		if l.Pinned {
			return Room{Bound: true}
		}
		k := slices.Index(l.Jobs, j)
		c.sub = c.sub[:0]
		for _, m := range l.Jobs {
			c.sub = append(c.sub, shifts[m])
		}
		ch := &c.checkers[i]
		spent := ch.Evaluated()
		base := ch.Excess(c.sub)
		// excess(t) is the link's excess with job j at shift t; ok is
		// false once the budget or the context stops the walk.
		var excess func(t int) (int64, bool)
		if c.opt.Mode == Exact && (c.budget < 0 || ch.w.scanCost(k) <= c.budget) {
			c.scan = ch.Scan(c.scan, c.sub, k)
			n := len(c.scan) // the excess depends on j's shift modulo n
			excess = func(t int) (int64, bool) { return c.scan[circle.Mod(t, n)], true }
		} else {
			excess = func(t int) (int64, bool) {
				if c.budget >= 0 && ch.Evaluated()-spent >= c.budget || c.ctx.Err() != nil {
					return 0, false
				}
				c.sub[k] = t
				e := ch.Excess(c.sub)
				c.sub[k] = shifts[j]
				return e, true
			}
		}
		reach := func(dir, limit int) int {
			d := 0
			for d < limit {
				e, ok := excess(shifts[j] + dir*(d+1))
				if !ok {
					r.Partial = true
					break
				}
				if e > base {
					break
				}
				d++
			}
			return d
		}
		r.Late, r.Early = reach(1, r.Late), reach(-1, r.Early)
		if c.budget >= 0 {
			c.budget = max(c.budget-(ch.Evaluated()-spent), 0)
		}
	}
	return r
}

// Anchor delays every job of each group of jobs the links connect (a
// connected component of the affinity graph) by the same amount, so that
// the group's first job is back at its shift in from: delaying every job on
// a link alike changes none of its excess nor any job's room, and a search
// fixes its first job where the caller asked (Centre may have moved it
// earlier). A group with a held job is left as it is (the held job did not
// move), and so are the jobs on no link. shifts is updated in place.
func Anchor(links []Shared, periods, from, shifts []int, hold []bool) {
	on := make([]bool, len(periods))
	parent := make([]int, len(periods))
	for j := range parent {
		parent[j] = j
	}
	find := func(j int) int {
		for parent[j] != j {
			parent[j] = parent[parent[j]]
			j = parent[j]
		}
		return j
	}
	for _, l := range links {
		for _, m := range l.Jobs {
			on[m] = true
			if a, b := find(l.Jobs[0]), find(m); a != b {
				parent[max(a, b)] = min(a, b) // the root is the group's first job
			}
		}
	}
	held := make([]bool, len(periods))
	for j := range periods {
		if hold != nil && hold[j] {
			held[find(j)] = true
		}
	}
	delay := make([]int, len(periods)) // per group's first job, before any moves
	for j := range periods {
		delay[j] = from[j] - shifts[j]
	}
	for j := range periods {
		if r := find(j); on[j] && !held[r] {
			shifts[j] = circle.Mod(shifts[j]+delay[r], periods[j])
		}
	}
}
