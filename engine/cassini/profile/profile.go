package profile

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/orrery/orrery/kernels"
)

// Bandwidth units in bits per second, for [Phase.Bandwidth] and [Quantum.Unit].
const (
	Mbps = 1e6
	Gbps = 1e9
)

// Defaults of the zero [Quantum].
const (
	DefaultTick = time.Millisecond
	DefaultUnit = Mbps
)

// MaxPeriodTicks bounds a single job's period; a longer one is
// [ErrPeriodTooLong] (use a coarser tick).
const MaxPeriodTicks = 1 << 24

// MaxUnits is the largest demand of one tick, in units: the kernels' limit.
const MaxUnits = kernels.MaxValue

// Sentinel errors. Errors about one phase or sample are *[PhaseError] values
// that wrap one of these.
var (
	ErrNoPhases         = errors.New("profile: no phases")
	ErrInvalidDuration  = errors.New("profile: duration is negative, zero where a length is needed, or out of range")
	ErrInvalidBandwidth = errors.New("profile: bandwidth is negative, NaN or infinite")
	ErrPeriodMismatch   = errors.New("profile: phases do not add up to the period")
	ErrZeroPeriod       = errors.New("profile: period is zero")
	ErrPeriodTooLong    = errors.New("profile: period is too many ticks")
	ErrDemandTooLarge   = errors.New("profile: demand exceeds the largest representable value")
	ErrInvalidQuantum   = errors.New("profile: invalid quantum")
)

// PhaseError reports which phase (or sample) of a profile is invalid.
type PhaseError struct {
	Index int   // index of the phase or sample
	Err   error // one of the sentinel errors
}

func (e *PhaseError) Error() string { return fmt.Sprintf("phase %d: %v", e.Index, e.Err) }
func (e *PhaseError) Unwrap() error { return e.Err }

// Quantum is the integer grid demands are quantized onto. The zero value
// means 1 ms ticks and 1 Mbps units.
type Quantum struct {
	Tick time.Duration // length of one tick; 0 means DefaultTick
	Unit float64       // bits per second of one demand unit; 0 means DefaultUnit
}

// Normalize returns q with defaults filled in, or ErrInvalidQuantum.
func (q Quantum) Normalize() (Quantum, error) {
	if q.Tick == 0 {
		q.Tick = DefaultTick
	}
	if q.Unit == 0 {
		q.Unit = DefaultUnit
	}
	if q.Tick < 0 {
		return q, fmt.Errorf("%w: tick %v is negative", ErrInvalidQuantum, q.Tick)
	}
	if !(q.Unit > 0) || math.IsInf(q.Unit, 0) {
		return q, fmt.Errorf("%w: unit %v bit/s is not a positive number", ErrInvalidQuantum, q.Unit)
	}
	return q, nil
}

// Units converts a bandwidth in bits per second to whole units, rounding to
// the nearest. Callers validate the bandwidth first.
func (q Quantum) Units(bps float64) float64 { return math.Round(bps / q.Unit) }

// Phase is a stretch of an iteration with constant bandwidth demand.
type Phase struct {
	Duration  time.Duration
	Bandwidth float64 // bits per second
}

// Profile is one iteration of a job on the integer grid.
type Profile struct {
	Period int     // iteration time in ticks, >= 1
	Demand []int32 // Demand[i] is the demand during tick i in units; len(Demand) == Period
}

// Peak returns the largest demand of p.
func (p Profile) Peak() int32 {
	var m int32
	for _, d := range p.Demand {
		m = max(m, d)
	}
	return m
}

// Mass returns the sum of p's demand over one period, in unit-ticks.
func (p Profile) Mass() int64 {
	var s int64
	for _, d := range p.Demand {
		s += int64(d)
	}
	return s
}

// CommOffset is where p's communication starts in its iteration, in
// ticks: the first tick of its first run of demand (a run that wraps
// around the period starts where it begins before the end), or 0 for a
// profile that never pauses or never communicates. It is the planned
// angle a job's time-shift agent measures drift from: an agent told 0 for
// a job whose all-reduce starts 40 ms into its iteration reports a 40 ms
// drift every iteration.
func (p Profile) CommOffset() int {
	n := len(p.Demand)
	for t := range n {
		if p.Demand[t] > 0 && p.Demand[(t+n-1)%n] == 0 {
			return t
		}
	}
	return 0
}

// FromPhases quantizes phases onto q's grid. If period is non-zero the
// phases must add up to it (within a microsecond); if it is zero the period
// is their sum.
func FromPhases(period time.Duration, phases []Phase, q Quantum) (Profile, error) {
	q, n, err := check(period, phases, q)
	if err != nil {
		return Profile{}, err
	}
	demand := make([]int32, n)
	at := 0
	runs(n, phases, q, func(v int32, count int) {
		for i := range count {
			demand[at+i] = v
		}
		at += count
	})
	return Profile{Period: n, Demand: demand}, nil
}

// Summary is what a profile's phases quantize to, without the demand
// itself: what a caller checks against its limits before it builds a
// profile (a period of 2^24 ticks is 64 MiB of demand).
type Summary struct {
	Period int   // ticks
	Peak   int32 // the largest demand of a tick, in units
	Mass   int64 // the demand summed over the period, in unit-ticks
}

// Summarize returns the Summary of the profile FromPhases would return for
// the same arguments, or its error, in time proportional to the phases
// (not the ticks) and without allocating.
func Summarize(period time.Duration, phases []Phase, q Quantum) (Summary, error) {
	q, n, err := check(period, phases, q)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Period: n}
	runs(n, phases, q, func(v int32, count int) {
		s.Peak = max(s.Peak, v)
		s.Mass += int64(v) * int64(count)
	})
	return s, nil
}

