package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orrery/orrery/engine/agent"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/topology"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/workload"
)

// cassiniSimOptions is one `orrery cassini simulate` run: the flags, parsed.
type cassiniSimOptions struct {
	Scenario      string // "poisson", "dynamic", "fig2" or "snapshot1".."snapshot5"
	Topology      string // "paper" or "clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]]"
	Scheduler     netsim.Scheduler
	Lease         time.Duration
	GPUsPerServer int
	Jobs          int
	Load          float64
	Models        []string // nil: all 13
	Arrive        []string // dynamic: the arriving models (nil: the default)
	MinIters      int
	MaxIters      int
	Seeds         []uint64
	Duration      time.Duration
	Arms          []cassiniArm
	Candidates    int
	Noise         workload.Source
	NoiseCV       float64 // Gauss noise's coefficient of variation
	NoiseDir      string
	AgentMode     agent.Mode
	Threshold     float64
	Rank          netsim.Rank
	Hold          netsim.Hold
	MinGain       float64
	MinScore      float64
	Headroom      float64
	MaxPerimeter  int
	Tick          time.Duration
	LinkMode      link.Mode
	Sweep         []string // -sweep-noise: the noises to run the experiment under, one after another
	PlotDir       string   // -plot: where to write the iteration-time CDF ("": none)
}

// cassiniArm is one arm of the ablation: a placement policy and, for
// CASSINI with shifts, how the shifts are held.
type cassiniArm struct {
	Policy netsim.Policy
	Shifts string // Cassini: "" (the options'), "elastic", "pad" or "paper"
}

func (a cassiniArm) String() string {
	if a.Shifts != "" {
		return a.Policy.String() + "/" + a.Shifts
	}
	return a.Policy.String()
}

// parseArm parses a policy name, or cassini/elastic, cassini/pad or
// cassini/paper.
func parseArm(s string) (cassiniArm, error) {
	name, shifts, _ := strings.Cut(strings.TrimSpace(s), "/")
	p, err := netsim.ParsePolicy(name)
	if err != nil {
		return cassiniArm{}, err
	}
	switch {
	case shifts == "":
	case p != netsim.Cassini:
		return cassiniArm{}, fmt.Errorf("%q: only cassini takes a shift variant", s)
	case shifts != "elastic" && shifts != "pad" && shifts != "paper":
		return cassiniArm{}, fmt.Errorf("%q: shift variant %q (want elastic, pad or paper)", s, shifts)
	}
	return cassiniArm{p, shifts}, nil
}

// defaultArms are the ablation's: the scheduler alone, with CASSINI's
// placement only, with its placement and shifts, and Ideal.
var defaultArms = []cassiniArm{{Policy: netsim.Baseline}, {Policy: netsim.CassiniPlacement}, {Policy: netsim.Cassini}, {Policy: netsim.Ideal}}

// defaultCassiniSimOptions are the command's defaults: the paper's fabric,
// Themis with 10-minute leases, and the Poisson workload at 90% load with
// noise replayed from Alibaba PAI.
func defaultCassiniSimOptions() cassiniSimOptions {
	return cassiniSimOptions{
		Scenario: "poisson", Topology: "paper", GPUsPerServer: 1, Jobs: 40, Load: 0.9, MinIters: 200, MaxIters: 1000, Seeds: []uint64{1},
		Arms: defaultArms, Candidates: netsim.DefaultCandidates, Noise: workload.Both, NoiseDir: "testdata/alibaba",
		Threshold: agent.DefaultThreshold, MinScore: 1, MaxPerimeter: 4096, Tick: time.Millisecond,
	}
}

// shortCassiniSimOptions is the demo's configuration: 30 jobs of 50-100
// iterations on the paper's fabric, under a second on two cores.
func shortCassiniSimOptions() cassiniSimOptions {
	o := defaultCassiniSimOptions()
	o.Jobs, o.MinIters, o.MaxIters = 30, 50, 100
	return o
}

