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
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/orrery/orrery/engine/agent"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/topology"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/workload"
)

// cassiniSimOptions is one `orrery cassini simulate` run: the flags, parsed.
type cassiniSimOptions struct {
	Scenario      string // "poisson", "fig2" or "snapshot1".."snapshot5"
	Topology      string // "paper" or "clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]]"
	GPUsPerServer int
	Jobs          int
	Load          float64
	Models        []string // nil: all 13
	MinIters      int
	MaxIters      int
	Seed          uint64
	Duration      time.Duration
	Policies      []netsim.Policy
	Candidates    int
	Noise         workload.Source
	NoiseDir      string
	AgentMode     agent.Mode
	Threshold     float64
	MinScore      float64
	Headroom      float64
	MaxPerimeter  int
	Tick          time.Duration
	LinkMode      link.Mode
}

// defaultCassiniSimOptions are the command's defaults: the paper's fabric and
// Poisson workload at 90% load with noise replayed from Alibaba PAI.
func defaultCassiniSimOptions() cassiniSimOptions {
	return cassiniSimOptions{
		Scenario: "poisson", Topology: "paper", GPUsPerServer: 1, Jobs: 40, Load: 0.9, MinIters: 200, MaxIters: 1000, Seed: 1,
		Policies: netsim.Policies, Candidates: netsim.DefaultCandidates, Noise: workload.Both, NoiseDir: "testdata/alibaba",
		Threshold: agent.DefaultThreshold, MinScore: 1, Headroom: 0.05, MaxPerimeter: 4096, Tick: time.Millisecond,
	}
}

// shortCassiniSimOptions is the demo's configuration: 30 jobs of 50-100
// iterations on the paper's fabric, under half a second on two cores.
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

// CassiniSimResult is what `orrery cassini simulate` measures, per policy.
type CassiniSimResult struct {
	Scenario   string                `json:"scenario"`
	Topology   string                `json:"topology"`
	Servers    int                   `json:"servers"`
	Jobs       int                   `json:"jobs"`
	Load       float64               `json:"load"`
	Seed       uint64                `json:"seed"`
	Noise      string                `json:"noise"`
	Policies   []CassiniPolicyResult `json:"policies"`
	ElapsedSec float64               `json:"-"` // wall-clock time of the whole run
}

