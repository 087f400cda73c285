package fluid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// DCQCNParams are the parameters of DCQCN's control law (Zhu et al.,
// "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015):
// the switch's RED-like ECN marking (the congestion point), the receiving
// NIC's CNP generation (the notification point) and the sending NIC's rate
// control (the reaction point). [DefaultDCQCN] gives the paper's values;
// docs/transports.md lists each one's source.
type DCQCNParams struct {
	// Marking: a packet leaving a queue of q bytes is marked with
	// probability 0 below Kmin, Pmax*(q-Kmin)/(Kmax-Kmin) up to Kmax, and
	// 1 above it.
	Kmin, Kmax float64 // bytes
	Pmax       float64
	// MTU is the packet size (bytes) that turns a flow's traffic into
	// packets, each marked independently.
	MTU float64
	// CNPInterval is N: a receiver sends its sender at most one CNP per
	// interval, when a marked packet arrived since the last one.
	CNPInterval time.Duration
	// G is the gain of the alpha estimate: alpha <- (1-G) alpha + G on a
	// CNP, alpha <- (1-G) alpha after every AlphaTimer without one.
	G          float64
	AlphaTimer time.Duration // K
	// RateTimer (T) and ByteCounter (B, bytes) time the rate increase
	// events; F is the number of events of each kind before additive, and
	// of both before hyper increase.
	RateTimer   time.Duration
	ByteCounter float64
	F           int
	// RAI and RHAI (bits/s) are the additive and hyper increase steps of
	// the target rate; MinRate bounds the current rate below.
	RAI, RHAI, MinRate float64
	// InitialAlpha is alpha at a flow's first CNP (the paper starts alpha
	// at 1; NVIDIA's initial_alpha_value, 1023/1024).
	InitialAlpha float64
	// PFC is the queue (bytes) past which a switch port pauses its
	// upstream: its inflow is then held to its capacity, the senders
	// crossing it slowed in proportion to their rates (the network is
	// lossless: no packet is dropped).
	PFC float64
	// Step is the control interval of the fluid model: marks, CNPs and the
	// timers are evaluated every Step (the timers keep their own phase, so
	// a 55 us timer fires ten times in eleven 50 us steps).
	Step time.Duration
}

// DefaultDCQCN returns the parameters of the DCQCN paper (its Table and
// fluid model; RHAI as in the authors' released ns-3 configuration), with
// a 1000-byte MTU, a 100 Mbps minimum rate, a PFC threshold of 800 KB and a
// 5 us control step (10 steps per CNP interval, 11 per timer period).
func DefaultDCQCN() DCQCNParams {
	return DCQCNParams{
		Kmin: 5e3, Kmax: 200e3, Pmax: 0.01, MTU: 1000,
		CNPInterval: 50 * time.Microsecond,
		G:           1.0 / 256, AlphaTimer: 55 * time.Microsecond,
		RateTimer: 55 * time.Microsecond, ByteCounter: 10e6, F: 5,
		RAI: 40e6, RHAI: 200e6, MinRate: 100e6,
		InitialAlpha: 1,
		PFC:          800e3,
		Step:         5 * time.Microsecond,
	}
}

// Check reports a parameter out of range.
func (p DCQCNParams) Check() error {
	bad := func(name string, v any) error {
		return fmt.Errorf("%w: DCQCN %s: %v", ErrInvalid, name, v)
	}
	switch {
	case !(p.Kmin >= 0) || !(p.Kmax > p.Kmin) || math.IsInf(p.Kmax, 0):
		return bad("Kmin, Kmax", [2]float64{p.Kmin, p.Kmax})
	case !(p.Pmax > 0 && p.Pmax <= 1):
		return bad("Pmax", p.Pmax)
	case !(p.MTU >= 64 && p.MTU <= 1<<20):
		return bad("MTU", p.MTU)
	case p.CNPInterval <= 0 || p.AlphaTimer <= 0 || p.RateTimer <= 0:
		return bad("timers", [3]time.Duration{p.CNPInterval, p.AlphaTimer, p.RateTimer})
	case !(p.G > 0 && p.G < 1):
		return bad("G", p.G)
	case !(p.ByteCounter > 0) || math.IsInf(p.ByteCounter, 0):
		return bad("ByteCounter", p.ByteCounter)
	case p.F < 0 || p.F > 1<<20:
		return bad("F", p.F)
	case !(p.RAI >= 0) || !(p.RHAI >= 0) || !(p.MinRate > 0) || math.IsInf(p.RAI+p.RHAI+p.MinRate, 0):
		return bad("RAI, RHAI, MinRate", [3]float64{p.RAI, p.RHAI, p.MinRate})
	case !(p.InitialAlpha > 0 && p.InitialAlpha <= 1):
		return bad("InitialAlpha", p.InitialAlpha)
	case !(p.PFC > p.Kmax) || math.IsInf(p.PFC, 0):
		return bad("PFC (above Kmax)", p.PFC)
	case p.Step <= 0 || p.Step > p.CNPInterval:
		return bad("Step (0 < Step <= CNPInterval)", p.Step)
	}
	return nil
}

