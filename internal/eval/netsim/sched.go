package netsim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/round"
	"github.com/orrery/orrery/internal/eval/policy"
	evalsim "github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/trace"
)

// Scheduler is the round policy that allocates the cluster's GPUs; the
// placement of the jobs it runs is the Policy's.
type Scheduler int

const (
	// Themis (the default, the paper's baseline): finish-time-fairness
	// auctions with leases. Whenever GPUs are free (a job arrives or
	// finishes, a lease expires), the jobs waiting and those whose lease
	// expired bid; they win in decreasing order of their finish-time
	// fairness ρ (the worst off first), each if its GPUs fit, and a winner
	// holds its GPUs for a lease (DefaultLease, the paper's 10-minute
	// epoch). A job whose lease expired and that wins again keeps its
	// servers; one that loses is preempted.
	Themis Scheduler = iota
	// Gavel: Gavel's max-min fairness (package policy's MaxMinFairness in
	// Gavel's round mechanism), rounds of DefaultRound; the allocation is
	// recomputed in every round in which the job set changed.
	Gavel
	// Shockwave: Shockwave's market planner (package policy), rounds of
	// DefaultRound.
	Shockwave
	// FIFO: arrival order, first fit, no preemption (every job runs to the
	// end once placed).
	FIFO
)

// Schedulers lists every scheduler in order.
var Schedulers = []Scheduler{Themis, Gavel, Shockwave, FIFO}

func (s Scheduler) String() string {
	switch s {
	case Themis:
		return "themis"
	case Gavel:
		return "gavel"
	case Shockwave:
		return "shockwave"
	case FIFO:
		return "fifo"
	}
	return fmt.Sprintf("Scheduler(%d)", int(s))
}

// ParseScheduler parses a scheduler's name.
func ParseScheduler(s string) (Scheduler, error) {
	for _, x := range Schedulers {
		if strings.EqualFold(s, x.String()) {
			return x, nil
		}
	}
	return 0, fmt.Errorf("%w: scheduler %q (want themis, gavel, shockwave or fifo)", ErrInvalid, s)
}

// Defaults of the schedulers' time constants.
const (
	DefaultLease = 10 * time.Minute  // Themis's lease (the paper's epoch)
	DefaultRound = 120 * time.Second // Gavel's and Shockwave's round (the Shockwave paper's)
)

// epochs is how many epochs a job's iterations are split into for
// Shockwave's planner (which counts progress in epochs).
const epochs = 10

func (c Config) lease() time.Duration {
	switch {
	case c.Lease > 0:
		return c.Lease
	case c.Scheduler == Themis:
		return DefaultLease
	}
	return DefaultRound
}

// rounds adapts a package policy round policy (Gavel, Shockwave) to the
// simulation: at every round boundary it reports the leases of the round
// that ended, admits the jobs that arrived, and asks for the next round's
// jobs.
type rounds struct {
	p        evalsim.Policy
	round    int
	start    int64 // of the current round
	admitted map[int]bool
	ran      map[*jobRun]int // jobs that ran this round -> iterations at its start
}

func newRounds(s *sim) (*rounds, error) {
	gpus := s.topo.Servers * s.cfg.GPUsPerServer
	var p evalsim.Policy
	var err error
	switch s.cfg.Scheduler {
	case Gavel:
		p, err = policy.NewGavel(&policy.MaxMinFairness{}, policy.GavelOptions{ResetInterval: -1})
	case Shockwave:
		cfg := round.Config{Market: market.Config{RoundSeconds: s.cfg.lease().Seconds()}}
		p, err = policy.NewShockwave(gpus, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrInvalid, s.cfg.Scheduler, err)
	}
	return &rounds{p: p, admitted: map[int]bool{}, ran: map[*jobRun]int{}}, nil
}

// view is j as a round policy sees it. Its throughput is what it measured
// (iterations per second over its completed iterations), else its nominal
// uncontended speed.
func (s *sim) view(j *jobRun) evalsim.Job {
	tput := 1 / j.iterEstimate().Seconds()
	epochIters := max(1, (j.job.Iterations+epochs-1)/epochs)
	v := evalsim.Job{ID: j.job.ID, GPUs: j.job.GPUs, Weight: 1, Arrival: j.job.Arrival.Seconds(), Admitted: j.admitted,
		BatchSize: j.job.Batch, Throughput: min(max(tput, trace.MinThroughput), trace.MaxThroughput),
		TotalSteps: int64(j.job.Iterations), StepsRun: int64(j.iter), Progress: min(j.iter/epochIters, epochs)}
	if s.cfg.Scheduler == Shockwave {
		n := (j.job.Iterations + epochIters - 1) / epochIters
		p := &trace.Profile{GPUs: j.job.GPUs, SamplesPerEpoch: epochIters * j.job.Batch}
		for range n {
			p.EpochBS = append(p.EpochBS, j.job.Batch)
			p.EpochDur = append(p.EpochDur, float64(epochIters)*j.nominal.Seconds())
		}
		v.Profile = p
	}
	return v
}

