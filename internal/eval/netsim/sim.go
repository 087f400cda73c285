package netsim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/deadline"
	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

const never = math.MaxInt64

// horizon bounds simulated time (1e18 ns, about 31.7 years). An event past it
// comes from inputs the int64 nanosecond clock cannot represent (a link of a
// few bits per second, extreme noise), and the run fails rather than letting
// a float-to-integer conversion overflow, which differs between
// architectures.
const horizon = int64(1e18)

type state int

const (
	queued state = iota
	waiting
	computing
	communicating
	done
)

// flowRun is a flow of a job's communication step (one connection, or one
// lock-step ring), or n of its consecutive flows that the network sees on
// the same links (see netFlows): they share their rate, mark, bits left
// and sent at every instant. It lives in its job's flows, active until
// retired. Its bits left and sent are as of its job's last sync.
type flowRun struct {
	// What sync reads and writes, first.
	rate   float64
	rem    float64 // bits left
	sent   float64
	marked bool // a link it crosses is offered more than its capacity
	done   bool // retired
	ending bool // finishFlows: it finishes now

	job    *jobRun
	links  []int        // as the network sees them (netFlow)
	n      int          // the step's flows it stands for
	peak   float64      // bits/s
	finish int64        // ns, at the current rate, as of the last updateRates that computed it
	id     fluid.FlowID // in sim.net (-1 under Ideal)

	// Where its finish can be (see anchor): at least low while its rate
	// stays and anchorAge events have not passed since anchorAt.
	low      int64
	anchorAt int64 // s.res.Events when it was anchored
	hpos     int32 // in sim.byLow, -1 if not there
}

type jobRun struct {
	idx      int // arrival order
	job      workload.Job
	model    workload.Model
	noise    workload.Series
	place    alloc
	steps    []workload.Step
	routes   [][][]int         // per step, per flow: links
	net      [][]netFlow       // per step, its flows as sim.net sees them (see netFlows)
	links    []int             // every link a step crosses, increasing
	linkProf []profile.Profile // its demand on each of links (CASSINI's view of them)
	alone    time.Duration
	nominal  time.Duration // its iteration alone, nothing contending (what schedulers assume)
	prof     profile.Profile
	commOff  time.Duration // first communication step's offset, -1 if none

	st        state
	iter      int
	step      int
	until     int64     // waiting or computing: the end of the wait or the step
	tkey      int64     // until as sim.timers orders it: set when flushTimers places it
	tpos      int32     // in sim.timers, -1 if not there
	tdirty    bool      // listed in sim.tdirty
	pending   int       // its flowRuns not yet retired
	flows     []flowRun // its current or last communication step's flows, in route order
	commAt    int32     // in sim.comm, -1 if not there
	synced    int       // the intervals of sim.dts its flows and sums have taken
	ending    bool      // finishFlows: a flow of its finishes now
	iterStart int64
	begun     bool
	agent     *agent.Agent
	agents    []*agent.Agent // every agent it had
	released  bool           // its agent gave its shift up on this placement
	stepStart int64          // when the current step began
	commTime  int64          // ns communicating in the current iteration
	drift     time.Duration  // phase error of the last communication start
	driftOK   bool           // drift was measured under the current plan
	start     int64          // last placed
	first     int64          // first placed (-1: never)
	end       int64
	iterMs    []float64
	iterSum   float64   // of iterMs
	iterAlone []float64 // per iterMs: alone on the placement it ran on, ms

	iterBits   float64   // MLTCP: bits per connection per iteration
	commBefore []float64 // MLTCP: per step, the bits of the iteration's earlier communication steps

	leaseEnd    int64   // Themis: when its lease expires
	admitted    float64 // when a round policy admitted it, s
	preemptions int
	moves       int     // AuctionPaper: leases that ended and were won again, on GPUs placed anew
	sentBits    float64 // delivered (as of its last sync)
	markedBits  float64 // delivered while a link on its path was offered more than its capacity (the same)

	// Its worker count and batch size per GPU (the requested ones unless
	// AuctionPaper re-tunes them), its uncontended iteration time per
	// worker count (nominalAt's cache) and the sum of its iterations'
	// uncontended times, ms.
	gpus, batch int
	nominals    []time.Duration
	aloneSum    float64

	peakOn, meanOn []float64 // on each of links, alone (layout's)
	lastGPUs       int       // the worker count of its last placement (0: none yet)
}