// DCQCN is a fluid network whose flows run DCQCN's rate control over
// fluid queues: a time-stepped model, unlike [Network]'s max-min rates. A
// simulator adds and removes flows as they start and end, calls
// [DCQCN.Advance] whenever time passes (the queues and the byte counters
// integrate the current rates) and [DCQCN.Control] every Step while
// [DCQCN.Quiet] is false; the rates change only at those calls and at
// Add and Remove.
//
// A flow's sending rate is min(Rc, peak), its current rate Rc starting at
// its line rate (no slow start: RoCE NICs start at line rate), slowed
// further where a NIC link or a paused switch port holds the flows
// crossing it to its capacity (see DCQCNParams.PFC). A link whose source
// is a server (nic) is the NIC's own port: its flows share it in
// proportion to their rates and it neither queues nor marks. Every other
// link is a switch port with a fluid queue that grows by the rates
// offered past its capacity and drains at its capacity; its marking
// probability is the queue's, at each control step.
//
// Per control step, each flow's packets through each link it crosses
// (rate x step / MTU, per crossing) are marked independently; a receiver
// that saw a mark sends a CNP once CNPInterval has passed since its last
// one. On a CNP the sender cuts: Rt <- Rc, Rc <- Rc (1 - alpha/2), alpha <-
// (1-g) alpha + g, and its increase counters restart. Without one, alpha
// decays every AlphaTimer, and every RateTimer and every ByteCounter bytes
// sent are rate increase events: fast recovery (Rc <- (Rt+Rc)/2) for the
// first F of either kind, then additive increase (Rt += RAI first), and
// once both kinds passed F, hyper increase (Rt += i RHAI, i the events of
// the rarer kind past F), Rt and Rc capped at the line rate.
//
// A flow's weight (1 unless set, [DCQCN.SetWeight]) multiplies its RAI and
// RHAI: MLTCP's DCQCN variant, whose training flows scale their rate
// increase by the bytes they sent in the iteration.
//
// Flows live in planes: the links of each plane have their own queues
// (a simulator's Ideal arm gives every job its own). Draws come from one
// generator seeded at Reset, taken in a fixed order (flows in order of
// addition), so a run is deterministic.
type DCQCN struct {
	p        DCQCNParams
	capacity []float64
	nic      []bool
	planes   [][]qlink
	touched  [][]int32 // per plane: links with crossings or a queue
	fl       []dflow
	free     []FlowID
	order    []FlowID // active flows, in order of addition
	rng      *rand.Rand
	kmin     float64 // bits
	kmax     float64
	pfc      float64
	mtu      float64 // bits
	excess   float64 // offered peaks above capacity, bits/s, summed over links
	dirty    bool    // rates to recompute before they are read
}

// qlink is a link of one plane.
type qlink struct {
	q       float64 // queue, bits
	in      float64 // the rates crossing it (a flow counted per crossing)
	offered float64 // the peaks crossing it
	n       int32   // crossings
	listed  bool    // in touched
	paused  bool    // queue at the PFC threshold at the last control
	logNone float64 // log of the probability a packet is not marked (Control's)
}

// dflow is a flow's sender and receiver state.
type dflow struct {
	links       []int
	plane       int32
	active      bool
	cnped       bool // has had a CNP: alpha is set
	pending     bool // a marked packet arrived since its last CNP
	marked      bool // a link it crosses is above Kmin, as of the last control
	peak, line  float64
	rc, rt      float64
	alpha       float64
	weight      float64
	rate        float64 // what it sends now
	iT, iB      int32   // increase events of each kind since the last CNP
	tAcc, aAcc  int64   // ns toward the next timer events
	sinceCNP    int64   // ns
	bAcc        float64 // bits toward the next byte counter event
	sent        float64 // bits
	last        int64   // ns: its last control step, or when it was added
	cnps, marks int64   // CNPs received; control steps with a mark
}