// boundary runs a round boundary: the round that ended is reported, the
// new arrivals are admitted, and the jobs the policy picks for the next
// round run (the others are preempted).
func (s *sim) boundary() ([]*jobRun, error) {
	rd := s.rounds
	if err := s.endRound(); err != nil {
		return nil, err
	}
	var st evalsim.State
	st.Round, st.Now, st.GPUs, st.RoundSeconds = rd.round, float64(s.now)/1e9, s.topo.Servers*s.cfg.GPUsPerServer, s.cfg.lease().Seconds()
	active := s.active()
	for _, j := range active {
		if !rd.admitted[j.job.ID] {
			rd.admitted[j.job.ID] = true
			j.admitted = st.Now
			v := s.view(j)
			if err := rd.p.Admit(&v); err != nil {
				return nil, fmt.Errorf("%w: %v: admit job %d: %w", ErrInvalid, s.cfg.Scheduler, j.job.ID, err)
			}
		}
		st.Jobs = append(st.Jobs, s.view(j))
	}
	ids, err := rd.p.Schedule(s.ctx, &st)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: schedule: %w", ErrInvalid, s.cfg.Scheduler, err)
	}
	chosen := map[int]int{}
	for k, id := range ids {
		chosen[id] = k
	}
	var start []*jobRun
	for _, j := range active {
		_, ok := chosen[j.job.ID]
		switch {
		case j.st != queued && !ok:
			s.preempt(j)
		case j.st == queued && ok:
			start = append(start, j)
		}
	}
	slices.SortStableFunc(start, func(a, b *jobRun) int { return chosen[a.job.ID] - chosen[b.job.ID] })
	rd.round++
	rd.start = s.now
	clear(rd.ran)
	for _, j := range active {
		if _, ok := chosen[j.job.ID]; ok {
			rd.ran[j] = j.iter
		}
	}
	return start, nil
}

// endRound reports the leases of the round that ended.
func (s *sim) endRound() error {
	rd := s.rounds
	if rd.round == 0 {
		return nil
	}
	rep := evalsim.Report{Round: rd.round, Now: float64(s.now) / 1e9}
	js := make([]*jobRun, 0, len(rd.ran))
	for j := range rd.ran {
		js = append(js, j)
	}
	slices.SortFunc(js, func(a, b *jobRun) int { return a.idx - b.idx })
	for _, j := range js {
		end := s.now
		if j.st == done {
			end = j.end
		}
		exec := float64(end-max(rd.start, j.start)) / 1e9
		steps := int64(j.iter - rd.ran[j])
		l := evalsim.Lease{ID: j.job.ID, Steps: steps, Exec: max(exec, 0), BatchSize: j.job.Batch, Finished: j.st == done,
			Progress: s.view(j).Progress}
		if exec > 0 && steps > 0 {
			l.Throughput = min(max(float64(steps)/exec, trace.MinThroughput), trace.MaxThroughput)
		}
		rep.Leases = append(rep.Leases, l)
	}
	if err := rd.p.EndRound(&rep); err != nil {
		return fmt.Errorf("%w: %v: end of round %d: %w", ErrInvalid, s.cfg.Scheduler, rd.round, err)
	}
	return nil
}

// active returns the jobs that have arrived and not finished, by arrival,
// in a slice of s's (every scheduling decision asks: a fresh one each
// time was a fifth of a Clos 1000 run's allocations), valid until the next
// call.
func (s *sim) active() []*jobRun {
	out := s.actives[:0]
	for _, j := range s.jobs[:s.next] {
		if j.st != done {
			out = append(out, j)
		}
	}
	s.actives = out
	return out
}

// rho is a job's finish-time fairness as Themis estimates it: the time it
// will have taken (so far, plus its remaining iterations at its measured
// speed) over the time it would take alone on a 1/N share of the cluster,
// N the active jobs.
func (s *sim) rho(j *jobRun, n int) float64 {
	elapsed := float64(s.now - int64(j.job.Arrival))
	remaining := float64(float64(j.job.Iterations-j.iter) * float64(j.iterEstimate())) // rounded: no fused multiply-add
	share := max(1, float64(n*j.job.GPUs)/float64(s.topo.Servers*s.cfg.GPUsPerServer))
	ideal := float64(j.job.Iterations) * float64(j.nominal) * share
	return (elapsed + remaining) / ideal
}

// auction is Themis's allocation at the current instant: the jobs waiting
// and those whose lease expired, in decreasing ρ (ties in arrival order),
// win if their GPUs fit what is free or expiring. Expired winners renew
// their lease on their servers; expired losers are preempted. It returns
// the new winners to place.
func (s *sim) auction() []*jobRun {
	active, bidders, pool := s.leaseBidders()
	if len(bidders) == 0 {
		return nil
	}
	rho := make(map[*jobRun]float64, len(bidders))
	for _, j := range bidders {
		rho[j] = s.rho(j, len(active))
	}
	slices.SortStableFunc(bidders, func(a, b *jobRun) int { return cmp.Compare(rho[b], rho[a]) })
	var start []*jobRun
	lease := int64(s.cfg.lease())
	for _, j := range bidders {
		win := j.job.GPUs <= pool
		if win {
			pool -= j.job.GPUs
		}
		switch {
		case j.st != queued && win:
			j.leaseEnd = s.now + lease
		case j.st != queued:
			s.preempt(j)
		case win:
			start = append(start, j)
		}
	}
	return start
}

