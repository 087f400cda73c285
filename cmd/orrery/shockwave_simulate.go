package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orrery/orrery/internal/eval/policy"
	"github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/trace"
	"github.com/orrery/orrery/internal/round"
)

// swData is where the authors' traces, tables and configurations
// live in the repository.
const swData = "testdata/shockwave"

// swSetup is one simulate invocation, resolved.
type swSetup struct {
	Trace, Throughputs, Config string
	GPUs, Jobs                 int
	Policies                   []string
	Sim                        sim.Options
	Gavel                      policy.GavelOptions
	MaxNodes                   int
}

// swSetupFor resolves the files of a run on gpus GPUs: the given ones, or
// the authors' setup for that cluster size from the repository's
// testdata/shockwave (the 120-job trace, the tacc table and tacc_32gpus
// configuration for 32 GPUs; 220, 460 and 900 jobs with the wisr table
// for 64, 128 and 256). config "none" means orrery's planner defaults. Every
// policy of package policy is selected.
func swSetupFor(gpus int, tracePath, throughputs, config string) (swSetup, error) {
	if gpus < 1 {
		return swSetup{}, fmt.Errorf("%w: --gpus %d", errUsage, gpus)
	}
	preset, known := trace.SetupFor(gpus)
	pick := func(flagVal, def, what string) (string, error) {
		switch {
		case flagVal != "":
			return flagVal, nil
		case known:
			return filepath.Join(swData, def), nil
		}
		return "", fmt.Errorf("%w: --%s is required for %d GPUs (the authors' setups have 32, 64, 128 or 256)", errUsage, what, gpus)
	}
	c := swSetup{GPUs: gpus, Policies: policy.Names()}
	var err error
	if c.Trace, err = pick(tracePath, filepath.Join("traces", preset.Trace), "trace"); err != nil {
		return c, err
	}
	if c.Throughputs, err = pick(throughputs, preset.Table, "throughputs"); err != nil {
		return c, err
	}
	switch {
	case config == "none":
	case config != "":
		c.Config = config
	case known:
		c.Config = filepath.Join(swData, "configurations", preset.Config)
	}
	return c, nil
}

// shockwaveSimulate replays a trace under each policy, in order, and
// returns the results with each replay's wall-clock time.
func shockwaveSimulate(ctx context.Context, c swSetup) ([]*sim.Result, []time.Duration, error) {
	w, err := sim.LoadWorkload(c.Trace, c.Throughputs, c.Jobs, sim.WorkloadOptions{})
	if err != nil {
		return nil, nil, err
	}
	var rc round.Config
	if c.Config != "" {
		tc, err := trace.LoadConfigFile(c.Config)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.Config, err)
		}
		rc = policy.ShockwaveConfig(tc, c.Sim.RoundSeconds)
	} else {
		rc.Market.RoundSeconds = c.Sim.RoundSeconds
	}
	rc.Market.MaxNodes = c.MaxNodes
	opts := c.Sim
	opts.GPUs = c.GPUs
	var results []*sim.Result
	var took []time.Duration
	for _, name := range c.Policies {
		p, err := policy.New(name, policy.Config{GPUs: c.GPUs, Shockwave: rc, Gavel: c.Gavel})
		if err != nil {
			return nil, nil, err
		}
		t0 := time.Now()
		res, err := sim.Run(ctx, w, p, opts)
		took = append(took, time.Since(t0))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, res)
	}
	return results, took, nil
}

