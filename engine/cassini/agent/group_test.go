package agent

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// loops drives Elastic agents sharing a group in virtual time: job i's
// iteration n takes work(i, n) once started; the loops' decisions are taken
// in the order of their ready instants (ties by job). It returns every
// iteration's start per job.
func loops(t *testing.T, plans []Plan, opt Options, iters int, work func(i, n int) time.Duration) ([][]time.Time, []*Agent) {
	t.Helper()
	agents := make([]*Agent, len(plans))
	for i, p := range plans {
		agents[i] = mustNew(t, p, opt)
	}
	ready := make([]time.Time, len(plans))
	for i := range ready {
		ready[i] = ref
	}
	starts := make([][]time.Time, len(plans))
	for {
		i := -1
		for k := range plans {
			if len(starts[k]) < iters && (i < 0 || ready[k].Before(ready[i])) {
				i = k
			}
		}
		if i < 0 {
			return starts, agents
		}
		d := agents[i].Next(ready[i])
		if d.Start.Before(ready[i]) || d.Delay != d.Start.Sub(ready[i]) {
			t.Fatalf("job %d: decision %+v for ready %v", i, d, ready[i].Sub(ref))
		}
		starts[i] = append(starts[i], d.Start)
		ready[i] = d.Start.Add(work(i, len(starts[i])-1))
	}
}

func pair(shift time.Duration) (*Group, []Plan) {
	g := NewGroup(ref)
	return g, []Plan{
		{Reference: ref, Period: 100 * ms, Group: g},
		{Reference: ref, Shift: shift, Period: 100 * ms, CommOffset: 0, Group: g},
	}
}

// relPhase is job 1's start minus job 0's nearest earlier start, over the
// common period p.
func relPhase(a, b time.Time, p time.Duration) time.Duration {
	d := b.Sub(a) % p
	if d < 0 {
		d += p
	}
	return d
}

// On time, the jobs start on their planned slots: no waiting after the
// first, no adjustment.
func TestElasticOnTime(t *testing.T) {
	_, plans := pair(50 * ms)
	starts, agents := loops(t, plans, Options{}, 40, func(int, int) time.Duration { return 100 * ms })
	for n := range 40 {
		if want := ref.Add(time.Duration(n) * 100 * ms); !starts[0][n].Equal(want) {
			t.Fatalf("job 0 iteration %d at %v", n, starts[0][n].Sub(ref))
		}
		if want := ref.Add(50*ms + time.Duration(n)*100*ms); !starts[1][n].Equal(want) {
			t.Fatalf("job 1 iteration %d at %v", n, starts[1][n].Sub(ref))
		}
	}
	for i, a := range agents {
		if s := a.Stats(); s.Adjustments != 0 || s.Padding != time.Duration(i)*50*ms {
			t.Fatalf("job %d: %+v", i, s)
		}
	}
}

// Both jobs 10% slower than planned: the clock stretches, the overlay
// keeps its shape (job 1 half a period after job 0) and nobody waits once
// the pace is learnt.
func TestElasticStretches(t *testing.T) {
	g, plans := pair(50 * ms)
	starts, agents := loops(t, plans, Options{}, 60, func(int, int) time.Duration { return 110 * ms })
	if s := g.Scale(); math.Abs(s-1.1) > 1e-9 {
		t.Fatalf("scale %v", s)
	}
	for n := 20; n < 60; n++ {
		if got := relPhase(starts[0][n], starts[1][n], 110*ms); got < 54*ms || got > 56*ms {
			t.Fatalf("iteration %d: job 1 starts %v after job 0, want 55 ms", n, got)
		}
		if p := starts[0][n].Sub(starts[0][n-1]); p != 110*ms {
			t.Fatalf("iteration %d: period %v", n, p)
		}
	}
	for i, a := range agents {
		if s := a.Stats(); s.Adjustments != 0 {
			t.Fatalf("job %d: %+v", i, s)
		}
	}
}

