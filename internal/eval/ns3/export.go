package ns3

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// Defaults of the zero ExportOptions.
const (
	DefaultGbps      = 1.0
	DefaultLinkDelay = 2 * time.Microsecond
)

// ExportOptions configure [Export]. The zero value scales the fabric so
// its fastest link runs at DefaultGbps, gives every link DefaultLinkDelay,
// couples ring hops, exports the agents and runs the zero Net (DCTCP).
type ExportOptions struct {
	// Gbps is the fastest link's rate in the exported scenario; every rate
	// and every byte count is scaled by the same factor, durations are
	// kept, so the fluid model's iteration times do not change. 0 means
	// DefaultGbps.
	Gbps      float64
	LinkDelay time.Duration // propagation delay per link; 0 means DefaultLinkDelay
	// Uncoupled makes a ring's hops independent connections; by default a
	// hop sends at most one ring chunk more than it has received, as a
	// ring all-reduce forwards what it receives (the fluid model moves the
	// hops in lock step).
	Uncoupled bool
	// NoAgents starts every job's iterations back to back from its first
	// start (the fluid run's, shift included): the shifts' effect without
	// an agent holding them.
	NoAgents bool
	Net      Net
}

// Export returns the packet-level scenario of a fluid simulation: cfg's
// fabric and jobs, placed where res ran them, each starting its first
// iteration when it did in res and running as many iterations as it
// completed there. A job that a CASSINI agent held on its slots in res (see
// held) gets one with the plan res's iterations followed: the period the
// agent padded to, the slot grid its second iteration started on. Jobs that
// never started are left out. res must come from netsim.Run(cfg); cfg's
// noise is exported too, as compute multipliers per iteration.
//
// An Elastic agent (with a group) is exported with its plan as the run
// installed it, slack, free communication time and group included, when
// that one plan decided every iteration of the job (a job that ran free
// first, was re-planned or gave its shift up is exported without one): its
// slots follow the group's pace, which the replay's group clock learns
// again.
func Export(cfg netsim.Config, res netsim.Result, opt ExportOptions) (Scenario, error) {
	t := cfg.Topology
	if t == nil {
		return Scenario{}, fmt.Errorf("%w: no topology", ErrInvalid)
	}
	if opt.Gbps == 0 {
		opt.Gbps = DefaultGbps
	}
	if opt.LinkDelay == 0 {
		opt.LinkDelay = DefaultLinkDelay
	}
	if !(opt.Gbps > 0) || math.IsInf(opt.Gbps, 0) || opt.LinkDelay < 0 {
		return Scenario{}, fmt.Errorf("%w: export at %v Gbps, delay %v", ErrInvalid, opt.Gbps, opt.LinkDelay)
	}
	links, scale, err := exportLinks(t, opt)
	if err != nil {
		return Scenario{}, err
	}
	s := Scenario{Net: opt.Net, Nodes: len(t.Nodes), Servers: t.Servers, Links: links, Scale: scale}
	byID := map[int]workload.Job{}
	for _, j := range cfg.Jobs {
		byID[j.ID] = j
	}
	perServer := max(cfg.GPUsPerServer, 1)
	for _, jr := range res.Jobs {
		if len(jr.Servers) == 0 || jr.Iterations == 0 {
			continue
		}
		job, ok := byID[jr.ID]
		if !ok {
			return Scenario{}, fmt.Errorf("%w: result job %d is not in the configuration", ErrInvalid, jr.ID)
		}
		ej, err := exportJob(t, cfg, res, jr, job, scale, perServer, opt)
		if err != nil {
			return Scenario{}, fmt.Errorf("job %d: %w", jr.ID, err)
		}
		s.Jobs = append(s.Jobs, ej)
	}
	if len(s.Jobs) == 0 {
		return Scenario{}, fmt.Errorf("%w: no job ran", ErrInvalid)
	}
	return s, s.Validate()
}

