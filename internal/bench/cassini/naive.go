package cassini

import (
	"errors"
	"fmt"
	"math"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/scratch"
	"github.com/orrery/orrery/kernels"
)

// NaiveOptions configure [Naive.Search].
type NaiveOptions struct {
	Circle circle.Options // the perimeter cap (and rounding), as link.Options.Circle
	// Plain scores shifts with a plain Go loop (what a user would write)
	// instead of orrery's vector kernels (kernels.Rotations).
	Plain bool
}

// NaiveResult is a brute-force search's outcome.
type NaiveResult struct {
	Excess int64 // least excess over every shift vector, in unit-ticks
	Points int   // the unified perimeter
	Score  float64
	Shifts []int // the lexicographically smallest optimal shift vector (job 0 at 0)
	Pairs  int64 // pair evaluations, counted as engine/cassini/link counts them: one per shift and point scanned
}

// ErrTooLarge reports a brute force over more than 2^40 pair evaluations.
var ErrTooLarge = errors.New("cassini: naive search too large")

// Naive is the brute-force link search with its buffers; the zero value is
// ready, and a warm Naive searches problems of the same size without
// allocating. It is not safe for concurrent use.
type Naive struct {
	periods []int
	tiles   [][]int32
	base    []int32 // demand of jobs 0..k-2 at the current shifts
	rot     []int32
	rotor   []int32
	out     []int64
	cur     []int
	best    []int
}

// Search tries every shift vector of pr's jobs on their unified circle
// (pr.Fixed is ignored: job 0 stays at 0, as in link's default).
func (nv *Naive) Search(pr link.Problem, opt NaiveOptions) (NaiveResult, error) {
	k := len(pr.Jobs)
	if k == 0 {
		return NaiveResult{}, link.ErrNoJobs
	}
	if pr.Capacity < 1 {
		return NaiveResult{}, link.ErrCapacity
	}
	nv.periods = nv.periods[:0]
	for j, jb := range pr.Jobs {
		if err := jb.Validate(); err != nil {
			return NaiveResult{}, fmt.Errorf("job %d: %w", j, err)
		}
		nv.periods = append(nv.periods, jb.Period)
	}
	u, err := circle.Unify(nv.periods, nv.periods, opt.Circle)
	if err != nil {
		return NaiveResult{}, err
	}
	nv.periods = u.Periods
	p := u.Perimeter
	vectors := 1.0
	for _, t := range u.Periods[1:] {
		vectors *= float64(t)
	}
	if vectors*float64(p) > 1<<40 {
		return NaiveResult{}, fmt.Errorf("%w: %.3g shift vectors over %d ticks", ErrTooLarge, vectors, p)
	}
	for len(nv.tiles) < k {
		nv.tiles = append(nv.tiles, nil)
	}
	for j, jb := range pr.Jobs {
		nv.tiles[j] = circle.Tile(nv.tiles[j], jb.Demand, u.Periods[j], p)
	}
	nv.cur = scratch.Resize(nv.cur, k)
	nv.best = scratch.Resize(nv.best, k)
	clear(nv.cur)
	res := NaiveResult{Excess: math.MaxInt64, Points: p}
	if k == 1 {
		nv.base = scratch.Resize(nv.base, p)
		clear(nv.base)
		res.Excess = excess(nv.base, nv.tiles[0], pr.Capacity, opt.Plain)
		res.Pairs = int64(p)
		copy(nv.best, nv.cur)
	} else {
		last := k - 1
		m := u.Periods[last]
		nv.out = scratch.Resize(nv.out, m)
		nv.base = scratch.Resize(nv.base, p)
		nv.rot = nv.tiles[last]
		if !opt.Plain {
			nv.rotor = kernels.PrepareRotor(nv.rotor[:0], nv.rot)
		}
		// Odometer over the shifts of jobs 1..k-2, in lexicographic order;
		// the last job's shifts are one scan each.
		for {
			nv.fillBase(k, p)
			if opt.Plain {
				PlainRotations(nv.out, nv.base, nv.rot, pr.Capacity)
			} else {
				kernels.Rotations(nv.out, nv.base, nv.rotor, pr.Capacity, 0)
			}
			res.Pairs += int64(m)*int64(p) + int64(k-2)*int64(p) // the scan, and building the base
			for s, e := range nv.out {
				if e < res.Excess { // strict: the first (smallest) vector wins ties
					res.Excess = e
					nv.cur[last] = s
					copy(nv.best, nv.cur)
				}
			}
			nv.cur[last] = 0
			j := last - 1
			for j >= 1 {
				nv.cur[j]++
				if nv.cur[j] < u.Periods[j] {
					break
				}
				nv.cur[j] = 0
				j--
			}
			if j < 1 {
				break
			}
		}
	}
	res.Shifts = append([]int(nil), nv.best[:k]...)
	res.Score = 1 - float64(res.Excess)/(float64(p)*float64(pr.Capacity))
	return res, nil
}

// fillBase writes the demand of jobs 0..k-2 at their current shifts: job j
// delayed by s contributes tile_j[(i - s) mod p] at tick i.
func (nv *Naive) fillBase(k, p int) {
	base := nv.base[:p]
	copy(base, nv.tiles[0])
	for j := 1; j < k-1; j++ {
		s, t := nv.cur[j], nv.tiles[j]
		// base[i] += t[i-s] for i >= s, t[i-s+p] for i < s.
		for i, v := range t[:p-s] {
			base[i+s] += v
		}
		for i, v := range t[p-s:] {
			base[i] += v
		}
	}
}

// PlainRotations is the rotation scan as a user would write it, the
// baseline the kernels are measured against: for every shift s of the
// rotated job, sum max(base[i] + rot[(i-s) mod n] − c, 0).
func PlainRotations(dst []int64, base, rot []int32, c int32) {
	n := len(base)
	for s := range dst {
		var sum int64
		for i := range n {
			j := i - s
			if j < 0 {
				j += n
			}
			sum += max(int64(base[i])+int64(rot[j])-int64(c), 0)
		}
		dst[s] = sum
	}
}

// excess is one alignment's excess.
func excess(a, b []int32, c int32, plain bool) int64 {
	if !plain {
		return kernels.Excess(a, b, c)
	}
	return PlainExcess(a, b, c)
}

// PlainExcess is kernels.Excess as a user would write it, the baseline the
// kernels are measured against: sum max(a[i] + b[i] - c, 0).
func PlainExcess(a, b []int32, c int32) int64 {
	var sum int64
	for i := range a {
		sum += max(int64(a[i])+int64(b[i])-int64(c), 0)
	}
	return sum
}

// Comm is a job of period t ticks that computes for t−up ticks, then sends
// units of demand per tick for up ticks: the shape of a data-parallel
// training iteration.
func Comm(t, up int, units int32) profile.Profile {
	d := make([]int32, t)
	for i := t - up; i < t; i++ {
		d[i] = units
	}
	return profile.Profile{Period: t, Demand: d}
}
