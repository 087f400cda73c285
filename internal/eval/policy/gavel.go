package policy

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/internal/eval/sim"
)

// DefaultResetInterval is Gavel's minimum_time_between_allocation_resets:
// in simulation the allocation is recomputed at most this often (seconds).
const DefaultResetInterval = 1000.0

// GavelOptions configure [Gavel]. The zero value is the authors' simulator.
type GavelOptions struct {
	// ResetInterval is the minimum time between allocation recomputations;
	// 0 means 1000 s; a negative value recomputes at every round in which
	// the job set (or a job's state) changed.
	ResetInterval float64
}

// Gavel turns an allocation of time fractions into rounds with Gavel's
// round-based mechanism (scheduler.py: _update_priorities,
// _schedule_jobs_on_workers_helper), for a homogeneous cluster:
//
//   - The allocation x is recomputed by the [Allocator] when jobs arrived,
//     completed or failed since the last recomputation, and at least
//     ResetInterval seconds have passed (or no reset has happened after
//     time 0). A recomputation first resets the time accounts: every job's
//     deficit grows by x_j·(time since the last reset) − (time it received),
//     and every job's time restarts at Δ/2.
//   - Each round, a job's priority is x_j divided by the fraction of the
//     time accounted since the reset that it received (x_j·10⁹ if none;
//     0 for a job absent from the allocation or with x_j = 0).
//   - Jobs are taken in decreasing (priority, deficit, x_j) order, ties in
//     arrival order, skipping those that do not fit the GPUs left.
//
// As upstream, a job that arrived after the last recomputation is absent
// from the allocation: it still uses up GPUs in the greedy pass but is not
// placed, so it waits for the next recomputation unless the cluster has
// room to spare.
type Gavel struct {
	alloc Allocator
	opts  GavelOptions

	fresh      []int // admitted since the last Schedule
	jobTime    map[int]float64
	deficit    map[int]float64
	x          map[int]float64
	workerTime float64
	lastReset  float64
	needUpdate bool
	resets     int

	dem  []Demand
	frac []float64
	ent  []entry
	out  []int
}

type entry struct {
	id, gpus int
	tput     float64
	pri, def float64
	x        float64
	inAlloc  bool
}

// NewGavel returns the round mechanism around a.
func NewGavel(a Allocator, opts GavelOptions) (*Gavel, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: no allocator", ErrInvalid)
	}
	if opts.ResetInterval != opts.ResetInterval {
		return nil, fmt.Errorf("%w: ResetInterval is NaN", ErrInvalid)
	}
	return &Gavel{alloc: a, opts: opts, jobTime: map[int]float64{}, deficit: map[int]float64{},
		x: map[int]float64{}, needUpdate: true}, nil
}

// Name returns the allocator's name.
func (g *Gavel) Name() string { return g.alloc.Name() }

// Stats reports the number of allocation recomputations ("resets").
func (g *Gavel) Stats() []sim.Stat {
	return []sim.Stat{{Name: "resets", Value: float64(g.resets)}}
}

// Admit implements sim.Policy.
func (g *Gavel) Admit(j *sim.Job) error {
	if _, dup := g.jobTime[j.ID]; dup || slices.Contains(g.fresh, j.ID) {
		return fmt.Errorf("%w: job %d admitted twice", ErrInvalid, j.ID)
	}
	g.fresh = append(g.fresh, j.ID)
	g.needUpdate = true
	return nil
}

// EndRound implements sim.Policy: successful leases add their time to the
// job's and the cluster's accounts; completions and failures ask for a new
// allocation.
func (g *Gavel) EndRound(r *sim.Report) error {
	for _, l := range r.Leases {
		if l.Failed {
			g.needUpdate = true
		} else if t, ok := g.jobTime[l.ID]; ok {
			g.jobTime[l.ID] = t + l.Exec
			g.workerTime += l.Exec
		}
		if l.Finished {
			delete(g.jobTime, l.ID)
			delete(g.deficit, l.ID)
			g.needUpdate = true
		}
	}
	return nil
}

// Schedule implements sim.Policy.
func (g *Gavel) Schedule(ctx context.Context, s *sim.State) ([]int, error) {
	half := float64(s.RoundSeconds / 2) // rounded here: no fused multiply-add downstream
	for _, id := range g.fresh {
		g.jobTime[id], g.deficit[id] = half, 0
	}
	g.fresh = g.fresh[:0]
	interval := g.opts.ResetInterval
	if interval == 0 {
		interval = DefaultResetInterval
	}
	if g.needUpdate && (interval < 0 || s.Now-g.lastReset >= interval || g.lastReset == 0) {
		g.reset(s.Now, half, s.Jobs)
		if err := g.allocate(s); err != nil {
			return nil, err
		}
		g.needUpdate = false
	}
	g.ent = g.ent[:0]
	for i := range s.Jobs {
		j := &s.Jobs[i]
		e := entry{id: j.ID, gpus: j.GPUs, tput: j.Throughput, def: g.deficit[j.ID]}
		e.x, e.inAlloc = g.x[j.ID]
		if e.inAlloc && e.x != 0 && e.tput != 0 {
			e.pri = e.x * 1e9
			if g.workerTime != 0 {
				if frac := g.jobTime[j.ID] / g.workerTime; frac > 0 {
					e.pri = e.x / frac
				}
			}
		}
		g.ent = append(g.ent, e)
	}
	slices.SortStableFunc(g.ent, func(a, b entry) int {
		return cmp.Or(cmp.Compare(b.pri, a.pri), cmp.Compare(b.def, a.def), cmp.Compare(b.x, a.x))
	})
	g.out = g.out[:0]
	left := s.GPUs
	for _, e := range g.ent {
		if e.tput <= 0 || e.gpus > left {
			continue
		}
		left -= e.gpus
		if e.inAlloc {
			g.out = append(g.out, e.id)
		}
	}
	return g.out, nil
}

// reset closes the accounting period (upstream _reset_time_run_so_far) for
// the active jobs, in admission order.
func (g *Gavel) reset(now, half float64, jobs []sim.Job) {
	elapsed := now - g.lastReset
	g.workerTime = 0
	for i := range jobs {
		id := jobs[i].ID
		received := g.jobTime[id] - half
		should := float64(g.x[id] * elapsed) // 0 when absent from the allocation
		g.deficit[id] += should - received
		g.jobTime[id] = half
		g.workerTime += half
	}
	g.lastReset = now
	g.resets++
}

// allocate recomputes the allocation for the active jobs.
func (g *Gavel) allocate(s *sim.State) error {
	g.dem = g.dem[:0]
	for i := range s.Jobs {
		j := &s.Jobs[i]
		g.dem = append(g.dem, Demand{ID: j.ID, GPUs: j.GPUs, Throughput: j.Throughput,
			Remaining: float64(j.Remaining()), Elapsed: s.Now - j.Arrival, Weight: j.Weight})
	}
	g.frac = slices.Grow(g.frac[:0], len(g.dem))[:len(g.dem)]
	if err := g.alloc.Allocate(g.frac, g.dem, s.GPUs); err != nil {
		return err
	}
	clear(g.x)
	for i := range g.dem {
		g.x[g.dem[i].ID] = min(max(g.frac[i], 0), 1)
	}
	return nil
}