// Reset empties d and gives it links of the given capacities (bits/s),
// nic[l] telling which links are a NIC's port (nil: none), the law's
// parameters and the seed of its draws.
func (d *DCQCN) Reset(capacity []float64, nic []bool, p DCQCNParams, seed uint64) error {
	if err := p.Check(); err != nil {
		return err
	}
	for l, c := range capacity {
		if !(c > 0) || math.IsInf(c, 1) {
			return fmt.Errorf("%w: link %d: capacity %v is not a positive finite number", ErrInvalid, l, c)
		}
	}
	if nic != nil && len(nic) != len(capacity) {
		return fmt.Errorf("%w: %d NIC flags for %d links", ErrInvalid, len(nic), len(capacity))
	}
	*d = DCQCN{p: p, capacity: capacity, nic: nic, rng: rand.New(rand.NewPCG(seed, 0xdc9c4)),
		kmin: p.Kmin * 8, kmax: p.Kmax * 8, pfc: p.PFC * 8, mtu: p.MTU * 8,
		fl: d.fl[:0], free: d.free[:0], order: d.order[:0]}
	return nil
}

// Params returns the parameters d was Reset with.
func (d *DCQCN) Params() DCQCNParams { return d.p }

func (d *DCQCN) plane(k int32) []qlink {
	for int(k) >= len(d.planes) {
		d.planes = append(d.planes, nil)
		d.touched = append(d.touched, nil)
	}
	if d.planes[k] == nil {
		d.planes[k] = make([]qlink, len(d.capacity))
	}
	return d.planes[k]
}

// Add starts a flow at time now (ns) over links (a link listed k times
// carries k connections of the flow, each at its rate) in a plane, with
// the given peak and line rate (bits/s, > 0): it sends at min(line, peak)
// until something slows it. links is kept and must not change.
func (d *DCQCN) Add(links []int, peak, line float64, plane int, now int64) (FlowID, error) {
	switch {
	case !(peak > 0) || !(line > 0) || math.IsInf(line, 1):
		return -1, fmt.Errorf("%w: peak %v, line rate %v", ErrInvalid, peak, line)
	case plane < 0 || plane > 1<<20:
		return -1, fmt.Errorf("%w: plane %d", ErrInvalid, plane)
	}
	for _, l := range links {
		if l < 0 || l >= len(d.capacity) {
			return -1, fmt.Errorf("%w: link %d, there are %d", ErrInvalid, l, len(d.capacity))
		}
	}
	var id FlowID
	if n := len(d.free); n > 0 {
		id, d.free = d.free[n-1], d.free[:n-1]
	} else {
		id = FlowID(len(d.fl))
		d.fl = append(d.fl, dflow{})
	}
	d.fl[id] = dflow{links: links, plane: int32(plane), active: true, peak: peak, line: line,
		rc: line, rt: line, alpha: d.p.InitialAlpha, weight: 1, sinceCNP: math.MaxInt64 / 2, last: now}
	ls := d.plane(int32(plane))
	for _, l := range links {
		L := &ls[l]
		if !L.listed {
			L.listed = true
			d.touched[plane] = append(d.touched[plane], int32(l))
		}
		d.excess -= max(L.offered-d.capacity[l], 0)
		L.offered += peak
		L.n++
		d.excess += max(L.offered-d.capacity[l], 0)
	}
	d.order = append(d.order, id)
	d.dirty = true
	return id, nil
}

// Remove ends flow id.
func (d *DCQCN) Remove(id FlowID) {
	f := &d.fl[id]
	if !f.active {
		return
	}
	ls := d.planes[f.plane]
	for _, l := range f.links {
		L := &ls[l]
		d.excess -= max(L.offered-d.capacity[l], 0)
		L.offered -= f.peak
		L.n--
		if L.n == 0 {
			L.offered = 0 // no rounding left behind
		}
		d.excess += max(L.offered-d.capacity[l], 0)
	}
	f.active = false
	f.links = nil
	for i, g := range d.order {
		if g == id {
			d.order = append(d.order[:i], d.order[i+1:]...)
			break
		}
	}
	d.free = append(d.free, id)
	d.dirty = true
}

// SetWeight sets the factor of flow id's rate increase steps (MLTCP's
// F(bytes ratio)); > 0, finite.
func (d *DCQCN) SetWeight(id FlowID, w float64) {
	if w > 0 && !math.IsInf(w, 1) {
		d.fl[id].weight = w
	}
}

// Rate returns what flow id sends now, bits/s.
func (d *DCQCN) Rate(id FlowID) float64 {
	d.settle()
	return d.fl[id].rate
}

