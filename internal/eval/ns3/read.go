package ns3

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/netsim"
)

// ReadScenario reads a scenario in the program's input format, as
// [Scenario.WriteTo] writes it (a kept run's scenario.txt, say). Agent plans
// and Scale are not part of the format: a job with an agent comes back with
// a zero Plan, which [Program.Run] rejects until the plan is set again, and
// Scale reads as 0.
func ReadScenario(r io.Reader) (Scenario, error) {
	var s Scenario
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	if !sc.Scan() || sc.Text() != Format {
		return s, fmt.Errorf("%w: scenario does not start with %q", ErrInvalid, Format)
	}
	line := 1
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if f[0] == "end" {
			return s, s.Validate()
		}
		p := &fields{f: f[1:]}
		readRecord(&s, f[0], p)
		if err := p.done(); err != nil {
			return s, fmt.Errorf("%w: scenario line %d: %q: %w", ErrInvalid, line, sc.Text(), err)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	return s, fmt.Errorf("%w: scenario has no end line", ErrInvalid)
}

// fields hands out a record's values; the first error sticks.
type fields struct {
	f   []string
	err error
}

func (p *fields) next() string {
	if p.err != nil {
		return ""
	}
	if len(p.f) == 0 {
		p.err = errors.New("too few values")
		return ""
	}
	s := p.f[0]
	p.f = p.f[1:]
	return s
}

func (p *fields) int() int64 {
	s := p.next()
	if p.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		p.err = err
	}
	return v
}

func (p *fields) float() float64 {
	s := p.next()
	if p.err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		p.err = err
	}
	return v
}

func (p *fields) ns() time.Duration { return time.Duration(p.int()) }

func (p *fields) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

func (p *fields) done() error {
	if p.err == nil && len(p.f) > 0 {
		return errors.New("extra values")
	}
	return p.err
}

func readRecord(s *Scenario, key string, p *fields) {
	n := &s.Net
	var job *Job
	if len(s.Jobs) > 0 {
		job = &s.Jobs[len(s.Jobs)-1]
	}
	switch key {
	case "cc":
		cc, err := ParseCC(p.next())
		if p.err == nil {
			n.CC, p.err = cc, err
		}
	case "red_k_bytes":
		n.MarkBytes = int(p.int())
	case "queue_bytes":
		n.BufferBytes = int(p.int())
	case "mss":
		n.MSS = int(p.int())
	case "min_rto_ns":
		n.MinRTO = p.ns()
	case "del_ack":
		n.DelAck = int(p.int())
	case "del_ack_timeout_ns":
		n.DelAckTimeout = p.ns()
	case "sack":
		n.SACK = p.int() != 0
	case "timestamps":
		n.Timestamps = p.int() != 0
	case "catch_up":
		n.CatchUp = p.int() != 0
	case "snd_buf":
		n.SndBuf = int(p.int())
	case "chunk":
		n.Chunk = int(p.int())
	case "stop_ns":
		n.Stop = p.ns()
	case "seed":
		n.Seed = uint32(p.int())
	case "dcqcn": // as written: scaled (Scale reads as 0, and writes so)
		d := &n.DCQCN
		d.Kmin, d.Kmax, d.Pmax, d.MTU = p.float(), p.float(), p.float(), p.float()
		d.CNPInterval, d.G, d.AlphaTimer, d.RateTimer = p.ns(), p.float(), p.ns(), p.ns()
		d.ByteCounter, d.F = p.float(), int(p.int())
		d.RAI, d.RHAI, d.MinRate, d.InitialAlpha = p.float(), p.float(), p.float(), p.float()
		dflt := fluid.DefaultDCQCN()
		d.PFC, d.Step = max(dflt.PFC, 2*d.Kmax), min(dflt.Step, d.CNPInterval) // not part of the format
	case "mltcp":
		n.MLTCP = netsim.MLTCPParams{Slope: p.float(), Intercept: p.float()}
	case "nodes":
		s.Nodes, s.Servers = int(p.int()), int(p.int())
	case "link":
		s.Links = append(s.Links, Link{A: int(p.int()), B: int(p.int()), Bps: p.int(), Delay: p.ns()})
	case "job":
		j := Job{ID: int(p.int()), Start: p.ns(), Iterations: int(p.int())}
		if p.int() != 0 {
			j.Plan = &agent.Plan{}
		}
		s.Jobs = append(s.Jobs, j)
	case "conn", "compute", "comm", "flow", "noise":
		if job == nil {
			p.fail("%s before a job", key)
			return
		}
		readJobRecord(job, key, p)
	default:
		p.fail("unknown record")
	}
}

func readJobRecord(j *Job, key string, p *fields) {
	switch key {
	case "conn":
		c := Conn{Src: int(p.int()), Dst: int(p.int())}
		for _, path := range []*[]int{&c.Path, &c.Back} {
			k := p.int()
			if k < 0 || k > 64 {
				p.fail("path of %d nodes", k)
				return
			}
			for range k {
				*path = append(*path, int(p.int()))
			}
		}
		j.Conns = append(j.Conns, c)
	case "compute":
		j.Steps = append(j.Steps, Step{Compute: p.ns()})
	case "comm":
		j.Steps = append(j.Steps, Step{Flows: []Flow{}})
	case "flow":
		if len(j.Steps) == 0 || j.Steps[len(j.Steps)-1].Flows == nil {
			p.fail("a flow outside a comm step")
			return
		}
		st := &j.Steps[len(j.Steps)-1]
		st.Flows = append(st.Flows, Flow{Conn: int(p.int()), Bytes: p.int(), PeakBps: p.float(), Prev: int(p.int()), Slack: p.int()})
	case "noise":
		for len(p.f) > 0 && p.err == nil {
			j.Noise = append(j.Noise, p.float())
		}
	}
}