type sim struct {
	overflow  bool  // an event fell past the horizon
	err       error // a failure inside an event, returned at the next updateRates
	dtLog     int   // dtLog, or the tests' (reference)
	anchorAge int64 // anchorAge, or the tests'
	cfg       Config
	ctx       context.Context
	topo      *topology.Topology
	capacity  []float64 // bits/s per link
	cl        *cluster
	rng       *rand.Rand // candidates past the scheduler's own, Random
	own       *rand.Rand // the scheduler's own candidate's draws (ThemisGPUs)
	arng      *rand.Rand // the auction's draws (AuctionPaper's leftover)
	rack      []int      // per server, its ToR (dense, in server order)
	quantum   profile.Quantum

	now     int64
	jobs    []*jobRun // arrival order
	next    int       // next arrival
	running []*jobRun // by idx
	// The jobs communicating, in the order their steps began. A job's
	// active flows started together and it has no others, so the active
	// flows in the order they started are these jobs' flows, job by job
	// (sums over them, and each job's, add in that order). A job whose
	// step ended leaves a nil, which leave compacts away in time.
	comm  []*jobRun
	holes int // nils in comm
	// The intervals advance passed, in seconds, since the log began: a
	// job communicating takes them when it syncs (see sync).
	dts     []float64
	live    int       // flows not retired
	ending  []*jobRun // scratch of finishFlows
	ready   []*jobRun // scratch of process
	actives []*jobRun // scratch of active
	dirty   bool
	owned   []bool  // scratch of netFlows, per server
	count   []int32 // scratch of netFlows, per link

	net         fluid.Network // the flows sharing the network (not under Ideal; MaxMin)
	tr          *fluid.DCQCN  // the flows sharing the network under DCQCN or MLTCP (nil: MaxMin)
	ctlStep     int64         // tr's control step, ns
	ctlAt       int64         // its next control step (never while it is quiet)
	mltcp       MLTCPParams
	byID        []*flowRun // the flows in net, by ID
	byLow       []*flowRun // the same, a heap by low
	near        []*flowRun // the flows whose finish the last updateRates computed
	sweptAt     int64      // s.res.Events at the last sweep of old anchors
	stack       []int32    // scratch of nearest
	minFinish   int64      // the flows' earliest finish, as of the last updateRates
	timerAt     int64      // the running jobs' earliest step or slot timer (nextEvent)
	timers      []*jobRun  // the jobs waiting or computing, a heap by tkey
	tdirty      []*jobRun  // jobs whose state or until may have changed since nextEvent
	scheduleAt  int64      // nextSchedule (nextEvent)
	leasesMoved bool       // the running jobs or their leases may have changed since nextEvent
	solver      fluid.Solver
	fbuf        []fluid.Flow
	rates       []float64
	over        []bool  // per link: offered past capacity (scratch of solve)
	excessRate  float64 // bits/s above capacity, summed over links
	excessBits  float64
	sentBits    float64

	rounds    *rounds // Gavel, Shockwave
	nextRound int64

	iterations     int64 // completed, by every job
	lastIterations int64 // at the last scheduling decision that saw progress
	idleDecisions  int   // decisions since

	// Placement statistics: the running set changed since the last
	// snapshot (moved), and the sums over time.
	moved  bool
	pstats placeStats

	// Cassini.
	ranker     candidate.Workspace
	lw         link.Workspace
	replays    map[string]linkReplay // the hold gate's link replays, by their problem
	replayBuf  []byte                // the key being built
	agents     []*agent.Agent
	groups     []group
	nextSample int64
	res        Result
}

// Run simulates cfg. A cancelled ctx ends the simulation early with status
// Cancelled and the results so far.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return Result{Policy: cfg.Policy}, err
	}
	s, err := newSim(ctx, cfg)
	if err != nil {
		return Result{Policy: cfg.Policy}, err
	}
	if err := s.run(); err != nil {
		return Result{Policy: cfg.Policy}, err
	}
	return s.result(), nil
}