// leaseBidders returns the active jobs, those bidding in a lease auction
// (queued, or whose lease has ended) and the GPUs up for auction: the free
// ones and those of the ended leases (j.gpus: what the job holds, which
// only Themis's re-tuning makes differ from what it asked for).
func (s *sim) leaseBidders() (active, bidders []*jobRun, pool int) {
	active = s.active()
	pool = s.cl.total
	for _, j := range active {
		switch {
		case j.st == queued:
			bidders = append(bidders, j)
		case j.leaseEnd <= s.now:
			bidders = append(bidders, j)
			pool += j.gpus
		}
	}
	return active, bidders, pool
}

// fifo is the FIFO scheduler: the waiting jobs, in arrival order.
func (s *sim) fifo() []*jobRun {
	var start []*jobRun
	for _, j := range s.active() {
		if j.st == queued {
			start = append(start, j)
		}
	}
	return start
}

// maxIdleDecisions is how many scheduling decisions in a row may pass
// without any iteration completing before the run is declared stalled:
// leases or rounds shorter than the iterations they preempt.
const maxIdleDecisions = 1000

// schedule runs the scheduler at the current instant and places the jobs it
// starts, as far as they fit (those that do not wait).
func (s *sim) schedule() error {
	if s.iterations == s.lastIterations && len(s.running) > 0 {
		if s.idleDecisions++; s.idleDecisions > maxIdleDecisions {
			return fmt.Errorf("%w: %d scheduling decisions without an iteration completing: the %v lease of %v is shorter than the iterations it preempts", ErrInvalid, maxIdleDecisions, s.cfg.Scheduler, s.cfg.lease())
		}
	} else {
		s.idleDecisions, s.lastIterations = 0, s.iterations
	}
	var start []*jobRun
	switch s.cfg.Scheduler {
	case FIFO:
		start = s.fifo()
	case Themis:
		if s.cfg.Auction == AuctionPaper {
			start = s.themisAuction()
		} else {
			start = s.auction()
		}
	default:
		if !s.roundDue() {
			return nil
		}
		var err error
		if start, err = s.boundary(); err != nil {
			return err
		}
		s.nextRound = s.now + int64(s.cfg.lease())
	}
	if len(start) == 0 {
		return nil
	}
	if err := s.place(start); err != nil {
		return err
	}
	for _, j := range start {
		if j.st != queued {
			j.leaseEnd = s.now + int64(s.cfg.lease())
		}
	}
	return nil
}

// roundDue reports whether a round policy's round should end now: its time
// is up, or nothing runs any more while jobs wait.
func (s *sim) roundDue() bool {
	if s.rounds == nil {
		return false
	}
	if s.now >= s.nextRound {
		return true
	}
	return len(s.running) == 0 && slices.ContainsFunc(s.jobs[:s.next], func(j *jobRun) bool { return j.st == queued })
}

// nextSchedule is the next instant a lease expires (Themis) or a round ends.
func (s *sim) nextSchedule() int64 {
	t := int64(never)
	switch s.cfg.Scheduler {
	case Themis:
		for _, j := range s.running {
			t = min(t, j.leaseEnd)
		}
	case Gavel, Shockwave:
		if len(s.running) > 0 || slices.ContainsFunc(s.jobs[:s.next], func(j *jobRun) bool { return j.st == queued }) {
			t = s.nextRound
		}
	}
	return t
}

// preempt stops a running job at once: its iteration in progress is lost,
// its GPUs are freed, its agent leaves its group.
func (s *sim) preempt(j *jobRun) {
	s.stop(j)
	j.preemptions++
}

// stop takes a running job off its GPUs (preempt, without counting it).
func (s *sim) stop(j *jobRun) {
	if j.st == communicating {
		s.sync(j)
		for i := range j.flows {
			if f := &j.flows[i]; !f.done {
				s.sentBits = addShares(s.sentBits, f.sent, f.n)
				s.retire(f)
			}
		}
		s.leave(j)
	}
	s.near = s.near[:0] // updateRates lists them again
	s.dirty = true
	s.cl.release(j.place)
	j.leave()
	j.released = false
	j.st, j.pending, j.begun, j.commTime = queued, 0, false, 0
	s.touchTimer(j)
	s.running = slices.DeleteFunc(s.running, func(r *jobRun) bool { return r == j })
	s.moved = true
}

// iterEstimate is j's measured mean iteration time, or its nominal one
// before it has completed an iteration.
func (j *jobRun) iterEstimate() time.Duration {
	if len(j.iterMs) == 0 {
		return j.nominal
	}
	return time.Duration(math.Round(j.iterSum / float64(len(j.iterMs)) * 1e6))
}
