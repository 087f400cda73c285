package ns3

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
)

//go:embed cc/orrery-ns3.cc
var source []byte

// ErrUnavailable reports that ns-3 (Debian's libns3-dev) or g++ is not
// installed.
var ErrUnavailable = errors.New("ns3: ns-3 is not installed (run internal/eval/ns3/install.sh)")

// Header is the ns-3 header the program needs; its presence is what
// [Available] checks.
const Header = "/usr/include/ns3/core-module.h"

// Libraries are the ns-3 libraries the program links.
var Libraries = []string{"ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-traffic-control"}

// Available reports whether g++ and ns-3's headers are installed
// (wrapping ErrUnavailable if not).
func Available() error {
	if _, err := os.Stat(Header); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, Header, err)
	}
	if _, err := exec.LookPath("g++"); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// Program is the built packet-level program.
type Program struct {
	Path string
}

// Build compiles the program into dir (created if needed) with g++ against
// ns-3's libraries, unless dir already holds a build of the same source. ""
// means the user's cache directory. Debian's pkg-config files for ns-3
// carry broken flags, so the command names the libraries itself.
func Build(ctx context.Context, dir string) (Program, error) {
	if err := Available(); err != nil {
		return Program{}, err
	}
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return Program{}, fmt.Errorf("ns3: no cache directory: %w", err)
		}
		dir = filepath.Join(c, "orrery", "ns3")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Program{}, err
	}
	sum := sha256.Sum256(source)
	name := "orrery-ns3-" + hex.EncodeToString(sum[:6])
	bin := filepath.Join(dir, name)
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() {
		return Program{Path: bin}, nil
	}
	src := filepath.Join(dir, name+".cc")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return Program{}, err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid()) // two builds at once each rename their own
	args := []string{"-O2", "-std=c++17", src, "-o", tmp}
	for _, l := range Libraries {
		args = append(args, "-l"+l)
	}
	cmd := exec.CommandContext(ctx, "g++", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return Program{}, fmt.Errorf("ns3: g++ %s: %w\n%s", strings.Join(args, " "), err, tail(stderr.String(), 4000))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return Program{}, err
	}
	return Program{Path: bin}, nil
}

// RunOptions configure [Program.Run]. The zero value writes the scenario
// to a temporary directory and gives the jobs' agents agent's zero Options
// (Pad mode, the paper's 5% threshold).
type RunOptions struct {
	Agent agent.Options // for jobs with a plan; its Clock is unused
	// Keep, if not "", is a directory the scenario and the output are
	// written to (scenario.txt, output.txt), to rerun or inspect a run.
	Keep string
}

// Run simulates s with the program. Jobs with a plan get an agent of
// package agent, asked over the program's standard input when each of
// their iterations after the first may start, as the fluid simulation's
// agents are.
func (p Program) Run(ctx context.Context, s Scenario, opt RunOptions) (Output, error) {
	dir := opt.Keep
	if dir == "" {
		d, err := os.MkdirTemp("", "orrery-ns3-")
		if err != nil {
			return Output{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return Output{}, err
	}
	agents, err := newAgents(s, opt.Agent)
	if err != nil {
		return Output{}, err
	}
	file := filepath.Join(dir, "scenario.txt")
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		return Output{}, err
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return Output{}, err
	}
	cmd := exec.CommandContext(ctx, p.Path, file)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Output{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Output{}, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var r io.Reader = stdout
	var rec *os.File
	if opt.Keep != "" {
		if rec, err = os.Create(filepath.Join(dir, "output.txt")); err != nil {
			return Output{}, err
		}
		defer rec.Close()
		r = io.TeeReader(stdout, rec)
	}
	if err := cmd.Start(); err != nil {
		return Output{}, err
	}
	byID := map[int]*Job{}
	for i := range s.Jobs {
		byID[s.Jobs[i].ID] = &s.Jobs[i]
	}
	w := bufio.NewWriter(stdin)
	seen := 0 // iterations whose communication start the agents have seen
	observe := func(o *Output) {
		for ; seen < len(o.Iterations); seen++ {
			if it := o.Iterations[seen]; it.Comm >= 0 {
				if a, ok := agents[it.Job]; ok {
					a.Communicating(time.Unix(0, int64(it.Comm)))
				}
			}
		}
	}
	out, err := parse(r, func(o *Output, job int, at time.Duration) error {
		a, ok := agents[job]
		if !ok {
			return fmt.Errorf("%w: the program asked for job %d, which has no agent", ErrInvalid, job)
		}
		// The free rule reads the last communication start, an Elastic
		// agent the last iteration's communication time: record every
		// iteration completed since the last request first.
		observe(o)
		if n := len(o.Iterations); n > 0 && o.Iterations[n-1].Job == job {
			it := o.Iterations[n-1]
			a.Communicated(commTime(byID[job], it.Index, it.Start, it.End))
		}
		d := a.Next(time.Unix(0, int64(at)))
		fmt.Fprintf(w, "S %d\n", d.Start.UnixNano())
		return w.Flush()
	})
	stdin.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return Output{}, fmt.Errorf("ns3: %w (program stderr: %s)", err, tail(stderr.String(), 2000))
	}
	if err := cmd.Wait(); err != nil {
		return Output{}, fmt.Errorf("ns3: program: %w: %s", err, tail(stderr.String(), 2000))
	}
	observe(&out)
	if st := cmd.ProcessState; st != nil {
		out.CPU = st.UserTime() + st.SystemTime()
	}
	for i, j := range out.Jobs {
		if a, ok := agents[j.Job]; ok {
			st := a.Stats()
			out.Jobs[i].Agent = &st
		}
	}
	return out, nil
}

// commTime is how long iteration iter of j, from start to end, spent
// communicating: all of it but its compute steps (noise applied, rounded
// to the nanosecond as the program and the fluid replay run them).
func commTime(j *Job, iter int, start, end time.Duration) time.Duration {
	factor := 1.0
	if iter < len(j.Noise) {
		factor = j.Noise[iter]
	}
	d := end - start
	for _, st := range j.Steps {
		if st.Flows == nil {
			d -= time.Duration(math.Round(float64(st.Compute) * factor))
		}
	}
	return max(d, 0)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// newAgents returns an agent for every job of s with a plan, the jobs of
// one Group sharing a new group clock.
func newAgents(s Scenario, opt agent.Options) (map[int]*agent.Agent, error) {
	opt.Clock = nil
	out := map[int]*agent.Agent{}
	groups := map[int]*agent.Group{}
	for _, j := range s.Jobs {
		if j.Plan == nil {
			continue
		}
		p := *j.Plan
		if j.Group > 0 {
			if groups[j.Group] == nil {
				groups[j.Group] = agent.NewGroup(p.Reference)
			}
			p.Group = groups[j.Group]
		}
		a, err := agent.New(p, opt)
		if err != nil {
			return nil, fmt.Errorf("%w: job %d: %w", ErrInvalid, j.ID, err)
		}
		// The program starts the first iteration itself, at Start: the
		// agent decides it too, as the fluid run's agent did, so that its
		// slots are aligned from there (an agent first asked at the end of
		// that iteration, a hair past its slot at the packet level, would
		// wait a whole period for the next).
		a.Next(time.Unix(0, int64(j.Start)))
		out[j.ID] = a
	}
	return out, nil
}