func newSim(ctx context.Context, cfg Config) (*sim, error) {
	t := cfg.Topology
	s := &sim{
		cfg:         cfg,
		ctx:         ctx,
		topo:        t,
		capacity:    make([]float64, len(t.Links)),
		over:        make([]bool, len(t.Links)),
		cl:          newCluster(t.Servers, cfg.GPUsPerServer),
		rng:         rand.New(rand.NewPCG(cfg.Seed, 0xca551)),
		own:         rand.New(rand.NewPCG(cfg.Seed, 0x7e4155)),
		arng:        rand.New(rand.NewPCG(cfg.Seed, 0xa0c71)),
		quantum:     profile.Quantum{Tick: cfg.Cassini.Tick, Unit: profile.DefaultUnit},
		res:         Result{Policy: cfg.Policy},
		leasesMoved: true,
		// Most links carry the same jobs from one arrival to the next.
		ranker: candidate.Workspace{Cache: 4096},
	}
	for i, l := range t.Links {
		s.capacity[i] = l.Gbps * 1e9
	}
	s.net.Scratch = s.cfg.ref.scratchRates
	s.net.Filling = cfg.Filling
	s.dtLog, s.anchorAge = dtLog, anchorAge
	if cfg.ref.dtLog > 0 {
		s.dtLog = cfg.ref.dtLog
	}
	if cfg.ref.anchorAge > 0 {
		s.anchorAge = cfg.ref.anchorAge
	}
	s.net.Reset(s.capacity)
	if err := s.newTransport(); err != nil {
		return nil, err
	}
	s.rack = racks(t)
	s.cl.roundRobin(s.rack)
	s.pstats.init(t)
	// Every server must reach every other (checked from and to server 0).
	for v := 1; v < t.Servers; v++ {
		if _, err := t.Route(0, v); err != nil {
			return nil, fmt.Errorf("%w: topology: %w", ErrInvalid, err)
		}
		if _, err := t.Route(v, 0); err != nil {
			return nil, fmt.Errorf("%w: topology: %w", ErrInvalid, err)
		}
	}
	order := make([]int, len(cfg.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ja, jb := cfg.Jobs[a], cfg.Jobs[b]
		if ja.Arrival != jb.Arrival {
			return cmpInt(int64(ja.Arrival), int64(jb.Arrival))
		}
		return cmpInt(int64(ja.ID), int64(jb.ID))
	})
	dealer := cfg.Noise.Dealer() // jobs share worker-trace series
	for k, i := range order {
		j := cfg.Jobs[i]
		m, _ := cfg.model(j.Model) // validated
		noise, err := dealer.For(j.ID, workload.Servers(j.GPUs, cfg.GPUsPerServer))
		if err != nil {
			return nil, fmt.Errorf("jobs[%d]: noise: %w", i, err)
		}
		steps, _ := m.Iteration(j.Batch, workload.Servers(j.GPUs, cfg.GPUsPerServer)) // validated
		s.jobs = append(s.jobs, &jobRun{idx: k, job: j, model: m, noise: noise, commOff: -1, first: -1, tpos: -1, commAt: -1,
			nominal: max(workload.Period(steps), time.Microsecond), gpus: j.GPUs, batch: j.Batch})
	}
	if cfg.Scheduler == Gavel || cfg.Scheduler == Shockwave {
		var err error
		if s.rounds, err = newRounds(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// racks returns each server's ToR, numbered densely in the order of the
// servers: the switch its uplink reaches (a server with none is a rack of
// its own).
func racks(t *topology.Topology) []int {
	tor := make([]int, t.Servers)
	for i := range tor {
		tor[i] = -1
	}
	for _, l := range t.Links {
		if l.From < t.Servers && tor[l.From] < 0 {
			tor[l.From] = l.To
		}
	}
	index := map[int]int{}
	out := make([]int, t.Servers)
	for s, node := range tor {
		if node < 0 {
			node = -1 - s
		}
		r, ok := index[node]
		if !ok {
			r = len(index)
			index[node] = r
		}
		out[s] = r
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *sim) run() error {
	for {
		if s.res.Events%256 == 0 && deadline.Done(s.ctx) {
			s.res.Status = Cancelled
			return nil
		}
		t := s.nextEvent()
		if t == never {
			return nil
		}
		if d := int64(s.cfg.Duration); d > 0 && t > d {
			s.advance(d)
			s.res.Status = TimeLimit
			return nil
		}
		s.advance(t)
		s.res.Events++
		if err := s.process(); err != nil {
			return err
		}
		if s.overflow {
			return fmt.Errorf("%w: simulated time would pass %v: link speeds, noise or iteration counts out of range", ErrInvalid, time.Duration(horizon))
		}
	}
}

// later returns the time ns nanoseconds from now, or the horizon (marking
// the run as overflowed) when that is past it.
func (s *sim) later(ns float64) int64 {
	if ns >= 0 && ns < float64(horizon-s.now) {
		return s.now + int64(ns)
	}
	s.overflow = true
	return horizon
}

// nextEvent returns the time of the next event. It also notes the next
// step or slot timer and the next scheduling instant, which process reads:
// nothing changes them in between.
func (s *sim) nextEvent() int64 {
	t := int64(never)
	if s.next < len(s.jobs) {
		t = int64(s.jobs[s.next].job.Arrival)
	}
	s.flushTimers()
	timer := int64(never)
	if len(s.timers) > 0 {
		timer = s.timers[0].tkey
	}
	if s.cfg.ref.scanTimers {
		timer = never
		for _, j := range s.running {
			if j.st == waiting || j.st == computing {
				timer = min(timer, j.until)
			}
		}
	}
	s.timerAt = timer
	if s.leasesMoved || s.cfg.Scheduler != Themis {
		// Themis's leases and running jobs change only where process
		// sets leasesMoved: its scheduling, and jobs that finish.
		s.scheduleAt = s.nextSchedule() // Themis: the earliest lease's end
		s.leasesMoved = false
	}
	t = min(t, timer)
	if s.live > 0 {
		t = min(t, s.minFinish) // the flows changed: updateRates set it
	}
	if s.tr != nil {
		t = min(t, s.ctlAt)
	}
	if len(s.groups) > 0 && len(s.running) > 0 && s.cfg.SampleEvery > 0 {
		t = min(t, s.nextSample)
	}
	return min(t, s.scheduleAt)
}

// advance moves time to t, delivering traffic at the current rates: it
// logs the interval, which the flows take when their job syncs.
func (s *sim) advance(t int64) {
	if t <= s.now {
		return
	}
	dt := float64(t-s.now) / 1e9
	if len(s.dts) == s.dtLog {
		s.syncAll()
		s.dts = s.dts[:0]
		for _, j := range s.comm {
			if j != nil {
				j.synced = 0
			}
		}
	}
	s.dts = append(s.dts, dt)
	if s.tr != nil {
		s.tr.Advance(dt)
	}
	if s.cfg.ref.syncEvery {
		s.syncAll()
	}
	s.excessBits += float64(s.excessRate * dt)
	s.now = t
}

// dtLog bounds the intervals logged: past it, every job syncs (tests
// set a smaller one: reference.dtLog).
const dtLog = 4096

// sync delivers to j's flows, and adds to its sums, the traffic of the
// intervals logged since its last sync, at their rates and marks (which
// only change once it has synced): interval by interval, each one's flows
// in their order, as advancing every flow at every interval would, to the
// bit. Only what reads or changes a flow's bits, rate or mark, or its
// job's sums, syncs; the others wait, and take the intervals in a tight
// loop.
func (s *sim) sync(j *jobRun) {
	dts := s.dts[j.synced:]
	if len(dts) == 0 {
		return
	}
	j.synced = len(s.dts)
	sent, marked := j.sentBits, j.markedBits
	if fl := j.flows; len(fl) == 1 && fl[0].n == 1 && !fl[0].done { // a ring: in registers
		f := &fl[0]
		rate, rem, fsent := f.rate, f.rem, f.sent
		if f.marked {
			for _, dt := range dts {
				x := float64(rate * dt)
				rem -= x
				fsent += x
				sent += x
				marked += x
			}
		} else {
			for _, dt := range dts {
				x := float64(rate * dt)
				rem -= x
				fsent += x
				sent += x
			}
		}
		f.rem, f.sent = rem, fsent
	} else {
		for _, dt := range dts {
			for i := range fl {
				f := &fl[i]
				if f.done {
					continue
				}
				x := float64(f.rate * dt)
				f.rem -= x
				f.sent += x
				sent = addShares(sent, x, f.n)
				if f.marked {
					marked = addShares(marked, x, f.n)
				}
			}
		}
	}
	j.sentBits, j.markedBits = sent, marked
}

// addShares returns sum plus x added n times, once for each of the flows a
// flowRun stands for, in turn, as separate flows would add (n*x rounds
// otherwise).
func addShares(sum, x float64, n int) float64 {
	for range n {
		sum += x
	}
	return sum
}

// syncAll syncs every job communicating.
func (s *sim) syncAll() {
	for _, j := range s.comm {
		if j != nil {
			s.sync(j)
		}
	}
}

// leave takes j, whose step has no active flow left, out of comm, which
// it compacts (keeping its order) once half of it is nil.
func (s *sim) leave(j *jobRun) {
	s.comm[j.commAt], j.commAt = nil, -1
	s.holes++
	if 2*s.holes < len(s.comm) {
		return
	}
	k := 0
	for _, j := range s.comm {
		if j != nil {
			s.comm[k], j.commAt = j, int32(k)
			k++
		}
	}
	clear(s.comm[k:])
	s.comm, s.holes = s.comm[:k], 0
}

// process handles every event at the current time, in a fixed order: flows
// that finish, then step and slot timers, in job order; then arrivals, the
// scheduler and placements; then drift sampling; then new rates.
func (s *sim) process() error {
	if s.tr != nil && s.now >= s.ctlAt {
		s.control()
	}
	ready := s.finishFlows(s.ready[:0]) // jobs whose step ends now
	switch {
	case s.timerAt > s.now:
	case s.cfg.ref.scanTimers:
		for _, j := range s.running {
			if (j.st == waiting || j.st == computing) && j.until <= s.now {
				ready = append(ready, j)
			}
		}
	default:
		ready = s.due(ready)
	}
	slices.SortFunc(ready, func(a, b *jobRun) int { return a.idx - b.idx })
	freed := false
	for _, j := range ready {
		switch j.st {
		case waiting:
			s.begin(j)
		case communicating:
			j.commTime += s.now - j.stepStart
			fallthrough
		case computing:
			j.step++
			s.enterStep(j)
		}
		freed = freed || j.st == done
	}
	clear(ready)
	s.ready = ready[:0]
	if freed {
		s.running = slices.DeleteFunc(s.running, func(j *jobRun) bool { return j.st == done })
		s.leasesMoved = true
	}
	arrived := false
	for s.next < len(s.jobs) && int64(s.jobs[s.next].job.Arrival) <= s.now {
		s.next++
		arrived = true
	}
	// scheduleAt is still nextSchedule's value unless a job finished.
	if freed || arrived || s.scheduleAt <= s.now || s.roundDue() {
		s.leasesMoved = true
		if err := s.schedule(); err != nil {
			return err
		}
	}
	if s.cfg.SampleEvery > 0 && len(s.groups) > 0 && s.now >= s.nextSample {
		if err := s.sampleDrift(); err != nil {
			return err
		}
		s.nextSample = s.now + int64(s.cfg.SampleEvery)
	}
	if s.dirty {
		if err := s.updateRates(); err != nil {
			return err
		}
	}
	if s.moved {
		s.snapshot()
	}
	return nil
}

// touchTimer notes that j's state or timer may change: nextEvent puts it
// in timers, or takes it out, as its state is then.
func (s *sim) touchTimer(j *jobRun) {
	if !j.tdirty {
		j.tdirty = true
		s.tdirty = append(s.tdirty, j)
	}
}

// flushTimers brings timers up to date with the jobs touched. The heap
// orders by tkey, which changes only here, one job at a time: each fix
// then starts from a heap whose every other entry is in order. (Ordered by
// until, which several touched jobs change between flushes, a fix could
// start from a heap with other entries out of order and leave it so: a due
// timer was missed, and its job woke at a later event.)
func (s *sim) flushTimers() {
	for _, j := range s.tdirty {
		j.tdirty = false
		switch in := j.st == waiting || j.st == computing; {
		case in && j.tpos < 0:
			j.tpos, j.tkey = int32(len(s.timers)), j.until
			s.timers = append(s.timers, j)
			s.timerFix(int(j.tpos))
		case in:
			j.tkey = j.until
			s.timerFix(int(j.tpos))
		case j.tpos >= 0:
			i, last := int(j.tpos), len(s.timers)-1
			s.timers[i] = s.timers[last]
			s.timers[last] = nil
			s.timers = s.timers[:last]
			j.tpos = -1
			if i < last {
				s.timerFix(i)
			}
		}
	}
	clear(s.tdirty)
	s.tdirty = s.tdirty[:0]
}

// due appends to ready the jobs whose timer is due (in no particular
// order: process sorts them).
func (s *sim) due(ready []*jobRun) []*jobRun {
	st := append(s.stack[:0], 0)
	for len(st) > 0 {
		i := st[len(st)-1]
		st = st[:len(st)-1]
		if int(i) < len(s.timers) && s.timers[i].tkey <= s.now {
			ready = append(ready, s.timers[i])
			st = append(st, 2*i+1, 2*i+2)
		}
	}
	s.stack = st
	return ready
}

// timerFix restores the heap order of timers around i, moving timers[i]
// up or down as byLow's fix does.
func (s *sim) timerFix(i int) {
	h := s.timers
	j := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p].tkey <= j.tkey {
			break
		}
		h[i] = h[p]
		h[i].tpos = int32(i)
		i = p
	}
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].tkey < h[c].tkey {
			c++
		}
		if j.tkey <= h[c].tkey {
			break
		}
		h[i] = h[c]
		h[i].tpos = int32(i)
		i = c
	}
	h[i], j.tpos = j, int32(i)
}

