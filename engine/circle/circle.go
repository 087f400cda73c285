// Package circle builds CASSINI's unified circle: the jobs sharing a link are
// overlaid on one circle whose perimeter is the least common multiple of their
// iteration times, so that every job's pattern repeats a whole number of times
// (r_j = perimeter / period_j) and a rotation of the circle is a time shift.
//
// Coprime periods make the perimeter explode (255 ms and 253 ms give 64.5 s).
// The perimeter is therefore capped ([DefaultMaxPerimeter] ticks unless
// configured). Past the cap [Unify] fails with [ErrPerimeterTooLarge], unless
// the caller opts in to rounding: then every period is rounded up to a
// multiple of the smallest grid that brings the perimeter under the cap, and
// the rounding is reported (the time-shift agent pads each iteration to its
// rounded period, so the unified circle really repeats).
package circle

import (
	"errors"
	"fmt"
	"math"
)

// DefaultMaxPerimeter is the perimeter cap, in ticks, of the zero [Options]:
// 17.5 minutes of 1 ms ticks, 4 MiB per job when materialized.
const DefaultMaxPerimeter = 1 << 20

// Sentinel errors.
var (
	ErrPerimeterTooLarge = errors.New("circle: unified perimeter exceeds the cap")
	ErrInvalidPeriod     = errors.New("circle: period must be a positive number of ticks")
)

// Options configure [Unify]. The zero value caps the perimeter at
// DefaultMaxPerimeter and never rounds.
type Options struct {
	MaxPerimeter int  // cap on the unified perimeter in ticks; 0 means DefaultMaxPerimeter
	Round        bool // past the cap, round periods up to a coarser grid instead of failing
}

// PerimeterCap returns MaxPerimeter, or DefaultMaxPerimeter when it is 0.
func (o Options) PerimeterCap() int {
	if o.MaxPerimeter <= 0 {
		return DefaultMaxPerimeter
	}
	return o.MaxPerimeter
}

// Unified describes a unified circle.
type Unified struct {
	Perimeter int   // LCM of Periods, in ticks
	Periods   []int // each job's period on the circle, rounded up to a multiple of Grid
	Grid      int   // 1, or the grid in ticks that the periods were rounded up to
}

// Rounded reports whether any period was rounded.
func (u Unified) Rounded() bool { return u.Grid > 1 }

// Repeats returns how many times job j's pattern repeats on the circle.
func (u Unified) Repeats(j int) int { return u.Perimeter / u.Periods[j] }

// Unify returns the unified circle of jobs with the given periods (ticks).
// dst is reused for the rounded periods when it has the capacity.
func Unify(dst []int, periods []int, opt Options) (Unified, error) {
	if len(periods) == 0 {
		return Unified{}, fmt.Errorf("%w: no periods", ErrInvalidPeriod)
	}
	for i, t := range periods {
		if t <= 0 {
			return Unified{}, fmt.Errorf("%w: period %d is %d", ErrInvalidPeriod, i, t)
		}
	}
	limit := opt.PerimeterCap()
	dst = append(dst[:0], periods...)
	if p, ok := lcmCapped(dst, 1, limit); ok {
		return Unified{Perimeter: p, Periods: dst, Grid: 1}, nil
	}
	if !opt.Round {
		return Unified{}, fmt.Errorf("%w: LCM of periods %v is more than %d ticks", ErrPerimeterTooLarge, periods, limit)
	}
	longest := 0
	for _, t := range periods {
		longest = max(longest, t)
	}
	// The smallest grid that fits rounds least. Grid = longest always
	// fits when longest <= limit: every period becomes longest.
	for g := 2; g <= longest && g <= limit; g++ {
		if p, ok := lcmCapped(periods, g, limit); ok {
			for i, t := range periods {
				dst[i] = roundUp(t, g)
			}
			return Unified{Perimeter: p, Periods: dst, Grid: g}, nil
		}
	}
	return Unified{}, fmt.Errorf("%w: the longest period, %d ticks, is itself more than %d", ErrPerimeterTooLarge, longest, limit)
}

func roundUp(t, g int) int { return (t + g - 1) / g * g }

// lcmCapped returns g * LCM(ceil(t/g)) over periods, or false if it exceeds
// limit.
func lcmCapped(periods []int, g, limit int) (int, bool) {
	l := 1
	for _, t := range periods {
		u := (t + g - 1) / g
		a := l / GCD(l, u)
		if a > limit/g/u { // a*u*g > limit, checked without overflow
			return 0, false
		}
		l = a * u
	}
	return l * g, true
}

// GCD returns the greatest common divisor of a and b (a, b >= 0).
func GCD(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Mod returns a mod m in [0, m) for m > 0. Go's % keeps the sign of a; shifts
// are delays and must stay non-negative.
func Mod(a, m int) int {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// Shift converts a rotation on a unified circle into a time shift, the
// paper's Eq. 5: t = (rotation/2π · perimeter) mod period, in ticks (not
// rounded). A positive rotation delays the job.
func Shift(rotation float64, perimeter, period int) float64 {
	t := math.Mod(rotation/(2*math.Pi)*float64(perimeter), float64(period))
	if t < 0 {
		t += float64(period)
	}
	return t
}

// Rotation converts a time shift in ticks to the rotation, in radians, that
// it is on a circle of the given perimeter: the inverse of [Shift] within
// one period.
func Rotation(shift, perimeter int) float64 {
	return 2 * math.Pi * float64(shift) / float64(perimeter)
}

// Tile writes demand repeated over a circle of the given perimeter into dst,
// zero-padding each repetition to period ticks (period >= len(demand) and
// divides perimeter), and returns it. dst grows only if it is too small.
func Tile(dst, demand []int32, period, perimeter int) []int32 {
	if cap(dst) < perimeter {
		dst = make([]int32, perimeter)
	}
	dst = dst[:perimeter]
	for off := 0; off < perimeter; off += period {
		n := copy(dst[off:off+period], demand)
		clear(dst[off+n : off+period])
	}
	return dst
}
