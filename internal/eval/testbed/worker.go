//go:build linux

package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orrery/orrery/engine/cassini/agent"
)

// WorkerConfig is one rank of a job, as the coordinator starts it: the
// worker binary reads it from the file its first argument names.
type WorkerConfig struct {
	Job, Rank int
	// Ranks are the job's ranks' addresses ("10.27.0.1:27000"), in ring
	// order: rank i sends to rank i+1 and receives from rank i-1.
	Ranks      []string
	Iterations int
	// EpochNs is the instant (Unix nanoseconds) before which no iteration
	// starts: every rank of every job waits for it, so the jobs start
	// together. StartNs delays this job's first iteration past it (a
	// shift held by nobody: no agent).
	EpochNs, StartNs int64
	Steps            []WorkerStep
	// Congestion is the socket's congestion control (TCP_CONGESTION), ""
	// the namespace's default.
	Congestion string
	Agent      *AgentConfig // nil: iterations run back to back
	// StallMs is how late a sleep must wake to count as a stall of the
	// host; 0 means 10.
	StallMs float64
	// DialTimeoutMs bounds the ring's connection setup; 0 means 20 s.
	DialTimeoutMs float64
	// NoiseCV multiplies each iteration's compute by a Gaussian of mean 1
	// and this coefficient of variation (at least 0), drawn from Seed and
	// the job (every rank of a job draws the same: a data-parallel job's
	// ranks compute alike); 0 is none.
	NoiseCV float64
	Seed    uint64
	// The PyTorch leg's (Options.Torch): rank 0's store for
	// torch.distributed ("10.27.0.1:29500"), the NIC gloo binds to, and the
	// Python bindings' directory.
	TorchMaster  string `json:",omitempty"`
	Iface        string `json:",omitempty"`
	BindingsPath string `json:",omitempty"`
}

// WorkerStep is one step of an iteration: compute (a sleep) or a ring
// all-reduce sending Bytes to the next rank at no more than PeakBps (the
// socket's pacing rate).
type WorkerStep struct {
	ComputeNs int64   `json:",omitempty"`
	Bytes     int64   `json:",omitempty"` // per hop, the whole all-reduce
	PeakBps   float64 `json:",omitempty"` // payload bits per second
}

// AgentConfig is the rank's time-shift agent (engine/cassini/agent).
type AgentConfig struct {
	Mode         string // "pad" or "elastic"
	ReferenceNs  int64  // Unix nanoseconds
	ShiftNs      int64
	PeriodNs     int64
	CommOffsetNs int64
	SlackNs      int64
	FreeCommNs   int64
	Threshold    float64
	Budget       float64
	GiveUp       string
	MeanGiveUp   bool `json:",omitempty"`
	PlanBudget   bool `json:",omitempty"`
}

// Iteration is what a rank measured of one iteration: instants in
// nanoseconds since the epoch.
type Iteration struct {
	Ready, Start, CommStart, CommEnd int64
	Delay                            int64 `json:",omitempty"` // the agent's wait
	Adjusted, Released               bool  `json:",omitempty"`
	// Late is how late the compute sleep and the agent's wait woke, in
	// all.
	Late int64 `json:",omitempty"`
}

// WorkerResult is a rank's report, one JSON object on its standard output.
type WorkerResult struct {
	Job, Rank  int
	Congestion string // the congestion control the sending socket ran
	Iterations []Iteration
	// Stalls counts the sleeps (compute, agent waits and a 5 ms monitor)
	// that woke more than StallMs late; MaxLateNs the latest.
	Stalls, Sleeps int
	MaxLateNs      int64
	// The sending socket's TCP_INFO at the end.
	Retrans, Lost, RTONum int64
	BytesSent             int64
	Agent                 *agent.Stats `json:",omitempty"`
}

// WorkerMain is the worker binary's main: it runs the rank its first
// argument's file describes and prints its WorkerResult.
func WorkerMain() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: worker CONFIG.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var cfg WorkerConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := Work(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "job %d rank %d: %v\n", cfg.Job, cfg.Rank, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(1)
	}
}

// stallWatch counts late sleeps.
type stallWatch struct {
	mu        sync.Mutex
	threshold time.Duration
	stalls    int
	sleeps    int
	max       time.Duration
}

func (w *stallWatch) note(late time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sleeps++
	w.max = max(w.max, late)
	if late > w.threshold {
		w.stalls++
	}
}

// sleepUntil sleeps until t and returns how late it woke.
func (w *stallWatch) sleepUntil(ctx context.Context, t time.Time) (time.Duration, error) {
	d := time.Until(t)
	if d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return 0, ctx.Err()
		}
	}
	late := max(time.Since(t), 0)
	w.note(late)
	return late, nil
}