// exportLinks turns the directed links into full-duplex ones (each pair of
// directions must have one rate) and returns the scale.
func exportLinks(t *topology.Topology, opt ExportOptions) ([]Link, float64, error) {
	fastest := 0.0
	for _, l := range t.Links {
		fastest = max(fastest, l.Gbps)
	}
	if !(fastest > 0) {
		return nil, 0, fmt.Errorf("%w: topology has no links", ErrInvalid)
	}
	scale := opt.Gbps / fastest
	type pair struct{ a, b int }
	seen := map[pair]float64{}
	var out []Link
	for _, l := range t.Links {
		if g, ok := seen[pair{l.To, l.From}]; ok {
			if g != l.Gbps {
				return nil, 0, fmt.Errorf("%w: link %s has %v Gbps, its reverse %v", ErrInvalid, l.ID, l.Gbps, g)
			}
			continue
		}
		if _, ok := seen[pair{l.From, l.To}]; ok {
			return nil, 0, fmt.Errorf("%w: link %s twice", ErrInvalid, l.ID)
		}
		seen[pair{l.From, l.To}] = l.Gbps
		out = append(out, Link{A: l.From, B: l.To, Bps: int64(math.Round(l.Gbps * 1e9 * scale)), Delay: opt.LinkDelay})
	}
	return out, scale, nil
}

func exportJob(t *topology.Topology, cfg netsim.Config, res netsim.Result, jr netsim.JobResult, job workload.Job,
	scale float64, perServer int, opt ExportOptions) (Job, error) {
	lay, err := netsim.JobLayout(t, job, jr.Servers)
	if err != nil {
		return Job{}, err
	}
	starts, err := iterationStarts(res, jr)
	if err != nil {
		return Job{}, err
	}
	ej := Job{ID: jr.ID, Model: jr.Model, Servers: slices.Clone(jr.Servers), Start: starts[0], Iterations: jr.Iterations}
	conns := map[[2]int]int{}
	nodes := func(links []int) []int {
		p := []int{t.Links[links[0]].From}
		for _, l := range links {
			p = append(p, t.Links[l].To)
		}
		return p
	}
	connOf := func(c netsim.Connection) (int, error) {
		if k, ok := conns[[2]int{c.Src, c.Dst}]; ok {
			return k, nil
		}
		back, err := t.Route(c.Dst, c.Src)
		if err != nil {
			return 0, err
		}
		conns[[2]int{c.Src, c.Dst}] = len(ej.Conns)
		ej.Conns = append(ej.Conns, Conn{Src: c.Src, Dst: c.Dst, Path: nodes(c.Links), Back: nodes(back)})
		return len(ej.Conns) - 1, nil
	}
	var commOffset time.Duration = -1
	var offset time.Duration
	for i, st := range lay.Steps {
		cs := lay.Conns[i]
		if len(cs) == 0 {
			if st.Pattern == workload.Compute {
				ej.Steps = append(ej.Steps, Step{Compute: st.Compute})
				offset += st.Compute
			}
			continue
		}
		if commOffset < 0 {
			commOffset = offset
		}
		offset += st.Alone()
		bytes := int64(math.Round(st.Bits * scale / 8))
		if bytes < 1 {
			return Job{}, fmt.Errorf("%w: step %d carries %v bits, under a byte scaled by %v", ErrInvalid, i, st.Bits, scale)
		}
		step := Step{Flows: make([]Flow, len(cs))}
		ids := make([]int, len(cs))
		for k, c := range cs {
			if ids[k], err = connOf(c); err != nil {
				return Job{}, err
			}
		}
		ring := st.Pattern == workload.Ring && len(cs) > 1 && !opt.Uncoupled
		for k := range cs {
			f := Flow{Conn: ids[k], Bytes: bytes, PeakBps: st.Peak * scale, Prev: -1}
			if ring {
				// Hop k sends what hop k-1 delivered to its server; one
				// chunk of the ring, 1/(2(n-1)) of the hop's bytes, is its own.
				f.Prev = ids[(k+len(cs)-1)%len(cs)]
				f.Slack = (bytes + int64(2*(len(cs)-1)) - 1) / int64(2*(len(cs)-1))
			}
			step.Flows[k] = f
		}
		ej.Steps = append(ej.Steps, step)
	}
	noise, err := cfg.Noise.For(job.ID, workload.Servers(job.GPUs, perServer))
	if err != nil {
		return Job{}, err
	}
	ej.Noise = noiseFactors(noise, jr.Iterations)
	switch {
	case opt.NoAgents || jr.Released:
	case cfg.Agent.Mode == agent.Elastic && jr.Group > 0:
		// An Elastic agent's slots follow its group's pace, not its period:
		// the plan is exported as the run installed it, when that one plan
		// decided every iteration of the job.
		if jr.Plans == 1 && jr.Decisions == int64(jr.Iterations) {
			ej.Plan = &agent.Plan{Reference: time.Unix(0, int64(jr.Reference)), Shift: jr.Shift, Period: jr.Period, CommOffset: commOffset,
				Slack: jr.Slack, FreeComm: jr.FreeComm}
			ej.Group = jr.Group
		}
	case held(res, jr, starts):
		ej.Plan = &agent.Plan{Reference: time.Unix(0, 0), Shift: starts[1] % jr.Period, Period: jr.Period, CommOffset: commOffset}
	}
	if ej.Plan != nil && (commOffset < 0 || commOffset >= jr.Period) {
		return Job{}, fmt.Errorf("%w: communication offset %v outside its period %v", ErrInvalid, commOffset, jr.Period)
	}
	return ej, nil
}

