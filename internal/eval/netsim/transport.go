package netsim

import (
	"fmt"
	"math"
	"strings"

	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/workload"
)

// Transport is the congestion control the fluid network runs.
type Transport int

const (
	// MaxMin (the zero value): every link shares its capacity max-min
	// fairly among the flows crossing it, recomputed at every event: a
	// congestion control that converges at once to fair shares.
	MaxMin Transport = iota
	// DCQCN: DCQCN's rate control (the CASSINI testbed's RoCE transport)
	// over fluid switch queues with ECN marking, stepped every
	// Config.DCQCN.Step while any flow is not at its line rate or any
	// queue is not empty (package fluid, DCQCN).
	DCQCN
	// MLTCP: MLTCP's DCQCN variant (Rajasekaran et al., "MLTCP:
	// Congestion Control for DNN Training"): DCQCN whose rate increase
	// steps (RAI, RHAI) a training flow scales by F(bytes ratio), the
	// bytes it has sent in the current iteration over the bytes of an
	// iteration (Config.MLTCP).
	MLTCP
)

// Transports lists the transports.
var Transports = []Transport{MaxMin, DCQCN, MLTCP}

func (t Transport) String() string {
	switch t {
	case MaxMin:
		return "maxmin"
	case DCQCN:
		return "dcqcn"
	case MLTCP:
		return "mltcp"
	}
	return fmt.Sprintf("Transport(%d)", int(t))
}

// ParseTransport parses "maxmin", "dcqcn" or "mltcp"; "" is MaxMin.
func ParseTransport(s string) (Transport, error) {
	if s == "" {
		return MaxMin, nil
	}
	for _, t := range Transports {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: transport %q (want maxmin, dcqcn or mltcp)", ErrInvalid, s)
}

// MLTCPParams is MLTCP's aggressiveness function F(r) = Slope*r +
// Intercept of a flow's bytes ratio r (bytes sent in the current
// iteration over the bytes of an iteration, in [0, 1]): the factor of its
// rate increase. The zero value means DefaultMLTCP.
type MLTCPParams struct {
	Slope, Intercept float64
}

// DefaultMLTCP is F(r) = r + 1: a flow starting its iteration increases
// its rate as plain DCQCN does, one finishing it twice as fast. The paper
// gives F's linear form; these two numbers are this model's choice
// (docs/transports.md).
var DefaultMLTCP = MLTCPParams{Slope: 1, Intercept: 1}

func (m MLTCPParams) orDefault() MLTCPParams {
	if m == (MLTCPParams{}) {
		return DefaultMLTCP
	}
	return m
}

// Factor returns F(r), r clamped to [0, 1].
func (m MLTCPParams) Factor(r float64) float64 {
	return float64(m.Slope*min(max(r, 0), 1)) + m.Intercept
}

func (m MLTCPParams) check() error {
	m = m.orDefault()
	if !(m.Slope >= 0) || !(m.Intercept > 0) || math.IsInf(m.Slope+m.Intercept, 0) || m.Slope+m.Intercept > 1e6 {
		return fmt.Errorf("%w: MLTCP slope %v, intercept %v (want slope >= 0, intercept > 0)", ErrInvalid, m.Slope, m.Intercept)
	}
	return nil
}

// dcqcnParams are cfg's DCQCN parameters, the zero value meaning the
// defaults.
func (c Config) dcqcnParams() fluid.DCQCNParams {
	if c.DCQCN == (fluid.DCQCNParams{}) {
		return fluid.DefaultDCQCN()
	}
	return c.DCQCN
}

// newTransport sets up the DCQCN (or MLTCP) network of s.
func (s *sim) newTransport() error {
	if s.cfg.Transport == MaxMin {
		return nil
	}
	nic := make([]bool, len(s.topo.Links))
	for i, l := range s.topo.Links {
		nic[i] = l.From < s.topo.Servers
	}
	s.tr = &fluid.DCQCN{}
	if err := s.tr.Reset(s.capacity, nic, s.cfg.dcqcnParams(), s.cfg.Seed); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.ctlStep = int64(s.tr.Params().Step)
	s.ctlAt = never
	s.mltcp = s.cfg.MLTCP.orDefault()
	return nil
}

// addTransport puts f, a flow of j's current step, into the DCQCN
// network: under Ideal each job has its own plane of queues.
func (s *sim) addTransport(j *jobRun, f *flowRun, line float64) error {
	plane := 0
	if s.cfg.Policy == Ideal {
		plane = j.idx + 1
	}
	id, err := s.tr.Add(f.links, f.peak, line, plane, s.now)
	if err != nil {
		return err
	}
	f.id = id
	for int(id) >= len(s.byID) {
		s.byID = append(s.byID, nil)
	}
	s.byID[id] = f
	return nil
}

// control is one control step of the DCQCN network: the traffic so far is
// delivered at the old rates, MLTCP's flows get their factors, and the
// law runs; updateRates then reads the new rates.
func (s *sim) control() {
	s.syncAll()
	if s.cfg.Transport == MLTCP {
		for _, j := range s.comm {
			if j == nil {
				continue
			}
			for i := range j.flows {
				f := &j.flows[i]
				if f.done || f.id < 0 {
					continue
				}
				r := 0.0
				if j.iterBits > 0 {
					r = (j.commBefore[j.step] + f.sent) / j.iterBits
				}
				s.tr.SetWeight(f.id, s.mltcp.Factor(r))
			}
		}
	}
	s.tr.Control(s.now)
	s.ctlAt = never
	s.dirty = true
}

// updateTransport brings every flow's rate and mark up to date from the
// DCQCN network, computes every finish, and schedules the next control
// step unless the network is quiet.
func (s *sim) updateTransport() {
	s.syncAll()
	s.excessRate = s.tr.Excess()
	flows := s.near[:0]
	s.minFinish = never
	for _, j := range s.comm {
		if j == nil {
			continue
		}
		for i := range j.flows {
			f := &j.flows[i]
			if f.done {
				continue
			}
			if f.id >= 0 {
				f.rate, f.marked = s.tr.Rate(f.id), s.tr.Marked(f.id)
			}
			f.finish = s.finishOf(f)
			s.minFinish = min(s.minFinish, f.finish)
			flows = append(flows, f)
		}
	}
	s.near = flows
	switch {
	case s.tr.Quiet():
		s.ctlAt = never
	case s.ctlAt == never:
		s.ctlAt = s.later(float64(s.ctlStep))
	}
}

// iterationBits sets j's bits per connection per iteration and, per step,
// the bits its earlier communication steps carry (MLTCP's bytes ratio).
func (j *jobRun) iterationBits() {
	j.commBefore = make([]float64, len(j.steps)+1)
	sum := 0.0
	for i, st := range j.steps {
		j.commBefore[i] = sum
		if st.Pattern != workload.Compute {
			sum += st.Bits
		}
	}
	j.commBefore[len(j.steps)] = sum
	j.iterBits = sum
}

// lineOf is the line rate of a flow on route r: its first link's capacity,
// its sender's NIC (0 for no route).
func (s *sim) lineOf(r []int) float64 {
	if len(r) == 0 {
		return 0
	}
	return s.capacity[r[0]]
}