// The faster job waits for the slower one: it pads to the slower pace and
// the relative phase is held.
func TestElasticLocksToTheSlowest(t *testing.T) {
	_, plans := pair(50 * ms)
	starts, agents := loops(t, plans, Options{}, 60, func(i, _ int) time.Duration {
		return time.Duration(100+10*i) * ms // job 1 is slower
	})
	for n := 20; n < 60; n++ {
		if p := starts[0][n].Sub(starts[0][n-1]); p < 109*ms || p > 111*ms {
			t.Fatalf("job 0 iteration %d: period %v, want the slower job's 110 ms", n, p)
		}
		if got := relPhase(starts[0][n], starts[1][n], 110*ms); got < 53*ms || got > 57*ms {
			t.Fatalf("iteration %d: relative phase %v", n, got)
		}
	}
	if s := agents[0].Stats(); s.Padding < 40*9*ms {
		t.Fatalf("the faster job did not pad: %+v", s)
	}
	if s := agents[1].Stats(); s.Padding > 60*ms || s.Adjustments > 1 {
		t.Fatalf("the slower job waited: %+v", s)
	}
}

// A straggler iteration of twice the period skips one slot: its phase is
// back in place without anyone waiting for it.
func TestElasticStragglerSkipsASlot(t *testing.T) {
	_, plans := pair(50 * ms)
	starts, agents := loops(t, plans, Options{}, 30, func(i, n int) time.Duration {
		if i == 0 && n == 10 {
			return 200 * ms
		}
		return 100 * ms
	})
	if got := starts[0][11].Sub(starts[0][10]); got != 200*ms {
		t.Fatalf("straggler took %v", got)
	}
	for n := 11; n < 30; n++ {
		if got := relPhase(starts[0][n], starts[1][n], 100*ms); got != 50*ms {
			t.Fatalf("iteration %d: relative phase %v", n, got)
		}
	}
	if s := agents[1].Stats(); s.Padding != 50*ms {
		t.Fatalf("job 1 waited for the straggler: %+v", s)
	}
}

// A job late by 20% of its period (past the threshold, under half) slides
// the clock: its partner waits 20 ms once, and the phase is restored. (No
// budget: the tests of a correction's mechanics make corrections faster
// than the budget allows.)
func TestElasticSlide(t *testing.T) {
	_, plans := pair(50 * ms)
	starts, agents := loops(t, plans, Options{Margin: -1, Budget: -1}, 30, func(i, n int) time.Duration {
		if i == 0 && n == 10 {
			return 120 * ms
		}
		return 100 * ms
	})
	s0, s1 := agents[0].Stats(), agents[1].Stats()
	if s0.Adjustments != 1 || s0.Slides != 1 || s0.AdjustDelay != 0 {
		t.Fatalf("late job: %+v", s0)
	}
	if s1.Padding != 50*ms+20*ms {
		t.Fatalf("partner: %+v", s1)
	}
	for n := 12; n < 30; n++ {
		if got := relPhase(starts[0][n], starts[1][n], 100*ms); got != 50*ms {
			t.Fatalf("iteration %d: relative phase %v", n, got)
		}
	}
}

// A shift that costs more than it saves is given up: the fast job waits 40
// ms per iteration for a partner 40% slower, while holding saves it 10 ms of
// communication; after the averaging window it runs free, says so once, and
// its partner no longer paces on it.
func TestElasticGivesUp(t *testing.T) {
	g := NewGroup(ref)
	plans := []Plan{
		{Reference: ref, Period: 100 * ms, Group: g, FreeComm: 40 * ms},
		{Reference: ref, Shift: 50 * ms, Period: 100 * ms, Group: g},
	}
	agents := []*Agent{mustNew(t, plans[0], Options{}), mustNew(t, plans[1], Options{})}
	ready := []time.Time{ref, ref}
	released := -1
	for n := range 200 {
		for i, a := range agents {
			d := a.Next(ready[i])
			if d.Released {
				if i != 0 || released >= 0 {
					t.Fatalf("job %d released at iteration %d (earlier: %d)", i, n, released)
				}
				released = n
			}
			if i == 0 {
				a.Communicated(30 * ms) // 10 ms saved against FreeComm
				if released >= 0 && d.Delay != 0 {
					t.Fatalf("iteration %d: released job waited %v", n, d.Delay)
				}
			}
			ready[i] = d.Start.Add(time.Duration(100+40*i) * ms)
		}
	}
	if released < holdWindow || released > 3*holdWindow {
		t.Fatalf("released at iteration %d", released)
	}
	if !agents[0].Released() || !agents[0].Stats().Released || agents[1].Released() {
		t.Fatal("release state")
	}
	if g.Members() != 1 {
		t.Fatalf("%d members", g.Members())
	}
	if s := agents[0].Stats(); s.Saved <= 0 {
		t.Fatalf("saved %v", s.Saved)
	}
}

