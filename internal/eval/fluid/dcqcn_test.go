package fluid

import (
	"errors"
	"math"
	"testing"
	"time"
)

// dcqcnRun steps d every p.Step from now for dur, returning the new now.
func dcqcnRun(d *DCQCN, now int64, dur time.Duration, each func(now int64)) int64 {
	step := int64(d.Params().Step)
	for end := now + int64(dur); now < end; {
		d.Advance(float64(step) / 1e9)
		now += step
		d.Control(now)
		if each != nil {
			each(now)
		}
	}
	return now
}

func newDCQCN(t *testing.T, capacity []float64, p DCQCNParams, seed uint64) *DCQCN {
	t.Helper()
	d := &DCQCN{}
	if err := d.Reset(capacity, nil, p, seed); err != nil {
		t.Fatal(err)
	}
	return d
}

func mustAdd(t *testing.T, d *DCQCN, links []int, peak, line float64, now int64) FlowID {
	t.Helper()
	id, err := d.Add(links, peak, line, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A lone flow on a path that carries its line rate sends at it from the
// start: no queue, no mark, no CNP, and the network is quiet at once.
func TestDCQCNLoneFlowAtLineRate(t *testing.T) {
	d := newDCQCN(t, []float64{50e9, 100e9}, DefaultDCQCN(), 1)
	id := mustAdd(t, d, []int{0, 1}, math.Inf(1), 50e9, 0)
	if !d.Quiet() {
		t.Fatal("a lone flow at line rate is not quiet")
	}
	dcqcnRun(d, 0, 10*time.Millisecond, nil)
	s := d.State(id)
	if s.Rate != 50e9 || s.CNPs != 0 || d.Queue(0, 0) != 0 || d.Marked(id) {
		t.Fatalf("rate %v, CNPs %d, queue %v, marked %v", s.Rate, s.CNPs, d.Queue(0, 0), d.Marked(id))
	}
	if want := 50e9 * 0.01; math.Abs(s.Sent-want) > 1 {
		t.Fatalf("sent %v bits in 10 ms, want %v", s.Sent, want)
	}
}

// After two cuts, a flow whose path is free climbs back to its line rate on
// the law's schedule: five fast recovery events (Rc halfway to Rt each),
// then additive increase, and hyper increase once both the timer and the
// byte counter have passed F events. The fluid model, stepping every
// 5 us, reaches the line rate when a continuous-time replay of the same
// events does (within two steps), and alpha decays by (1-g) per 55 us.
func TestDCQCNRecoveryFollowsTheLaw(t *testing.T) {
	p := DefaultDCQCN()
	d := newDCQCN(t, []float64{100e9}, p, 1)
	const line = 50e9
	id := mustAdd(t, d, []int{0}, math.Inf(1), line, 0)
	d.cut(&d.fl[id]) // a CNP at time 0: Rc 25 Gbps, Rt 50 Gbps, alpha 1
	if s := d.State(id); s.Rc != line/2 || s.Rt != line || s.Alpha != 1 {
		t.Fatalf("after the first CNP: %+v", s)
	}
	d.cut(&d.fl[id]) // and another: Rc 12.5 Gbps, Rt 25 Gbps
	if s := d.State(id); s.Rc != line/4 || s.Rt != line/2 || s.Alpha != 1 {
		t.Fatalf("after the second CNP: %+v", s)
	}
	reached := int64(-1)
	var alphaAt1ms float64
	dcqcnRun(d, 0, 200*time.Millisecond, func(now int64) {
		s := d.State(id)
		if reached < 0 && s.Rc == line {
			reached = now
		}
		if now == int64(time.Millisecond) {
			alphaAt1ms = s.Alpha
		}
	})
	want := recoveryTime(p, line/4, line/2, line)
	if reached < 0 || math.Abs(float64(reached)-want) > float64(2*p.Step)+0.002*want {
		t.Fatalf("line rate after %v, the law's events: %v", time.Duration(reached), time.Duration(want))
	}
	if a := math.Pow(1-p.G, 18); math.Abs(alphaAt1ms-a) > 1e-12 { // 18 alpha timers in 1 ms
		t.Fatalf("alpha after 1 ms %v, want %v", alphaAt1ms, a)
	}
	t.Logf("from %.1f to %.0f Gbps in %v (the law: %v)", line/4/1e9, line/1e9, time.Duration(reached), time.Duration(want))
}

// recoveryTime replays the reaction point's increase events in continuous
// time for a flow alone from (rc, rt) with no CNP: the timer every
// RateTimer, the byte counter every ByteCounter bytes sent at the current
// rate; it returns when Rc reaches the line rate (ns).
func recoveryTime(p DCQCNParams, rc, rt, line float64) float64 {
	T := float64(p.RateTimer)
	B := p.ByteCounter * 8
	var now, bits float64
	iT, iB := 0, 0
	nextT := T
	for step := 0; step < 1e6; step++ {
		nextB := now + (B-bits)/rc*1e9
		byTimer := nextT <= nextB
		if byTimer {
			bits += rc * (nextT - now) / 1e9
			now = nextT
			nextT += T
			iT++
		} else {
			now = nextB
			bits = 0
			iB++
		}
		switch {
		case max(iT, iB) <= p.F:
		case min(iT, iB) > p.F:
			rt += float64(min(iT, iB)-p.F) * p.RHAI
		default:
			rt += p.RAI
		}
		rt = math.Min(rt, line)
		rc = math.Min((rt+rc)/2, line)
		if line-rc <= line*0x1p-20 {
			return now
		}
	}
	return math.Inf(1)
}

// Two flows at line rate on one bottleneck converge to the fair share the
// law's fixed point predicts, C/2 each (the DCQCN paper's fluid model has
// the unique fixed point R* = C/N), at nearly full utilization with the
// queue held near Kmin; three flows to C/3.
func TestDCQCNFairShare(t *testing.T) {
	for _, n := range []int{2, 3} {
		for seed := uint64(1); seed <= 3; seed++ {
			const c = 50e9
			d := newDCQCN(t, []float64{c}, DefaultDCQCN(), seed)
			ids := make([]FlowID, n)
			for i := range ids {
				ids[i] = mustAdd(t, d, []int{0}, math.Inf(1), 50e9, 0)
			}
			now := dcqcnRun(d, 0, 100*time.Millisecond, nil) // the initial collision settles
			sent0 := make([]float64, n)
			for i, id := range ids {
				sent0[i] = d.State(id).Sent
			}
			var qsum float64
			steps := 0
			dcqcnRun(d, now, 300*time.Millisecond, func(int64) { qsum += d.Queue(0, 0); steps++ })
			total := 0.0
			for i, id := range ids {
				r := (d.State(id).Sent - sent0[i]) / 0.3
				total += r
				if math.Abs(r-c/float64(n)) > 0.05*c/float64(n) {
					t.Errorf("%d flows, seed %d: flow %d at %.2f Gbps, the fair share %.2f", n, seed, i, r/1e9, c/float64(n)/1e9)
				}
			}
			q := qsum / float64(steps) / 8
			if total < 0.98*c || total > c*(1+1e-9) || q > DefaultDCQCN().Kmax {
				t.Errorf("%d flows, seed %d: utilization %.3f, mean queue %.1f KB", n, seed, total/c, q/1e3)
			}
		}
	}
}

// The control step is a modelling choice, not part of the law: stepping
// every 50 us (the CNP interval, the coarsest step at which a receiver's
// one CNP per interval holds exactly) gives the same steady state as every
// 5 us and every 1 us: the same fair shares (within 5%), utilization and
// queue (within 20%).
func TestDCQCNStepSteadyState(t *testing.T) {
	type out struct{ a, b, util, q float64 }
	measure := func(step time.Duration, seed uint64) out {
		p := DefaultDCQCN()
		p.Step = step
		d := newDCQCN(t, []float64{50e9}, p, seed)
		a := mustAdd(t, d, []int{0}, math.Inf(1), 50e9, 0)
		b := mustAdd(t, d, []int{0}, math.Inf(1), 50e9, 0)
		now := dcqcnRun(d, 0, 100*time.Millisecond, nil)
		sa, sb := d.State(a).Sent, d.State(b).Sent
		var qsum float64
		steps := 0
		dcqcnRun(d, now, 300*time.Millisecond, func(int64) { qsum += d.Queue(0, 0); steps++ })
		ra, rb := (d.State(a).Sent-sa)/0.3, (d.State(b).Sent-sb)/0.3
		return out{ra, rb, (ra + rb) / 50e9, qsum / float64(steps)}
	}
	fine := measure(5*time.Microsecond, 1)
	for _, step := range []time.Duration{time.Microsecond, 50 * time.Microsecond} {
		o := measure(step, 1)
		for _, r := range []float64{o.a, o.b} {
			if math.Abs(r-25e9) > 0.05*25e9 {
				t.Errorf("step %v: a flow at %.2f Gbps", step, r/1e9)
			}
		}
		if math.Abs(o.util-fine.util) > 0.005 || math.Abs(o.q-fine.q) > 0.2*fine.q {
			t.Errorf("step %v: utilization %.4f, queue %.1f KB; at 5us %.4f, %.1f KB", step, o.util, o.q/8e3, fine.util, fine.q/8e3)
		}
	}
}

// Eight flows starting at line rate into one port (an incast): the cuts
// come too late to stop the queue, PFC holds it near the threshold (the
// inflow to the port is paused down to its capacity from the next step),
// and nothing is lost: the bits sent are the bits the port delivered plus
// its queue.
func TestDCQCNIncastPFC(t *testing.T) {
	p := DefaultDCQCN()
	const c = 50e9
	d := newDCQCN(t, []float64{c}, p, 1)
	for range 8 {
		mustAdd(t, d, []int{0}, math.Inf(1), 50e9, 0)
	}
	sent := func() float64 {
		var s float64
		for id := range d.fl {
			s += d.State(FlowID(id)).Sent
		}
		return s
	}
	var maxQ, lastSent, lastQ float64
	dt := p.Step.Seconds()
	dcqcnRun(d, 0, 20*time.Millisecond, func(now int64) {
		q, s := d.Queue(0, 0), sent()
		maxQ = max(maxQ, q)
		// What left the port this step: what was sent into it, less
		// what its queue kept.
		if out := s - lastSent - (q - lastQ); out < -1e-3 || out > c*dt*(1+1e-9) {
			t.Fatalf("at %v the port delivered %v bits in a %v step", time.Duration(now), out, p.Step)
		}
		lastSent, lastQ = s, q
	})
	// The queue grows by at most 7 line rates for one step past the threshold.
	if limit := p.PFC*8 + 7*c*dt; maxQ > limit || maxQ < p.PFC*8 {
		t.Fatalf("largest queue %.0f KB, threshold %.0f KB, limit %.0f KB", maxQ/8e3, p.PFC/1e3, limit/8e3)
	}
}

// A NIC port neither queues nor marks: two flows of one sender share its
// line rate in proportion to their rates, and never see a CNP.
func TestDCQCNNICShares(t *testing.T) {
	d := &DCQCN{}
	if err := d.Reset([]float64{50e9, 100e9}, []bool{true, false}, DefaultDCQCN(), 1); err != nil {
		t.Fatal(err)
	}
	a := mustAdd(t, d, []int{0, 1}, 40e9, 50e9, 0)
	b := mustAdd(t, d, []int{0, 1}, 20e9, 50e9, 0)
	dcqcnRun(d, 0, 5*time.Millisecond, nil)
	ra, rb := d.State(a), d.State(b)
	if math.Abs(ra.Rate-100e9/3) > 1 || math.Abs(rb.Rate-50e9/3) > 1 || ra.CNPs+rb.CNPs != 0 || d.Queue(0, 0) != 0 {
		t.Fatalf("rates %v, %v; CNPs %d, %d; queue %v", ra.Rate, rb.Rate, ra.CNPs, rb.CNPs, d.Queue(0, 0))
	}
}

// MLTCP's variant scales a flow's rate increase: on a shared bottleneck
// the flow with weight 2 takes more than the one with weight 1, and with
// equal weights the shares are equal (the fair share test).
func TestDCQCNWeights(t *testing.T) {
	d := newDCQCN(t, []float64{50e9}, DefaultDCQCN(), 1)
	a := mustAdd(t, d, []int{0}, math.Inf(1), 50e9, 0)
	b := mustAdd(t, d, []int{0}, math.Inf(1), 50e9, 0)
	d.SetWeight(a, 2)
	now := dcqcnRun(d, 0, 100*time.Millisecond, nil)
	sa, sb := d.State(a).Sent, d.State(b).Sent
	dcqcnRun(d, now, 200*time.Millisecond, nil)
	ra, rb := (d.State(a).Sent-sa)/0.2, (d.State(b).Sent-sb)/0.2
	if ra < 1.1*rb {
		t.Fatalf("weight 2: %.2f Gbps, weight 1: %.2f Gbps", ra/1e9, rb/1e9)
	}
	t.Logf("weight 2: %.2f Gbps, weight 1: %.2f Gbps", ra/1e9, rb/1e9)
}

// MLTCP's rule acts on the increase steps only: a flow of weight w
// recovers as the law does with RAI and RHAI multiplied by w (fast
// recovery and the cut untouched), so after the same two cuts a weight-3
// flow reaches its line rate when the replay with 3 RAI and 3 RHAI says,
// sooner than a weight-1 flow; a weight applied to the cut or to fast
// recovery would miss that time.
func TestDCQCNWeightScalesIncrease(t *testing.T) {
	p := DefaultDCQCN()
	const line, w = 50e9, 3.0
	reach := func(weight float64) int64 {
		d := newDCQCN(t, []float64{100e9}, p, 1)
		id := mustAdd(t, d, []int{0}, math.Inf(1), line, 0)
		d.SetWeight(id, weight)
		d.cut(&d.fl[id])
		d.cut(&d.fl[id])
		if s := d.State(id); s.Rc != line/4 || s.Rt != line/2 {
			t.Fatalf("weight %v: the cuts gave %+v", weight, s)
		}
		reached := int64(-1)
		dcqcnRun(d, 0, 200*time.Millisecond, func(now int64) {
			if reached < 0 && d.State(id).Rc == line {
				reached = now
			}
		})
		return reached
	}
	q := p
	q.RAI, q.RHAI = w*p.RAI, w*p.RHAI
	want := recoveryTime(q, line/4, line/2, line)
	got, plain := reach(w), reach(1)
	if got < 0 || math.Abs(float64(got)-want) > float64(2*p.Step)+0.002*want {
		t.Fatalf("weight %v: line rate after %v, the law with %v RAI and RHAI: %v", w, time.Duration(got), w, time.Duration(want))
	}
	if !(got < plain) {
		t.Fatalf("weight %v reaches line rate after %v, weight 1 after %v", w, time.Duration(got), time.Duration(plain))
	}
	t.Logf("weight %v: %v; weight 1: %v", w, time.Duration(got), time.Duration(plain))
}

// The same flows, seed and steps give the same rates, bit for bit; another
// seed draws other marks.
func TestDCQCNDeterministic(t *testing.T) {
	trace := func(seed uint64) []float64 {
		d := newDCQCN(t, []float64{50e9}, DefaultDCQCN(), seed)
		a := mustAdd(t, d, []int{0}, math.Inf(1), 50e9, 0)
		mustAdd(t, d, []int{0}, 39e9, 50e9, 0)
		var out []float64
		dcqcnRun(d, 0, 20*time.Millisecond, func(int64) { out = append(out, d.Rate(a)) })
		return out
	}
	x, y, z := trace(1), trace(1), trace(2)
	same := true
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			t.Fatalf("step %d: %v then %v", i, x[i], y[i])
		}
		same = same && x[i] == z[i]
	}
	if same {
		t.Fatal("seeds 1 and 2 gave the same trace")
	}
}