// CassiniPolicyResult is one policy's outcome. Iteration times run start to start,
// so they include the agents' padding.
type CassiniPolicyResult struct {
	Policy       string  `json:"policy"`
	Status       string  `json:"status"`
	MeanIterMs   float64 `json:"mean_iter_ms"`
	P50IterMs    float64 `json:"p50_iter_ms"`
	P90IterMs    float64 `json:"p90_iter_ms"`
	P99IterMs    float64 `json:"p99_iter_ms"`
	MeanSlowdown float64 `json:"mean_slowdown"` // iteration time / the job's uncontended one
	P99Slowdown  float64 `json:"p99_slowdown"`
	ExcessGbit   float64 `json:"excess_gbit"` // traffic offered above capacity, summed over links
	Iterations   int     `json:"iterations"`
	Finished     int     `json:"jobs_finished"`
	SimSeconds   float64 `json:"sim_seconds"`

	// Cassini only.
	AdjustmentsPerMin *float64 `json:"adjustments_per_min,omitempty"` // per job-minute of the agents
	Agents            *int     `json:"agents,omitempty"`
	MeanDriftMs       *float64 `json:"mean_drift_ms,omitempty"`
	PlannedScore      *float64 `json:"planned_score,omitempty"`
	RealizedScore     *float64 `json:"realized_score,omitempty"`
	ScoreLost         *float64 `json:"score_lost,omitempty"`
	MeanRankScore     *float64 `json:"mean_rank_score,omitempty"`

	IterMs    []float64 `json:"-"` // every iteration, for plots
	Slowdowns []float64 `json:"-"` // every iteration / its job's uncontended one
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

// cassiniSimulate runs every policy of o on the same trace, in parallel; the
// result does not depend on the parallelism.
func cassiniSimulate(ctx context.Context, o cassiniSimOptions) (CassiniSimResult, error) {
	var pinned map[int][]int
	var jobs []workload.Job
	if o.Scenario != "poisson" {
		sc, ok := cassiniScenarios[o.Scenario]
		if !ok {
			return CassiniSimResult{}, fmt.Errorf("-scenario %q: want poisson, fig2 or snapshot1..snapshot5", o.Scenario)
		}
		o.Topology, o.GPUsPerServer, o.Load, pinned = sc.topology, 1, 0, sc.pinned
		for _, j := range sc.jobs {
			j.Iterations = o.MaxIters
			jobs = append(jobs, j)
		}
	}
	topo, err := parseCassiniTopology(o.Topology)
	if err != nil {
		return CassiniSimResult{}, err
	}
	if len(o.Policies) == 0 {
		return CassiniSimResult{}, errors.New("-policies: none")
	}
	if jobs == nil {
		jobs, err = workload.Generate(workload.Config{
			Models: o.Models, Jobs: o.Jobs, Load: o.Load, ClusterGPUs: topo.Servers * max(o.GPUsPerServer, 1),
			GPUsPerServer: o.GPUsPerServer, MinIterations: o.MinIters, MaxIterations: o.MaxIters, Seed: o.Seed,
		})
		if err != nil {
			return CassiniSimResult{}, err
		}
	}
	noise := workload.Replay{Source: workload.None}
	if o.Noise != workload.None {
		if noise, err = workload.LoadReplay(os.DirFS(o.NoiseDir), o.Noise); err != nil {
			return CassiniSimResult{}, fmt.Errorf("-noise-dir %s: %w (run from the repository root, or pass -noise none)", o.NoiseDir, err)
		}
	}
	res := CassiniSimResult{Scenario: o.Scenario, Topology: o.Topology, Servers: topo.Servers, Jobs: len(jobs), Load: o.Load, Seed: o.Seed, Noise: o.Noise.String(),
		Policies: make([]CassiniPolicyResult, len(o.Policies))}
	errs := make([]error, len(o.Policies))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range o.Policies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cfg := netsim.Config{
				Topology: topo, GPUsPerServer: o.GPUsPerServer, Jobs: jobs, Pinned: pinned, Policy: p, Candidates: o.Candidates,
				Seed: o.Seed, Duration: o.Duration, Noise: noise,
				Agent: agent.Options{Mode: o.AgentMode, Threshold: o.Threshold},
				Cassini: netsim.CassiniOptions{Mode: o.LinkMode, Tick: o.Tick, MaxPerimeter: o.MaxPerimeter,
					Headroom: o.Headroom, MinScore: o.MinScore, Workers: 1},
			}
			r, err := netsim.Run(ctx, cfg)
			if err != nil {
				errs[i] = fmt.Errorf("%v: %w", p, err)
				return
			}
			res.Policies[i] = summarizeCassini(r)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return CassiniSimResult{}, err
	}
	return res, nil
}

func summarizeCassini(r netsim.Result) CassiniPolicyResult {
	slow := r.Slowdowns()
	pr := CassiniPolicyResult{
		Policy: r.Policy.String(), Status: r.Status.String(),
		MeanIterMs: cassiniRound(r.Mean()), P50IterMs: cassiniRound(r.Percentile(50)), P90IterMs: cassiniRound(r.Percentile(90)), P99IterMs: cassiniRound(r.Percentile(99)),
		MeanSlowdown: cassiniRound(netsim.Mean(slow)), P99Slowdown: cassiniRound(netsim.Percentile(slow, 99)),
		ExcessGbit: cassiniRound(r.ExcessGbit), Iterations: len(r.IterMs), SimSeconds: cassiniRound(r.End.Seconds()),
		IterMs: r.IterMs, Slowdowns: slow,
	}
	for _, j := range r.Jobs {
		if j.End > 0 {
			pr.Finished++
		}
	}
	if r.Policy == netsim.Cassini {
		f := func(v float64) *float64 { v = cassiniRound(v); return &v }
		agents := r.Agent.Agents
		pr.Agents = &agents
		pr.AdjustmentsPerMin = f(r.Agent.PerMinute)
		pr.MeanDriftMs = f(float64(r.Agent.MeanAbs) / 1e6)
		pr.PlannedScore, pr.RealizedScore, pr.ScoreLost = f(r.Drift.Planned), f(r.Drift.Realized), f(r.Drift.Lost)
		pr.MeanRankScore = f(r.Rank.MeanBest)
	}
	return pr
}