// Under 2% Gaussian jitter of the whole iteration time (the Alibaba PAI
// replay's iteration-to-iteration jitter is 0.5-2% of the compute time), two
// interleaved jobs hold their phase within the threshold nearly always, with
// under 2 adjustments per minute each and under 3% of idle time.
func TestElasticUnderJitter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	noise := make([][]float64, 2)
	for i := range noise {
		for range 3000 {
			noise[i] = append(noise[i], 1+0.02*rng.NormFloat64())
		}
	}
	_, plans := pair(50 * ms)
	starts, agents := loops(t, plans, Options{}, 3000, func(i, n int) time.Duration {
		return time.Duration(float64(100*ms) * noise[i][n])
	})
	off := 0
	for n := 100; n < 3000; n++ {
		p := starts[0][n].Sub(starts[0][n-1])
		if got := relPhase(starts[0][n], starts[1][n], p); got < 40*ms || got > 60*ms {
			off++
		}
	}
	if off > 60 {
		t.Fatalf("%d of 2900 iterations off the planned phase by more than 10%%", off)
	}
	for i, a := range agents {
		s := a.Stats()
		t.Logf("job %d: %.2f adjustments per minute, %v padding per iteration, %d off", i, s.PerMinute(), s.Padding/3000, off)
		if pm := s.PerMinute(); pm >= 2 {
			t.Errorf("job %d: %.2f adjustments per minute", i, pm)
		}
		if mean := s.Padding / 3000; mean > 3*ms {
			t.Errorf("job %d: %v padding per iteration", i, mean)
		}
	}
}

// Property: under random work times no Elastic iteration starts before the
// loop is ready, and a decision's delay is its start minus ready.
func TestElasticInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 100 {
		g := NewGroup(ref)
		var plans []Plan
		for range 1 + rng.IntN(4) {
			p := time.Duration(50+rng.IntN(300)) * ms
			plans = append(plans, Plan{Reference: ref, Shift: time.Duration(rng.Int64N(int64(p))), Period: p, Group: g,
				FreeComm: time.Duration(rng.Int64N(int64(p)))})
		}
		loops(t, plans, Options{Margin: rng.Float64() * 3}, 200, func(i, _ int) time.Duration {
			return time.Duration(float64(plans[i].Period) * (0.5 + 1.5*rng.Float64()))
		})
		_ = trial
	}
}

func TestElasticErrors(t *testing.T) {
	g := NewGroup(ref.Add(time.Second))
	if _, err := New(Plan{Reference: ref, Period: 100 * ms, Group: g}, Options{}); err == nil {
		t.Fatal("a plan whose reference is not its group's")
	}
	if _, err := New(Plan{Reference: ref, Period: 100 * ms, FreeComm: -1}, Options{}); err == nil {
		t.Fatal("negative FreeComm")
	}
	for _, slack := range []time.Duration{-1, 100 * ms} {
		if _, err := New(Plan{Reference: ref, Period: 100 * ms, Slack: slack}, Options{}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("slack %v: %v", slack, err)
		}
	}
	if _, err := New(Plan{Reference: ref, Period: 100 * ms}, Options{Margin: math.Inf(1)}); err == nil {
		t.Fatal("infinite margin")
	}
}

func TestElasticNoAllocs(t *testing.T) {
	a := mustNew(t, Plan{Reference: ref, Period: 100 * ms, CommOffset: 10 * ms, FreeComm: 50 * ms, Group: NewGroup(ref)}, Options{})
	now := ref
	if n := testing.AllocsPerRun(1000, func() {
		d := a.Next(now)
		a.Communicating(d.Start.Add(10 * ms))
		a.Communicated(20 * ms)
		now = d.Start.Add(95 * ms)
	}); n != 0 {
		t.Fatalf("%v allocations per iteration", n)
	}
}