// cassiniScenario is a fixed experiment of the paper: jobs pinned so that
// they share the uplinks of a two-rack fabric, all starting at once.
type cassiniScenario struct {
	topology string
	jobs     []workload.Job // Iterations set from the options
	pinned   map[int][]int
}

// cassiniScenarios are the paper's Fig. 2 (two VGG19 jobs on one link) and
// the five snapshots of its Table 2 (batch sizes as there). Job i runs on
// one server of each rack, so every job crosses both racks' uplinks.
var cassiniScenarios = map[string]cassiniScenario{
	"fig2":      snapshot("clos:1,2,2,1,0", "VGG19/1400", "VGG19/1400"),
	"snapshot1": snapshot("clos:1,2,3,1,0", "WideResNet101/800", "VGG16/1400"),
	"snapshot2": snapshot("clos:1,2,3,1,0", "VGG19/1400", "VGG16/1700", "ResNet50/1600"),
	"snapshot3": snapshot("clos:1,2,3,1,0", "VGG19/1024", "VGG16/1200"),
	"snapshot4": snapshot("clos:1,2,3,1,0", "RoBERTa/12", "RoBERTa/12"),
	"snapshot5": snapshot("clos:1,2,3,1,0", "BERT/8", "VGG19/1400", "WideResNet101/800"),
}

const scenarioNames = "poisson, dynamic, fig2 or snapshot1..snapshot5"

func snapshot(topo string, jobs ...string) cassiniScenario {
	perRack := len(jobs)
	if topo == "clos:1,2,3,1,0" {
		perRack = 3
	}
	sc := cassiniScenario{topology: topo, pinned: map[int][]int{}}
	for i, j := range jobs {
		model, batch, _ := strings.Cut(j, "/")
		b, _ := strconv.Atoi(batch)
		sc.jobs = append(sc.jobs, workload.Job{ID: i, Model: model, GPUs: 2, Batch: b})
		sc.pinned[i] = []int{i, perRack + i}
	}
	return sc
}

func parseCassiniTopology(s string) (*topology.Topology, error) {
	if s == "paper" {
		return topology.Paper(), nil
	}
	spec, ok := strings.CutPrefix(s, "clos:")
	if !ok {
		return nil, fmt.Errorf("-topology %q: want paper or clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]]", s)
	}
	parts := strings.Split(spec, ",")
	if len(parts) < 5 || len(parts) > 7 {
		return nil, fmt.Errorf("-topology %q: want 5 to 7 numbers after \"clos:\"", s)
	}
	var n [5]int
	for i := range n {
		v, err := strconv.Atoi(parts[i])
		if err != nil || v < 0 || v > 1<<16 {
			return nil, fmt.Errorf("-topology %q: %q is not a count", s, parts[i])
		}
		n[i] = v
	}
	gbps, up := 50.0, 0.0
	for i, p := range parts[5:] {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0) || v > 1e6 {
			return nil, fmt.Errorf("-topology %q: %q is not a link speed in Gbps", s, p)
		}
		if i == 0 {
			gbps = v
		} else {
			up = v
		}
	}
	if up == 0 {
		up = gbps
	}
	t, err := topology.New(topology.Spec{Pods: n[0], ToRsPerPod: n[1], ServersPerToR: n[2], AggsPerPod: n[3], Cores: n[4],
		ServerGbps: gbps, ToRGbps: up, AggGbps: up})
	if err != nil {
		return nil, fmt.Errorf("-topology %q: %w", s, err)
	}
	return t, nil
}