// cassiniRound rounds to three decimals, halves away from zero.
func cassiniRound(v float64) float64 { return math.Round(v*1000) / 1000 }

// writeCassiniSimTable prints r with the policies side by side.
func writeCassiniSimTable(w io.Writer, r CassiniSimResult) error {
	fmt.Fprintf(w, "CASSINI simulation (%s): %s fabric (%d servers), %d jobs, load %.2f, seed %d, noise %s\n\n",
		r.Scenario, r.Topology, r.Servers, r.Jobs, r.Load, r.Seed, r.Noise)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, f func(p CassiniPolicyResult) string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, p := range r.Policies {
			fmt.Fprintf(tw, "%s\t", f(p))
		}
		fmt.Fprintln(tw)
	}
	num := func(format string, v func(p CassiniPolicyResult) float64) func(p CassiniPolicyResult) string {
		return func(p CassiniPolicyResult) string { return fmt.Sprintf(format, v(p)) }
	}
	opt := func(format string, v func(p CassiniPolicyResult) *float64) func(p CassiniPolicyResult) string {
		return func(p CassiniPolicyResult) string {
			if x := v(p); x != nil {
				return fmt.Sprintf(format, *x)
			}
			return "-"
		}
	}
	row("", func(p CassiniPolicyResult) string { return p.Policy })
	row("mean iteration (ms)", num("%.1f", func(p CassiniPolicyResult) float64 { return p.MeanIterMs }))
	row("p50 iteration (ms)", num("%.1f", func(p CassiniPolicyResult) float64 { return p.P50IterMs }))
	row("p90 iteration (ms)", num("%.1f", func(p CassiniPolicyResult) float64 { return p.P90IterMs }))
	row("p99 iteration (ms)", num("%.1f", func(p CassiniPolicyResult) float64 { return p.P99IterMs }))
	row("mean slowdown (x alone)", num("%.3f", func(p CassiniPolicyResult) float64 { return p.MeanSlowdown }))
	row("p99 slowdown (x alone)", num("%.3f", func(p CassiniPolicyResult) float64 { return p.P99Slowdown }))
	row("excess traffic (Gbit)", num("%.0f", func(p CassiniPolicyResult) float64 { return p.ExcessGbit }))
	row("jobs finished", func(p CassiniPolicyResult) string { return strconv.Itoa(p.Finished) })
	row("simulated time (s)", num("%.0f", func(p CassiniPolicyResult) float64 { return p.SimSeconds }))
	row("jobs with an agent", func(p CassiniPolicyResult) string {
		if p.Agents == nil {
			return "-"
		}
		return strconv.Itoa(*p.Agents)
	})
	row("adjustments per job-minute", opt("%.2f", func(p CassiniPolicyResult) *float64 { return p.AdjustmentsPerMin }))
	row("score planned -> realized", func(p CassiniPolicyResult) string {
		if p.PlannedScore == nil || *p.PlannedScore == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f -> %.3f", *p.PlannedScore, *p.RealizedScore)
	})
	return tw.Flush()
}