// Without a group (its partners run elsewhere) an Elastic agent holds its
// slots on the reference exactly as Pad does.
func TestElasticWithoutGroupIsPad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	p := Plan{Reference: ref, Shift: 30 * ms, Period: 100 * ms, CommOffset: 20 * ms, FreeComm: 40 * ms}
	e, q := mustNew(t, p, Options{}), mustNew(t, p, Options{Mode: Pad})
	now := ref.Add(7 * ms)
	for n := range 500 {
		de, dq := e.Next(now), q.Next(now)
		if de != dq {
			t.Fatalf("iteration %d: elastic %+v, pad %+v", n, de, dq)
		}
		if ee, eq := e.Communicating(de.Start.Add(20*ms)), q.Communicating(dq.Start.Add(20*ms)); ee != eq {
			t.Fatalf("iteration %d: phase errors %v and %v", n, ee, eq)
		}
		e.Communicated(30 * ms)
		now = de.Start.Add(time.Duration(float64(100*ms) * (0.9 + 0.2*rng.Float64())))
	}
	if e.Stats() != q.Stats() {
		t.Fatalf("stats %+v and %+v", e.Stats(), q.Stats())
	}
}

// A change of pace (the Alibaba PAI series step by 5-10% every ten or so
// iterations) costs at most two adjustments: the pace estimate restarts at
// the new level instead of lagging behind it for half its window, which
// left the slower job late past the threshold at every iteration of the lag.
func TestElasticFollowsAChangeOfPace(t *testing.T) {
	_, plans := pair(50 * ms)
	const steps, span = 20, 12
	level := func(n int) time.Duration { // 100, 112, 100, 112, ... ms, each for span iterations
		return time.Duration(100+12*((n/span)%2)) * ms
	}
	starts, agents := loops(t, plans, Options{Budget: -1}, steps*span, func(i, n int) time.Duration {
		if i == 1 {
			return level(n)
		}
		return 100 * ms
	})
	if s := agents[1].Stats(); s.Adjustments > 2*steps {
		t.Errorf("%d adjustments for %d changes of pace: %+v", s.Adjustments, steps, s)
	}
	for n := span; n < steps*span; n++ {
		p := starts[0][n].Sub(starts[0][n-1])
		if got := relPhase(starts[0][n], starts[1][n], p); got < 40*ms || got > 65*ms {
			t.Errorf("iteration %d: relative phase %v of %v", n, got, p)
		}
	}
}

// The budget caps the adjustments: where the pace steps every 12
// iterations (a correction a step without the cap, TestElasticFollowsAChangeOfPace),
// an agent adjusts at most Budget times a minute of its span, however
// short (FullBudget: and its starting token), and tolerates the other
// drifts (Deferred); without the cap the same run adjusts more, so the cap
// is what binds.
func TestElasticBudget(t *testing.T) {
	const steps, span = 100, 12
	level := func(n int) time.Duration { return time.Duration(100+12*((n/span)%2)) * ms }
	run := func(budget float64, full bool) Stats {
		_, plans := pair(50 * ms)
		_, agents := loops(t, plans, Options{Budget: budget, FullBudget: full}, steps*span, func(i, n int) time.Duration {
			if i == 1 {
				return level(n)
			}
			return 100 * ms
		})
		return agents[1].Stats()
	}
	for _, budget := range []float64{0, 1, 4} {
		want := budget
		if want == 0 {
			want = DefaultBudget
		}
		for _, full := range []bool{false, true} {
			s := run(budget, full)
			most := int64(want * s.Span.Minutes())
			if full {
				most += budgetBurst
			}
			if s.Adjustments > most || s.Adjustments == 0 || s.Deferred == 0 {
				t.Errorf("budget %v (full %v) over %v: %d adjustments (at most %d), %d deferred", budget, full, s.Span, s.Adjustments, most, s.Deferred)
			}
		}
		if free := run(-1, false); free.Adjustments <= int64(want*free.Span.Minutes())+budgetBurst || free.Deferred != 0 {
			t.Errorf("no budget: %d adjustments over %v, %d deferred: the cap %v would not bind", free.Adjustments, free.Span, free.Deferred, want)
		}
	}
}

