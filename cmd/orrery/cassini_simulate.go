package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/eval/data"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// cassiniFlags is one `orrery cassini simulate` run: the simulation and
// what the command does with it.
type cassiniFlags struct {
	replay.Cassini
	Sweep    []string // -sweep-noise: the noises to run the experiment under, one after another
	NoiseDir string   // -noise-dir: where the Alibaba PAI files are ("": the copy inside the binary)
	PlotDir  string   // -plot: where to write the iteration-time CDF ("": none)
	// TraceFile is -trace: the user's jobs ("-": standard input), read by
	// readTrace into Trace and Profiles once the fabric is known.
	TraceFile string
	JSON      bool
	PerModel  bool
	Quiet     bool // -q: no progress on stderr
}

// cassiniDefaults are the command's defaults: the replay's (the paper's
// fabric, Themis with 10-minute leases, the Poisson workload at 90% load)
// with iteration-time noise replayed from Alibaba PAI (the copy inside
// the binary).
func cassiniDefaults() cassiniFlags {
	return cassiniFlags{Cassini: replay.Cassini{Noise: replay.Alibaba}}
}

// shortCassini is the demo's configuration: 30 jobs of 50-100 iterations
// on the paper's fabric, under a second on two cores.
func shortCassini() cassiniFlags {
	s := cassiniDefaults()
	s.Jobs, s.MinIterations, s.MaxIterations = 30, 50, 100
	return s
}

// simulateCassini runs f's simulation, a bad setting being a usage error:
// every field of the simulation comes from a flag. Without a NoiseDir, the
// Alibaba files are the copy inside the binary.
func simulateCassini(ctx context.Context, f cassiniFlags) (replay.CassiniReport, error) {
	s := f.Cassini
	s.NoiseData = data.Alibaba
	if f.NoiseDir != "" {
		if st, err := os.Stat(f.NoiseDir); err != nil || !st.IsDir() {
			return replay.CassiniReport{}, fmt.Errorf("-noise-dir %s: not a folder", f.NoiseDir)
		}
		s.NoiseData = os.DirFS(f.NoiseDir)
	}
	r, err := replay.RunCassini(ctx, s)
	if errors.Is(err, replay.ErrInvalid) {
		return r, fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(err.Error(), "replay: "))
	}
	return r, err
}

// runCassiniSimulate is `orrery cassini simulate`.
func runCassiniSimulate(ctx context.Context, args []string, s stdio) (err error) {
	fs := flags("cassini simulate", s)
	defer func() { err = withUsage(fs, err) }()
	f, err := parseCassiniSimFlags(fs, args, s)
	if err != nil {
		return err
	}
	if err := readTrace(&f, s.in); err != nil {
		return err
	}
	prog := newProgress(s, f.Quiet)
	defer prog.Done()
	f.Progress = func(done, runs int) { prog.Report("cassini simulate", done, runs) }
	if f.Sweep != nil {
		return runCassiniSweep(ctx, f, s)
	}
	r, err := simulateCassini(ctx, f)
	prog.Done()
	if err != nil {
		return err
	}
	if f.PlotDir != "" {
		if _, err := plotCassiniCDF(f.PlotDir, r); err != nil {
			return err
		}
	}
	if f.JSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return writeJSON(s.out, b, false)
	}
	if err := writeCassiniSimTable(s.out, r); err != nil {
		return err
	}
	fmt.Fprintln(s.out)
	if err := writeCassiniPlacementTable(s.out, r); err != nil {
		return err
	}
	if f.PerModel {
		fmt.Fprintln(s.out)
		return writeCassiniModelTable(s.out, r)
	}
	return nil
}

// runCassiniSweep runs the experiment once per noise of f.Sweep and prints
// one table (or a JSON array of the results).
func runCassiniSweep(ctx context.Context, f cassiniFlags, s stdio) error {
	var rs []replay.CassiniReport
	for _, n := range f.Sweep {
		sim := f
		sim.Noise, sim.NoiseCV, _ = replay.ParseNoise(n)
		r, err := simulateCassini(ctx, sim)
		if err != nil {
			return fmt.Errorf("noise %s: %w", n, err)
		}
		rs = append(rs, r)
	}
	if f.JSON {
		b, err := json.Marshal(rs)
		if err != nil {
			return err
		}
		return writeJSON(s.out, b, false)
	}
	return writeCassiniSweepTable(s.out, rs)
}