func TestDCQCNInvalid(t *testing.T) {
	bad := []func(*DCQCNParams){
		func(p *DCQCNParams) { p.Kmax = p.Kmin },
		func(p *DCQCNParams) { p.Pmax = 0 },
		func(p *DCQCNParams) { p.G = 1 },
		func(p *DCQCNParams) { p.Step = 0 },
		func(p *DCQCNParams) { p.Step = p.CNPInterval + 1 },
		func(p *DCQCNParams) { p.PFC = p.Kmax },
		func(p *DCQCNParams) { p.MinRate = math.NaN() },
		func(p *DCQCNParams) { p.ByteCounter = 0 },
	}
	for i, f := range bad {
		p := DefaultDCQCN()
		f(&p)
		if err := (&DCQCN{}).Reset([]float64{1e9}, nil, p, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("case %d: %v", i, err)
		}
	}
	d := newDCQCN(t, []float64{1e9}, DefaultDCQCN(), 1)
	for i, c := range []struct {
		links      []int
		peak, line float64
	}{{[]int{1}, 1e9, 1e9}, {[]int{0}, 0, 1e9}, {[]int{0}, 1e9, math.Inf(1)}, {[]int{-1}, 1e9, 1e9}} {
		if _, err := d.Add(c.links, c.peak, c.line, 0, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("flow %d: %v", i, err)
		}
	}
	if err := (&DCQCN{}).Reset([]float64{0}, nil, DefaultDCQCN(), 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("zero capacity: %v", err)
	}
}