// The budget starts empty: a drift past the threshold in the first
// iterations stands for a token's worth of time (30 s at the default
// budget); with FullBudget it is corrected at once, and so it is on the
// plan's clock, where the budget does not apply.
func TestElasticBudgetStart(t *testing.T) {
	// planBudget: the rule before on the plan's clock (its ablation), where
	// the budget's empty start defers the correction again.
	for _, c := range []struct{ full, plan, planBudget bool }{{false, false, false}, {true, false, false}, {false, true, false}, {false, true, true}} {
		_, plans := pair(50 * ms)
		if c.plan {
			plans[0].Group, plans[1].Group = NewPlanGroup(ref), NewPlanGroup(ref)
		}
		empty := !c.full && (!c.plan || c.planBudget)
		_, agents := loops(t, plans, Options{FullBudget: c.full, PlanBudget: c.planBudget}, 40, func(i, n int) time.Duration {
			if i == 1 && n == 3 {
				return 130 * ms // one straggler, late past slack and threshold
			}
			return 100 * ms
		})
		s := agents[1].Stats()
		if empty && (s.Adjustments != 0 || s.Deferred == 0) || !empty && s.Adjustments != 1 {
			t.Errorf("%+v: %d adjustments, %d deferred", c, s.Adjustments, s.Deferred)
		}
	}
}

// Property: holding never slows a job beyond the noise. In a group of
// Elastic agents that never give up (FreeComm 0), each member working with
// its own noise (levels that step every few iterations, and Gaussian
// jitter), a job's mean iteration (start to start) is at most what the
// noise alone forces on a lock (the mean over iterations of the slowest
// member's work; the jobs share one period, so iteration n of each falls
// at the same time) plus the threshold (the most slack a pace estimate
// carries) and a tenth of it for the adjustments.
func TestElasticNeverSlowsBeyondTheNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	const iters = 400
	for trial := range 60 {
		g := NewGroup(ref)
		var plans []Plan
		n := 2 + rng.IntN(3)
		p := time.Duration(80+rng.IntN(300)) * ms
		for range n {
			plans = append(plans, Plan{Reference: ref, Shift: time.Duration(rng.Int64N(int64(p))), Period: p, Group: g})
		}
		cv, step := 0.03*rng.Float64(), 0.1*rng.Float64()
		work := make([][]float64, n) // per job and iteration: work over period
		for i := range work {
			lvl := 1.0
			for k := range iters {
				if k%(5+rng.IntN(15)) == 0 {
					lvl = 1 + step*rng.Float64()
				}
				work[i] = append(work[i], max(lvl*(1+cv*rng.NormFloat64()), 0.5))
			}
		}
		starts, _ := loops(t, plans, Options{}, iters, func(i, k int) time.Duration {
			return time.Duration(float64(plans[i].Period) * work[i][k])
		})
		slowest := 0.0
		for k := range iters - 1 {
			w := 0.0
			for i := range work {
				w = max(w, work[i][k])
			}
			slowest += w / (iters - 1)
		}
		for i, s := range starts {
			mean := float64(s[iters-1].Sub(s[0])) / float64(iters-1) / float64(plans[i].Period)
			if bound := slowest + 1.1*DefaultThreshold; mean > bound {
				t.Errorf("trial %d (jitter %.3f, steps %.3f): job %d runs at %.4f of its period, the noise forces %.4f (bound %.4f)",
					trial, cv, step, i, mean, slowest, bound)
			}
		}
	}
}

// A lateness within the plan's Slack stands: nobody waits, and the late job
// drains it when it runs faster; past the slack the clock moves by the
// lateness beyond it only.
func TestElasticSlack(t *testing.T) {
	for _, tc := range []struct {
		late, slack, partnerWaits time.Duration
		adjustments               int64
	}{
		{8 * ms, 10 * ms, 0, 0},        // within the slack
		{20 * ms, 10 * ms, 10 * ms, 1}, // past it by 10 ms: past the 5 ms threshold
		{13 * ms, 10 * ms, 3 * ms, 0},  // past it by 3 ms: a nudge
		{20 * ms, 0, 20 * ms, 1},       // no slack: all of it
	} {
		_, plans := pair(50 * ms)
		plans[0].Slack, plans[1].Slack = tc.slack, tc.slack
		starts, agents := loops(t, plans, Options{Margin: -1, Budget: -1}, 30, func(i, n int) time.Duration {
			switch {
			case i == 0 && n == 10:
				return 100*ms + tc.late
			case i == 0 && n == 11:
				return 100*ms - tc.late // it catches up
			}
			return 100 * ms
		})
		s0, s1 := agents[0].Stats(), agents[1].Stats()
		if s0.Adjustments != tc.adjustments || s1.Padding != 50*ms+tc.partnerWaits {
			t.Errorf("late %v, slack %v: late job %+v, partner %+v", tc.late, tc.slack, s0, s1)
		}
		for n := 12; n < 30; n++ { // back on the planned phase
			if got := relPhase(starts[0][n], starts[1][n], 100*ms); got != 50*ms {
				t.Errorf("late %v, slack %v: iteration %d: relative phase %v", tc.late, tc.slack, n, got)
			}
		}
	}
}