// watchClock is an agent.Clock whose sleeps the stall watch times.
type watchClock struct{ w *stallWatch }

func (c watchClock) Now() time.Time { return time.Now() }
func (c watchClock) Sleep(ctx context.Context, d time.Duration) error {
	_, err := c.w.sleepUntil(ctx, time.Now().Add(d))
	return err
}

// Work runs one rank: it connects the ring, waits for the epoch, runs its
// iterations and reports them.
func Work(ctx context.Context, cfg WorkerConfig) (WorkerResult, error) {
	res := WorkerResult{Job: cfg.Job, Rank: cfg.Rank}
	n := len(cfg.Ranks)
	if n == 0 || cfg.Rank < 0 || cfg.Rank >= n || cfg.Iterations < 1 {
		return res, fmt.Errorf("rank %d of %d ranks, %d iterations", cfg.Rank, n, cfg.Iterations)
	}
	stallMs := cfg.StallMs
	if stallMs == 0 {
		stallMs = 10
	}
	watch := &stallWatch{threshold: time.Duration(stallMs * float64(time.Millisecond))}
	dialTimeout := time.Duration(cfg.DialTimeoutMs * float64(time.Millisecond))
	if dialTimeout == 0 {
		dialTimeout = 20 * time.Second
	}
	var peak float64
	var chunk int64
	for _, s := range cfg.Steps {
		if s.Bytes > 0 {
			peak = max(peak, s.PeakBps)
			chunk = max(chunk, (s.Bytes+int64(2*(n-1))-1)/int64(2*max(n-1, 1)))
		}
	}
	var out, in net.Conn
	if n > 1 {
		var err error
		out, in, err = connect(ctx, cfg, peak, dialTimeout)
		if err != nil {
			return res, err
		}
		defer out.Close()
		defer in.Close()
		res.Congestion = congestionOf(out)
	}
	var ag *agent.Agent
	if a := cfg.Agent; a != nil {
		var err error
		if ag, err = newAgent(a, watch); err != nil {
			return res, err
		}
	}
	epoch := time.Unix(0, cfg.EpochNs)
	mctx, stopMonitor := context.WithCancel(ctx)
	defer stopMonitor()
	go monitor(mctx, watch)
	sendBuf, recvBuf := make([]byte, chunk), make([]byte, chunk)
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Job)))
	since := func(t time.Time) int64 { return t.UnixNano() - cfg.EpochNs }
	if _, err := watch.sleepUntil(ctx, epoch.Add(time.Duration(cfg.StartNs))); err != nil {
		return res, err
	}
	for it := range cfg.Iterations {
		rec := Iteration{}
		ready := time.Now()
		rec.Ready = since(ready)
		if ag != nil {
			d, err := ag.Wait(ctx)
			if err != nil {
				return res, err
			}
			rec.Delay, rec.Adjusted, rec.Released = int64(d.Delay), d.Adjusted, d.Released
			rec.Late += int64(max(time.Since(d.Start), 0))
		}
		start := time.Now()
		rec.Start = since(start)
		noise := 1.0
		if cfg.NoiseCV > 0 {
			noise = max(1+float64(cfg.NoiseCV*rng.NormFloat64()), 0)
		}
		for _, s := range cfg.Steps {
			if s.ComputeNs > 0 {
				late, err := watch.sleepUntil(ctx, time.Now().Add(time.Duration(float64(s.ComputeNs)*noise)))
				if err != nil {
					return res, err
				}
				rec.Late += int64(late)
				continue
			}
			if s.Bytes == 0 || n == 1 {
				continue
			}
			cs := time.Now()
			if rec.CommStart == 0 {
				rec.CommStart = since(cs)
				if ag != nil {
					ag.Communicating(cs)
				}
			}
			if err := allReduce(out, in, s.Bytes, n, sendBuf, recvBuf); err != nil {
				return res, fmt.Errorf("iteration %d: %w", it, err)
			}
			rec.CommEnd = since(time.Now())
		}
		if ag != nil && rec.CommEnd > 0 {
			ag.Communicated(time.Duration(rec.CommEnd - rec.CommStart))
		}
		res.Iterations = append(res.Iterations, rec)
	}
	stopMonitor()
	watch.mu.Lock()
	res.Stalls, res.Sleeps, res.MaxLateNs = watch.stalls, watch.sleeps, int64(watch.max)
	watch.mu.Unlock()
	if out != nil {
		if info, err := tcpInfo(out); err == nil {
			res.Retrans, res.Lost, res.RTONum, res.BytesSent = int64(info.Total_retrans), int64(info.Lost), int64(info.Total_rto), int64(info.Bytes_sent)
		}
	}
	if ag != nil {
		st := ag.Stats()
		res.Agent = &st
	}
	return res, nil
}