// finishFlows retires the flows that finish now, appending to ready the
// jobs whose step they end.
func (s *sim) finishFlows(ready []*jobRun) []*jobRun {
	if s.live == 0 || s.minFinish > s.now {
		return ready
	}
	// Every other flow's finish is past minFinish (see nearest). The
	// flows that finish are retired in the order they started, as sums
	// keep it: their jobs in comm's order, each job's flows in its order.
	jobs := s.ending[:0]
	for _, f := range s.near {
		if f.finish <= s.now {
			f.ending = true
			if j := f.job; !j.ending {
				j.ending = true
				jobs = append(jobs, j)
			}
		}
	}
	s.near = s.near[:0]
	for i := 1; i < len(jobs); i++ { // few: by insertion
		for k := i; k > 0 && jobs[k-1].commAt > jobs[k].commAt; k-- {
			jobs[k-1], jobs[k] = jobs[k], jobs[k-1]
		}
	}
	for _, j := range jobs {
		j.ending = false
		s.dirty = true
		s.sync(j)
		for i := range j.flows {
			if f := &j.flows[i]; f.ending {
				f.ending = false
				s.sentBits = addShares(s.sentBits, f.sent, f.n)
				j.pending--
				s.retire(f)
			}
		}
		if j.pending == 0 {
			ready = append(ready, j)
			s.leave(j)
		}
	}
	clear(jobs)
	s.ending = jobs[:0]
	return ready
}

