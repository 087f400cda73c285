package link

import (
	"fmt"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/internal/kernels"
)

// scanDirect is the most shifts Scan sums one by one instead of building a
// rotor for the across-shift kernel.
const scanDirect = 4

// Checker scores one link problem at many shift vectors without searching:
// the excess of given shifts ([Checker.Excess]) and of every candidate shift
// of one job with the others held ([Checker.Scan]), on the points
// [Workspace.Search] scores (every tick in Exact mode, the 72 sample points
// in Paper mode). It is what a caller needs to test shift vectors against a
// link's optimum, or to list the shifts a search ties between, which
// [Workspace.Search] reports only one of (the lexicographically smallest).
//
// The zero value is ready; [Checker.Reset] prepares a problem and reuses
// the buffers of earlier ones. A Checker is not safe for concurrent use.
type Checker struct {
	mode     Mode
	p, n     int // perimeter, points
	capacity int32
	periods  []int
	ncand    []int
	tiles    [][]int32 // Exact: demand tiled over the circle; Paper: demand over one (rounded) period
	rotors   [][]int32 // Exact: built on a job's first Scan
	rotorOK  []bool
	pts      []int // Paper: sample ticks
	sum      []int32
	evals    int64
}

// Reset prepares pr (pr.Fixed is ignored) with opt's mode and circle
// options; opt's search settings (budget, restarts) do not apply. It
// returns the errors [Workspace.Search] returns for the same problem.
func (c *Checker) Reset(pr Problem, opt Options) error {
	k := len(pr.Jobs)
	if k == 0 {
		return ErrNoJobs
	}
	if pr.Capacity < 1 || pr.Capacity > kernels.MaxValue {
		return fmt.Errorf("%w: got %d", ErrCapacity, pr.Capacity)
	}
	if opt.Mode != Exact && opt.Mode != Paper {
		return fmt.Errorf("%w: mode %d", ErrInvalidOption, opt.Mode)
	}
	var peaks int64
	c.periods = grow(c.periods, k)
	for j, jb := range pr.Jobs {
		if err := jb.Validate(); err != nil {
			return fmt.Errorf("job %d: %w", j, err)
		}
		peaks += int64(jb.Peak())
		c.periods[j] = jb.Period
	}
	if peaks > kernels.MaxValue {
		return fmt.Errorf("%w: %d units", ErrDemandTooLarge, peaks)
	}
	u, err := circle.Unify(c.periods, c.periods, opt.Circle)
	if err != nil {
		return err
	}
	c.periods, c.p = u.Periods, u.Perimeter
	if err := opt.CheckCells(k, c.p); err != nil {
		return err
	}
	c.mode, c.capacity, c.evals = opt.Mode, pr.Capacity, 0
	c.tiles = grow2(c.tiles, k, 0)
	c.rotors = grow2(c.rotors, k, 0)
	c.rotorOK = grow(c.rotorOK, k)
	clear(c.rotorOK)
	c.ncand = grow(c.ncand, k)
	if c.mode == Exact {
		c.n = c.p
		for j, jb := range pr.Jobs {
			c.tiles[j] = circle.Tile(c.tiles[j][:0], jb.Demand, c.periods[j], c.p)
		}
	} else {
		c.n = PaperAngles
		c.pts = grow(c.pts, PaperAngles)
		for a := range c.pts {
			c.pts[a] = int(int64(a) * int64(c.p) / PaperAngles)
		}
		for j, jb := range pr.Jobs {
			c.tiles[j] = circle.Tile(c.tiles[j][:0], jb.Demand, c.periods[j], c.periods[j])
		}
	}
	for j := range k {
		c.ncand[j] = c.candidates(j)
	}
	c.sum = grow(c.sum, c.n)
	return nil
}

// candidates mirrors Workspace.candidates: the number of distinct shifts of
// job j (Exact: its shift matters modulo gcd(T_j, LCM of the other
// periods); Paper: its 5-degree rotations within one of its periods).
func (c *Checker) candidates(j int) int {
	t := c.periods[j]
	if c.mode == Paper {
		return int((int64(PaperAngles)*int64(t) + int64(c.p) - 1) / int64(c.p))
	}
	if len(c.periods) == 1 {
		return t
	}
	l := 1
	for i, u := range c.periods {
		if i != j {
			l = l / circle.GCD(l, u) * u
		}
	}
	return circle.GCD(t, l)
}

