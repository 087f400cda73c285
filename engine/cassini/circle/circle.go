// Package circle builds CASSINI's unified circle: the jobs sharing a link are
// overlaid on one circle whose perimeter is the least common multiple of their
// iteration times, so that every job's pattern repeats a whole number of times
// (r_j = perimeter / period_j) and a rotation of the circle is a time shift.
//
// Coprime periods make the perimeter explode (255 ms and 253 ms give 64.5 s;
// 5000 ms and 4999 ms, 6.9 hours). [Unify] builds the circle a search
// materializes, and caps its perimeter ([DefaultMaxPerimeter] ticks unless
// configured). [Reduce] describes it without materializing it, by the
// structure the periods share.
//
// # The shared circle
//
// Let P be the LCM of the periods T_j and Q the LCM of their pairwise gcds
// (Q = 1 for one job), and q_j = gcd(T_j, Q). Tick a of the unified circle
// shows job j, delayed by t_j, at x_j = (a - t_j) mod T_j. Then, for every
// shift vector t, a -> (x_0, ..., x_{k-1}) is a bijection from the P ticks
// onto the tuples with
//
//	x_j ≡ σ - t_j (mod q_j) for every j, for some σ in [0, Q).
//
// Proof: the map is injective because a mod T_j for every j fixes a mod P
// (Chinese remainder theorem), and every image satisfies the condition with
// σ = a mod Q. Conversely, such a tuple meets the pairwise condition of the
// Chinese remainder theorem, x_i + t_i ≡ x_j + t_j (mod gcd(T_i, T_j)),
// because gcd(T_i, T_j) divides both q_i and q_j (it divides Q and both
// periods), so the tuple is the image of some tick. Counting: Q times the
// product of T_j/q_j is P, prime by prime (for a prime p with exponents e_j,
// Q holds the second largest, and only the job with the largest exceeds it).
//
// So the unified circle is Q residues σ, and at each one every job shows each
// of the T_j/q_j ticks of its class (σ - t_j) mod q_j once, independently of
// the others: a job's shift matters only modulo q_j, which is
// gcd(T_j, LCM of the other periods), and a quantity summed over the circle
// is a sum over Q residues of sums over products of per-job classes. For
// coprime periods Q = 1: every shift gives the same overlay. Package link
// searches on this shared circle; its cap bounds Q, the work that remains,
// not P.
//
// # Rounding
//
// Past a cap, [Unify] and [Reduce] fail with [ErrPerimeterTooLarge], unless
// the caller opts in to rounding: then every period is rounded up to a
// multiple of the smallest grid that brings the circle under the cap, and the
// rounding is reported (the time-shift agent pads each iteration to its
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

// Options configure [Unify] and [Reduce]. The zero value caps the
// materialized circle at DefaultMaxPerimeter, bounds an unmaterialized
// perimeter only by math.MaxInt, and never rounds.
type Options struct {
	// MaxPerimeter caps the circle that is materialized, in ticks: the
	// unified perimeter for Unify, the shared circle Q for Reduce. 0 means
	// DefaultMaxPerimeter.
	MaxPerimeter int
	Round        bool // past a cap, round periods up to a coarser grid instead of failing

	// MaxLCM bounds the unified perimeter in Reduce, which does not
	// materialize it (package link lowers it so that the excess summed over
	// the circle fits an int64). 0 or negative means math.MaxInt.
	MaxLCM int
}

// PerimeterCap returns MaxPerimeter, or DefaultMaxPerimeter when it is 0.
func (o Options) PerimeterCap() int {
	if o.MaxPerimeter <= 0 {
		return DefaultMaxPerimeter
	}
	return o.MaxPerimeter
}

// LCMCap returns MaxLCM, or math.MaxInt when it is not positive.
func (o Options) LCMCap() int {
	if o.MaxLCM <= 0 {
		return math.MaxInt
	}
	return o.MaxLCM
}