// cassiniTrace returns the jobs of o's scenario for one seed, their pinned
// servers (snapshots) and the topology spec to run them on.
func cassiniTrace(o cassiniSimOptions, seed uint64, gpus int) ([]workload.Job, map[int][]int, error) {
	base := workload.Config{Models: o.Models, Jobs: o.Jobs, Load: o.Load, ClusterGPUs: gpus, GPUsPerServer: o.GPUsPerServer,
		MinIterations: o.MinIters, MaxIterations: o.MaxIters, Seed: seed}
	switch o.Scenario {
	case "poisson":
		jobs, err := workload.Generate(base)
		return jobs, nil, err
	case "dynamic":
		jobs, err := workload.GenerateDynamic(workload.Dynamic{Base: base, Arrive: o.Arrive})
		return jobs, nil, err
	}
	sc, ok := cassiniScenarios[o.Scenario]
	if !ok {
		return nil, nil, fmt.Errorf("-scenario %q: want %s", o.Scenario, scenarioNames)
	}
	var jobs []workload.Job
	for _, j := range sc.jobs {
		j.Iterations = o.MaxIters
		jobs = append(jobs, j)
	}
	return jobs, sc.pinned, nil
}

// config is the simulation of one arm of o on jobs.
func (o cassiniSimOptions) config(topo *topology.Topology, arm cassiniArm, jobs []workload.Job, pinned map[int][]int, seed uint64, noise workload.Replay) netsim.Config {
	cfg := netsim.Config{
		Topology: topo, GPUsPerServer: o.GPUsPerServer, Jobs: jobs, Pinned: pinned, Scheduler: o.Scheduler, Lease: o.Lease,
		Policy: arm.Policy, Candidates: o.Candidates, Seed: seed, Duration: o.Duration, Noise: noise,
		Agent: agent.Options{Mode: o.AgentMode, Threshold: o.Threshold},
		Cassini: netsim.CassiniOptions{Mode: o.LinkMode, Tick: o.Tick, MaxPerimeter: o.MaxPerimeter,
			Headroom: o.Headroom, Rank: o.Rank, Hold: o.Hold, MinGain: o.MinGain, MinScore: o.MinScore, Workers: 1},
	}
	switch arm.Shifts {
	case "elastic": // the defaults
		cfg.Agent.Mode, cfg.Cassini.Hold, cfg.Cassini.Headroom = agent.Elastic, netsim.HoldGain, 0
	case "pad": // the previous defaults: fixed slots with 5% headroom, fully compatible links only
		cfg.Agent.Mode, cfg.Cassini.Hold, cfg.Cassini.MinScore, cfg.Cassini.Headroom = agent.Pad, netsim.HoldScore, 1, 0.05
	case "paper": // the paper: every job of the affinity graph, re-aligned on drift
		cfg.Agent.Mode, cfg.Cassini.Hold, cfg.Cassini.Headroom = agent.Free, netsim.HoldAll, 0
	}
	return cfg
}

// cassiniSimulate runs every arm of o on every seed's trace, in parallel;
// the result does not depend on the parallelism.
func cassiniSimulate(ctx context.Context, o cassiniSimOptions) (CassiniSimResult, error) {
	if sc, ok := cassiniScenarios[o.Scenario]; ok {
		o.Topology, o.GPUsPerServer, o.Load = sc.topology, 1, 0
	}
	topo, err := parseCassiniTopology(o.Topology)
	if err != nil {
		return CassiniSimResult{}, err
	}
	if len(o.Arms) == 0 || len(o.Seeds) == 0 {
		return CassiniSimResult{}, errors.New("-policies or -seeds: none")
	}
	noise := workload.Replay{Source: o.Noise, CV: o.NoiseCV}
	if o.Noise != workload.None && o.Noise != workload.Gauss {
		if noise, err = workload.LoadReplay(os.DirFS(o.NoiseDir), o.Noise); err != nil {
			return CassiniSimResult{}, fmt.Errorf("-noise-dir %s: %w (run from the repository root, or pass -noise none)", o.NoiseDir, err)
		}
	}
	gpus := topo.Servers * max(o.GPUsPerServer, 1)
	traces := make([][]workload.Job, len(o.Seeds))
	var pinned map[int][]int
	for i, seed := range o.Seeds {
		if traces[i], pinned, err = cassiniTrace(o, seed, gpus); err != nil {
			return CassiniSimResult{}, err
		}
	}
	runs := make([][]CassiniPolicyResult, len(o.Arms)) // arm, seed
	for a := range runs {
		runs[a] = make([]CassiniPolicyResult, len(o.Seeds))
	}
	errs := make([]error, len(o.Arms)*len(o.Seeds))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for a, arm := range o.Arms {
		for i, seed := range o.Seeds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				n := noise
				n.Seed, n.Offset = seed, int((seed-1)%1024) // seed 1 deals the release as it comes
				r, err := netsim.Run(ctx, o.config(topo, arm, traces[i], pinned, seed, n))
				if err != nil {
					errs[a*len(o.Seeds)+i] = fmt.Errorf("%v, seed %d: %w", arm, seed, err)
					return
				}
				runs[a][i] = summarizeCassini(arm, seed, r)
			}()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return CassiniSimResult{}, err
	}
	noiseName := o.Noise.String()
	if o.Noise == workload.Gauss {
		noiseName = fmt.Sprintf("gauss:%g", o.NoiseCV)
	}
	res := CassiniSimResult{Scenario: o.Scenario, Scheduler: o.Scheduler.String(), Topology: o.Topology, Servers: topo.Servers,
		Jobs: len(traces[0]), Load: o.Load, Seeds: o.Seeds, Noise: noiseName}
	for a, arm := range o.Arms {
		res.Arms = append(res.Arms, aggregateCassini(arm, runs[a], runs[0]))
	}
	return res, nil
}