// GiveUpGroup weighs the members' summed wait against their summed saving,
// and no member's own net loss past the threshold: the fast job waits 40 ms
// per iteration (0.4 of its period) for a partner 40% slower. Saving 38 ms
// itself and 10 ms its partner, the group gains (0.48 against 0.4) and the
// job loses 0.02, within the threshold: both hold, where GiveUpOwn lets the
// fast one go. Saving 10 ms itself and 50 ms its partner, the group gains
// but the fast job loses 0.3: both give up. Saving 10 ms each, the group
// loses: both give up, the second at its next decision.
func TestElasticGroupGivesUp(t *testing.T) {
	for _, c := range []struct {
		rule            GiveUp
		fast, slowSaves time.Duration
		released        [2]bool
	}{
		{GiveUpGroup, 38 * ms, 10 * ms, [2]bool{false, false}},
		{GiveUpOwn, 38 * ms, 10 * ms, [2]bool{true, false}},
		{GiveUpGroup, 10 * ms, 50 * ms, [2]bool{true, true}},
		{GiveUpGroup, 10 * ms, 10 * ms, [2]bool{true, true}},
	} {
		g := NewGroup(ref)
		agents := []*Agent{
			mustNew(t, Plan{Reference: ref, Period: 100 * ms, Group: g, FreeComm: 40 * ms}, Options{GiveUp: c.rule}),
			mustNew(t, Plan{Reference: ref, Shift: 50 * ms, Period: 100 * ms, Group: g, FreeComm: 40 * ms}, Options{GiveUp: c.rule}),
		}
		ready := []time.Time{ref, ref}
		at := [2]int{-1, -1}
		for n := range 200 {
			for i, a := range agents {
				d := a.Next(ready[i])
				if d.Released {
					at[i] = n
				}
				a.Communicated(40*ms - []time.Duration{c.fast, c.slowSaves}[i])
				ready[i] = d.Start.Add(time.Duration(100+40*i) * ms)
			}
		}
		for i, a := range agents {
			if a.Released() != c.released[i] || (at[i] >= 0) != c.released[i] {
				t.Errorf("rule %d, saving %v and %v: job %d released %v (at iteration %d), want %v",
					c.rule, c.fast, c.slowSaves, i, a.Released(), at[i], c.released[i])
			}
		}
		if c.released == [2]bool{true, true} && (min(at[0], at[1]) < holdWindow || max(at[0]-at[1], at[1]-at[0]) > 1) {
			t.Errorf("group give-up at iterations %v: want both after the window, the second at its next decision", at)
		}
	}
}

// A transient stall of the host is not a lasting loss of saving: one
// iteration in ten whose communication a stall stretches to 140 ms (100
// ms worse than the 40 ms the shift is weighed against, where the others
// save 5 ms) leaves the shift held under the default rule (the window's
// worst eighth left out), where the moving averages (MeanGiveUp, the rule
// before) give it up; a loss that lasts (every iteration losing 5 ms)
// gives it up either way.
func TestElasticStallIsNotALoss(t *testing.T) {
	run := func(mean bool, comm func(n int) time.Duration) (released bool) {
		g := NewGroup(ref)
		var agents []*Agent
		for i := range 2 {
			agents = append(agents, mustNew(t, Plan{Reference: ref, Shift: time.Duration(50*i) * ms, Period: 100 * ms, Group: g, FreeComm: 40 * ms},
				Options{MeanGiveUp: mean}))
		}
		ready := []time.Time{ref, ref}
		for n := range 200 {
			for i, a := range agents {
				d := a.Next(ready[i])
				a.Communicated(comm(n))
				ready[i] = d.Start.Add(100 * ms)
			}
		}
		return agents[0].Released() && agents[1].Released()
	}
	stalls := func(n int) time.Duration {
		if n%10 == 5 {
			return 140 * ms
		}
		return 35 * ms
	}
	lasting := func(int) time.Duration { return 45 * ms }
	if run(false, stalls) {
		t.Error("trimmed: a stall in ten iterations gave the shifts up")
	}
	if !run(true, stalls) {
		t.Error("moving averages: the stalls did not give the shifts up (the test no longer shows the difference)")
	}
	for _, mean := range []bool{false, true} {
		if !run(mean, lasting) {
			t.Errorf("mean %v: a lasting loss did not give the shifts up", mean)
		}
	}
}