// Marked reports whether a link flow id crosses held more than Kmin at the
// last control step: its packets were being marked.
func (d *DCQCN) Marked(id FlowID) bool { return d.fl[id].marked }

// FlowState is a flow's sender state, for tests and traces.
type FlowState struct {
	Rc, Rt, Alpha, Rate, Sent float64
	CNPs                      int64
}

// State returns flow id's sender state.
func (d *DCQCN) State(id FlowID) FlowState {
	d.settle()
	f := &d.fl[id]
	return FlowState{Rc: f.rc, Rt: f.rt, Alpha: f.alpha, Rate: f.rate, Sent: f.sent, CNPs: f.cnps}
}

// Queue returns link l's queue in plane k, bits.
func (d *DCQCN) Queue(k, l int) float64 {
	if k >= len(d.planes) || d.planes[k] == nil {
		return 0
	}
	return d.planes[k][l].q
}

// Excess returns the peaks offered past capacity, summed over the links of
// every plane, bits/s.
func (d *DCQCN) Excess() float64 { return max(d.excess, 0) }

// Advance lets dt seconds pass at the current rates: every switch queue
// grows by what its flows offer past its capacity (or drains), and every
// flow's bytes count toward its byte counter.
func (d *DCQCN) Advance(dt float64) {
	if !(dt > 0) {
		return
	}
	d.settle()
	for _, id := range d.order {
		f := &d.fl[id]
		x := float64(f.rate * dt)
		f.sent += x
		f.bAcc += x
	}
	for k, list := range d.touched {
		ls := d.planes[k]
		keep := list[:0]
		for _, l := range list {
			L := &ls[l]
			if d.nic == nil || !d.nic[l] {
				L.q = max(L.q+float64((L.in-d.capacity[l])*dt), 0)
			}
			if L.n == 0 && L.q == 0 {
				L.listed = false
				continue
			}
			keep = append(keep, l)
		}
		d.touched[k] = keep
	}
}

// Control runs one control step at time now (ns; not before the flows'
// last step or addition): each receiver's marks and CNP, each sender's
// cut or timers and byte counter, over the time since the flow's last
// step; then the rates.
func (d *DCQCN) Control(now int64) {
	d.settle()
	p := &d.p
	n, k, t := int64(p.CNPInterval), int64(p.AlphaTimer), int64(p.RateTimer)
	for pl, list := range d.touched {
		ls := d.planes[pl]
		for _, l := range list {
			// log P(a packet leaving the queue is not marked), between
			// Kmin and Kmax.
			if L := &ls[l]; L.q > d.kmin && L.q <= d.kmax {
				L.logNone = math.Log1p(-float64(p.Pmax*(L.q-d.kmin)) / (d.kmax - d.kmin))
			}
		}
	}
	for _, id := range d.order {
		f := &d.fl[id]
		elapsed := max(now-f.last, 0)
		f.last = now
		// The marks of the packets of the last step (after a quiet spell
		// the queues were empty until the step that ended it).
		dt := float64(min(elapsed, int64(p.Step))) / 1e9
		ls := d.planes[f.plane]
		// The notification point: any packet marked since the last step?
		logNone, sure, marked := 0.0, false, false
		pkts := float64(f.rate*dt) / d.mtu
		for _, l := range f.links {
			L := &ls[l]
			if L.q <= d.kmin || (d.nic != nil && d.nic[l]) {
				continue
			}
			marked = true
			if L.q > d.kmax {
				sure = true
				continue
			}
			logNone += float64(pkts * L.logNone)
		}
		f.marked = marked
		if marked && pkts > 0 && !f.pending {
			if sure || d.rng.Float64() >= math.Exp(logNone) {
				f.pending = true
				f.marks++
			}
		}
		f.sinceCNP += elapsed
		if f.pending && f.sinceCNP >= n {
			d.cut(f)
			continue
		}
		if !f.cnped {
			continue // at line rate since it started: nothing to recover
		}
		// The reaction point without a CNP: alpha decays, the rate rises.
		f.aAcc += elapsed
		if a := f.aAcc / k; a > 0 {
			f.aAcc -= a * k
			f.alpha *= math.Pow(1-p.G, float64(a))
		}
		f.tAcc += elapsed
		nt := f.tAcc / t
		f.tAcc -= nt * t
		nb := int64(f.bAcc / (p.ByteCounter * 8))
		f.bAcc -= float64(float64(nb) * p.ByteCounter * 8)
		for range nb {
			f.iB++
			if !d.increase(f) {
				break
			}
		}
		for range nt {
			f.iT++
			if !d.increase(f) {
				break
			}
		}
	}
	for k, list := range d.touched {
		ls := d.planes[k]
		for _, l := range list {
			ls[l].paused = ls[l].q >= d.pfc
		}
	}
	d.dirty = true
}

