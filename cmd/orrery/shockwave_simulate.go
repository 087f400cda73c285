package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orrery/orrery/internal/eval/data"
	"github.com/orrery/orrery/internal/eval/policy"
	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/trace"
)

// swSetupFor resolves the files of a run on gpus GPUs. A file the command
// line names (tracePath, throughputs, config) is read from disk; the others
// are the authors' for that cluster size, read from their data folder: dir
// if given (--data), else the copy inside the binary (package data). A
// size the authors never ran (they ran 32, 64, 128 and 256 GPUs) needs a
// trace, and takes the tacc table up to 32 GPUs, wisr above, and orrery's
// planner defaults. config "none" means orrery's planner defaults.
func swSetupFor(gpus int, dir, tracePath, throughputs, config string) (replay.Shockwave, error) {
	if gpus < 1 {
		return replay.Shockwave{}, fmt.Errorf("%w: --gpus %d (want 1 or more)", errUsage, gpus)
	}
	c, known := replay.AuthorsSetup(gpus)
	if !known {
		if tracePath == "" {
			return c, fmt.Errorf("%w: --trace is required for %d GPUs (the authors' traces are for 32, 64, 128 or 256)", errUsage, gpus)
		}
		s32, _ := replay.AuthorsSetup(32)
		s64, _ := replay.AuthorsSetup(64)
		c.Throughputs = s32.Throughputs
		if gpus > 32 {
			c.Throughputs = s64.Throughputs
		}
	}
	f := files{base: data.Shockwave, disk: map[string]bool{}}
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return c, fmt.Errorf("--data %s: not a folder", dir)
		}
		f.base = os.DirFS(dir)
	}
	for _, p := range []struct {
		flag, path string
		dst        *string
	}{
		{"trace", tracePath, &c.Trace}, {"throughputs", throughputs, &c.Throughputs}, {"config", config, &c.Config},
	} {
		switch p.path {
		case "":
		case "none":
			if p.flag == "config" {
				*p.dst = ""
				continue
			}
			fallthrough
		default:
			*p.dst = p.path
			f.disk[p.path] = true
		}
	}
	c.Data = f
	return c, nil
}

// files is what a replay reads: the files the command line names, from
// disk, and the rest from a data folder.
type files struct {
	base fs.FS
	disk map[string]bool // names to read from the operating system's file system
}

// Open opens name from disk if the command line named it, else from the
// data folder.
func (f files) Open(name string) (fs.File, error) {
	if f.disk[name] {
		return os.Open(name)
	}
	return f.base.Open(name)
}