// retire takes f out of the network and marks it done.
func (s *sim) retire(f *flowRun) {
	s.drop(f)
	f.done = true
	s.live--
}

// request is what placing j asks of the cluster.
func (s *sim) request(j *jobRun) request {
	per := j.gpus
	if j.model.MinServers > 1 {
		per = (j.gpus + j.model.MinServers - 1) / j.model.MinServers
	}
	return request{gpus: j.gpus, perServer: per, minServers: j.model.MinServers, pinned: s.cfg.Pinned[j.job.ID]}
}

// place starts the jobs the scheduler picked on one of N joint placement
// candidates, chosen by the policy; a job that no candidate holds stays
// queued.
func (s *sim) place(picked []*jobRun) error {
	reqs := make([]request, len(picked))
	for k, j := range picked {
		reqs[k] = s.request(j)
	}
	n := s.cfg.Candidates
	if s.cfg.Policy == Baseline || s.cfg.Policy == Ideal {
		// They take the first candidate, which the others (and the
		// draws that make them) do not change; nothing else draws.
		n = 1
	}
	all, placed := s.cl.joint(reqs, n, s.cfg.Placement, s.own, s.rng)
	var js []*jobRun
	var keep []int
	for k, ok := range placed {
		if ok {
			js, keep = append(js, picked[k]), append(keep, k)
		}
	}
	if len(js) == 0 {
		return nil
	}
	cands := make([][]alloc, len(all))
	for c, cand := range all {
		for _, k := range keep {
			cands[c] = append(cands[c], cand[k])
		}
	}
	choice := 0
	var plan *planned
	switch s.cfg.Policy {
	case Random:
		choice = s.rng.IntN(len(cands))
	case Cassini, CassiniPlacement:
		var err error
		if choice, plan, err = s.rank(js, cands); err != nil {
			return err
		}
	}
	for k, j := range js {
		if err := s.assign(j, cands[choice][k]); err != nil {
			return err
		}
	}
	if plan != nil {
		if err := s.apply(js, plan); err != nil {
			return err
		}
	}
	for _, j := range js {
		s.startIteration(j)
	}
	return nil
}

func sum(v []int) int {
	t := 0
	for _, x := range v {
		t += x
	}
	return t
}