// The plan's clock (NewPlanGroup) is a pure function of the plan: two
// ranks of one job, each with a clock of its own (as in two processes),
// ready at instants a few hundred microseconds apart, start every
// iteration on the same slot (or, late, at once: within the skew); the
// clock never stretches (following a change of pace takes a new plan).
func TestPlanGroupAgreesAcrossProcesses(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	plan := func() Plan {
		return Plan{Reference: ref, Shift: 30 * ms, Period: 100 * ms, Slack: 8 * ms, Group: NewPlanGroup(ref)}
	}
	a, b := mustNew(t, plan(), Options{}), mustNew(t, plan(), Options{})
	ready := ref.Add(3 * ms)
	for n := range 300 {
		skew := time.Duration(rng.Int64N(int64(400 * time.Microsecond)))
		da, db := a.Next(ready), b.Next(ready.Add(skew))
		if ds := db.Start.Sub(da.Start); ds < 0 || ds > skew {
			t.Fatalf("iteration %d: rank 0 starts at %v, rank 1 at %v (skew %v)", n, da.Start.Sub(ref), db.Start.Sub(ref), skew)
		}
		if da.Late == 0 && (da.Start.Sub(ref)-30*ms)%(100*ms) != 0 {
			t.Fatalf("iteration %d: start %v is off the plan's slots", n, da.Start.Sub(ref))
		}
		work := time.Duration(float64(97*ms) * (1 + 0.02*rng.NormFloat64()))
		ready = db.Start.Add(work)
	}
	if a.plan.Group.Scale() != 1 {
		t.Fatalf("the plan's clock stretched to %v", a.plan.Group.Scale())
	}
}

// On the plan's clock a late job cannot slide its partners: a lateness
// within its slack and the threshold stands (its partner's slots do not
// move), one past them waits for its next slot (an adjustment); on a
// shared group the same lateness slides the partner instead.
func TestPlanGroupLateJob(t *testing.T) {
	for _, shared := range []bool{false, true} {
		g0, g1 := NewPlanGroup(ref), NewPlanGroup(ref)
		if shared {
			g0 = NewGroup(ref)
			g1 = g0
		}
		plans := []Plan{
			{Reference: ref, Period: 100 * ms, Slack: 5 * ms, Group: g0},
			{Reference: ref, Shift: 50 * ms, Period: 100 * ms, Slack: 5 * ms, Group: g1},
		}
		late := map[int]time.Duration{10: 8 * ms, 20: 30 * ms} // within 5+5 ms; past it
		starts, agents := loops(t, plans, Options{Margin: -1, Budget: -1}, 40, func(i, n int) time.Duration {
			if i == 0 {
				return 100*ms + late[n]
			}
			return 100 * ms
		})
		s0, s1 := agents[0].Stats(), agents[1].Stats()
		if shared {
			if s0.Slides == 0 && s0.Nudges == 0 || s1.Padding <= 50*ms {
				t.Errorf("shared: the late job did not slide its partner: %+v, %+v", s0, s1)
			}
			continue
		}
		for n := range 40 {
			if want := ref.Add(50*ms + time.Duration(n)*100*ms); !starts[1][n].Equal(want) {
				t.Fatalf("plan clock: the partner's iteration %d moved to %v", n, starts[1][n].Sub(ref))
			}
		}
		if s0.Adjustments != 1 || s0.Slides != 0 || s0.Nudges != 0 || s0.AdjustDelay < 60*ms {
			t.Errorf("plan clock: the late job %+v, want one adjustment waiting for its next slot", s0)
		}
		if got := starts[0][21].Sub(ref); got != 2200*ms {
			t.Errorf("plan clock: after the long lateness the job started at %v, want its slot at 2.2 s", got)
		}
	}
}