// runShockwaveSimulate is "orrery shockwave simulate".
func runShockwaveSimulate(ctx context.Context, args []string, s stdio) (err error) {
	fs := flags("shockwave simulate", s)
	defer func() { err = withUsage(fs, err) }()
	fs.Usage = func() {
		fmt.Fprint(s.err, `usage: orrery shockwave simulate [flags]

Replays one of the Shockwave authors' traces round by round under each
policy and prints makespan, average JCT, worst finish-time fairness, the
unfair fraction and utilization. Without --trace, --throughputs and
--config the authors' setup for --gpus (32, 64, 128 or 256) is used, from
the copy inside this binary (or from --data).

flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(s.err, swTraceFormat)
	}
	data := fs.String("data", "", "the authors' data `folder` to read in place of the copy inside the binary (their scheduler/ layout: traces/, configurations/, *_throughputs.json)")
	quiet := quietFlag(fs)
	tr := fs.String("trace", "", "trace `file` (default: the authors' trace for --gpus)")
	tp := fs.String("throughputs", "", "throughput table `file` (default: tacc for 32 GPUs, wisr above)")
	cf := fs.String("config", "", "Shockwave configuration `file` (default: the authors' for --gpus; \"none\" for orrery's defaults)")
	gpus := fs.Int("gpus", 32, "GPUs in the cluster")
	pol := fs.String("policy", "all", "comma-separated `policies`: "+strings.Join(policy.Names(), ", ")+
		" (or gavel, themis, ossp, mst); all: every one")
	asJSON := fs.Bool("json", false, "write JSON instead of a table")
	perJob := fs.Bool("per-job", false, "with --json, include every job's record")
	n := fs.Int("jobs", 0, "replay only the first `n` jobs of the trace (0: all)")
	delta := fs.Float64("round-s", sim.DefaultRoundSeconds, "round length in `seconds`")
	noForce := fs.Bool("no-force-complete", false, "disable the authors' hack that completes a job once it ran 1.5x its isolated time")
	noPenalty := fs.Bool("no-restart-penalty", false, "disable the 20 s restart penalty")
	rescaleDrop := fs.Bool("authors-rescale-drop", false, "keep the authors' flaw: a job that changes batch size in its last epoch never finishes and is dropped after five failed leases (default: it completes)")
	optima := fs.Bool("authors-optima", false, "baselines: return the optimum the authors' solvers return where there are several (MST: ECOS's interior point; Themis, OSSP: the optimal face's analytic centre, OSSP's makespan by their 5% bisection) instead of the canonical one")
	reset := fs.Float64("reset-interval", 0, "baselines: minimum `seconds` between allocation recomputations (0: Gavel's 1000; negative: whenever needed)")
	nodes := fs.Int("max-nodes", 0, "Shockwave: branch-and-bound `nodes` per plan (0: the solver's default)")
	showTime := fs.Bool("time", false, "also report each replay's wall-clock time (wall_s)")
	plotDir := fs.String("plot", "", "write the finish-time-fairness CDF (PNG and SVG) into `dir`")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := swSetupFor(*gpus, *data, *tr, *tp, *cf)
	if err != nil {
		return err
	}
	if *n < 0 {
		return fmt.Errorf("%w: --jobs %d", errUsage, *n)
	}
	if !(*delta > 5) || math.IsInf(*delta, 0) {
		return fmt.Errorf("%w: --round-s %v (want more than 5 s)", errUsage, *delta)
	}
	if *nodes < 0 {
		return fmt.Errorf("%w: --max-nodes %d", errUsage, *nodes)
	}
	c.Jobs, c.MaxNodes, c.ResetInterval, c.RoundSeconds = *n, *nodes, *reset, *delta
	c.NoForceComplete, c.NoRestartPenalty, c.AuthorsRescaleDrop = *noForce, *noPenalty, *rescaleDrop
	c.AuthorsOptima = *optima
	if c.Policies, err = swPolicyList(*pol); err != nil {
		return err
	}
	prog := newProgress(s, *quiet)
	c.Progress = swProgress(prog, len(c.Policies))
	c.PerJob = true
	rep, err := replay.RunShockwave(ctx, c)
	prog.Done()
	if errors.Is(err, replay.ErrInvalid) {
		return fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(err.Error(), "replay: ")) // a flag's value
	}
	if err != nil {
		return err
	}
	if *plotDir != "" {
		if _, err := plotShockwaveFTF(*plotDir, rep); err != nil {
			return err
		}
	}
	if *asJSON {
		return swWriteJSON(s.out, rep, *showTime, *perJob)
	}
	return swWriteTable(s.out, rep, *showTime)
}

// swProgress reports a replay's progress over all its policies (n of
// them; 0 means all), so that the ETA covers the whole run.
func swProgress(p *progress, n int) func(string, int, int) {
	if n == 0 {
		n = len(policy.Names())
	}
	done, last := -1, ""
	return func(name string, finished, jobs int) {
		if name != last {
			done, last = done+1, name
		}
		p.Report("shockwave simulate: "+name, done*jobs+finished, n*jobs)
	}
}

// swTraceFormat is the trace format, at the end of -h: the models and
// batch sizes from package trace, so that it cannot drift.
var swTraceFormat = func() string {
	var models strings.Builder
	for _, m := range trace.Models() {
		sizes := make([]string, 0, len(m.BatchSizes()))
		for _, b := range m.BatchSizes() {
			sizes = append(sizes, strconv.Itoa(b))
		}
		fmt.Fprintf(&models, "\n                     %-15s %s", m.String()+":", strings.Join(sizes, ", "))
	}
	return `
--trace FILE: the Shockwave authors' format, one job a line, 12 tab-separated fields:
  job_type         "<model> (batch size B)", B one of the model's sizes:` + models.String() + `
  command, working_dir, num_steps_arg   kept, unused by the replay
  needs_data_dir   0 or 1, unused
  total_steps      the job's steps (iterations) at its first batch size
  scale_factor     its GPUs (the throughput table measures 1, 2, 4 and 8)
  mode             static, accordion or gns (how its batch size changes)
  priority_weight, SLO                  kept, unused
  duration_s       its isolated run time, whole seconds
  arrival_s        its arrival, seconds from the start
e.g. ResNet-18 (batch size 32)<TAB>cmd<TAB>dir<TAB>--steps<TAB>0<TAB>5000<TAB>1<TAB>static<TAB>1<TAB>-1<TAB>300<TAB>0
--throughputs: the authors' JSON table, iterations/s per worker type and "('<job_type>', GPUs)";
--config: their JSON of future_rounds, k, lambda, rhomax, log_approximation_bases, gpu_ram,
solver_rel_gap, solver_num_threads and solver_timeout. Errors name the line, the field and what
is valid; internal/eval/data/shockwave/README.md in the repository has the rest.
`
}()

// swPolicyList parses --policy; the names are checked by the simulation.
func swPolicyList(arg string) ([]string, error) {
	if strings.TrimSpace(arg) == "all" {
		return nil, nil
	}
	var out []string
	for f := range strings.SplitSeq(arg, ",") {
		out = append(out, strings.TrimSpace(f))
	}
	return out, nil
}

// swRow is one metric of the table.
type swRow struct {
	name string
	val  func(r *replay.ShockwavePolicyResult) string
}

func swFloat(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

var swRows = []swRow{
	{"makespan_s", func(r *replay.ShockwavePolicyResult) string { return swFloat(r.MakespanS, 0) }},
	{"avg_jct_s", func(r *replay.ShockwavePolicyResult) string { return swFloat(r.AvgJCTS, 0) }},
	{"worst_ftf", func(r *replay.ShockwavePolicyResult) string { return swFloat(r.WorstFTF, 3) }},
	{"unfair_fraction", func(r *replay.ShockwavePolicyResult) string { return swFloat(r.UnfairFraction, 3) }},
	{"unfair_fraction_1_1", func(r *replay.ShockwavePolicyResult) string { return swFloat(r.UnfairFraction110, 3) }},
	{"worst_ftf_themis", func(r *replay.ShockwavePolicyResult) string { return swFloat(r.WorstFTFThemis, 3) }},
	{"utilization", func(r *replay.ShockwavePolicyResult) string { return swFloat(r.Utilization, 3) }},
	{"rounds", func(r *replay.ShockwavePolicyResult) string { return strconv.Itoa(r.Rounds) }},
	{"restarts", func(r *replay.ShockwavePolicyResult) string { return strconv.Itoa(r.Restarts) }},
	{"forced_completions", func(r *replay.ShockwavePolicyResult) string { return strconv.Itoa(r.Forced) }},
	{"dropped", func(r *replay.ShockwavePolicyResult) string { return strconv.Itoa(r.Dropped) }},
	{"batch_changes", func(r *replay.ShockwavePolicyResult) string { return strconv.Itoa(r.BatchChanges) }},
}

func swWriteTable(out io.Writer, rep replay.ShockwaveReport, showTime bool) error {
	cfg := rep.Config
	if cfg == "" {
		cfg = "orrery defaults"
	}
	// Rows of cells: metric names left-aligned, values right-aligned.
	cells := [][]string{{""}}
	for _, r := range rep.Results {
		cells[0] = append(cells[0], r.Legend)
	}
	for _, row := range swRows {
		line := []string{row.name}
		for i := range rep.Results {
			line = append(line, row.val(&rep.Results[i]))
		}
		cells = append(cells, line)
	}
	if showTime { // three significant digits: a replay can take milliseconds
		line := []string{"wall_s"}
		for _, r := range rep.Results {
			line = append(line, strconv.FormatFloat(r.WallS, 'g', 3, 64))
		}
		cells = append(cells, line)
	}
	width := make([]int, len(cells[0]))
	for _, line := range cells {
		for i, v := range line {
			width[i] = max(width[i], len(v))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s (%d jobs), %d GPUs, %s, %s\n\n", filepath.Base(rep.Trace), rep.TraceJobs,
		rep.GPUs, filepath.Base(rep.Throughputs), filepath.Base(cfg))
	for _, line := range cells {
		fmt.Fprintf(&b, "%-*s", width[0], line[0])
		for i, v := range line[1:] {
			fmt.Fprintf(&b, "  %*s", width[i+1], v)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// swJSON is the --json output.
type swJSON struct {
	Trace       string                         `json:"trace"`
	Throughputs string                         `json:"throughputs"`
	Config      string                         `json:"config,omitempty"`
	GPUs        int                            `json:"gpus"`
	Jobs        int                            `json:"jobs"`
	Results     []replay.ShockwavePolicyResult `json:"results"`
}

// swWriteJSON writes the --json output: the report, without the replays'
// wall-clock times unless asked (they differ from run to run) and without
// the per-job records unless asked.
func swWriteJSON(out io.Writer, rep replay.ShockwaveReport, showTime, perJob bool) error {
	doc := struct {
		Trace       string                         `json:"trace"`
		Throughputs string                         `json:"throughputs"`
		Config      string                         `json:"config,omitempty"`
		GPUs        int                            `json:"gpus"`
		Jobs        int                            `json:"jobs"`
		Results     []replay.ShockwavePolicyResult `json:"results"`
	}{Trace: rep.Trace, Throughputs: rep.Throughputs, Config: rep.Config, GPUs: rep.GPUs, Jobs: rep.TraceJobs}
	for _, r := range rep.Results {
		if !showTime {
			r.WallS = 0
		}
		if !perJob {
			r.PerJob = nil
		}
		doc.Results = append(doc.Results, r)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// shockwaveSimulateDemo is the demo's Shockwave replay: the authors'
// 120-job trace on 32 GPUs (the copy inside the binary) under Shockwave and the six baselines, then Shockwave again with
// the authors' rescale flaw, about two seconds on two cores. It prints the
// side-by-side table and the comparison to out and, unless plotDir is
// empty, writes the finish-time-fairness CDF there, returning the files
// written.
func shockwaveSimulateDemo(ctx context.Context, out io.Writer, plotDir string) ([]string, error) {
	c, err := swSetupFor(32, "", "", "", "")
	if err != nil {
		return nil, err
	}
	c.PerJob = true
	rep, err := replay.RunShockwave(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := swWriteTable(out, rep, false); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(out, swRowsLegend); err != nil {
		return nil, err
	}
	c.Policies, c.AuthorsRescaleDrop, c.PerJob = []string{"shockwave"}, true, false
	drop, err := replay.RunShockwave(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := swWriteRescale(out, rep.Results[0], drop.Results[0]); err != nil {
		return nil, err
	}
	if plotDir == "" {
		return nil, nil
	}
	return plotShockwaveFTF(plotDir, rep)
}

// swRowsLegend says what each row of swWriteTable measures.
const swRowsLegend = `
What the rows measure, per policy, over the trace's jobs (N jobs on M GPUs):
  makespan_s, avg_jct_s   the last job's completion, and the mean time from arrival to completion
  worst_ftf               the largest finish-time fairness ρ = JCT / (isolated time · max(1, N/M)):
                          how much longer than its fair share of the cluster a job took (≤ 1 is fair)
  unfair_fraction[_1_1]   the share of jobs with ρ above 1.05 (1.1)
  worst_ftf_themis        ρ with Themis's contention factor: max(1, the mean number of jobs active
                          while the job lived / M) in place of max(1, N/M)
  utilization             GPU-time the jobs kept busy over the cluster's, first arrival to makespan
  rounds ... batch_changes   rounds of 120 s, restarts of preempted jobs, completions forced by
                          the authors' 1.5x rule, jobs dropped, batch-size changes
`

// swWriteRescale explains --authors-rescale-drop with Shockwave's replay
// with and without it.
func swWriteRescale(out io.Writer, fixed, drop replay.ShockwavePolicyResult) error {
	var b strings.Builder
	b.WriteString(`
A job whose batch size changes inside its last epoch has more steps done than
its new total: the authors' simulator never finishes it and drops it after
five failed leases (job 35 here); orrery completes it at the end of that lease.
--authors-rescale-drop restores the authors' behaviour (for comparisons with
their result files). Shockwave with and without it:

`)
	fmt.Fprintf(&b, "  %-22s %10s %9s %16s %7s\n", "", "makespan_s", "worst_ftf", "worst_ftf_themis", "dropped")
	for _, r := range []struct {
		name string
		res  replay.ShockwavePolicyResult
	}{{"completes (default)", fixed}, {"--authors-rescale-drop", drop}} {
		fmt.Fprintf(&b, "  %-22s %10.0f %9.3f %16.3f %7d\n", r.name, r.res.MakespanS, r.res.WorstFTF, r.res.WorstFTFThemis, r.res.Dropped)
	}
	b.WriteString("\nIt matters most at 128 GPUs, where the dropped job (86) lingers: compare\n  orrery shockwave simulate --gpus 128 --policy shockwave,gavel,themis [--authors-rescale-drop]\n")
	_, err := io.WriteString(out, b.String())
	return err
}
