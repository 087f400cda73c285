package link

import (
	"context"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/scratch"
	"github.com/orrery/orrery/kernels"
)

// Checker scores one link problem at many shift vectors without searching:
// the excess of given shifts ([Checker.Excess]) and of every candidate shift
// of one job with the others held ([Checker.Scan]), on the points
// [Workspace.Search] scores (every tick in Exact mode, the 72 sample points
// in Paper mode). It is what a caller needs to test shift vectors against a
// link's optimum, or to list the shifts a search ties between, which
// [Workspace.Search] reports only one of (the lexicographically smallest).
// It lays the problem out as the search does (on the shared circle, or the
// whole unified circle where that is cheaper), so it takes any periods the
// search takes.
//
// The zero value is ready; [Checker.Reset] prepares a problem (copying its
// demand: the caller may reuse its slices) and reuses the buffers of earlier
// ones. A Checker is not safe for concurrent use.
type Checker struct {
	w       Workspace
	jobs    []profile.Profile // copies: the caller may reuse its problem's slices
	demand  []int32
	fixed   []int  // zeros: Reset's shifts, every job held
	rotorOK []bool // per job: its rotor is built for this problem
}

// Reset prepares pr (pr.Fixed is ignored) with opt's mode and circle
// options; opt's search settings (budget, restarts) do not apply. It
// returns the errors [Workspace.Search] returns for the same problem.
func (c *Checker) Reset(pr Problem, opt Options) error {
	n := 0
	for _, jb := range pr.Jobs {
		n += len(jb.Demand)
	}
	c.demand = scratch.Resize(c.demand, n)[:0]
	c.jobs = c.jobs[:0]
	for _, jb := range pr.Jobs {
		lo := len(c.demand)
		c.demand = append(c.demand, jb.Demand...)
		c.jobs = append(c.jobs, profile.Profile{Period: jb.Period, Demand: c.demand[lo:len(c.demand):len(c.demand)]})
	}
	pr.Jobs = c.jobs
	c.fixed = scratch.Resize(c.fixed, len(pr.Jobs))
	clear(c.fixed)
	pr.Fixed = c.fixed
	w := &c.w
	w.every = true
	err := w.setup(context.Background(), pr, opt)
	w.every = false
	if err != nil {
		return err
	}
	c.rotorOK = scratch.Resize(c.rotorOK, len(pr.Jobs))
	clear(c.rotorOK)
	return nil
}

// Checker returns a Checker that belongs to w, for a caller that scores
// link problems beside w's searches (each with its own buffers): one
// Checker per workspace, so its buffers (the unified circle's tiles and
// rotors) are reused from call to call rather than allocated for each. It
// is as safe for concurrent use as w: not at all. A nil w gives a new
// Checker.
func (w *Workspace) Checker() *Checker {
	if w == nil {
		return new(Checker)
	}
	if w.checker == nil {
		w.checker = new(Checker)
	}
	return w.checker
}

// Perimeter returns the unified circle's perimeter in ticks.
func (c *Checker) Perimeter() int { return c.w.p }

// Points returns |A|: the perimeter in Exact mode, 72 in Paper mode.
func (c *Checker) Points() int { return c.w.points }

// Period returns job j's period on the circle (rounded up when the circle
// options round).
func (c *Checker) Period(j int) int { return c.w.periods[j] }

// Candidates returns how many shifts of job j [Checker.Scan] scores. In
// Exact mode the excess depends on job j's shift only modulo this number,
// gcd(T_j, LCM of the other jobs' periods), so shifts 0 to Candidates-1
// stand for every shift. In Paper mode they are job j's 5-degree rotations
// within one of its periods, the only shifts the paper's search tries.
func (c *Checker) Candidates(j int) int {
	w := &c.w
	switch {
	case w.mode == Paper:
		return w.ncand[j]
	case len(w.periods) == 1:
		return w.periods[0]
	}
	return circle.GCD(w.periods[j], w.q)
}

// Shift returns the time shift in ticks of a job's m-th candidate: m in
// Exact mode, floor(m*p/72) in Paper mode (Eq. 5).
func (c *Checker) Shift(m int) int { return c.w.shiftOf(m) }

// Evaluated returns the pair evaluations (as Result.Evaluated counts them)
// spent since Reset.
func (c *Checker) Evaluated() int64 { return c.w.evals }

// Excess returns the excess of the given shifts (one per job, in ticks, any
// integer), summed over the points: what [Workspace.Evaluate] returns.
func (c *Checker) Excess(shifts []int) int64 {
	w := &c.w
	if len(shifts) != len(w.periods) {
		panic("link: Checker.Excess: one shift per job")
	}
	c.hold(shifts)
	return w.mu * w.evaluate(w.cur)
}

// hold sets every job's shift, within its period.
func (c *Checker) hold(shifts []int) {
	for j, t := range shifts {
		c.w.cur[j] = circle.Mod(t, c.w.periods[j])
	}
}

// Scan writes into dst (grown if needed) the excess with every job but j at
// its entry of shifts and job j at each of its candidate shifts
// [Checker.Shift](m), m below [Checker.Candidates](j), and returns it;
// shifts[j] is ignored.
func (c *Checker) Scan(dst []int64, shifts []int, j int) []int64 {
	w := &c.w
	if len(shifts) != len(w.periods) || j < 0 || j >= len(w.periods) {
		panic("link: Checker.Scan: one shift per job and a job index")
	}
	c.hold(shifts)
	base := w.sum
	clear(base)
	for i, t := range w.cur {
		if i != j {
			w.addView(base, i, t)
		}
	}
	nc := c.Candidates(j)
	dst = scratch.Resize(dst, nc)
	// The layout may repeat job j's excess with a shorter modulus (its
	// classes folded): scan that, and repeat it.
	m := w.ncand[j]
	if w.mode == Exact {
		m = w.mods[j]
	}
	w.ncand[j] = m
	w.out, w.tmp = scratch.Resize(w.out, m), scratch.Resize(w.tmp, m)
	if w.mode == Exact && w.kind[j] == onCircle && m > fewShifts && !c.rotorOK[j] {
		w.rotors[j] = kernels.PrepareRotor(w.rotors[j][:0], w.tiles[j])
		c.rotorOK[j] = true
	}
	w.leaf(base, j, w.out, false)
	for s := range dst {
		dst[s] = w.mu * w.out[s%m]
	}
	return dst
}
