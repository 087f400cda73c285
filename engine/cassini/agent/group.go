package agent

import (
	"math"
	"slices"
	"sync"
	"time"
)

// paceWindow is how many recent iterations a group member's pace is
// estimated from.
const paceWindow = 16

// Group is the clock the Elastic agents of jobs interleaved with one another
// share (the jobs of one connected component of CASSINI's affinity graph).
//
// Each agent's slots are instants of the group's virtual time: iteration n
// of job j belongs at virtual time t_j + n·T_j, with T_j the plan's period.
// Virtual time runs at 1/scale of real time, so every member's slots
// stretch alike and the planned overlay (relative phases on the unified
// circle) is kept however slow the group runs. The scale follows the
// slowest member: each member's pace is its recent iteration times (ready
// minus start, waiting excluded) over its period, estimated robustly as the
// median m of its iterations since its pace last changed (at most the last
// 16; two iterations in a row more than θ above m, or below it, are a
// change of pace and restart the window, so a step of the pace costs at
// most two corrections where a median over the whole window would lag
// behind it for eight) plus a slack of Margin·σ²/θ (at most θ: past it,
// sliding at every iteration would cost less), with σ their spread (1.4826
// times the median absolute deviation) and θ the threshold; the scale is
// the largest pace. With the slack, a member's
// lateness is a queue that drains by the slack each iteration: under
// Gaussian noise it passes the threshold on about exp(-2·Margin) of the
// iterations, so the slack buys few adjustments for little idle time (it
// grows with the square of the noise, not with the noise).
// A member that starts late by at most the threshold slides the whole
// clock later by its lateness (a nudge: the others wait that little, and no
// lateness builds up toward the threshold); one late past the threshold does
// the same as an adjustment when that costs the group less than the member
// waiting for its next slot; a member more than half a period behind simply
// takes its next slot (its phase, not its iteration count, is what the
// overlay needs).
//
// In a deployment the group's state lives with the scheduler or a
// coordinator; here it is an in-process object. A Group is safe for
// concurrent use by its agents.
type Group struct {
	mu    sync.Mutex
	ref   time.Time     // the plans' Reference: virtual time 0
	base  time.Time     // real instant of virtual time vbase
	vbase time.Duration // virtual time at base
	scale float64       // real per virtual time
	pace  []*pace       // per member; nil once it left
	// gaveUp: the members' summed wait passed their summed saving
	// (GiveUpGroup); each member gives its shift up at its next decision.
	gaveUp bool
	// fixed: the clock is the plan's (NewPlanGroup): it neither stretches
	// nor slides.
	fixed bool
}

// pace is one member's recent iteration times over its period.
type pace struct {
	recent [paceWindow]float64
	n      int     // samples seen (the ring holds min(n, paceWindow))
	margin float64 // Margin over the threshold
	cap    float64 // the largest slack: the threshold
	est    float64 // current estimate
	slack  float64 // of which slack above the median
	since  int     // samples since the last change of pace, at most paceWindow
	jump   int     // the latest sample was past the cap above (1) or below (-1) the median

	held   holding       // what holding the member's shift costs and saves it
	period time.Duration // the member's planned period
	judged bool          // the member has a FreeComm: its holding is weighed
}

// NewGroup returns a group clock whose virtual time 0 is reference.
func NewGroup(reference time.Time) *Group {
	return &Group{ref: reference, base: reference, scale: 1}
}

// NewPlanGroup returns a group clock that is the plan's: its virtual time
// is real time from reference on, and it never stretches nor slides. It is
// how the agents of one group share their clock across processes and
// hosts (the ranks of a job, each in a process of its own, or jobs whose
// agents run apart) without sharing memory: every agent builds its own
// from the plan's common reference (epoch) and its own period, and all of
// them agree on every slot, since nothing but the plan moves it. What a
// shared Group does by moving the clock the agents then do alone: a
// lateness within the plan's Slack and the threshold stands (nobody else
// can be asked to wait), past them the job waits for its next slot (an
// adjustment, whatever the budget: a lateness that stands cannot drain
// here, as nothing follows the job's pace), and give-up
// weighs the members that share this process's clock (one, across
// processes: GiveUpGroup is then GiveUpOwn plus the threshold on the
// member's own loss). A change of pace is the scheduler's to follow, by a
// new plan (Agent.SetPlan) whose period is the new pace: plan the period
// with the headroom the jobs' jitter needs (their iterations must fit it).
func NewPlanGroup(reference time.Time) *Group {
	return &Group{ref: reference, base: reference, scale: 1, fixed: true}
}