// Perimeter returns the unified circle's perimeter in ticks.
func (c *Checker) Perimeter() int { return c.p }

// Points returns |A|: the perimeter in Exact mode, 72 in Paper mode.
func (c *Checker) Points() int { return c.n }

// Period returns job j's period on the circle (rounded up when the circle
// options round).
func (c *Checker) Period(j int) int { return c.periods[j] }

// Candidates returns how many shifts of job j [Checker.Scan] scores. In
// Exact mode the excess depends on job j's shift only modulo this number,
// gcd(T_j, LCM of the other jobs' periods), so shifts 0 to Candidates-1
// stand for every shift. In Paper mode they are job j's 5-degree rotations
// within one of its periods, the only shifts the paper's search tries.
func (c *Checker) Candidates(j int) int { return c.ncand[j] }

// Shift returns the time shift in ticks of a job's m-th candidate: m in
// Exact mode, floor(m*p/72) in Paper mode (Eq. 5).
func (c *Checker) Shift(m int) int {
	if c.mode == Paper {
		return int(int64(m) * int64(c.p) / PaperAngles)
	}
	return m
}

// Evaluated returns the pair evaluations (one job's demand added at one
// point) spent since Reset.
func (c *Checker) Evaluated() int64 { return c.evals }

// Excess returns the excess of the given shifts (one per job, in ticks, any
// integer), summed over the points: what [Workspace.Evaluate] returns.
func (c *Checker) Excess(shifts []int) int64 {
	if len(shifts) != len(c.periods) {
		panic("link: Checker.Excess: one shift per job")
	}
	sum := c.sum
	clear(sum)
	for j, t := range shifts {
		c.add(sum, j, t)
	}
	var e int64
	for _, v := range sum {
		e += int64(max(v-c.capacity, 0))
	}
	return e
}

// add adds job j delayed by t ticks to dst, over the points.
func (c *Checker) add(dst []int32, j, t int) {
	c.evals += int64(c.n)
	tile := c.tiles[j]
	if c.mode == Exact {
		t = circle.Mod(t, c.p)
		for i, v := range tile[:c.p-t] {
			dst[t+i] += v
		}
		for i, v := range tile[c.p-t:] {
			dst[i] += v
		}
		return
	}
	per := c.periods[j]
	for a, x := range c.pts {
		dst[a] += tile[circle.Mod(x-t, per)]
	}
}

// Scan writes into dst (grown if needed) the excess with every job but j at
// its entry of shifts and job j at each of its candidate shifts
// [Checker.Shift](m), m below [Checker.Candidates](j), and returns it;
// shifts[j] is ignored.
func (c *Checker) Scan(dst []int64, shifts []int, j int) []int64 {
	if len(shifts) != len(c.periods) || j < 0 || j >= len(c.periods) {
		panic("link: Checker.Scan: one shift per job and a job index")
	}
	nc := c.ncand[j]
	dst = grow(dst, nc)
	base := c.sum
	clear(base)
	for i, t := range shifts {
		if i != j {
			c.add(base, i, t)
		}
	}
	c.evals += int64(nc) * int64(c.n)
	if c.mode == Exact {
		if nc <= scanDirect {
			tile := c.tiles[j]
			for m := range dst {
				dst[m] = kernels.Excess(base[m:], tile[:c.p-m], c.capacity) + kernels.Excess(base[:m], tile[c.p-m:], c.capacity)
			}
			return dst
		}
		if !c.rotorOK[j] {
			c.rotors[j] = kernels.PrepareRotor(c.rotors[j][:0], c.tiles[j])
			c.rotorOK[j] = true
		}
		kernels.Rotations(dst, base, c.rotors[j], c.capacity, 0)
		return dst
	}
	tile, per, cp := c.tiles[j], c.periods[j], int64(c.capacity)
	for m := range dst {
		t := c.Shift(m)
		var e int64
		for a, x := range c.pts {
			e += max(int64(base[a])+int64(tile[circle.Mod(x-t, per)])-cp, 0)
		}
		dst[m] = e
	}
	return dst
}