// runCassiniSimulate is `orrery cassini simulate`.
func runCassiniSimulate(ctx context.Context, args []string, s stdio) error {
	o := defaultCassiniSimOptions()
	fs := flags("cassini simulate", s)
	fs.StringVar(&o.Scenario, "scenario", o.Scenario, "poisson (arrivals at -load), or a fixed experiment of the paper: fig2 (two VGG19 on one link) or snapshot1..snapshot5 (Table 2), each job running -iterations (the maximum)")
	fs.StringVar(&o.Topology, "topology", o.Topology, "fabric: paper (the CASSINI testbed: 24 servers, 2:1) or clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]] (CORES=0: two-tier, one pod)")
	fs.IntVar(&o.GPUsPerServer, "gpus-per-server", o.GPUsPerServer, "GPUs per server")
	fs.IntVar(&o.Jobs, "jobs", o.Jobs, "number of jobs")
	fs.Float64Var(&o.Load, "load", o.Load, "average fraction of GPUs busy (Poisson arrivals); 0: every job at time 0")
	models := fs.String("models", "", "comma-separated models to draw from (default: all 13 of the paper's Table 3)")
	iters := fs.String("iterations", "200-1000", "iterations per job: N or MIN-MAX")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the trace and the placements")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "stop at this simulated time (0: when every job has finished)")
	policies := fs.String("policies", "baseline,random,cassini,ideal", "comma-separated policies")
	fs.IntVar(&o.Candidates, "candidates", o.Candidates, "placement candidates per job (the paper: 10)")
	noise := fs.String("noise", o.Noise.String(), "iteration-time noise from Alibaba PAI: both, traces, cov or none")
	fs.StringVar(&o.NoiseDir, "noise-dir", o.NoiseDir, "directory of the Alibaba PAI files")
	mode := fs.String("agent-mode", "pad", "agent: pad (hold every slot) or free (the paper: re-align only on drift)")
	fs.Float64Var(&o.Threshold, "threshold", o.Threshold, "agent re-alignment trigger, fraction of the period")
	fs.Float64Var(&o.MinScore, "min-score", o.MinScore, "least link score whose jobs hold their shifts (-1: every job, as the paper)")
	fs.Float64Var(&o.Headroom, "headroom", o.Headroom, "idle fraction added to each profiled period (0: as the paper)")
	fs.IntVar(&o.MaxPerimeter, "max-perimeter", o.MaxPerimeter, "cap on a unified circle in ticks; periods are rounded to a common grid past it")
	fs.DurationVar(&o.Tick, "tick", o.Tick, "profile tick")
	lmode := fs.String("mode", "exact", "link search: exact or paper (72 angles)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: orrery cassini simulate [flags]\n\nSimulates the jobs of a Poisson trace on a fabric under each placement policy (a max-min fair\nfluid network) and prints iteration times and congestion per policy.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	var err error
	if *models != "" {
		o.Models = strings.Split(*models, ",")
		for _, m := range o.Models {
			if _, err := workload.Lookup(m); err != nil {
				return fmt.Errorf("%w: -models: %v", errUsage, err)
			}
		}
	}
	lo, hi, ok := strings.Cut(*iters, "-")
	if !ok {
		hi = lo
	}
	if o.MinIters, err = strconv.Atoi(lo); err == nil {
		o.MaxIters, err = strconv.Atoi(hi)
	}
	if err != nil || o.MinIters < 1 || o.MaxIters < o.MinIters {
		return fmt.Errorf("%w: -iterations %q: want N or MIN-MAX with 1 <= MIN <= MAX", errUsage, *iters)
	}
	o.Policies = nil
	for _, p := range strings.Split(*policies, ",") {
		pol, err := netsim.ParsePolicy(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("%w: -policies: %v", errUsage, err)
		}
		o.Policies = append(o.Policies, pol)
	}
	if o.Noise, err = workload.ParseSource(*noise); err != nil {
		return fmt.Errorf("%w: -noise: %v", errUsage, err)
	}
	if o.AgentMode, err = agent.ParseMode(*mode); err != nil {
		return fmt.Errorf("%w: -agent-mode: %v", errUsage, err)
	}
	if o.LinkMode, err = link.ParseMode(*lmode); err != nil {
		return fmt.Errorf("%w: -mode: %v", errUsage, err)
	}
	if _, err := parseCassiniTopology(o.Topology); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if _, ok := cassiniScenarios[o.Scenario]; !ok && o.Scenario != "poisson" {
		return fmt.Errorf("%w: -scenario %q: want poisson, fig2 or snapshot1..snapshot5", errUsage, o.Scenario)
	}
	r, err := cassiniSimulate(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return writeJSON(s.out, b, false)
	}
	return writeCassiniSimTable(s.out, r)
}

// cassiniSimulateDemo is the demo's CASSINI simulation: the short Poisson
// configuration on the paper's fabric and the paper's Fig. 2 (two VGG19 jobs
// on one link, 300 iterations, per-iteration jitter), each printed as a table, with the iteration-time CDF of the
// first and the unified circle of WideResNet101 and VGG16 (Table 2
// snapshot 1) written into plotDir ("" for no plots). It returns the plot
// paths. It takes under a second on two cores; the output is deterministic.
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
	fig2.Policies = []netsim.Policy{netsim.Baseline, netsim.Cassini, netsim.Ideal}
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