// assign places j on a.
func (s *sim) assign(j *jobRun, a alloc) error {
	l, err := s.layout(j.model, j.batch, a.servers)
	if err != nil {
		return fmt.Errorf("job %d: %w", j.job.ID, err)
	}
	s.cl.take(a)
	j.place, j.steps, j.routes, j.links, j.prof, j.linkProf = a, l.steps, l.routes, l.links, l.prof, l.linkProf
	j.alone, j.commOff = l.alone, l.commOff
	if s.cfg.Transport == MLTCP {
		j.iterationBits()
	}
	j.peakOn, j.meanOn = l.peakOn, l.meanOn
	s.countPlacement(j)
	j.net = s.netFlows(j)
	most := 0
	for _, flows := range j.net {
		most = max(most, len(flows))
	}
	if cap(j.flows) < most { // its flows' room at once, not by appends
		j.flows = make([]flowRun, 0, most)
	}
	j.start = s.now
	if j.first < 0 {
		j.first = s.now
	}
	j.st, j.released = waiting, false
	s.touchTimer(j)
	i, _ := slices.BinarySearchFunc(s.running, j.idx, func(r *jobRun, idx int) int { return r.idx - idx })
	s.running = slices.Insert(s.running, i, j)
	return nil
}

// netFlow is flows of a step as the network sees them: links, and how many
// of the step's consecutive flows it stands for, each listing the links
// once more.
type netFlow struct {
	links []int
	n     int
	line  float64 // the capacity of its first link, its sender's NIC (DCQCN's line rate)
}

// netFlows returns j's steps' flows (placed) as the network sees them.
//
// Their routes drop the links that only j's current step can cross and
// that its crossings leave quiet (fluid.Quiet). Routes go up to a switch
// and back down (see the topology package), so a link at a server carries
// only routes from or to that server: one at a server all of whose GPUs
// are j's carries j's flows alone, one step's at a time. Most steps cross
// a server's own links at most at its NIC's rate, so most of those links
// drop out of the network's work.
//
// Then consecutive flows on the same links are one: the filling freezes
// flows of one peak on the same links together, so n of them are one flow
// crossing each link n times (n connections at its rate), and their
// crossings add their peaks to each link's load one after the other in
// both. Each of them has the same bits and rate, so the same bits left and
// sent at every instant; sums take each one's share in turn.
//
// Under Ideal, and in the other fillings (Config.Filling), every flow of a
// step is seen with every link: legacy's rates depend, in their last
// bits, on every link and flow, and the references stay as they were.
func (s *sim) netFlows(j *jobRun) [][]netFlow {
	out := make([][]netFlow, len(j.routes))
	if s.cfg.ref.allLinks || s.cfg.Policy == Ideal || !s.net.Incremental() {
		for i, flows := range j.routes {
			for _, r := range flows {
				out[i] = append(out[i], netFlow{r, 1, s.lineOf(r)})
			}
		}
		return out
	}
	links, servers := s.topo.Links, s.topo.Servers
	if len(s.owned) < servers {
		s.owned, s.count = make([]bool, servers), make([]int32, len(links))
	}
	own, count := s.owned, s.count
	for i, srv := range j.place.servers {
		own[srv] = j.place.gpus[i] == s.cfg.GPUsPerServer
	}
	for i, flows := range j.routes {
		for _, r := range flows {
			for _, l := range r {
				count[l]++
			}
		}
		peak := j.steps[i].Peak
		drop := func(l int) bool {
			a, b := links[l].From, links[l].To
			return (a < servers && own[a] || b < servers && own[b]) && fluid.Quiet(s.capacity[l], peak, int(count[l]))
		}
		var last []int // the last netFlow's links, once
		for _, r := range flows {
			rt := r
			if slices.ContainsFunc(r, drop) {
				r = slices.DeleteFunc(slices.Clone(r), drop)
			}
			if k := len(out[i]) - 1; k >= 0 && slices.Equal(last, r) {
				out[i][k].n++
				continue
			}
			out[i], last = append(out[i], netFlow{r, 1, s.lineOf(rt)}), r
		}
		for k, nf := range out[i] {
			if nf.n > 1 && len(nf.links) > 0 {
				out[i][k].links = slices.Repeat(nf.links, nf.n)
			}
		}
		for _, r := range flows {
			for _, l := range r {
				count[l] = 0
			}
		}
	}
	for _, srv := range j.place.servers {
		own[srv] = false
	}
	return out
}

// startIteration begins iteration j.iter, after the agent's delay if any.
// An agent that gives its shift up leaves the job free on this placement.
func (s *sim) startIteration(j *jobRun) {
	if j.agent != nil {
		if j.begun {
			j.agent.Communicated(time.Duration(j.commTime))
		}
		d := j.agent.Next(simTime(s.now))
		if d.Released {
			j.agent, j.released = nil, true
			s.res.Agent.Released++
		}
		if start := d.Start.UnixNano(); start > s.now {
			j.st, j.until = waiting, start
			s.touchTimer(j)
			return
		}
	}
	s.begin(j)
}

func simTime(ns int64) time.Time { return time.Unix(0, ns) }

// record adds the iteration that started at j.iterStart and ended now.
func (s *sim) record(j *jobRun) {
	s.iterations++
	j.record(s.now)
}

// record adds the iteration that started at j.iterStart and ended now.
func (j *jobRun) record(now int64) {
	ms := float64(now-j.iterStart) / 1e6
	j.iterMs = append(j.iterMs, ms)
	j.iterSum += ms
	// A whole iteration runs on one placement: a preemption drops the one
	// under way.
	j.iterAlone = append(j.iterAlone, float64(j.alone)/1e6)
	j.aloneSum += float64(j.alone) / 1e6
}

// leave takes j off its agent (and the agent off its group).
func (j *jobRun) leave() {
	if j.agent != nil {
		j.agent.Leave()
		j.agent = nil
	}
}

