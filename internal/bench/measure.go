package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Case is one operation to measure. Op runs it once; an error stops the
// measurement.
type Case struct {
	Name string
	Op   func() error
}

// Sample is one round's measurement of a case: the time per operation.
type Sample struct {
	CPU  time.Duration // process CPU time per operation (0 without a CPU clock)
	Wall time.Duration // wall time per operation
}

// Time returns the CPU time, or the wall time where there is no CPU clock.
func (s Sample) Time() time.Duration {
	if s.CPU > 0 {
		return s.CPU
	}
	return s.Wall
}

// Options configure [Interleave]. The zero value means 7 rounds of batches
// of at least 20 ms.
type Options struct {
	Rounds int           // rounds; 0 means 7
	Target time.Duration // least CPU (or wall) time of one batch; 0 means 20 ms
	// MaxOps caps the operations of one batch, for cases whose single
	// operation is so long that one is enough; 0 means no cap.
	MaxOps int
}

func (o Options) rounds() int {
	if o.Rounds <= 0 {
		return 7
	}
	return o.Rounds
}

func (o Options) target() time.Duration {
	if o.Target <= 0 {
		return 20 * time.Millisecond
	}
	return o.Target
}

// maxOps caps a batch: 2^30 operations of even a nanosecond take a second.
const maxOps = 1 << 30

// ErrEmpty is returned by Interleave when there is nothing to measure.
var ErrEmpty = errors.New("bench: no cases")

// Interleave measures cases in rounds and returns, per case (in input
// order), one Sample per round. Each case first runs once as a warm-up and
// is calibrated (batch size doubled until a batch takes opt.Target); then
// every round runs each case's batch once, starting from a different case
// each round, so slow phases of a shared machine are spread over all cases.
// It checks ctx between batches.
func Interleave(ctx context.Context, cases []Case, opt Options) ([][]Sample, error) {
	if len(cases) == 0 {
		return nil, ErrEmpty
	}
	ops := make([]int, len(cases))
	for i, c := range cases {
		n, err := Calibrate(ctx, c, opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		ops[i] = n
	}
	out := make([][]Sample, len(cases))
	for r := range opt.rounds() {
		for k := range cases {
			i := (r + k) % len(cases)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			s, err := Run(cases[i], ops[i])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cases[i].Name, err)
			}
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

// Calibrate warms c up (one operation) and returns its batch size: about
// the number of operations that take opt.Target, capped by opt.MaxOps.
// Interleave uses it; so can a caller that interleaves cases of its own
// (other processes, for example) with [Run].
func Calibrate(ctx context.Context, c Case, opt Options) (int, error) {
	if err := c.Op(); err != nil { // warm-up: workspaces, caches, page faults
		return 0, err
	}
	n := 1
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if opt.MaxOps > 0 && n >= opt.MaxOps {
			return opt.MaxOps, nil
		}
		if n >= maxOps { // an operation too fast to time: take what we have
			return maxOps, nil
		}
		s, err := Run(c, n)
		if err != nil {
			return 0, err
		}
		t := s.Time() * time.Duration(n)
		if t >= opt.target() {
			return n, nil
		}
		// Aim straight for the target once a batch is long enough to time.
		switch {
		case t < time.Millisecond:
			n *= 10
		default:
			n = int(float64(n) * 1.2 * float64(opt.target()) / float64(t))
		}
		n = min(n, maxOps)
		if opt.MaxOps > 0 {
			n = min(n, opt.MaxOps)
		}
	}
}

// Run runs c n times and returns the time per operation.
func Run(c Case, n int) (Sample, error) {
	c0, w0 := ProcessCPU(), time.Now()
	for range n {
		if err := c.Op(); err != nil {
			return Sample{}, err
		}
	}
	w := time.Since(w0)
	cpu := ProcessCPU() - c0
	return Sample{CPU: cpu / time.Duration(n), Wall: w / time.Duration(n)}, nil
}

// Times returns the samples' times (CPU, or wall without a CPU clock) in
// seconds.
func Times(s []Sample) []float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = x.Time().Seconds()
	}
	return v
}

// WallTimes returns the samples' wall times in seconds.
func WallTimes(s []Sample) []float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = x.Wall.Seconds()
	}
	return v
}

// Ratios returns, round by round, num's time over den's: for cases measured
// by the same Interleave call, each pair ran next to each other in time.
func Ratios(num, den []Sample) []float64 {
	n := min(len(num), len(den))
	v := make([]float64, n)
	for i := range n {
		v[i] = float64(num[i].Time()) / float64(den[i].Time())
	}
	return v
}