// Reference returns the group's virtual time 0.
func (g *Group) Reference() time.Time { return g.ref }

// Scale returns the group's current ratio of real to virtual time: 1 when its
// slowest member runs at its planned period.
func (g *Group) Scale() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.scale
}

// Members returns how many agents hold their shift on the group.
func (g *Group) Members() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.active()
}

func (g *Group) join(margin, threshold float64, period time.Duration, judged, mean bool) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pace = append(g.pace, &pace{margin: margin / threshold, cap: threshold, period: period, judged: judged, held: holding{mean: mean}})
	return len(g.pace) - 1
}

// communicated records what holding saved member m in its last iteration.
func (g *Group) communicated(m int, saved time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.pace[m]; p != nil {
		p.held.communicated(saved)
	}
}

// giveUp reports whether member m should give its shift up under rule.
// GiveUpGroup waits until every weighed member has a full window, then
// compares the sums of their waits and savings, each over its period; and
// a member whose own wait exceeds its own saving by more than the
// threshold (of its period) gives the group's shifts up at once, so that
// holding for the others never costs one job more than that.
func (g *Group) giveUp(m int, rule GiveUp) bool {
	own := &g.pace[m].held
	if rule == GiveUpOwn {
		return own.giveUp()
	}
	if own.ready() && float64((own.cost-own.gain)/float64(g.pace[m].period)) > g.pace[m].cap {
		g.gaveUp = true
	}
	if g.gaveUp {
		return true
	}
	var cost, gain float64
	for _, p := range g.pace {
		if p == nil || !p.judged {
			continue
		}
		if !p.held.ready() {
			return false
		}
		cost += float64(p.held.cost / float64(p.period)) // rounded here: no fused multiply-add
		gain += float64(p.held.gain / float64(p.period))
	}
	g.gaveUp = cost > gain
	return g.gaveUp
}

func (g *Group) leave(m int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m < len(g.pace) {
		g.pace[m] = nil
	}
}

func (g *Group) active() int {
	n := 0
	for _, p := range g.pace {
		if p != nil {
			n++
		}
	}
	return n
}

// real returns the real instant of virtual time v.
func (g *Group) real(v time.Duration) time.Time {
	return g.base.Add(g.realSpan(v - g.vbase))
}

// virt returns the virtual time of the real instant t.
func (g *Group) virt(t time.Time) time.Duration {
	return g.vbase + time.Duration(math.Round(float64(t.Sub(g.base))/g.scale))
}

// observe records member m's pace x (an iteration time over its period) for
// the iteration it started at at, and re-paces the clock from that instant:
// the iteration that revealed the new pace then ends on its next slot, and
// the others keep their phase at the new pace.
func (g *Group) observe(m int, x float64, at time.Time) {
	p := g.pace[m]
	if p == nil || !(x > 0) || math.IsInf(x, 0) {
		return
	}
	p.add(x)
	if g.fixed {
		return // the plan's clock: the pace only informs the give-up
	}
	s := 0.0
	for _, q := range g.pace {
		if q != nil && q.n > 0 {
			s = max(s, q.est)
		}
	}
	if s == 0 || s == g.scale {
		return
	}
	if at.Before(g.base) {
		at = g.base // a report older than the last re-anchoring
	}
	g.vbase, g.base, g.scale = g.virt(at), at, s
}

// realSpan is the real time a span d of virtual time takes.
func (g *Group) realSpan(d time.Duration) time.Duration {
	return time.Duration(math.Round(float64(d) * g.scale))
}

// slide moves every later slot by d of real time.
func (g *Group) slide(d time.Duration) { g.base = g.base.Add(d) }

