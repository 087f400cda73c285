package ns3

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/netsim"
)

// ErrInvalid reports a scenario the packet-level program cannot run, or
// output it did not write.
var ErrInvalid = errors.New("ns3: invalid")

// CC is a congestion control; every one runs with ECN.
type CC string

// The congestion controls of the cross-check.
const (
	DCTCP   CC = "dctcp"   // DCTCP (RFC 8257): cuts in proportion to the fraction of marked bytes
	Cubic   CC = "cubic"   // Cubic with classic ECN (RFC 3168): a mark is a loss
	NewReno CC = "newreno" // NewReno with classic ECN
	// DCQCN is the CASSINI testbed's RoCE congestion control: a rate-based
	// sender over UDP with DCQCN's reaction point, CNPs from the receiver,
	// RED marking between Kmin and Kmax (Net.DCQCN).
	DCQCN CC = "dcqcn"
	// MLTCPDCQCN is MLTCP's DCQCN: the rate increase steps scaled by
	// F(bytes ratio) (Net.MLTCP).
	MLTCPDCQCN CC = "mltcp-dcqcn"
	// MLTCPReno is MLTCP's Reno: NewReno with classic ECN whose
	// congestion-avoidance increase is scaled by F(bytes ratio).
	MLTCPReno CC = "mltcp-reno"
)

// CCs lists the TCP congestion controls the cross-check runs by default,
// in report order; AllCCs every one.
var (
	CCs    = []CC{DCTCP, Cubic, NewReno}
	AllCCs = []CC{DCTCP, Cubic, NewReno, DCQCN, MLTCPDCQCN, MLTCPReno}
)