// cassiniSimulateDemo is the demo's CASSINI simulation: the short Poisson
// configuration on the paper's fabric and the paper's Fig. 2 (two VGG19 jobs
// on one link, 300 iterations, per-iteration jitter), each printed as a
// table, with the iteration-time CDF of the first and the unified circle of
// WideResNet101 and VGG16 (Table 2 snapshot 1) written into plotDir ("" for
// no plots). It returns the plot paths. It takes about a second on two
// cores; the output is deterministic.
func cassiniSimulateDemo(ctx context.Context, out io.Writer, plotDir string) ([]string, error) {
	var paths []string
	o := shortCassini()
	r, err := simulateCassini(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := writeCassiniSimTable(out, r); err != nil {
		return nil, err
	}
	if err := writeCassiniNotes(out, r); err != nil {
		return nil, err
	}
	// Fig. 2 with the per-iteration jitter only: the straggler episodes of
	// the worker traces would dominate 300 iterations of two jobs.
	fig2 := o
	fig2.Scenario, fig2.MaxIterations, fig2.Noise = replay.Fig2, 300, replay.AlibabaJitter
	fig2.Arms = []replay.Arm{{Policy: netsim.Baseline}, {Policy: netsim.Cassini}, {Policy: netsim.Ideal}}
	f, err := simulateCassini(ctx, fig2)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(out)
	if err := writeCassiniSimTable(out, f); err != nil {
		return nil, err
	}
	if plotDir == "" {
		return nil, nil
	}
	p, err := plotCassiniCDF(plotDir, r)
	if err != nil {
		return nil, err
	}
	paths = append(paths, p)
	c, err := cassiniCircleExample(ctx, "WideResNet101/800", "VGG16/1400")
	if err != nil {
		return nil, err
	}
	if p, err = plotCassiniCircle(plotDir, c); err != nil {
		return nil, err
	}
	return append(paths, p), nil
}

// parseCassiniSimFlags defines the command's flags on fs and parses args.
// The simulation checks its own fields (a bad one is a usage error); the
// command checks what it turns into them.
func parseCassiniSimFlags(fs *flag.FlagSet, args []string, s stdio) (f cassiniFlags, err error) {
	f = cassiniDefaults()
	o := &f.Cassini
	scenario := fs.String("scenario", "poisson", "poisson (arrivals at -load), paper (the paper's Fig. 11 experiment: its fabric, its ten models, Poisson arrivals, Themis placing as Themis does), dynamic (a busy cluster, then -arrive jobs every 30 s), or a fixed experiment of the paper: fig2 (two VGG19 on one link) or snapshot1..snapshot5 (Table 2), each job running -iterations (the maximum)")
	placement := fs.String("placement", "themis", "how the scheduler picks GPUs: themis (Themis's rule: fewest machines, ties drawn at random; blind to links), contiguous (first fit over the servers in order: rack-local) or scattered (one GPU per server, round robin over the racks)")
	auction := fs.String("auction", "", "Themis's mechanism: paper (its partial allocation auction among the 1-f worst off, leftover at random, worker counts re-tuned, GPUs given up at lease ends) or greedy (decreasing finish-time fairness, fixed worker counts, renewals in place); default: greedy with -placement contiguous, paper otherwise")
	fabric := fs.String("topology", "paper", "fabric: paper (the CASSINI testbed: 24 servers, 2:1) or clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]] (CORES=0: two-tier, one pod)")
	scheduler := fs.String("scheduler", "themis", "GPU allocation: themis (finish-time fairness auctions with leases, the paper's), gavel (max-min fairness rounds), shockwave (its market, rounds) or fifo")
	fs.DurationVar(&o.Lease, "lease", 0, "Themis's lease or Gavel's and Shockwave's round (0: 10m and 2m)")
	fs.IntVar(&o.GPUsPerServer, "gpus-per-server", 1, "GPUs per server")
	fs.IntVar(&o.Jobs, "jobs", 40, "number of jobs (poisson)")
	fs.IntVar(&o.Sweep, "sweep", 0, "poisson: jobs arrive in sweeps of this many copies of one configuration (model, batch, GPUs, iterations), as a hyperparameter search launches them (0: one job per arrival)")
	load := fs.Float64("load", 0.9, "average fraction of GPUs busy (Poisson arrivals); 0: every job at time 0")
	models := fs.String("models", "", "comma-separated models to draw from (default: all 13 of the paper's Table 3)")
	arrive := fs.String("arrive", "", "dynamic: comma-separated models that arrive into the busy cluster, 3 GPUs each (default DLRM,ResNet50,DLRM,ResNet50)")
	iters := fs.String("iterations", "200-1000", "iterations per job: N or MIN-MAX")
	seed := fs.String("seed", "1", "seeds of the traces and the placements: N, N-M or a list; with several, the table shows the mean and spread across seeds")
	fs.DurationVar(&o.Duration, "duration", 0, "stop at this simulated time (0: when every job has finished)")
	policies := fs.String("policies", "baseline,cassini-placement,cassini,ideal", "comma-separated arms: baseline (the scheduler's own placement), random, cassini-placement (CASSINI's ranking, no shifts), cassini (ranking and shifts; cassini/elastic, cassini/pad or cassini/paper pick how shifts are held), ideal")
	fs.IntVar(&o.Candidates, "candidates", netsim.DefaultCandidates, "placement candidates per scheduling decision (the paper: 10)")
	noise := fs.String("noise", "both", "iteration-time noise: from Alibaba PAI (both, traces or cov), gauss:CV (Gaussian jitter of that coefficient of variation) or none")
	fs.StringVar(&f.NoiseDir, "noise-dir", "", "folder of the Alibaba PAI files to read in place of the copy inside the binary (job_{1,2,3}_norm.csv, coefficient_variation.csv)")
	quiet := quietFlag(fs)
	agentMode := fs.String("agent-mode", "elastic", "agent: elastic (a shared clock paced by the slowest job; gives up shifts that do not pay), pad (hold every slot of a fixed period) or free (the paper: re-align only on drift)")
	rank := fs.String("rank", "delay", "how CASSINI picks a candidate: delay (least predicted delay: shared links' excess per job, plus each job's own contention) or score (the paper: the mean link score)")
	hold := fs.String("hold", "gain", "which jobs hold their shifts: gain (links where a replay predicts a net gain for every job), score (links scoring at least -min-score) or all (every job of the affinity graph, as the paper)")
	fs.Float64Var(&o.MinGain, "min-gain", 0, "least predicted gain per job for -hold gain, fraction of its period (0: 0.01)")
	fs.Float64Var(&o.Threshold, "threshold", agent.DefaultThreshold, "agent re-alignment trigger, fraction of the period")
	fs.BoolVar(&o.NoGiveUp, "no-give-up", false, "elastic agents never give their shifts up (the ablation of the give-up rule)")
	fs.BoolVar(&o.FullBudget, "full-budget", false, "elastic agents' budgets start with their token (a first correction at once; by default none before a token's worth of time: its ablation)")
	fs.BoolVar(&o.MeanGiveUp, "mean-give-up", false, "elastic agents weigh giving up by moving averages, every iteration alike (the rule before; its ablation)")
	fs.BoolVar(&o.PlanBudget, "plan-budget", false, "with -plan-clock, the budget applies on the plan's clock too (the rule before; its ablation)")
	fs.BoolVar(&o.PlanClock, "plan-clock", false, "each elastic agent on the plan's clock (as across processes: nothing shared but the plan) instead of a group clock")
	fs.Float64Var(&o.Budget, "budget", 0, "elastic agents' adjustments per minute at most (0: 2, the paper's rate; negative: no cap, the budget's ablation)")
	giveUp := fs.String("give-up", "group", "who decides an elastic shift does not pay: group (the members' summed wait against their summed saving) or own (each member its own)")
	fs.Float64Var(&o.MinScore, "min-score", 1, "least link score whose jobs hold their shifts with -hold score (-1: every job on a link whose peaks exceed its capacity)")
	fs.Float64Var(&o.Headroom, "headroom", 0, "idle fraction added to each profiled period (0: as the paper)")
	fs.IntVar(&o.MaxPerimeter, "max-perimeter", 4096, "cap on a unified circle in ticks; periods are rounded to a common grid past it")
	fs.DurationVar(&o.Tick, "tick", time.Millisecond, "profile tick")
	mode := fs.String("mode", "exact", "link search: exact or paper (72 angles)")
	transport := fs.String("transport", "maxmin", "the network's congestion control: maxmin (max-min fair shares at every event), dcqcn (DCQCN's rate control over fluid ECN queues, the testbed's RoCE) or mltcp (MLTCP's DCQCN variant: training flows scale their rate increase by the bytes sent in the iteration); see docs/transports.md")
	fs.DurationVar(&o.DCQCNStep, "dcqcn-step", 0, "control step of the dcqcn and mltcp transports (0: 5us; at most the 50us CNP interval)")
	fs.Float64Var(&o.MLTCP.Slope, "mltcp-slope", netsim.DefaultMLTCP.Slope, "mltcp: slope of the aggressiveness function F(r) = slope*r + intercept of a flow's bytes ratio r")
	fs.Float64Var(&o.MLTCP.Intercept, "mltcp-intercept", netsim.DefaultMLTCP.Intercept, "mltcp: intercept of the aggressiveness function")
	fs.BoolVar(&f.JSON, "json", false, "print JSON instead of tables")
	sweep := fs.String("sweep-noise", "", "run the experiment once per noise of this comma-separated list (as -noise takes them) and print one row per noise and arm: the jitter study")
	fs.StringVar(&f.PlotDir, "plot", "", "also write the CDF of the first seed's iteration times per arm into this directory (cassini_iteration_cdf.png)")
	fs.BoolVar(&f.PerModel, "per-model", false, "also print a table per model (mean and p99 iteration, slowdown, marked traffic)")
	traceFile := fs.String("trace", "", "your own jobs: a JSON `file` of models (profiles) and jobs (arrivals), - for stdin; the format is below")
	fs.Usage = func() {
		fmt.Fprint(s.err, cassiniSimulateUsage)
		fs.PrintDefaults()
		fmt.Fprint(s.err, cassiniTraceFormat)
	}
	if err = parse(fs, args); err != nil {
		return f, err
	}
	f.Quiet = *quiet
	usage := func(flag string, err error) error { return fmt.Errorf("%w: %s: %v", errUsage, flag, err) }
	if *traceFile != "" {
		var clash []string
		fs.Visit(func(fl *flag.Flag) {
			switch fl.Name {
			case "scenario", "jobs", "load", "models", "arrive", "iterations", "sweep":
				clash = append(clash, "-"+fl.Name)
			}
		})
		if clash != nil {
			return f, usage("-trace", fmt.Errorf("the file gives the jobs: %s shape generated traces only", strings.Join(clash, ", ")))
		}
		f.TraceFile = *traceFile
		*scenario = string(replay.Custom)
	}
	// The simulation reads 0 as its default; on the command line a 0 is a
	// mistake, never silently the default.
	for _, c := range []struct {
		flag string
		ok   bool
	}{
		{"-gpus-per-server", o.GPUsPerServer >= 1}, {"-jobs", o.Jobs >= 1}, {"-candidates", o.Candidates >= 1},
		{"-max-perimeter", o.MaxPerimeter >= 1}, {"-tick", o.Tick > 0}, {"-threshold", o.Threshold > 0},
	} {
		if !c.ok {
			return f, usage(c.flag, errors.New("must be positive"))
		}
	}
	// The names the command line takes, parsed into the replay's types.
	for _, c := range []struct {
		flag  string
		parse func() error
	}{
		{"-scenario", func() (e error) { o.Scenario, e = replay.ParseScenario(*scenario); return }},
		{"-placement", func() (e error) { o.Placement, e = replay.ParsePlacement(*placement); return }},
		{"-auction", func() (e error) {
			if *auction != "" {
				o.Auction, e = replay.ParseAuction(*auction)
			}
			return
		}},
		{"-topology", func() (e error) { o.Fabric, e = topology.Parse(*fabric); return }},
		{"-scheduler", func() (e error) { o.Scheduler, e = netsim.ParseScheduler(*scheduler); return }},
		{"-noise", func() (e error) { o.Noise, o.NoiseCV, e = replay.ParseNoise(*noise); return }},
		{"-agent-mode", func() (e error) { o.AgentMode, e = agent.ParseMode(*agentMode); return }},
		{"-rank", func() (e error) { o.Rank, e = netsim.ParseRank(*rank); return }},
		{"-hold", func() (e error) { o.Hold, e = netsim.ParseHold(*hold); return }},
		{"-give-up", func() (e error) { o.GiveUp, e = agent.ParseGiveUp(*giveUp); return }},
		{"-mode", func() (e error) { o.LinkMode, e = link.ParseMode(*mode); return }},
		{"-transport", func() (e error) { o.Transport, e = netsim.ParseTransport(*transport); return }},
	} {
		if err := c.parse(); err != nil {
			return f, usage(c.flag, err)
		}
	}
	switch {
	case *load < 0:
		return f, usage("-load", fmt.Errorf("%v (want a fraction of the GPUs, 0 for every job at time 0)", *load))
	case *load == 0:
		o.Load = -1 // the simulation's "every job at time 0"
	default:
		o.Load = *load
	}
	if *models != "" {
		o.Models = strings.Split(*models, ",")
	}
	if *arrive != "" {
		o.Arrive = strings.Split(*arrive, ",")
	}
	if o.MinIterations, o.MaxIterations, err = parseRange(*iters); err != nil {
		return f, usage("-iterations", err)
	}
	if o.Seeds, err = parseSeeds(*seed); err != nil {
		return f, usage("-seed", err)
	}
	o.Arms = nil
	for _, name := range strings.Split(*policies, ",") {
		a, err := replay.ParseArm(name)
		if err != nil {
			return f, usage("-policies", err)
		}
		o.Arms = append(o.Arms, a)
	}
	if *sweep != "" {
		f.Sweep = strings.Split(*sweep, ",")
		for _, n := range f.Sweep {
			if _, _, err := replay.ParseNoise(n); err != nil {
				return f, usage("-sweep-noise", err)
			}
		}
	}
	return f, nil
}

// readTrace reads f.TraceFile, if set, into f's Trace and Profiles,
// checking its numbers against f's tick and fabric. A file that cannot be
// read, or holds a bad value, is a runtime error (exit 1) naming the file
// and the field.
func readTrace(f *cassiniFlags, stdin io.Reader) error {
	if f.TraceFile == "" {
		return nil
	}
	r, name := stdin, "standard input"
	if f.TraceFile != "-" {
		file, err := os.Open(f.TraceFile)
		if err != nil {
			return fmt.Errorf("-trace: %w", err)
		}
		defer file.Close()
		r, name = file, f.TraceFile
	}
	o := workload.FileOptions{Tick: f.Tick}
	fabric := f.Fabric
	if fabric == nil {
		fabric = topology.Paper()
	}
	for _, l := range fabric.Links {
		o.MaxGbps = max(o.MaxGbps, l.Gbps)
	}
	jobs, models, err := workload.ReadJobs(r, o)
	if err != nil {
		return fmt.Errorf("-trace %s: %s", name, strings.TrimPrefix(err.Error(), "workload: invalid: "))
	}
	f.Trace, f.Profiles = jobs, models
	return nil
}

// cassiniSimulateUsage heads the command's -h.
const cassiniSimulateUsage = `usage: orrery cassini simulate [flags]

Simulates a trace on a fabric under a round scheduler, once per arm of the ablation (placement
policy, with or without CASSINI's shifts) and seed, in a fluid network (max-min fair, DCQCN or
MLTCP: -transport), and prints iteration times and congestion per arm. The trace is generated (-scenario, -jobs, -load, ...)
or your own (-trace FILE).

flags:
`

// cassiniTraceFormat is the -trace file's format, at the end of -h.
const cassiniTraceFormat = `
-trace FILE: your own jobs, JSON. Models of your own are one iteration measured alone on the
network: compute phases (ms only) and communication phases (ms, and gbps sent by each server at
its NIC, in a ring all-reduce unless "pattern" is chain or all-to-all), measured on "servers"
servers (default 2); on other server counts a phase carries what its pattern carries there.
Jobs name one of your models or a built-in one (VGG11, VGG16, VGG19, WideResNet101, ResNet50,
BERT, RoBERTa, CamemBERT, XLM, GPT1, GPT2, GPT3, DLRM; "batch" per GPU for those, default the
model's reference). Units are in the names: ms milliseconds, gbps gigabits per second, arrival_s
seconds. An iteration under 10 ticks (-tick) or a phase faster than every link is refused.

  {"models": [{"name": "my-net", "servers": 2,
               "phases": [{"ms": 150}, {"ms": 118, "gbps": 40}]}],
   "jobs": [{"model": "my-net", "gpus": 2, "iterations": 500, "arrival_s": 0},
            {"model": "VGG19", "gpus": 4, "batch": 1400, "iterations": 300, "arrival_s": 60}]}
`

// parseSeeds parses N, N-M or a comma-separated list of both.
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		lo, hi, ok := strings.Cut(strings.TrimSpace(part), "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := strconv.ParseUint(hi, 10, 64)
		if err := errors.Join(err1, err2); err != nil || b < a || b-a >= 1<<10 {
			return nil, fmt.Errorf("seeds %q: want N, N-M or a list of them, at most 1024 per range", s)
		}
		for v := a; ; v++ {
			out = append(out, v)
			if v == b {
				break
			}
		}
	}
	if len(out) > 1<<10 {
		return nil, fmt.Errorf("seeds %q: more than 1024", s)
	}
	return out, nil
}

func parseRange(s string) (int, int, error) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if errors.Join(err1, err2) != nil || a < 1 || b < a {
		return 0, 0, fmt.Errorf("%q: want N or MIN-MAX with 1 <= MIN <= MAX", s)
	}
	return a, b, nil
}