// check validates FromPhases' arguments and returns the normalized quantum
// and the period in ticks.
func check(period time.Duration, phases []Phase, q Quantum) (Quantum, int, error) {
	q, err := q.Normalize()
	if err != nil {
		return q, 0, err
	}
	if len(phases) == 0 {
		return q, 0, ErrNoPhases
	}
	if period < 0 {
		return q, 0, fmt.Errorf("%w: period %v", ErrInvalidDuration, period)
	}
	var sum time.Duration
	for i, ph := range phases {
		if ph.Duration < 0 {
			return q, 0, &PhaseError{i, ErrInvalidDuration}
		}
		if b := ph.Bandwidth; !(b >= 0) || math.IsInf(b, 0) {
			return q, 0, &PhaseError{i, ErrInvalidBandwidth}
		}
		if q.Units(ph.Bandwidth) > MaxUnits {
			return q, 0, &PhaseError{i, fmt.Errorf("%w: %v bit/s is more than %d units of %v bit/s", ErrDemandTooLarge, ph.Bandwidth, MaxUnits, q.Unit)}
		}
		if sum > math.MaxInt64-ph.Duration {
			return q, 0, &PhaseError{i, ErrPeriodTooLong}
		}
		sum += ph.Duration
	}
	if period == 0 {
		period = sum
	} else if d := sum - period; d > time.Microsecond || d < -time.Microsecond {
		return q, 0, fmt.Errorf("%w: phases add up to %v, period is %v", ErrPeriodMismatch, sum, period)
	}
	if period == 0 {
		return q, 0, ErrZeroPeriod
	}
	n := int64(period) / int64(q.Tick)
	if int64(period)%int64(q.Tick) != 0 {
		n++ // round up: the agent pads the iteration to whole ticks
	}
	if n > MaxPeriodTicks {
		return q, 0, fmt.Errorf("%w: %v is %d ticks of %v, more than %d", ErrPeriodTooLong, period, n, q.Tick, MaxPeriodTicks)
	}
	return q, int(n), nil
}

// runs spreads valid phases over n ticks, area-preserving, and emits the
// quantized demand in order as runs of equal ticks: count ticks of demand
// v each. A tick's demand is its phases' unit-nanoseconds summed in phase
// order, divided by the tick and rounded; a tick inside one phase gets
// that phase's alone. Work is proportional to the phases, not the ticks.
func runs(n int, phases []Phase, q Quantum, emit func(v int32, count int)) {
	tick := int64(q.Tick)
	round := func(a float64) int32 { return int32(min(math.Round(a/float64(tick)), MaxUnits)) }
	var t int64     // time reached
	var acc float64 // unit-nanoseconds of the tick t is in, so far
	done := 0       // ticks emitted
	for _, ph := range phases {
		units := ph.Bandwidth / q.Unit
		end := t + int64(ph.Duration)
		for t < end {
			i := t / tick
			if i >= int64(n) {
				break
			}
			if t == i*tick && end >= (i+1)*tick {
				// Whole ticks of this phase alone: one run. The explicit
				// conversion keeps the compiler from fusing the
				// multiply-add, so every platform rounds the same way.
				whole := min(end/tick, int64(n)) - i
				emit(round(float64(float64(tick)*units)), int(whole))
				done += int(whole)
				t = (i + whole) * tick
				continue
			}
			stop := min(end, (i+1)*tick)
			acc += float64(float64(stop-t) * units)
			t = stop
			if t == (i+1)*tick {
				emit(round(acc), 1)
				done++
				acc = 0
			}
		}
		t = end
	}
	if done < n {
		// The tick the phases end in, padded with idle time, then idle
		// ticks (phases shorter than the period by up to a microsecond).
		emit(round(acc), 1)
		if done+1 < n {
			emit(0, n-done-1)
		}
	}
}

// FromSamples quantizes bandwidth samples (bits per second), each held for
// interval, onto q's grid. The period is len(samples)*interval.
func FromSamples(samples []float64, interval time.Duration, q Quantum) (Profile, error) {
	if interval <= 0 {
		return Profile{}, fmt.Errorf("%w: sample interval %v", ErrInvalidDuration, interval)
	}
	if len(samples) == 0 {
		return Profile{}, ErrNoPhases
	}
	if int64(len(samples)) > math.MaxInt64/int64(interval) {
		return Profile{}, ErrPeriodTooLong
	}
	phases := make([]Phase, len(samples))
	for i, s := range samples {
		phases[i] = Phase{Duration: interval, Bandwidth: s}
	}
	return FromPhases(0, phases, q)
}

// Validate checks a Profile built by hand: a period in [1, MaxPeriodTicks],
// one demand per tick, every demand in [0, MaxUnits].
func (p Profile) Validate() error {
	if p.Period <= 0 {
		return ErrZeroPeriod
	}
	if p.Period > MaxPeriodTicks {
		return fmt.Errorf("%w: %d ticks", ErrPeriodTooLong, p.Period)
	}
	if len(p.Demand) != p.Period {
		return fmt.Errorf("%w: %d demands for a period of %d ticks", ErrPeriodMismatch, len(p.Demand), p.Period)
	}
	for i, d := range p.Demand {
		if uint32(d) > MaxUnits { // one test for both sides: a negative d is above too
			if d < 0 {
				return &PhaseError{i, ErrInvalidBandwidth}
			}
			return &PhaseError{i, ErrDemandTooLarge}
		}
	}
	return nil
}