// ParseCC parses a congestion control's name.
func ParseCC(s string) (CC, error) {
	for _, c := range AllCCs {
		if strings.EqualFold(s, string(c)) {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: congestion control %q (want dctcp, cubic, newreno, dcqcn, mltcp-dcqcn or mltcp-reno)", ErrInvalid, s)
}

// RateBased reports whether cc is DCQCN or its MLTCP variant (UDP senders,
// not TCP).
func (cc CC) RateBased() bool { return cc == DCQCN || cc == MLTCPDCQCN }

// Transport is the fluid model's counterpart of cc: DCQCN's own law for
// DCQCN, its MLTCP variant for MLTCP's DCQCN, max-min sharing for the TCPs
// (MLTCP's Reno has none: its window rule is not modelled in the fluid
// model).
func (cc CC) Transport() netsim.Transport {
	switch cc {
	case DCQCN:
		return netsim.DCQCN
	case MLTCPDCQCN:
		return netsim.MLTCP
	}
	return netsim.MaxMin
}

// Net is the network-wide configuration of a scenario. The zero value of a
// field means its default (Default* below), so Net{} is the cross-check's
// configuration with DCTCP.
type Net struct {
	CC CC // "" means DCTCP
	// MarkBytes is the RED step-marking threshold K at every switch port:
	// an ECN-capable packet arriving to a longer queue is marked (the
	// others are dropped). 0 means DefaultMarkBytes.
	MarkBytes int
	// BufferBytes is a switch port's buffer; 0 means DefaultBufferBytes.
	BufferBytes int
	MSS         int           // TCP segment size; 0 means DefaultMSS
	MinRTO      time.Duration // 0 means DefaultMinRTO
	// DelAck is the segments per delayed ACK and DelAckTimeout its timer;
	// 0 means DefaultDelAck and DefaultDelAckTimeout. The timer must stay
	// below MinRTO, or every transfer's last segment waits for a spurious
	// timeout.
	DelAck        int
	DelAckTimeout time.Duration
	// SACK and Timestamps turn the TCP options on (ns-3's defaults; off
	// here, as they cost 15-25% of the CPU and change nothing without
	// losses).
	SACK, Timestamps bool
	// CatchUp lets a connection that fell behind its release schedule
	// send its backlog as fast as TCP can, past its peak (as a ring
	// all-reduce whose buckets queued up behind a slow network does). By
	// default the schedule waits instead, and a connection sends at most at
	// its peak, beyond a send buffer's burst: the fluid model's flows.
	CatchUp bool
	SndBuf  int           // TCP send buffer, bytes; 0 means DefaultSndBuf
	Chunk   int           // bytes a sender releases per pacing tick; 0 means the MSS
	Stop    time.Duration // stop at this simulated time; 0 runs until every job is done
	Seed    uint32        // ns-3's random seed; 0 means 1
	// DCQCN is DCQCN's law at the fluid model's rates (the zero value:
	// fluid.DefaultDCQCN), written scaled by the scenario's Scale: rates
	// and byte counts times Scale, times kept, and Pmax over Scale (at
	// most 1) so that a CNP interval's expected marks stay what they are
	// at full rate with the same packet size. MLTCP is MLTCP's
	// aggressiveness function (the zero value: netsim.DefaultMLTCP).
	DCQCN fluid.DCQCNParams
	MLTCP netsim.MLTCPParams
}

// Defaults of the zero Net: DCTCP's settings for 1 Gbps (K = 20 packets of
// 1500 bytes), a 4 MB buffer per port (no drops), a 5 ms minimum RTO and an
// ACK every second segment with a 1 ms timer.
const (
	DefaultMarkBytes     = 30000
	DefaultBufferBytes   = 4000000
	DefaultMSS           = 1448
	DefaultMinRTO        = 5 * time.Millisecond
	DefaultDelAck        = 2
	DefaultDelAckTimeout = time.Millisecond
	DefaultSndBuf        = 131072 // ns-3's default
)

func (n Net) normalize() Net {
	if n.CC == "" {
		n.CC = DCTCP
	}
	if n.MarkBytes == 0 {
		n.MarkBytes = DefaultMarkBytes
	}
	if n.BufferBytes == 0 {
		n.BufferBytes = DefaultBufferBytes
	}
	if n.MSS == 0 {
		n.MSS = DefaultMSS
	}
	if n.MinRTO == 0 {
		n.MinRTO = DefaultMinRTO
	}
	if n.DelAck == 0 {
		n.DelAck = DefaultDelAck
	}
	if n.DelAckTimeout == 0 {
		n.DelAckTimeout = DefaultDelAckTimeout
	}
	if n.Chunk == 0 {
		n.Chunk = n.MSS
	}
	if n.SndBuf == 0 {
		n.SndBuf = DefaultSndBuf
	}
	if n.Seed == 0 {
		n.Seed = 1
	}
	return n
}

// dcqcn returns n's DCQCN and MLTCP parameters, the zero values meaning
// the defaults.
func (n Net) dcqcn() (fluid.DCQCNParams, netsim.MLTCPParams) {
	d, m := n.DCQCN, n.MLTCP
	if d == (fluid.DCQCNParams{}) {
		d = fluid.DefaultDCQCN()
	}
	if m == (netsim.MLTCPParams{}) {
		m = netsim.DefaultMLTCP
	}
	return d, m
}

// Link is a full-duplex point-to-point link between nodes A and B.
type Link struct {
	A, B  int
	Bps   int64
	Delay time.Duration // propagation delay
}

// Conn is a persistent TCP connection of a job: Path (nodes, from Src to
// Dst) carries its data, Back its ACKs.
type Conn struct {
	Src, Dst   int
	Path, Back []int
}

// Flow is a connection's share of a communication step: Bytes released at
// PeakBps. A flow with Prev >= 0 is a ring hop gated by the hop before it
// (job connection Prev, into this hop's sender): it never sends more than
// the bytes Prev has received in the step plus Slack.
type Flow struct {
	Conn    int
	Bytes   int64
	PeakBps float64
	Prev    int
	Slack   int64
}

// Step is a compute step (Flows nil) of Compute, or a communication step
// that ends when every flow has arrived.
type Step struct {
	Compute time.Duration
	Flows   []Flow
}

// Job is a training job: Iterations cycles of Steps, the first starting at
// Start. A job with a Plan has an agent (package agent) deciding when each
// iteration after the first starts; the others start the next iteration at
// once. Jobs with the same Group (from 1; 0 is none) have Elastic agents
// sharing a group clock (agent.Group), made afresh for every run: the
// plans themselves carry no Group, since a group clock has state. Noise multiplies compute steps, iteration by iteration (missing
// entries are 1).
type Job struct {
	ID         int
	Model      string // for reports
	Servers    []int
	Start      time.Duration
	Iterations int
	Plan       *agent.Plan
	Group      int
	Conns      []Conn
	Steps      []Step
	Noise      []float64
}

// Scenario is what the packet-level program simulates. Nodes [0, Servers)
// are servers, each with one link; the others switches, whose ports mark.
type Scenario struct {
	Net     Net
	Nodes   int
	Servers int
	Links   []Link
	Jobs    []Job
	// Scale is the factor rates and bytes were scaled by from the fluid
	// simulation (for reports; the program ignores it).
	Scale float64
}

// MaxNodes bounds a scenario's nodes.
const MaxNodes = 1 << 20

// Validate checks s: links join existing nodes, each pair at most once and
// each server exactly once; paths follow links and join their
// connection's servers; flows name connections of their job.
func (s Scenario) Validate() error {
	if s.Nodes < 2 || s.Servers < 1 || s.Servers > s.Nodes || s.Nodes > MaxNodes {
		return fmt.Errorf("%w: %d nodes, %d servers", ErrInvalid, s.Nodes, s.Servers)
	}
	if len(s.Jobs) == 0 {
		return fmt.Errorf("%w: no jobs", ErrInvalid)
	}
	type pair struct{ a, b int }
	linked := map[pair]bool{}
	degree := make([]int, s.Nodes)
	for i, l := range s.Links {
		switch {
		case l.A < 0 || l.B < 0 || l.A >= s.Nodes || l.B >= s.Nodes || l.A == l.B:
			return fmt.Errorf("%w: links[%d]: nodes %d-%d", ErrInvalid, i, l.A, l.B)
		case l.Bps <= 0 || l.Delay < 0:
			return fmt.Errorf("%w: links[%d]: %d bps, delay %v", ErrInvalid, i, l.Bps, l.Delay)
		case linked[pair{l.A, l.B}]:
			return fmt.Errorf("%w: links[%d]: nodes %d-%d linked twice", ErrInvalid, i, l.A, l.B)
		}
		linked[pair{l.A, l.B}], linked[pair{l.B, l.A}] = true, true
		degree[l.A]++
		degree[l.B]++
	}
	for v := range s.Servers {
		if degree[v] != 1 {
			return fmt.Errorf("%w: server %d has %d links, want 1", ErrInvalid, v, degree[v])
		}
	}
	path := func(p []int, from, to int) error {
		if len(p) < 2 || len(p) > 64 || p[0] != from || p[len(p)-1] != to {
			return fmt.Errorf("path %v does not join %d to %d", p, from, to)
		}
		for k := 0; k+1 < len(p); k++ {
			if !linked[pair{p[k], p[k+1]}] {
				return fmt.Errorf("path %v: no link %d-%d", p, p[k], p[k+1])
			}
		}
		return nil
	}
	ids := map[int]bool{}
	for i, j := range s.Jobs {
		if ids[j.ID] {
			return fmt.Errorf("%w: jobs[%d]: ID %d repeats", ErrInvalid, i, j.ID)
		}
		ids[j.ID] = true
		if j.Iterations < 1 || j.Start < 0 || len(j.Steps) == 0 {
			return fmt.Errorf("%w: jobs[%d]: %d iterations from %v, %d steps", ErrInvalid, i, j.Iterations, j.Start, len(j.Steps))
		}
		for k, c := range j.Conns {
			if c.Src < 0 || c.Dst < 0 || c.Src >= s.Servers || c.Dst >= s.Servers || c.Src == c.Dst {
				return fmt.Errorf("%w: jobs[%d].conns[%d]: servers %d -> %d", ErrInvalid, i, k, c.Src, c.Dst)
			}
			if err := path(c.Path, c.Src, c.Dst); err != nil {
				return fmt.Errorf("%w: jobs[%d].conns[%d]: %w", ErrInvalid, i, k, err)
			}
			if err := path(c.Back, c.Dst, c.Src); err != nil {
				return fmt.Errorf("%w: jobs[%d].conns[%d]: back: %w", ErrInvalid, i, k, err)
			}
		}
		takes := false
		for k, st := range j.Steps {
			if err := st.validate(len(j.Conns)); err != nil {
				return fmt.Errorf("%w: jobs[%d].steps[%d]: %w", ErrInvalid, i, k, err)
			}
			takes = takes || st.Flows != nil || st.Compute > 0
		}
		if !takes {
			return fmt.Errorf("%w: jobs[%d]: an iteration that takes no time", ErrInvalid, i)
		}
		for k, x := range j.Noise {
			if !(x > 0) || math.IsInf(x, 0) {
				return fmt.Errorf("%w: jobs[%d].noise[%d] = %v", ErrInvalid, i, k, x)
			}
		}
	}
	n := s.Net.normalize()
	if n.DelAckTimeout >= n.MinRTO {
		return fmt.Errorf("%w: delayed-ACK timer %v is not below the minimum RTO %v", ErrInvalid, n.DelAckTimeout, n.MinRTO)
	}
	if _, err := ParseCC(string(n.CC)); err != nil {
		return err
	}
	d, m := n.dcqcn()
	if err := d.Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if !(m.Slope >= 0) || !(m.Intercept > 0) || math.IsInf(m.Slope+m.Intercept, 0) {
		return fmt.Errorf("%w: MLTCP slope %v, intercept %v", ErrInvalid, m.Slope, m.Intercept)
	}
	if s.Scale < 0 || s.Scale > 1e6 || math.IsNaN(s.Scale) {
		return fmt.Errorf("%w: scale %v", ErrInvalid, s.Scale)
	}
	return nil
}

func (st Step) validate(conns int) error {
	if st.Flows == nil {
		if st.Compute < 0 {
			return fmt.Errorf("compute %v", st.Compute)
		}
		return nil
	}
	if len(st.Flows) == 0 {
		return errors.New("a communication step without flows")
	}
	in := map[int]bool{}
	for _, f := range st.Flows {
		if f.Conn < 0 || f.Conn >= conns || in[f.Conn] || f.Bytes <= 0 || f.Slack < 0 || !(f.PeakBps > 0) || math.IsInf(f.PeakBps, 0) {
			return fmt.Errorf("flow %+v (of %d connections, each once per step)", f, conns)
		}
		in[f.Conn] = true
	}
	for _, f := range st.Flows {
		if f.Prev != -1 && !in[f.Prev] {
			return fmt.Errorf("flow %+v is gated by a connection outside its step", f)
		}
	}
	return nil
}

// Format is the first line of a scenario file.
const Format = "orrery-ns3 1"

// WriteTo writes s in the program's input format (see the package doc).
func (s Scenario) WriteTo(w io.Writer) (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	n := s.Net.normalize()
	b := bufio.NewWriter(w)
	cw := &countWriter{w: b}
	p := func(format string, args ...any) { fmt.Fprintf(cw, format, args...) }
	bit := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	p("%s\n", Format)
	p("cc %s\nred_k_bytes %d\nqueue_bytes %d\nmss %d\nmin_rto_ns %d\n", n.CC, n.MarkBytes, n.BufferBytes, n.MSS, n.MinRTO.Nanoseconds())
	p("del_ack %d\ndel_ack_timeout_ns %d\nsack %d\ntimestamps %d\ncatch_up %d\nsnd_buf %d\nchunk %d\nstop_ns %d\nseed %d\n",
		n.DelAck, n.DelAckTimeout.Nanoseconds(), bit(n.SACK), bit(n.Timestamps), bit(n.CatchUp), n.SndBuf, n.Chunk, n.Stop.Nanoseconds(), n.Seed)
	if n.CC.RateBased() || n.CC == MLTCPReno {
		d, m := n.dcqcn()
		k := s.Scale
		if k == 0 {
			k = 1
		}
		g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		p("dcqcn %s %s %s %s %d %s %d %d %s %d %s %s %s %s\n", g(d.Kmin*k), g(d.Kmax*k), g(min(d.Pmax/k, 1)), g(d.MTU),
			d.CNPInterval.Nanoseconds(), g(d.G), d.AlphaTimer.Nanoseconds(), d.RateTimer.Nanoseconds(), g(d.ByteCounter*k), d.F,
			g(d.RAI*k), g(d.RHAI*k), g(d.MinRate*k), g(d.InitialAlpha))
		p("mltcp %s %s\n", g(m.Slope), g(m.Intercept))
	}
	p("nodes %d %d\n", s.Nodes, s.Servers)
	for _, l := range s.Links {
		p("link %d %d %d %d\n", l.A, l.B, l.Bps, l.Delay.Nanoseconds())
	}
	nodes := func(v []int) string {
		var sb strings.Builder
		sb.WriteString(strconv.Itoa(len(v)))
		for _, x := range v {
			sb.WriteByte(' ')
			sb.WriteString(strconv.Itoa(x))
		}
		return sb.String()
	}
	for _, j := range s.Jobs {
		p("job %d %d %d %d\n", j.ID, j.Start.Nanoseconds(), j.Iterations, bit(j.Plan != nil))
		for _, c := range j.Conns {
			p("conn %d %d %s %s\n", c.Src, c.Dst, nodes(c.Path), nodes(c.Back))
		}
		for _, st := range j.Steps {
			if st.Flows == nil {
				p("compute %d\n", st.Compute.Nanoseconds())
				continue
			}
			p("comm\n")
			for _, f := range st.Flows {
				p("flow %d %d %s %d %d\n", f.Conn, f.Bytes, strconv.FormatFloat(f.PeakBps, 'g', -1, 64), f.Prev, f.Slack)
			}
		}
		if len(j.Noise) > 0 {
			p("noise")
			for _, x := range j.Noise {
				p(" %s", strconv.FormatFloat(x, 'g', -1, 64))
			}
			p("\n")
		}
	}
	p("end\n")
	if cw.err != nil {
		return cw.n, cw.err
	}
	return cw.n, b.Flush()
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	k, err := c.w.Write(p)
	c.n += int64(k)
	c.err = err
	return k, err
}
