package ns3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/cassini/agent"
)

// The test binary doubles as a stand-in for the C++ program, so that
// Program.Run's protocol is tested without ns-3: with ORRERY_NS3_FAKE set
// it reads the scenario, runs every job alone (each step takes its compute
// time or its flows' bytes at their peak), asks for agent decisions as the
// real program does and prints the same records.
func TestMain(m *testing.M) {
	if os.Getenv("ORRERY_NS3_FAKE") != "" {
		if err := fakeProgram(os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeProgram(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := ReadScenario(f)
	if err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintln(out, OutputFormat)
	var end time.Duration
	for _, j := range s.Jobs {
		at := j.Start
		for it := range j.Iterations {
			start, comm := at, time.Duration(-1)
			for _, st := range j.Steps {
				if st.Flows == nil {
					at += st.Compute
					continue
				}
				if comm < 0 {
					comm = at
				}
				var longest time.Duration
				for _, fl := range st.Flows {
					longest = max(longest, time.Duration(math.Ceil(float64(fl.Bytes)*8/fl.PeakBps*1e9)))
				}
				at += longest
			}
			fmt.Fprintf(out, "I %d %d %d %d %d %d 0\n", j.ID, it, start, comm, at, it)
			if it+1 < j.Iterations && j.Plan != nil {
				fmt.Fprintf(out, "R %d %d\n", j.ID, at)
				out.Flush()
				if !in.Scan() {
					return fmt.Errorf("no reply")
				}
				var next int64
				if _, err := fmt.Sscanf(in.Text(), "S %d", &next); err != nil || time.Duration(next) < at {
					return fmt.Errorf("bad reply %q", in.Text())
				}
				at = time.Duration(next)
			}
		}
		end = max(end, at)
		fmt.Fprintf(out, "J %d %d %d 0 0\n", j.ID, j.Iterations, j.Iterations*(j.Iterations-1)/2)
	}
	for _, l := range s.Links {
		fmt.Fprintf(out, "L %d %d 0 0 0 0 0 0\nL %d %d 0 0 0 0 0 0\n", l.A, l.B, l.B, l.A)
	}
	fmt.Fprintf(out, "E %d 0 0.001\n", end)
	return nil
}

func fakeProg(t *testing.T) Program {
	t.Helper()
	t.Setenv("ORRERY_NS3_FAKE", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Program{Path: exe}
}

// Run answers the program's agent requests with the agents of package
// agent: under CASSINI's plans every iteration of Fig. 2 starts on its slot
// (the fluid run's grid: the padded period from each job's first start),
// the program asking for each iteration after the first (the agent decides
// the first at its start, as in the fluid run); so do the default Elastic
// agents, sharing a group clock; without agents the jobs run back to back.
func TestRunAgents(t *testing.T) {
	prog := fakeProg(t)
	_, res, sc := exported(t, snapshot(t, "fig2", 5), Cassini)
	keep := t.TempDir()
	out, err := prog.Run(context.Background(), sc, RunOptions{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	if out.Decisions != 2*4 {
		t.Fatalf("%d decisions, want 8", out.Decisions)
	}
	// The fake runs each job alone, as the fluid model does on an
	// interleaved link: the same iteration times, padding included.
	k := 0
	for _, j := range res.Jobs {
		if d := cmp.Diff(res.IterMs[k:k+j.Iterations], out.IterMs(j.ID), cmpApprox); d != "" {
			t.Errorf("job %d: iterations (-fluid +fake):\n%s", j.ID, d)
		}
		k += j.Iterations
	}
	for _, j := range sc.Jobs {
		for _, it := range out.Job(j.ID) {
			if (it.Start-j.Plan.Shift)%j.Plan.Period != 0 {
				t.Errorf("job %d iteration %d starts at %v, off the grid %v + k*%v", j.ID, it.Index, it.Start, j.Plan.Shift, j.Plan.Period)
			}
		}
	}
	for _, js := range out.Jobs {
		if js.Agent == nil || js.Agent.Iterations != 5 || js.Agent.Samples != 5 || js.Agent.Adjustments != 0 || js.Agent.MaxAbs != 0 {
			t.Errorf("job %d: agent %+v", js.Job, js.Agent)
		}
	}
	_, eres, esc := exported(t, snapshot(t, "fig2", 5), Elastic)
	out, err = prog.Run(context.Background(), esc, RunOptions{Agent: agent.Options{Mode: agent.Elastic}})
	if err != nil {
		t.Fatal(err)
	}
	k = 0
	for _, j := range eres.Jobs {
		if d := cmp.Diff(eres.IterMs[k:k+j.Iterations], out.IterMs(j.ID), cmpApprox); d != "" {
			t.Errorf("elastic job %d: iterations (-fluid +fake):\n%s", j.ID, d)
		}
		k += j.Iterations
	}
	if out.Decisions != 2*4 || out.Jobs[0].Agent == nil || out.Jobs[0].Agent.Saved <= 0 {
		t.Errorf("elastic: %d decisions, agent %+v: want 8, and the communication times fed to it", out.Decisions, out.Jobs[0].Agent)
	}
	for _, f := range []string{"scenario.txt", "output.txt"} {
		if _, err := os.Stat(filepath.Join(keep, f)); err != nil {
			t.Error(err)
		}
	}
	_, _, free := exported(t, snapshot(t, "fig2", 5), Shifted)
	out, err = prog.Run(context.Background(), free, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Decisions != 0 || math.Abs(out.IterMs(1)[0]-268) > 1e-5 {
		t.Fatalf("without agents: %d decisions, iterations %v", out.Decisions, out.IterMs(1))
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-5 })

// A program that fails, or prints what is not its format, is an error
// carrying its stderr; a job with a zero plan (as read back) is rejected
// before the program starts.
func TestRunErrors(t *testing.T) {
	prog := fakeProg(t)
	_, _, sc := exported(t, snapshot(t, "fig2", 2), Cassini)
	bad := sc
	bad.Jobs = append([]Job(nil), sc.Jobs...)
	bad.Jobs[0].Plan = &agent.Plan{}
	if _, err := prog.Run(context.Background(), bad, RunOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("zero plan: %v", err)
	}
	if _, err := (Program{Path: "/bin/false"}).Run(context.Background(), sc, RunOptions{}); err == nil {
		t.Fatal("a failing program gave no error")
	}
	if _, err := (Program{Path: "/bin/echo"}).Run(context.Background(), sc, RunOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("echo: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := prog.Run(ctx, sc, RunOptions{}); err == nil {
		t.Fatal("cancelled run gave no error")
	}
}

// The recorded ns-3 runs in testdata parse into their iterations and
// counters, consistently: every job's iterations in order and back to back
// (or on an agent's slot), marks per iteration summing to the job's total.
func TestParseRecorded(t *testing.T) {
	for _, name := range []string{"fig2-unshifted-dctcp", "fig2-cassini-dctcp"} {
		f, err := os.Open(filepath.Join("testdata", name+".out"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(out.Iterations) != 6 || len(out.Jobs) != 2 || len(out.Links) != 12 || out.End <= 0 || out.Events <= 0 {
			t.Fatalf("%s: %d iterations, %d jobs, %d links, end %v, %d events", name, len(out.Iterations), len(out.Jobs), len(out.Links), out.End, out.Events)
		}
		var linkMarks int64
		for _, l := range out.Links {
			linkMarks += l.Marks
		}
		var jobMarks int64
		for _, js := range out.Jobs {
			its := out.Job(js.Job)
			if js.Marks != out.Marks(js.Job) || len(its) != js.Iterations {
				t.Errorf("%s job %d: %d marks, iterations sum to %d", name, js.Job, js.Marks, out.Marks(js.Job))
			}
			jobMarks += js.Marks
			for i, it := range its {
				if it.Index != i || it.Comm < it.Start || it.End <= it.Comm || (i > 0 && it.Start < its[i-1].End) {
					t.Errorf("%s job %d: iteration %+v", name, js.Job, it)
				}
			}
		}
		if jobMarks != linkMarks {
			t.Errorf("%s: jobs' marks %d, links' %d", name, jobMarks, linkMarks)
		}
		if strings.Contains(name, "cassini") && out.Decisions != 4 {
			t.Errorf("%s: %d agent requests", name, out.Decisions)
		}
	}
}

// Output that is cut short, unknown or malformed is ErrInvalid.
func TestParseErrors(t *testing.T) {
	good := OutputFormat + "\nI 0 0 0 5 10 0 0\nJ 0 1 0 0 0\nE 10 4 0.1\n"
	if _, err := Parse(strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"empty":       "",
		"header":      "orrery-ns3-out 2\nE 1 1 0.1\n",
		"no end":      OutputFormat + "\nI 0 0 0 5 10 0 0\n",
		"unknown":     OutputFormat + "\nX 1 2\nE 1 1 0.1\n",
		"short":       OutputFormat + "\nI 0 0 0 5 10 0\nE 1 1 0.1\n",
		"not number":  OutputFormat + "\nL 0 1 a 0 0 0 0 0\nE 1 1 0.1\n",
		"after end":   OutputFormat + "\nE 1 1 0.1\nI 0 0 0 5 10 0 0\n",
		"bad wall":    OutputFormat + "\nE 1 1 x\n",
		"float field": OutputFormat + "\nJ 0 1.5 0 0 0\nE 1 1 0.1\n",
	} {
		if _, err := Parse(strings.NewReader(text)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// Overlap is the share of a job's communication time during which a job
// on a shared link communicates; jobs on disjoint links never overlap.
func TestOverlaps(t *testing.T) {
	path := func(nodes ...int) Conn { return Conn{Path: nodes} }
	sc := Scenario{Jobs: []Job{
		{ID: 0, Conns: []Conn{path(0, 9, 1)}},
		{ID: 1, Conns: []Conn{path(2, 9, 1)}}, // shares 9->1 with job 0
		{ID: 2, Conns: []Conn{path(3, 8, 4)}}, // alone
	}}
	ms := time.Millisecond
	out := Output{Iterations: []Iteration{
		{Job: 0, Index: 0, Start: 0, Comm: 10 * ms, End: 20 * ms},
		{Job: 0, Index: 1, Start: 20 * ms, Comm: 30 * ms, End: 40 * ms},
		{Job: 1, Index: 0, Start: 0, Comm: 15 * ms, End: 25 * ms},       // 5 ms with job 0's first
		{Job: 1, Index: 1, Start: 25 * ms, Comm: 28 * ms, End: 35 * ms}, // 5 ms with its second
		{Job: 2, Index: 0, Start: 0, Comm: 0, End: 40 * ms},
	}}
	got := overlaps(sc, out)
	want := map[int]overlapStat{
		0: {all: 10.0 / 20, first: 5.0 / 10, last: 5.0 / 10},
		1: {all: 10.0 / 17, first: 5.0 / 10, last: 5.0 / 7},
		2: {},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(overlapStat{}), cmpApprox); d != "" {
		t.Fatalf("overlaps (-want +got):\n%s", d)
	}
}

// Compare sets a recorded ns-3 run beside the fluid run it was exported
// from: the fluid model's 334.2 ms overlapped iterations, ns-3's own from
// the record, marks summed per job, the second job's offset per iteration
// and how much of each job's communication overlapped the other's.
func TestCompareRecorded(t *testing.T) {
	_, res, sc := exported(t, snapshot(t, "fig2", 3), Unshifted)
	f, err := os.Open(filepath.Join("testdata", "fig2-unshifted-dctcp.out"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := Compare("fig2", Unshifted, res, sc, out)
	if r.CC != DCTCP || len(r.Jobs) != 2 || len(r.Offsets) != 3 || r.Offsets[0] != 0 {
		t.Fatalf("run %+v", r)
	}
	var all []float64
	for _, j := range r.Jobs {
		p := out.IterMs(j.ID)
		all = append(all, p...)
		if math.Abs(j.FluidMs-334.2) > 0.05 || j.PacketMs != mean(p) || j.FirstMs != p[0] || j.Marks != out.Marks(j.ID) || j.Iterations != 3 {
			t.Errorf("job %+v", j)
		}
		if !(j.Overlap > 0.5 && j.Overlap <= 1) {
			t.Errorf("job %d: overlap %v of a fully overlapped start", j.ID, j.Overlap)
		}
	}
	if r.PacketMs != mean(all) || r.Marks != out.Marks(0)+out.Marks(1) || r.FluidExcessGbit != res.ExcessGbit {
		t.Errorf("run totals %+v", r)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