// runCassiniSimulate is `orrery cassini simulate`.
func runCassiniSimulate(ctx context.Context, args []string, s stdio) error {
	o, asJSON, perModel, err := parseCassiniSimFlags(args, s)
	if err != nil {
		return err
	}
	if o.Sweep != nil {
		return runCassiniSweep(ctx, o, asJSON, s)
	}
	r, err := cassiniSimulate(ctx, o)
	if err != nil {
		return err
	}
	if o.PlotDir != "" {
		if _, err := plotCassiniCDF(o.PlotDir, r); err != nil {
			return err
		}
	}
	if asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return writeJSON(s.out, b, false)
	}
	if err := writeCassiniSimTable(s.out, r); err != nil {
		return err
	}
	if perModel {
		fmt.Fprintln(s.out)
		return writeCassiniModelTable(s.out, r)
	}
	return nil
}

// runCassiniSweep runs o once per noise of o.Sweep and prints one table
// (or a JSON array of the results).
func runCassiniSweep(ctx context.Context, o cassiniSimOptions, asJSON bool, s stdio) error {
	var rs []CassiniSimResult
	for _, n := range o.Sweep {
		o.Noise, o.NoiseCV, _ = workload.ParseNoise(n) // checked when parsed
		r, err := cassiniSimulate(ctx, o)
		if err != nil {
			return fmt.Errorf("noise %s: %w", n, err)
		}
		rs = append(rs, r)
	}
	if asJSON {
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
	o := shortCassiniSimOptions()
	r, err := cassiniSimulate(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := writeCassiniSimTable(out, r); err != nil {
		return nil, err
	}
	// Fig. 2 with the per-iteration jitter only: the straggler episodes of
	// the worker traces would dominate 300 iterations of two jobs.
	fig2 := o
	fig2.Scenario, fig2.MaxIters, fig2.Noise = "fig2", 300, workload.Jitter
	fig2.Arms = []cassiniArm{{Policy: netsim.Baseline}, {Policy: netsim.Cassini}, {Policy: netsim.Ideal}}
	f, err := cassiniSimulate(ctx, fig2)
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

// cassiniRound rounds to three decimals, halves away from zero.
func cassiniRound(v float64) float64 { return math.Round(v*1000) / 1000 }

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

// parseCassiniSimFlags parses the command line of `orrery cassini simulate`.
func parseCassiniSimFlags(args []string, s stdio) (o cassiniSimOptions, asJSON, perModel bool, err error) {
	o = defaultCassiniSimOptions()
	fs := flags("cassini simulate", s)
	fs.StringVar(&o.Scenario, "scenario", o.Scenario, "poisson (arrivals at -load), dynamic (a busy cluster, then -arrive jobs every 30 s), or a fixed experiment of the paper: fig2 (two VGG19 on one link) or snapshot1..snapshot5 (Table 2), each job running -iterations (the maximum)")
	fs.StringVar(&o.Topology, "topology", o.Topology, "fabric: paper (the CASSINI testbed: 24 servers, 2:1) or clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]] (CORES=0: two-tier, one pod)")
	sched := fs.String("scheduler", "themis", "GPU allocation: themis (finish-time fairness auctions with leases, the paper's), gavel (max-min fairness rounds), shockwave (its market, rounds) or fifo")
	fs.DurationVar(&o.Lease, "lease", o.Lease, "Themis's lease or Gavel's and Shockwave's round (0: 10m and 2m)")
	fs.IntVar(&o.GPUsPerServer, "gpus-per-server", o.GPUsPerServer, "GPUs per server")
	fs.IntVar(&o.Jobs, "jobs", o.Jobs, "number of jobs (poisson)")
	fs.Float64Var(&o.Load, "load", o.Load, "average fraction of GPUs busy (Poisson arrivals); 0: every job at time 0")
	models := fs.String("models", "", "comma-separated models to draw from (default: all 13 of the paper's Table 3)")
	arrive := fs.String("arrive", "", "dynamic: comma-separated models that arrive into the busy cluster, 3 GPUs each (default DLRM,ResNet50,DLRM,ResNet50)")
	iters := fs.String("iterations", "200-1000", "iterations per job: N or MIN-MAX")
	seed := fs.String("seed", "1", "seeds of the traces and the placements: N, N-M or a list; with several, the table shows the mean and spread across seeds")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "stop at this simulated time (0: when every job has finished)")
	policies := fs.String("policies", "baseline,cassini-placement,cassini,ideal", "comma-separated arms: baseline (the scheduler's own placement), random, cassini-placement (CASSINI's ranking, no shifts), cassini (ranking and shifts; cassini/elastic, cassini/pad or cassini/paper pick how shifts are held), ideal")
	fs.IntVar(&o.Candidates, "candidates", o.Candidates, "placement candidates per scheduling decision (the paper: 10)")
	noise := fs.String("noise", o.Noise.String(), "iteration-time noise: from Alibaba PAI (both, traces or cov), gauss:CV (Gaussian jitter of that coefficient of variation) or none")
	fs.StringVar(&o.NoiseDir, "noise-dir", o.NoiseDir, "directory of the Alibaba PAI files")
	mode := fs.String("agent-mode", "elastic", "agent: elastic (a shared clock paced by the slowest job; gives up shifts that do not pay), pad (hold every slot of a fixed period) or free (the paper: re-align only on drift)")
	rank := fs.String("rank", "delay", "how CASSINI picks a candidate: delay (least predicted delay: shared links' excess per job, plus each job's own contention) or score (the paper: the mean link score)")
	hold := fs.String("hold", "gain", "which jobs hold their shifts: gain (links where a replay predicts a net gain for every job), score (links scoring at least -min-score) or all (every job of the affinity graph, as the paper)")
	fs.Float64Var(&o.MinGain, "min-gain", o.MinGain, "least predicted gain per job for -hold gain, fraction of its period (0: 0.01)")
	fs.Float64Var(&o.Threshold, "threshold", o.Threshold, "agent re-alignment trigger, fraction of the period")
	fs.Float64Var(&o.MinScore, "min-score", o.MinScore, "least link score whose jobs hold their shifts with -hold score (-1: every job on a link whose peaks exceed its capacity)")
	fs.Float64Var(&o.Headroom, "headroom", o.Headroom, "idle fraction added to each profiled period (0: as the paper)")
	fs.IntVar(&o.MaxPerimeter, "max-perimeter", o.MaxPerimeter, "cap on a unified circle in ticks; periods are rounded to a common grid past it")
	fs.DurationVar(&o.Tick, "tick", o.Tick, "profile tick")
	lmode := fs.String("mode", "exact", "link search: exact or paper (72 angles)")
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	sweep := fs.String("sweep-noise", "", "run the experiment once per noise of this comma-separated list (as -noise takes them) and print one row per noise and arm: the jitter study")
	fs.StringVar(&o.PlotDir, "plot", "", "also write the CDF of the first seed's iteration times per arm into this directory (cassini_iteration_cdf.png)")
	fs.BoolVar(&perModel, "per-model", false, "also print a table per model (mean and p99 iteration, slowdown, marked traffic)")
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: orrery cassini simulate [flags]\n\nSimulates a trace on a fabric under a round scheduler, once per arm of the ablation (placement\npolicy, with or without CASSINI's shifts) and seed, in a max-min fair fluid network, and prints\niteration times and congestion per arm.\n\n")
		fs.PrintDefaults()
	}
	if err = parse(fs, args); err != nil {
		return o, false, false, err
	}
	usage := func(flag string, err error) error { return fmt.Errorf("%w: %s: %v", errUsage, flag, err) }
	if *models != "" {
		if o.Models, err = parseModels(*models); err != nil {
			return o, false, false, usage("-models", err)
		}
	}
	if *arrive != "" {
		if o.Arrive, err = parseModels(*arrive); err != nil {
			return o, false, false, usage("-arrive", err)
		}
	}
	if o.MinIters, o.MaxIters, err = parseRange(*iters); err != nil {
		return o, false, false, usage("-iterations", err)
	}
	if o.Seeds, err = parseSeeds(*seed); err != nil {
		return o, false, false, usage("-seed", err)
	}
	o.Arms = nil
	for _, p := range strings.Split(*policies, ",") {
		arm, err := parseArm(p)
		if err != nil {
			return o, false, false, usage("-policies", err)
		}
		o.Arms = append(o.Arms, arm)
	}
	err = errors.Join(
		wrapFlag("-scheduler", func() (e error) { o.Scheduler, e = netsim.ParseScheduler(*sched); return }),
		wrapFlag("-hold", func() (e error) { o.Hold, e = netsim.ParseHold(*hold); return }),
		wrapFlag("-rank", func() (e error) { o.Rank, e = netsim.ParseRank(*rank); return }),
		wrapFlag("-noise", func() (e error) { o.Noise, o.NoiseCV, e = workload.ParseNoise(*noise); return }),
		wrapFlag("-agent-mode", func() (e error) { o.AgentMode, e = agent.ParseMode(*mode); return }),
		wrapFlag("-mode", func() (e error) { o.LinkMode, e = link.ParseMode(*lmode); return }),
		wrapFlag("-topology", func() (e error) { _, e = parseCassiniTopology(o.Topology); return }),
	)
	if err != nil {
		return o, false, false, fmt.Errorf("%w: %v", errUsage, err)
	}
	if *sweep != "" {
		o.Sweep = strings.Split(*sweep, ",")
		for _, n := range o.Sweep {
			if _, _, err := workload.ParseNoise(n); err != nil {
				return o, false, false, usage("-sweep-noise", err)
			}
		}
	}
	if _, ok := cassiniScenarios[o.Scenario]; !ok && o.Scenario != "poisson" && o.Scenario != "dynamic" {
		return o, false, false, fmt.Errorf("%w: -scenario %q: want %s", errUsage, o.Scenario, scenarioNames)
	}
	return o, asJSON, perModel, nil
}

func wrapFlag(name string, f func() error) error {
	if err := f(); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

func parseModels(s string) ([]string, error) {
	out := strings.Split(s, ",")
	for _, m := range out {
		if _, err := workload.Lookup(m); err != nil {
			return nil, err
		}
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

// modelNames are the models of r's runs, in Table 3's order.
func modelNames(runs []CassiniPolicyResult) []string {
	seen := map[string]bool{}
	for _, r := range runs {
		for _, m := range r.Models {
			seen[m.Model] = true
		}
	}
	var out []string
	for _, m := range workload.Models() {
		if seen[m.Name] {
			out = append(out, m.Name)
		}
	}
	return slices.Clip(out)
}