// Unified describes a unified circle.
type Unified struct {
	Perimeter int   // LCM of Periods, in ticks
	Periods   []int // each job's period on the circle, rounded up to a multiple of Grid
	Grid      int   // 1, or the grid in ticks that the periods were rounded up to
	Shared    int   // Q: the LCM of the periods' pairwise gcds (1 for one job); divides Perimeter
}

// Rounded reports whether any period was rounded.
func (u Unified) Rounded() bool { return u.Grid > 1 }

// Residues returns q_j = gcd(Periods[j], Shared): how many classes of job
// j's ticks the other jobs tell apart. Its shift matters only modulo q_j,
// and each class holds Periods[j]/q_j ticks.
func (u Unified) Residues(j int) int { return GCD(u.Periods[j], u.Shared) }

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
		return Unified{Perimeter: p, Periods: dst, Grid: 1, Shared: shared(dst, 1)}, nil
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
			return Unified{Perimeter: p, Periods: dst, Grid: g, Shared: shared(dst, 1)}, nil
		}
	}
	return Unified{}, fmt.Errorf("%w: the longest period, %d ticks, is itself more than %d", ErrPerimeterTooLarge, longest, limit)
}

// Reduce returns the unified circle of jobs with the given periods (ticks)
// without materializing it: its perimeter P, bounded by Options.MaxLCM, and
// its shared circle Q (see the package documentation), capped by
// Options.MaxPerimeter. Past either limit it fails with
// ErrPerimeterTooLarge, or, with Options.Round, rounds every period up to a
// multiple of the smallest grid on which both hold. dst is reused for the
// rounded periods when it has the capacity; it may alias periods.
func Reduce(dst []int, periods []int, opt Options) (Unified, error) {
	if len(periods) == 0 {
		return Unified{}, fmt.Errorf("%w: no periods", ErrInvalidPeriod)
	}
	for i, t := range periods {
		if t <= 0 {
			return Unified{}, fmt.Errorf("%w: period %d is %d", ErrInvalidPeriod, i, t)
		}
	}
	limit, lcmLimit := opt.PerimeterCap(), opt.LCMCap()
	p, lcmOK := lcmCapped(periods, 1, lcmLimit)
	var q int
	if lcmOK {
		if q = shared(periods, 1); q <= limit {
			dst = append(dst[:0], periods...)
			return Unified{Perimeter: p, Periods: dst, Grid: 1, Shared: q}, nil
		}
	}
	why := func() error {
		if !lcmOK {
			return fmt.Errorf("%w: the LCM of periods %v is more than %d ticks", ErrPerimeterTooLarge, periods, lcmLimit)
		}
		return fmt.Errorf("%w: periods %v share a circle of %d ticks (the LCM of their pairwise gcds), more than the %d-tick cap", ErrPerimeterTooLarge, periods, q, limit)
	}
	if !opt.Round {
		return Unified{}, why()
	}
	longest := 0
	for _, t := range periods {
		longest = max(longest, t)
	}
	// Every grid up to the longest period is tried: at that grid every
	// period becomes the longest, whose circle is the period itself.
	for g := 2; g <= longest; g++ {
		p, ok := lcmCapped(periods, g, lcmLimit)
		if !ok {
			continue
		}
		if q := shared(periods, g); q <= limit {
			dst = append(dst[:0], periods...)
			for i, t := range dst {
				dst[i] = roundUp(t, g)
			}
			return Unified{Perimeter: p, Periods: dst, Grid: g, Shared: q}, nil
		}
	}
	return Unified{}, why()
}

// Shared returns Q, the LCM of the periods' pairwise gcds (1 for fewer than
// two periods): the shared circle of [Reduce], without its limits. It divides
// the periods' LCM, so it overflows only where that does.
func Shared(periods []int) int { return shared(periods, 1) }

// shared returns the LCM of the pairwise gcds of the periods rounded up to
// multiples of g. It divides their LCM, so it cannot overflow where that
// does not.
func shared(periods []int, g int) int {
	q := 1
	for i, a := range periods {
		a = roundUp(a, g)
		for _, b := range periods[i+1:] {
			d := GCD(a, roundUp(b, g))
			q = q / GCD(q, d) * d
		}
	}
	return q
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