// begin starts the current iteration now.
func (s *sim) begin(j *jobRun) {
	if j.begun {
		s.record(j)
	}
	j.begun = true
	j.iterStart = s.now
	j.step = 0
	j.commTime = 0
	s.enterStep(j)
}

// enterStep runs j's current step, skipping steps that take no time.
func (s *sim) enterStep(j *jobRun) {
	s.touchTimer(j)
	for ; j.step < len(j.steps); j.step++ {
		st := j.steps[j.step]
		if st.Pattern == workload.Compute {
			if ns := math.Round(float64(st.Compute) * j.noise.Factor(j.iter)); ns > 0 {
				j.st, j.until = computing, s.later(ns)
				return
			}
			continue
		}
		flows := j.net[j.step]
		if st.Bits == 0 || len(flows) == 0 {
			continue
		}
		if j.agent != nil && s.firstComm(j) {
			j.drift, j.driftOK = j.agent.Communicating(simTime(s.now)), true
		}
		j.stepStart = s.now
		// Its last step's flows are all retired: nothing points into
		// j.flows, which is reused.
		j.flows = j.flows[:0]
		for _, nf := range flows {
			j.flows = append(j.flows, flowRun{job: j, links: nf.links, n: nf.n, peak: st.Peak, rem: st.Bits, id: -1, hpos: -1})
		}
		j.commAt, j.synced = int32(len(s.comm)), len(s.dts)
		s.comm = append(s.comm, j)
		for i := range j.flows {
			f := &j.flows[i]
			switch {
			case s.tr != nil && len(f.links) > 0:
				if err := s.addTransport(j, f, flows[i].line); err != nil {
					s.err = err
				}
			case s.tr != nil:
				f.rate = f.peak // no link left (netFlows): its peak until it ends
			case s.cfg.Policy == Ideal:
			case len(f.links) == 0 && f.peak > 0 && !math.IsInf(f.peak, 1):
				// No link left (netFlows): the network would give it
				// its peak and no mark, now and until it ends.
				f.rate = f.peak
				s.anchor(f)
			default:
				f.id = s.net.Add(f.links, f.peak)
				if f.id >= 0 {
					for int(f.id) >= len(s.byID) {
						s.byID = append(s.byID, nil)
					}
					s.byID[f.id] = f
				}
			}
		}
		s.live += len(flows)
		j.st, j.pending = communicating, len(flows)
		s.dirty = true
		return
	}
	// The iteration is over.
	j.iter++
	if j.iter == j.job.Iterations {
		s.record(j)
		j.st, j.end = done, s.now
		s.cl.release(j.place)
		s.moved = true
		j.leave()
		return
	}
	s.startIteration(j)
}

// firstComm reports whether j's current step is its iteration's first
// communication step with traffic.
func (s *sim) firstComm(j *jobRun) bool {
	for _, st := range j.steps[:j.step] {
		if st.Pattern != workload.Compute && st.Bits > 0 {
			return false
		}
	}
	return true
}

// updateRates brings every flow's rate and mark up to date, and the
// offered excess, and finds the flows' earliest finish.
func (s *sim) updateRates() error {
	s.dirty = false
	s.excessRate = 0
	if s.err != nil {
		return s.err
	}
	if s.tr != nil {
		s.updateTransport()
		return nil
	}
	if s.cfg.Policy == Ideal {
		return s.updateIdeal()
	}
	// Only what the changes reach is solved again, and only the flows
	// whose rate changed are anchored again.
	if err := s.net.Solve(); err != nil {
		return err
	}
	s.excessRate = s.net.Excess()
	for _, id := range s.net.Changed() {
		f := s.byID[id]
		m, r := s.net.Marked(id), s.net.Rate(id)
		moved := f.hpos < 0 || math.Float64bits(r) != math.Float64bits(f.rate)
		if moved || m != f.marked {
			s.sync(f.job) // the traffic so far, at the old rate and mark
			f.marked = m
		}
		if moved {
			f.rate = r
			s.anchor(f)
		}
	}
	if s.res.Events-s.sweptAt >= s.anchorAge/2 {
		s.sweep()
	}
	s.nearest()
	return nil
}

// updateIdeal solves each job's flows alone and computes every flow's
// finish.
func (s *sim) updateIdeal() error {
	s.syncAll()
	flows := s.near[:0] // every flow, in order
	for _, j := range s.comm {
		if j == nil {
			continue
		}
		lo := len(flows)
		for i := range j.flows {
			if f := &j.flows[i]; !f.done {
				flows = append(flows, f)
			}
		}
		if err := s.solve(flows[lo:]); err != nil {
			return err
		}
	}
	s.near = flows
	s.minFinish = never
	for _, f := range flows {
		f.finish = s.finishOf(f)
		s.minFinish = min(s.minFinish, f.finish)
	}
	return nil
}

// finishOf returns when f finishes at its rate, its bits left as they are
// now.
func (s *sim) finishOf(f *flowRun) int64 {
	return s.later(math.Ceil(max(f.rem, 0) / f.rate * 1e9))
}

// A flow's finish is recomputed from its bits left at every change of the
// rates, as finishOf gives it; but while its rate stays, what it gives
// moves only by rounding: in exact arithmetic the bits left fall by the
// rate times the time passed, and the finish stays where it was. So a
// flow is anchored where its finish was computed, with a bound on that
// drift, and at each change only the flows whose bound reaches the
// earliest finish are computed (nearest): the others' finishes, as a full
// recomputation would give them, are later than the earliest, and no
// event reads them. The drift after k advances of a flow whose finish was
// Q ns away at its anchor is at most 1 + (k+7)*2^-53*Q ns: each advance
// rounds the interval's conversion, division and product with the rate
// (3 ulps of what it delivers, 3*2^-53*Q in all) and the subtraction from
// the bits left (2^-53 of them, at most 2^-53*Q per advance), the finish's
// division and product round twice more, and the ceiling adds 1.