// add records a pace sample and refreshes the estimate: the median m of
// the samples since the member's pace last changed (at most the latest
// paceWindow) plus margin times the square of their spread σ (1.4826
// median absolute deviations), at most cap. Two samples in a row more than
// the cap (the threshold) above the median, or below it, are a change of
// pace (the Alibaba PAI series step by 5-10% every ten or so iterations):
// the window restarts at them, so the estimate follows within two
// iterations, where a median over the whole window would lag for half of
// it and leave the member late past the threshold at every iteration of
// the lag. A lone straggler does not move it.
func (p *pace) add(x float64) {
	jump := 0
	if p.n > 0 {
		switch m := p.est - p.slack; {
		case x-m > p.cap:
			jump = 1
		case m-x > p.cap:
			jump = -1
		}
	}
	p.recent[p.n%paceWindow] = x
	p.n++
	p.since = min(p.since+1, paceWindow)
	if jump != 0 && jump == p.jump {
		p.since = 2
	}
	p.jump = jump
	var buf [paceWindow]float64
	w := buf[:p.since]
	for i := range w {
		w[i] = p.recent[(p.n-1-i)%paceWindow]
	}
	slices.Sort(w)
	med := median(w)
	for i, v := range w {
		w[i] = math.Abs(v - med)
	}
	slices.Sort(w)
	sd := 1.4826 * median(w)
	p.slack = min(float64(p.margin*float64(sd*sd)), p.cap)
	p.est = med + p.slack
}

func median(sorted []float64) float64 {
	k := len(sorted)
	if k%2 == 1 {
		return sorted[k/2]
	}
	return (sorted[k/2-1] + sorted[k/2]) / 2
}

// holding weighs what holding a shift costs (the time the agent makes the
// job wait) against what it saves (FreeComm minus the measured
// communication time), over the last trimWindow iterations: means of the
// window with its worst eighth left out (the longest waits, the smallest
// savings), so that a transient stall of the host (an iteration that
// waited a whole slot, or whose communication a stall stretched) is not
// read as a lasting loss of saving, and a loss that lasts (more than an
// eighth of the window) is. With mean set, the rule before:
// moving averages over about holdWindow iterations, every sample weighed
// alike.
type holding struct {
	decisions int // after the first under the plan
	reports   int // communication times reported
	cost      float64
	gain      float64
	mean      bool
	waits     [trimWindow]float64
	saves     [trimWindow]float64
}

// holdWindow is the moving averages' span, and the least number of
// iterations before an agent may give up; the trimmed estimates span
// trimWindow iterations (as many as a moving average over holdWindow
// effectively weighs: its variance is that of a mean of 2·holdWindow-1)
// and leave out the worst eighth of them.
const (
	holdWindow = 16
	trimWindow = 2 * holdWindow
)

func (h *holding) waited(d time.Duration) {
	h.decisions++
	if h.mean {
		h.cost += float64((float64(d) - h.cost) / holdWindow) // rounded here: no fused multiply-add
		return
	}
	h.waits[(h.decisions-1)%trimWindow] = float64(d)
	h.cost = trimmed(h.waits[:min(h.decisions, trimWindow)], true)
}

func (h *holding) communicated(saved time.Duration) {
	h.reports++
	if h.mean {
		h.gain += float64((float64(saved) - h.gain) / holdWindow)
		return
	}
	h.saves[(h.reports-1)%trimWindow] = float64(saved)
	h.gain = trimmed(h.saves[:min(h.reports, trimWindow)], false)
}

// trimmed is the mean of x without its worst eighth: its largest values
// (high) or its smallest.
func trimmed(x []float64, high bool) float64 {
	var buf [trimWindow]float64
	w := buf[:len(x)]
	copy(w, x)
	slices.Sort(w)
	if trim := len(w) / 8; high {
		w = w[:len(w)-trim]
	} else {
		w = w[trim:]
	}
	var s float64
	for _, v := range w {
		s += v
	}
	return s / float64(len(w))
}

// ready reports whether the estimates span a full window.
func (h *holding) ready() bool { return h.decisions >= holdWindow && h.reports >= holdWindow }

func (h *holding) giveUp() bool { return h.ready() && h.cost > h.gain }