// cut is the reaction point's answer to a CNP.
func (d *DCQCN) cut(f *dflow) {
	p := &d.p
	if !f.cnped {
		f.cnped, f.alpha = true, p.InitialAlpha
	}
	f.pending, f.sinceCNP = false, 0
	f.cnps++
	f.rt = f.rc
	f.rc = max(float64(f.rc*(1-float64(f.alpha/2))), min(p.MinRate, f.line))
	f.alpha = float64((1-p.G)*f.alpha) + p.G
	f.iT, f.iB, f.tAcc, f.aAcc, f.bAcc = 0, 0, 0, 0, 0
}

// increase is a rate increase event; it reports whether the rate can
// still rise (false once Rc is at the line rate: later events change
// nothing but the counters, which the next CNP resets).
func (d *DCQCN) increase(f *dflow) bool {
	p := &d.p
	if f.rc >= f.line {
		return false
	}
	fr := int32(p.F)
	switch {
	case max(f.iT, f.iB) <= fr: // fast recovery
	case min(f.iT, f.iB) > fr: // hyper increase
		i := float64(min(f.iT, f.iB) - fr)
		f.rt += float64(float64(i*f.weight) * p.RHAI)
	default: // additive increase
		f.rt += float64(f.weight * p.RAI)
	}
	f.rt = min(f.rt, f.line)
	f.rc = min((f.rt+f.rc)/2, f.line)
	if f.line-f.rc <= f.line*0x1p-20 {
		// Within a NIC's rate granularity of the line rate (48 kbps at
		// 50 Gbps): at it, as halving the gap would reach it only after
		// some fifty more events.
		f.rc = f.line
	}
	return f.rc < f.line
}

// settle recomputes the rates if a control step, Add or Remove changed
// them: each flow's min(Rc, peak), slowed where a NIC port or a paused
// switch port carries more than its capacity (every flow crossing it by
// the same factor, the least over its links).
func (d *DCQCN) settle() {
	if !d.dirty {
		return
	}
	d.dirty = false
	for k, list := range d.touched {
		ls := d.planes[k]
		for _, l := range list {
			ls[l].in = 0
		}
	}
	for _, id := range d.order {
		f := &d.fl[id]
		f.rate = min(f.rc, f.peak)
		ls := d.planes[f.plane]
		for _, l := range f.links {
			ls[l].in += f.rate
		}
	}
	limited := false
	for k, list := range d.touched {
		ls := d.planes[k]
		for _, l := range list {
			L := &ls[l]
			if L.in > d.capacity[l] && (L.paused || d.nic != nil && d.nic[l]) {
				limited = true
			}
		}
	}
	if !limited {
		return
	}
	for _, id := range d.order {
		f := &d.fl[id]
		ls := d.planes[f.plane]
		s := 1.0
		for _, l := range f.links {
			L := &ls[l]
			if L.in > d.capacity[l] && (L.paused || d.nic != nil && d.nic[l]) {
				s = min(s, d.capacity[l]/L.in)
			}
		}
		f.rate = float64(f.rate * s)
	}
	for k, list := range d.touched {
		ls := d.planes[k]
		for _, l := range list {
			ls[l].in = 0
		}
	}
	for _, id := range d.order {
		f := &d.fl[id]
		ls := d.planes[f.plane]
		for _, l := range f.links {
			ls[l].in += f.rate
		}
	}
}

// Quiet reports whether nothing but time can change: every flow at its
// line rate with no mark pending, every queue empty and no link offered
// more than its capacity. A simulator may then stop calling Control until
// a flow is added or removed (the timers' phases, and alpha's decay, are
// caught up by the next Control's elapsed time).
func (d *DCQCN) Quiet() bool {
	d.settle()
	for _, id := range d.order {
		f := &d.fl[id]
		if f.rc < f.line || f.pending {
			return false
		}
	}
	for k, list := range d.touched {
		ls := d.planes[k]
		for _, l := range list {
			// A NIC port's flows are scaled to fit it: allow for the rounding.
			if ls[l].q > 0 || ls[l].in > float64(d.capacity[l]*(1+1e-9)) {
				return false
			}
		}
	}
	return true
}

// Active returns the number of flows present.
func (d *DCQCN) Active() int { return len(d.order) }