// runShockwaveSimulate is "orrery shockwave simulate".
func runShockwaveSimulate(ctx context.Context, args []string, s stdio) error {
	fs := flags("shockwave simulate", s)
	fs.Usage = func() {
		fmt.Fprint(s.err, `usage: orrery shockwave simulate [flags]

Replays one of the Shockwave authors' traces round by round under each
policy and prints makespan, average JCT, worst finish-time fairness, the
unfair fraction and utilization. Without --trace, --throughputs and
--config the authors' setup for --gpus (32, 64, 128 or 256) is read from
`+swData+` (run from the repository root).

flags:
`)
		fs.PrintDefaults()
	}
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
	overshoot := fs.Bool("complete-after-rescale", false, "complete a job whose batch-size change left it with no step to run (the authors drop it after five failed leases)")
	reset := fs.Float64("reset-interval", 0, "baselines: minimum `seconds` between allocation recomputations (0: Gavel's 1000; negative: whenever needed)")
	nodes := fs.Int("max-nodes", 0, "Shockwave: branch-and-bound `nodes` per plan (0: the solver's default)")
	showTime := fs.Bool("time", false, "also report each replay's wall-clock time")
	plotDir := fs.String("plot", "", "write the finish-time-fairness CDF (PNG and SVG) into `dir`")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := swSetupFor(*gpus, *tr, *tp, *cf)
	if err != nil {
		return err
	}
	c.Jobs, c.MaxNodes = *n, *nodes
	c.Gavel = policy.GavelOptions{ResetInterval: *reset}
	c.Sim.RoundSeconds = *delta
	if *n < 0 {
		return fmt.Errorf("%w: --jobs %d", errUsage, *n)
	}
	if !(*delta > 5) || math.IsInf(*delta, 0) {
		return fmt.Errorf("%w: --round-s %v (want more than 5 s)", errUsage, *delta)
	}
	if *nodes < 0 {
		return fmt.Errorf("%w: --max-nodes %d", errUsage, *nodes)
	}
	if *noForce {
		c.Sim.ForceComplete = -1
	}
	if *noPenalty {
		c.Sim.RestartPenalty = -1
	}
	c.Sim.CompleteAfterRescale = *overshoot
	if c.Policies, err = swPolicyList(*pol); err != nil {
		return err
	}
	results, took, err := shockwaveSimulate(ctx, c)
	if err != nil {
		return err
	}
	if *plotDir != "" {
		if _, err := plotShockwaveFTF(*plotDir, results); err != nil {
			return err
		}
	}
	if !*showTime {
		took = nil
	}
	if *asJSON {
		return swWriteJSON(s.out, c, results, took, *perJob)
	}
	return swWriteTable(s.out, c, results, took)
}

// swPolicyList parses --policy.
func swPolicyList(arg string) ([]string, error) {
	if strings.TrimSpace(arg) == "all" {
		return policy.Names(), nil
	}
	var out []string
	for f := range strings.SplitSeq(arg, ",") {
		name, err := policy.Canonical(f)
		if err != nil {
			return nil, fmt.Errorf("%w: --policy: %v", errUsage, err)
		}
		out = append(out, name)
	}
	return out, nil
}

// swRow is one metric of the table.
type swRow struct {
	name string
	val  func(r *sim.Result) string
}