// held reports whether jr's agent held it on its slots to the end of res:
// netsim.Result keeps the last period a job's agent had, not whether a
// later plan let the job run free, so it is read off the iterations, which
// a pad-mode agent without noise makes exactly one period long (all but the
// last). A run with noise or free-mode agents is therefore exported without
// agents, from the same first starts.
func held(res netsim.Result, jr netsim.JobResult, starts []time.Duration) bool {
	if jr.Period <= 0 || len(starts) < 2 {
		return false
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i] - starts[i-1] - jr.Period; d > time.Microsecond || d < -time.Microsecond {
			return false
		}
	}
	return true
}

// noiseFactors returns the first n compute multipliers of noise, or nil if
// they are all 1.
func noiseFactors(noise workload.Noise, n int) []float64 {
	out := make([]float64, n)
	some := false
	for i := range out {
		out[i] = noise.Factor(i)
		some = some || out[i] != 1
	}
	if !some {
		return nil
	}
	return out
}

// iterationStarts returns when each of jr's iterations started in res: its
// iterations run start to start and the last ends at jr.End, so they are
// recovered backwards from the end (a job that did not finish, from its
// placement, which holds only without an agent delaying its first start).
func iterationStarts(res netsim.Result, jr netsim.JobResult) ([]time.Duration, error) {
	first := 0
	for _, j := range res.Jobs {
		if j.ID == jr.ID {
			break
		}
		first += j.Iterations
	}
	if first+jr.Iterations > len(res.IterMs) {
		return nil, fmt.Errorf("%w: result has %d iteration times, job needs %d from %d", ErrInvalid, len(res.IterMs), jr.Iterations, first)
	}
	ms := res.IterMs[first : first+jr.Iterations]
	starts := make([]time.Duration, len(ms))
	ns := func(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }
	if jr.End > 0 {
		at := jr.End
		for i := len(ms) - 1; i >= 0; i-- {
			at -= ns(ms[i])
			starts[i] = at
		}
	} else {
		if jr.Period > 0 {
			return nil, fmt.Errorf("%w: an unfinished job with an agent: its first start is unknown", ErrInvalid)
		}
		at := jr.Start
		for i := range ms {
			starts[i] = at
			at += ns(ms[i])
		}
	}
	if starts[0] < jr.Start {
		return nil, fmt.Errorf("%w: iterations start at %v, before the job was placed at %v", ErrInvalid, starts[0], jr.Start)
	}
	return starts, nil
}