// monitor sleeps 5 ms at a time and notes how late each wakes: the host's
// stalls, whatever the iteration loop is doing.
func monitor(ctx context.Context, w *stallWatch) {
	for ctx.Err() == nil {
		if _, err := w.sleepUntil(ctx, time.Now().Add(5*time.Millisecond)); err != nil {
			return
		}
	}
}

func newAgent(a *AgentConfig, w *stallWatch) (*agent.Agent, error) {
	mode, err := agent.ParseMode(a.Mode)
	if err != nil {
		return nil, err
	}
	giveUp, err := agent.ParseGiveUp(a.GiveUp)
	if err != nil {
		return nil, err
	}
	plan := agent.Plan{Reference: time.Unix(0, a.ReferenceNs), Shift: time.Duration(a.ShiftNs), Period: time.Duration(a.PeriodNs),
		CommOffset: time.Duration(a.CommOffsetNs), Slack: time.Duration(a.SlackNs), FreeComm: time.Duration(a.FreeCommNs)}
	if mode == agent.Elastic {
		// The group's clock is the plan's: every rank of every job in the
		// group builds the same one from the same reference (see
		// agent.NewPlanGroup), so they agree on every slot without
		// sharing memory.
		plan.Group = agent.NewPlanGroup(plan.Reference)
	}
	return agent.New(plan, agent.Options{Mode: mode, Threshold: a.Threshold, Budget: a.Budget, GiveUp: giveUp, MeanGiveUp: a.MeanGiveUp, PlanBudget: a.PlanBudget, Clock: watchClock{w}})
}

// connect dials the next rank (the socket this rank sends on, with its
// congestion control and pacing rate) and accepts the previous one.
func connect(ctx context.Context, cfg WorkerConfig, peak float64, timeout time.Duration) (out, in net.Conn, err error) {
	n := len(cfg.Ranks)
	lc := net.ListenConfig{}
	ln, err := lc.Listen(ctx, "tcp4", cfg.Ranks[cfg.Rank])
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	deadline := time.Now().Add(timeout)
	_ = ln.(*net.TCPListener).SetDeadline(deadline)
	accepted := make(chan net.Conn, 1)
	acceptErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			acceptErr <- err
			return
		}
		accepted <- c
	}()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if cfg.Congestion != "" {
				if serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cfg.Congestion); serr != nil {
					serr = fmt.Errorf("TCP_CONGESTION %s: %w", cfg.Congestion, serr)
					return
				}
			}
			if peak > 0 {
				serr = unix.SetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, uint64(peak/8))
			}
		})
		return errors.Join(err, serr)
	}}
	next := cfg.Ranks[(cfg.Rank+1)%n]
	for {
		dctx, cancel := context.WithDeadline(ctx, deadline)
		out, err = d.DialContext(dctx, "tcp4", next)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, nil, fmt.Errorf("dial rank %d at %s: %w", (cfg.Rank+1)%n, next, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case in = <-accepted:
	case err = <-acceptErr:
		out.Close()
		return nil, nil, fmt.Errorf("accept rank %d: %w", (cfg.Rank+n-1)%n, err)
	}
	return out, in, nil
}

// allReduce is a ring all-reduce of a payload whose hop carries total
// bytes: 2(n-1) steps, each sending a chunk to the next rank while
// receiving one from the previous, a step starting when the last one's
// chunk has arrived (what it forwards).
func allReduce(out, in net.Conn, total int64, n int, send, recv []byte) error {
	steps := 2 * (n - 1)
	var sent int64
	for s := range steps {
		c := (total - sent) / int64(steps-s)
		sent += c
		errc := make(chan error, 1)
		go func() {
			_, err := out.Write(send[:c])
			errc <- err
		}()
		if _, err := io.ReadFull(in, recv[:c]); err != nil {
			return err
		}
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}

func congestionOf(c net.Conn) string {
	var cc string
	if raw, err := c.(*net.TCPConn).SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) {
			cc, _ = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
		})
	}
	return cc
}

func tcpInfo(c net.Conn) (*unix.TCPInfo, error) {
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return nil, err
	}
	var info *unix.TCPInfo
	var ierr error
	if err := raw.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		return nil, err
	}
	return info, ierr
}

// port is a job's listening port: one per job, so jobs sharing a server
// never collide.
func port(job int) string { return strconv.Itoa(27000 + job) }