func swFloat(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

var swRows = []swRow{
	{"makespan_s", func(r *sim.Result) string { return swFloat(r.Summary.Makespan, 0) }},
	{"avg_jct_s", func(r *sim.Result) string { return swFloat(r.Summary.AvgJCT, 0) }},
	{"worst_ftf", func(r *sim.Result) string { return swFloat(r.Summary.WorstFTF, 3) }},
	{"unfair_fraction", func(r *sim.Result) string { return swFloat(r.Summary.Unfair105, 3) }},
	{"unfair_fraction_1.1", func(r *sim.Result) string { return swFloat(r.Summary.Unfair110, 3) }},
	{"worst_ftf_themis", func(r *sim.Result) string { return swFloat(r.Summary.WorstFTFThemis, 3) }},
	{"utilization", func(r *sim.Result) string { return swFloat(r.Summary.Utilization, 3) }},
	{"rounds", func(r *sim.Result) string { return strconv.Itoa(r.Rounds) }},
	{"restarts", func(r *sim.Result) string { return strconv.Itoa(r.Restarts) }},
	{"forced_completions", func(r *sim.Result) string { return strconv.Itoa(r.Forced) }},
	{"dropped", func(r *sim.Result) string { return strconv.Itoa(r.Dropped) }},
	{"batch_changes", func(r *sim.Result) string { return strconv.Itoa(r.BatchChanges) }},
}

func swWriteTable(out io.Writer, c swSetup, results []*sim.Result, took []time.Duration) error {
	cfg := c.Config
	if cfg == "" {
		cfg = "orrery defaults"
	}
	// Rows of cells: metric names left-aligned, values right-aligned.
	cells := [][]string{{""}}
	for _, r := range results {
		cells[0] = append(cells[0], policy.Legend(r.Policy))
	}
	for _, row := range swRows {
		line := []string{row.name}
		for _, r := range results {
			line = append(line, row.val(r))
		}
		cells = append(cells, line)
	}
	if took != nil {
		line := []string{"replay_s"}
		for _, d := range took {
			line = append(line, swFloat(d.Seconds(), 2))
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
	fmt.Fprintf(&b, "trace %s (%d jobs), %d GPUs, %s, %s\n\n", filepath.Base(c.Trace), results[0].TraceJobs,
		c.GPUs, filepath.Base(c.Throughputs), filepath.Base(cfg))
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
	Trace       string         `json:"trace"`
	Throughputs string         `json:"throughputs"`
	Config      string         `json:"config,omitempty"`
	GPUs        int            `json:"gpus"`
	Jobs        int            `json:"jobs"`
	Results     []swResultJSON `json:"results"`
}

type swResultJSON struct {
	Policy             string      `json:"policy"`
	Legend             string      `json:"legend"`
	MakespanS          float64     `json:"makespan_s"`
	AvgJCTS            float64     `json:"avg_jct_s"`
	WorstFTF           float64     `json:"worst_ftf"`
	UnfairFraction     float64     `json:"unfair_fraction"`
	UnfairFraction110  float64     `json:"unfair_fraction_1_1"`
	WorstFTFThemis     float64     `json:"worst_ftf_themis"`
	Utilization        float64     `json:"utilization"`
	Rounds             int         `json:"rounds"`
	LeaseExtensions    int         `json:"lease_extensions"`
	LeaseOpportunities int         `json:"lease_opportunities"`
	Restarts           int         `json:"restarts"`
	Forced             int         `json:"forced_completions"`
	Dropped            int         `json:"dropped"`
	BatchChanges       int         `json:"batch_changes"`
	Stats              []sim.Stat  `json:"stats,omitempty"`
	WallS              *float64    `json:"wall_s,omitempty"`
	PerJob             []swJobJSON `json:"per_job,omitempty"`
}

type swJobJSON struct {
	ID          int     `json:"id"`
	GPUs        int     `json:"gpus"`
	Model       string  `json:"model"`
	Mode        string  `json:"mode"`
	ArrivalS    float64 `json:"arrival_s"`
	CompletionS float64 `json:"completion_s"`
	JCTS        float64 `json:"jct_s"`
	IsolatedS   float64 `json:"isolated_s"`
	FTF         float64 `json:"ftf"`
	FTFThemis   float64 `json:"ftf_themis"`
	Forced      bool    `json:"forced,omitempty"`
	Dropped     bool    `json:"dropped,omitempty"`
}

func swWriteJSON(out io.Writer, c swSetup, results []*sim.Result, took []time.Duration, perJob bool) error {
	doc := swJSON{Trace: c.Trace, Throughputs: c.Throughputs, Config: c.Config, GPUs: c.GPUs, Jobs: results[0].TraceJobs}
	for i, r := range results {
		sm := r.Summary
		j := swResultJSON{Policy: r.Policy, Legend: policy.Legend(r.Policy), MakespanS: sm.Makespan, AvgJCTS: sm.AvgJCT,
			WorstFTF: sm.WorstFTF, UnfairFraction: sm.Unfair105, UnfairFraction110: sm.Unfair110,
			WorstFTFThemis: sm.WorstFTFThemis, Utilization: sm.Utilization, Rounds: r.Rounds,
			LeaseExtensions: r.LeaseExtensions, LeaseOpportunities: r.LeaseOpportunities, Restarts: r.Restarts,
			Forced: r.Forced, Dropped: r.Dropped, BatchChanges: r.BatchChanges, Stats: r.Stats}
		if took != nil {
			v := took[i].Seconds()
			j.WallS = &v
		}
		if perJob {
			for _, jr := range r.Jobs {
				j.PerJob = append(j.PerJob, swJobJSON{ID: jr.ID, GPUs: jr.GPUs, Model: jr.Model, Mode: jr.Mode,
					ArrivalS: jr.Arrival, CompletionS: jr.Completion, JCTS: jr.JCT, IsolatedS: jr.Isolated,
					FTF: jr.FTF, FTFThemis: jr.FTFThemis, Forced: jr.Forced, Dropped: jr.Dropped})
			}
		}
		doc.Results = append(doc.Results, j)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// shockwaveSimulateDemo is the demo's Shockwave replay: the authors'
// 120-job trace on 32 GPUs (from the repository's testdata, so run from its
// root) under Shockwave and the four baselines, about a second on two
// cores. It prints the side-by-side table to out and, unless plotDir is
// empty, writes the finish-time-fairness CDF there, returning the files
// written.
func shockwaveSimulateDemo(ctx context.Context, out io.Writer, plotDir string) ([]string, error) {
	c, err := swSetupFor(32, "", "", "")
	if err != nil {
		return nil, err
	}
	results, _, err := shockwaveSimulate(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := swWriteTable(out, c, results, nil); err != nil {
		return nil, err
	}
	if plotDir == "" {
		return nil, nil
	}
	return plotShockwaveFTF(plotDir, results)
}