// nextElastic is Next in Elastic mode.
func (a *Agent) nextElastic(ready time.Time) Decision {
	g := a.group
	if a.released || g == nil {
		return Decision{Start: ready}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	T := a.plan.Period
	if a.aligned {
		g.observe(a.member, float64(ready.Sub(a.started))/float64(T), a.started)
		if a.plan.FreeComm > 0 && g.giveUp(a.member, a.opt.GiveUp) {
			g.pace[a.member] = nil
			a.group, a.released, a.stats.Released = nil, true, true
			return Decision{Start: ready, Released: true}
		}
	}
	v := g.virt(ready) - a.plan.Shift // virtual time since slot 0's instant
	var d Decision
	if !a.aligned {
		a.aligned = true
		a.slot = int64(v / T)
		if v%T > 0 {
			a.slot++
		}
		d = a.waitFor(ready)
		a.stats.Padding = sat(a.stats.Padding, d.Delay)
		a.started = d.Start
		return d
	}
	a.slot++
	late := v - time.Duration(a.slot)*T
	e := wrap(late, T)
	if late > 0 {
		a.slot += int64((late - e) / T) // slots already gone
	}
	switch {
	case late <= 0: // early: wait for the slot
		d = a.waitFor(ready)
		a.stats.Padding = sat(a.stats.Padding, d.Delay)
	case e >= 0 && e <= a.plan.Slack: // within the interleaving's slack: it stands, nobody waits
		d = Decision{Start: ready, Late: g.realSpan(e)}
	case e >= 0 && e-a.plan.Slack <= a.thr && g.fixed: // the plan's clock cannot slide: the lateness stands
		d = Decision{Start: ready, Late: g.realSpan(e)}
	case e >= 0 && e-a.plan.Slack <= a.thr: // a nudge: the others wait the lateness past the slack
		d = Decision{Start: ready, Late: g.realSpan(e)}
		g.slide(g.realSpan(e - a.plan.Slack))
		a.stats.Nudges++
	case !a.spend(ready): // past the threshold, no budget left: the lateness stands
		if e < 0 {
			a.slot-- // the slot it is late for, not the next one
			e += T
		}
		d = Decision{Start: ready, Late: g.realSpan(e)}
		a.stats.Deferred++
	case e < 0: // more than half a period behind: the next slot is nearer
		d = a.waitFor(ready)
		d.Adjusted = true
		a.stats.Adjustments++
		a.stats.AdjustDelay = sat(a.stats.AdjustDelay, d.Delay)
	case !g.fixed && time.Duration(g.active()-1)*(e-a.plan.Slack) < T-e: // slide the others: cheaper than waiting
		g.slide(g.realSpan(e - a.plan.Slack))
		d = Decision{Start: ready, Late: g.realSpan(a.plan.Slack), Adjusted: true}
		a.stats.Adjustments++
		a.stats.Slides++
	default: // wait for the next slot
		a.slot++
		d = a.waitFor(ready)
		d.Adjusted = true
		a.stats.Adjustments++
		a.stats.AdjustDelay = sat(a.stats.AdjustDelay, d.Delay)
	}
	a.started = d.Start
	g.pace[a.member].held.waited(d.Delay)
	return d
}

// spend takes a token from the budget for an adjustment at ready, if there
// is one.
func (a *Agent) spend(ready time.Time) bool {
	if a.opt.Budget < 0 || a.group.fixed && !a.opt.PlanBudget {
		return true
	}
	a.tokens = min(a.tokens+float64(a.opt.Budget*ready.Sub(a.filled).Minutes()), budgetBurst) // rounded here: no fused multiply-add
	a.filled = ready
	if a.tokens < 1 {
		return false
	}
	a.tokens--
	return true
}

// waitFor is the decision to start the current slot, never before ready.
func (a *Agent) waitFor(ready time.Time) Decision {
	start := a.group.real(a.plan.Shift + time.Duration(a.slot)*a.plan.Period)
	if start.Before(ready) {
		start = ready
	}
	return Decision{Start: start, Delay: start.Sub(ready)}
}

// elasticPhase is the phase error of a communication start at at on the
// group's virtual clock (the plan's unified circle).
func (a *Agent) elasticPhase(at time.Time) time.Duration {
	g := a.group
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	off := time.Duration(math.Round(float64(a.plan.CommOffset) / g.scale))
	return wrap(g.virt(at)-a.plan.Shift-off, a.plan.Period)
}