// anchorAge bounds the events since a flow's anchor (the k above);
// sweep anchors older flows again (tests set a smaller one:
// reference.anchorAge).
const anchorAge = int64(1 << 20)

// anchor computes f's finish now and puts f in byLow by the least finish
// that its rate can give it until anchorAge events have passed.
func (s *sim) anchor(f *flowRun) {
	s.sync(f.job)
	ns := math.Ceil(max(f.rem, 0) / f.rate * 1e9)
	f.finish = s.later(ns)
	f.anchorAt = s.res.Events
	f.low = math.MinInt64 // near the horizon, or no finish: computed at every change
	if ns < 1e17 {
		slack := int64(2 + math.Ceil(float64(s.anchorAge+8)*0x1p-52*ns))
		if f.finish < horizon-1024-slack { // later's float comparison rounds by at most 128
			f.low = f.finish - slack
		}
	}
	if f.hpos < 0 {
		f.hpos = int32(len(s.byLow))
		s.byLow = append(s.byLow, f)
		s.up(int(f.hpos))
		return
	}
	s.fix(int(f.hpos))
}

// sweep anchors again the flows anchored s.anchorAge/2 events ago or more,
// so that no anchor is older than anchorAge at the next sweep.
func (s *sim) sweep() {
	s.sweptAt = s.res.Events
	for _, j := range s.comm {
		if j == nil {
			continue
		}
		for i := range j.flows {
			if f := &j.flows[i]; f.hpos >= 0 && s.res.Events-f.anchorAt >= s.anchorAge/2 {
				s.anchor(f)
			}
		}
	}
}

// nearest computes the finish of every flow whose bound reaches the
// earliest finish, lists them in near, and sets minFinish.
func (s *sim) nearest() {
	s.near = s.near[:0]
	best := int64(never)
	st := append(s.stack[:0], 0)
	for len(st) > 0 {
		i := st[len(st)-1]
		st = st[:len(st)-1]
		if int(i) >= len(s.byLow) {
			continue
		}
		f := s.byLow[i]
		if f.low > best && !s.cfg.ref.everyFinish { // and so is every flow below it
			continue
		}
		s.sync(f.job)
		f.finish = s.finishOf(f)
		best = min(best, f.finish)
		s.near = append(s.near, f)
		st = append(st, 2*i+1, 2*i+2)
	}
	s.stack = st
	s.minFinish = best
}

// drop takes f out of the network and of byLow.
func (s *sim) drop(f *flowRun) {
	if f.id >= 0 {
		if s.tr != nil {
			s.tr.Remove(f.id)
		} else {
			s.net.Remove(f.id)
		}
		s.byID[f.id] = nil
	}
	i := int(f.hpos)
	if i < 0 {
		return
	}
	last := len(s.byLow) - 1
	s.byLow[i] = s.byLow[last]
	s.byLow[last] = nil
	s.byLow = s.byLow[:last]
	f.hpos = -1
	if i < last {
		s.fix(i)
	}
}

// The heap byLow, least low first. A flow moving up or down leaves a hole
// that the flows it passes fill, one write each (a swap writes two, each a
// pointer the collector may have to see).

// up moves byLow[i] up to its place and returns it.
func (s *sim) up(i int) int {
	h := s.byLow
	f := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p].low <= f.low {
			break
		}
		h[i] = h[p]
		h[i].hpos = int32(i)
		i = p
	}
	h[i], f.hpos = f, int32(i)
	return i
}

// fix moves byLow[i] up or down to its place.
func (s *sim) fix(i int) {
	i = s.up(i)
	h := s.byLow
	f := h[i]
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].low < h[c].low {
			c++
		}
		if f.low <= h[c].low {
			break
		}
		h[i] = h[c]
		h[i].hpos = int32(i)
		i = c
	}
	h[i], f.hpos = f, int32(i)
}

// solve sets the rates of flows sharing the network from scratch, and adds
// their offered excess (under Ideal, one job's flows at a time).
func (s *sim) solve(flows []*flowRun) error {
	s.fbuf = s.fbuf[:0]
	for _, f := range flows {
		s.fbuf = append(s.fbuf, fluid.Flow{Links: f.links, Peak: f.peak})
	}
	var err error
	if s.rates, err = s.solver.Rates(s.rates, s.capacity, s.fbuf); err != nil {
		return err
	}
	for i, f := range flows {
		f.rate, f.marked = s.rates[i], false
	}
	// The solver has summed each link's offered peaks, in flow order; a
	// flow is marked when any link on its path is offered past capacity.
	offered := s.solver.Offered()
	for _, o := range offered {
		s.excessRate += max(o.Load-s.capacity[o.Link], 0)
		s.over[o.Link] = o.Load > s.capacity[o.Link]
	}
	for _, f := range flows {
		for _, l := range f.links {
			f.marked = f.marked || s.over[l]
		}
	}
	for _, o := range offered {
		s.over[o.Link] = false
	}
	return nil
}
