package agent

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// fakeClock is a virtual clock: Sleep advances it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var ref = time.Date(2024, 4, 16, 9, 0, 0, 0, time.UTC)

const ms = time.Millisecond

func mustNew(t *testing.T, p Plan, o Options) *Agent {
	t.Helper()
	a, err := New(p, o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// onSlot reports whether t is a slot of p.
func onSlot(p Plan, t time.Time) bool {
	d := t.Sub(p.Reference) - p.Shift
	return d%p.Period == 0
}

// A job faster than its period waits for every slot: iteration n starts at
// R + t + n*T exactly, and nothing is an adjustment.
func TestPadLocksThePeriod(t *testing.T) {
	p := Plan{Reference: ref, Shift: 40 * ms, Period: 100 * ms, CommOffset: 60 * ms}
	a := mustNew(t, p, Options{Mode: Pad})
	now := ref.Add(3 * ms) // the loop is ready 3 ms after R
	for n := range 50 {
		d := a.Next(now)
		want := ref.Add(40*ms + time.Duration(n)*100*ms)
		if !d.Start.Equal(want) || d.Adjusted || d.Late != 0 {
			t.Fatalf("iteration %d: %+v, want start %v", n, d, want.Sub(ref))
		}
		if e := a.Communicating(d.Start.Add(60 * ms)); e != 0 {
			t.Fatalf("iteration %d: phase error %v", n, e)
		}
		now = d.Start.Add(97 * ms) // 97 ms of work per iteration
	}
	s := a.Stats()
	if s.Adjustments != 0 || s.Iterations != 50 || s.Samples != 50 || s.MaxAbs != 0 {
		t.Fatalf("stats %+v", s)
	}
	// 37 ms to the first slot, then 3 ms per iteration.
	if want := 37*ms + 49*3*ms; s.Padding != want {
		t.Fatalf("padding %v, want %v", s.Padding, want)
	}
}

// An iteration late by at most the threshold starts at once and the slack
// of later iterations brings the job back onto its slots; one late by more
// is re-aligned to the first slot after it is ready.
func TestPadThreshold(t *testing.T) {
	p := Plan{Reference: ref, Period: 100 * ms}
	a := mustNew(t, p, Options{Mode: Pad}) // 5% = 5 ms
	d := a.Next(ref)
	if !d.Start.Equal(ref) {
		t.Fatalf("first start %v", d.Start.Sub(ref))
	}
	// 4 ms late: tolerated.
	d = a.Next(ref.Add(104 * ms))
	if !d.Start.Equal(ref.Add(104*ms)) || d.Adjusted || d.Late != 4*ms {
		t.Fatalf("4 ms late: %+v", d)
	}
	// Ready early again: back on slot 2.
	d = a.Next(ref.Add(195 * ms))
	if !d.Start.Equal(ref.Add(200*ms)) || d.Adjusted {
		t.Fatalf("back on the slot: %+v", d)
	}
	// 5 ms late: exactly the threshold, tolerated.
	if d = a.Next(ref.Add(305 * ms)); d.Adjusted {
		t.Fatalf("5 ms late: %+v", d)
	}
	// 6 ms late: re-aligned to slot 5 (slot 4 at 400 ms has passed).
	d = a.Next(ref.Add(406 * ms))
	if !d.Start.Equal(ref.Add(500*ms)) || !d.Adjusted || d.Delay != 94*ms {
		t.Fatalf("6 ms late: %+v", d)
	}
	// Later iterations count from slot 5.
	if d = a.Next(ref.Add(590 * ms)); !d.Start.Equal(ref.Add(600 * ms)) {
		t.Fatalf("after the adjustment: %+v", d)
	}
	s := a.Stats()
	if s.Adjustments != 1 || s.AdjustDelay != 94*ms || s.Iterations != 6 {
		t.Fatalf("stats %+v", s)
	}
	// 1 adjustment over 590 ms.
	if got, want := s.PerMinute(), 60.0/0.59; got != want {
		t.Fatalf("per minute %v, want %v", got, want)
	}
}

// The threshold is configurable: a 10% trigger tolerates what 5% corrects.
func TestThresholdOption(t *testing.T) {
	for _, tc := range []struct {
		thr  float64
		want bool
	}{{0, true}, {0.05, true}, {0.07, false}, {0.10, false}} {
		a := mustNew(t, Plan{Reference: ref, Period: 100 * ms}, Options{Mode: Pad, Threshold: tc.thr})
		a.Next(ref)
		if d := a.Next(ref.Add(106 * ms)); d.Adjusted != tc.want {
			t.Errorf("threshold %v: adjusted %v, want %v", tc.thr, d.Adjusted, tc.want)
		}
	}
}

// The paper's rule: iterations run back to back; a job 2 ms faster than its
// 100 ms period drifts 2 ms earlier every iteration, and the iteration
// after a communication start more than 5 ms early is delayed back onto its
// slot.
func TestFreeDriftCorrection(t *testing.T) {
	p := Plan{Reference: ref, Shift: 10 * ms, Period: 100 * ms, CommOffset: 30 * ms}
	a := mustNew(t, p, Options{Mode: Free})
	now := ref
	var errs []time.Duration
	var adjusted []int
	for n := range 12 {
		d := a.Next(now)
		if d.Start.Before(now) {
			t.Fatalf("iteration %d starts before it is ready", n)
		}
		if d.Adjusted {
			adjusted = append(adjusted, n)
			if !onSlot(p, d.Start) {
				t.Fatalf("iteration %d: re-aligned off the slots, at %v", n, d.Start.Sub(ref))
			}
		}
		errs = append(errs, a.Communicating(d.Start.Add(30*ms)))
		now = d.Start.Add(98 * ms)
	}
	// Errors 0, -2, -4, -6 (over 5 ms), then re-aligned: 0, -2, ...
	want := []time.Duration{0, -2 * ms, -4 * ms, -6 * ms, 0, -2 * ms, -4 * ms, -6 * ms, 0, -2 * ms, -4 * ms, -6 * ms}
	for i := range want {
		if errs[i] != want[i] {
			t.Fatalf("phase errors %v, want %v", errs, want)
		}
	}
	if len(adjusted) != 2 || adjusted[0] != 4 || adjusted[1] != 8 {
		t.Fatalf("adjusted iterations %v, want [4 8]", adjusted)
	}
	s := a.Stats()
	if s.Over != 3 || s.MaxAbs != 6*ms || s.Adjustments != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// A late communication start also triggers in Free mode, and the delay is
// (expected - actual) mod T.
func TestFreeLate(t *testing.T) {
	p := Plan{Reference: ref, Period: 100 * ms, CommOffset: 50 * ms}
	a := mustNew(t, p, Options{Mode: Free})
	a.Next(ref)
	if e := a.Communicating(ref.Add(58 * ms)); e != 8*ms {
		t.Fatalf("phase error %v", e)
	}
	d := a.Next(ref.Add(108 * ms))
	if !d.Adjusted || !d.Start.Equal(ref.Add(200*ms)) || d.Delay != 92*ms {
		t.Fatalf("%+v", d)
	}
}

func TestCooldown(t *testing.T) {
	a := mustNew(t, Plan{Reference: ref, Period: 100 * ms}, Options{Mode: Pad, Cooldown: time.Second})
	a.Next(ref)
	if d := a.Next(ref.Add(110 * ms)); !d.Adjusted { // first adjustment
		t.Fatalf("%+v", d)
	}
	// 20 ms late 300 ms later: within the cooldown, tolerated.
	if d := a.Next(ref.Add(320 * ms)); d.Adjusted || d.Late != 20*ms {
		t.Fatalf("within the cooldown: %+v", d)
	}
	// After the cooldown the same lateness re-aligns.
	if d := a.Next(ref.Add(1420 * ms)); !d.Adjusted {
		t.Fatalf("after the cooldown: %+v", d)
	}
}

func TestSetPlan(t *testing.T) {
	a := mustNew(t, Plan{Reference: ref, Period: 100 * ms}, Options{Mode: Pad})
	a.Next(ref)
	if err := a.SetPlan(Plan{Reference: ref, Shift: 30 * ms, Period: 120 * ms}); err != nil {
		t.Fatal(err)
	}
	// Ready at 100 ms: the first slot of the new plan is 150 ms.
	d := a.Next(ref.Add(100 * ms))
	if !d.Start.Equal(ref.Add(150*ms)) || d.Adjusted {
		t.Fatalf("%+v", d)
	}
	s := a.Stats()
	if s.Replans != 1 || s.Adjustments != 0 {
		t.Fatalf("stats %+v", s)
	}
	if err := a.SetPlan(Plan{Period: 0}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad plan: %v", err)
	}
	if a.Plan().Period != 120*ms {
		t.Fatal("a rejected plan replaced the current one")
	}
}

// Property: whatever the readiness sequence, an iteration never starts
// before the loop is ready; a delayed start is on a slot; in Pad mode an
// iteration that starts off its slot is late by at most the threshold.
func TestPadInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := range 200 {
		period := time.Duration(50+rng.IntN(300)) * ms
		p := Plan{Reference: ref, Shift: time.Duration(rng.Int64N(int64(period))), Period: period}
		a := mustNew(t, p, Options{Mode: Pad})
		now := ref.Add(time.Duration(rng.Int64N(int64(time.Second))))
		for n := range 300 {
			d := a.Next(now)
			switch {
			case d.Start.Before(now):
				t.Fatalf("trial %d iteration %d: starts before ready", trial, n)
			case d.Delay > 0 && !onSlot(p, d.Start):
				t.Fatalf("trial %d iteration %d: waits for %v, off the slots", trial, n, d.Start.Sub(ref))
			case d.Delay == 0 && !onSlot(p, d.Start) && d.Late > period/20:
				t.Fatalf("trial %d iteration %d: %v late, past the threshold", trial, n, d.Late)
			}
			work := time.Duration(float64(period) * (0.85 + 0.25*rng.Float64()))
			now = d.Start.Add(work)
		}
	}
}

func TestWrap(t *testing.T) {
	a := mustNew(t, Plan{Reference: ref, Period: 100 * ms}, Options{Mode: Pad})
	for _, tc := range []struct{ in, want time.Duration }{
		{0, 0}, {49 * ms, 49 * ms}, {50 * ms, -50 * ms}, {51 * ms, -49 * ms}, {-50 * ms, -50 * ms},
		{-51 * ms, 49 * ms}, {250 * ms, -50 * ms}, {-1, -1}, {100 * ms, 0},
	} {
		if got := a.wrap(tc.in); got != tc.want {
			t.Errorf("wrap(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	// An odd period in nanoseconds: the range is still [-T/2, T/2).
	b := mustNew(t, Plan{Reference: ref, Period: 3}, Options{Mode: Pad})
	for d := time.Duration(-10); d <= 10; d++ {
		if e := b.wrap(d); e < -1 || e > 1 || (e-d)%3 != 0 {
			t.Fatalf("wrap(%d) = %d", d, e)
		}
	}
}

func TestWait(t *testing.T) {
	clk := &fakeClock{now: ref.Add(7 * ms)}
	a := mustNew(t, Plan{Reference: ref, Shift: 20 * ms, Period: 100 * ms}, Options{Mode: Pad, Clock: clk})
	ctx := context.Background()
	d, err := a.Wait(ctx)
	if err != nil || !clk.Now().Equal(ref.Add(20*ms)) || d.Delay != 13*ms {
		t.Fatalf("first wait: %+v, %v, now %v", d, err, clk.Now().Sub(ref))
	}
	clk.advance(90 * ms)
	if _, err = a.Wait(ctx); err != nil || !clk.Now().Equal(ref.Add(120*ms)) {
		t.Fatalf("second wait: now %v, %v", clk.Now().Sub(ref), err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	clk.advance(50 * ms)
	if _, err = a.Wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestSystemClockSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (SystemClock{}).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if err := (SystemClock{}).Sleep(context.Background(), time.Microsecond); err != nil {
		t.Fatal(err)
	}
}

func TestNewErrors(t *testing.T) {
	good := Plan{Reference: ref, Period: 100 * ms}
	for _, tc := range []struct {
		name string
		p    Plan
		o    Options
	}{
		{"zero period", Plan{Reference: ref}, Options{Mode: Pad}},
		{"negative shift", Plan{Reference: ref, Period: 100 * ms, Shift: -1}, Options{Mode: Pad}},
		{"shift past the period", Plan{Reference: ref, Period: 100 * ms, Shift: 100 * ms}, Options{Mode: Pad}},
		{"offset past the period", Plan{Reference: ref, Period: 100 * ms, CommOffset: 100 * ms}, Options{Mode: Pad}},
		{"negative threshold", good, Options{Mode: Pad, Threshold: -0.1}},
		{"threshold over half", good, Options{Mode: Pad, Threshold: 0.6}},
		{"NaN threshold", good, Options{Mode: Pad, Threshold: nan()}},
		{"mode", good, Options{Mode: 7}},
		{"cooldown", good, Options{Mode: Pad, Cooldown: -1}},
		{"NaN budget", good, Options{Budget: nan()}},
		{"infinite budget", good, Options{Budget: 1 / zero()}},
	} {
		if _, err := New(tc.p, tc.o); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", tc.name, err)
		}
	}
	for _, s := range []string{"", "pad", "free"} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("ParseMode(%q): %v", s, err)
		}
	}
	if _, err := ParseMode("loose"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseMode: %v", err)
	}
}

func nan() float64 { z := 0.0; return z / z }

func zero() float64 { return 0 }

func TestNoAllocs(t *testing.T) {
	a := mustNew(t, Plan{Reference: ref, Period: 100 * ms, CommOffset: 10 * ms}, Options{Mode: Pad})
	now := ref
	if n := testing.AllocsPerRun(1000, func() {
		d := a.Next(now)
		a.Communicating(d.Start.Add(10 * ms))
		now = d.Start.Add(95 * ms)
	}); n != 0 {
		t.Fatalf("%v allocations per iteration", n)
	}
}

// The training loop and a monitor use one agent at once (run with -race).
func TestConcurrentStats(t *testing.T) {
	clk := &fakeClock{now: ref}
	a := mustNew(t, Plan{Reference: ref, Period: 10 * ms}, Options{Mode: Pad, Clock: clk})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 1000 {
			a.Wait(context.Background())
			a.Communicating(clk.Now())
			clk.advance(9 * ms)
		}
	}()
	for range 100 {
		_ = a.Stats().PerMinute()
	}
	wg.Wait()
	if s := a.Stats(); s.Iterations != 1000 {
		t.Fatalf("stats %+v", s)
	}
}
