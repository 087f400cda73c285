package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"

	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/cassini"
	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// simWorkerArg runs the program as a cluster-simulation worker: one process
// per run, its fluid filling named by its last argument.
const simWorkerArg = "sim-worker"

// simProfileEnv, when set, names the file a worker writes the CPU profile
// of its simulation to (go tool pprof reads it).
const simProfileEnv = "ORRERY_BENCH_CPUPROFILE"

// simCase is a cluster simulation of the fluid section.
type simCase struct {
	Name       string
	Fabric     string // "paper" or "clos1000"
	Jobs       int
	MinI, MaxI int
	Policy     netsim.Policy
	// Modes are the fillings run (nil: every one of fluidModes), Rounds
	// how many times (0: the section's).
	Modes  []string `json:",omitempty"`
	Rounds int      `json:",omitempty"`
}

// simRun is one worker's run.
type simRun struct {
	CPU    float64 `json:"cpu_seconds"`
	Events int64   `json:"events"`
	Result string  `json:"result_sha256"` // of the netsim.Result's JSON
}

func (c simCase) config(root string) (netsim.Config, error) {
	tp := topology.Paper()
	if c.Fabric == "clos1000" {
		var err error
		if tp, err = topology.New(cassini.ClosSpec()); err != nil {
			return netsim.Config{}, err
		}
	}
	jobs, err := workload.Generate(workload.Config{Jobs: c.Jobs, Load: 0.9, ClusterGPUs: tp.Servers, GPUsPerServer: 1,
		MinIterations: c.MinI, MaxIterations: c.MaxI, Seed: 1})
	if err != nil {
		return netsim.Config{}, err
	}
	noise, err := workload.LoadReplay(os.DirFS(filepath.Join(root, "internal", "eval", "data", "alibaba")), workload.Both)
	if err != nil {
		return netsim.Config{}, err
	}
	return netsim.Config{Topology: tp, Jobs: jobs, Policy: c.Policy, Noise: noise, Seed: 1,
		Cassini: netsim.CassiniOptions{Workers: 1}}, nil
}

// simWorker runs the simCase in os.Args[3] (JSON) from root os.Args[2]
// with the fluid filling os.Args[4] names, and prints a simRun.
func simWorker() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "sim worker:", err)
		return 1
	}
	var c simCase
	if len(os.Args) != 5 {
		return fail(fmt.Errorf("want %s ROOT CASE FILLING", simWorkerArg))
	}
	if err := json.Unmarshal([]byte(os.Args[3]), &c); err != nil {
		return fail(err)
	}
	cfg, err := c.config(os.Args[2])
	if err != nil {
		return fail(err)
	}
	if cfg.Filling, err = fluid.ParseFilling(os.Args[4]); err != nil {
		return fail(err)
	}
	if path := os.Getenv(simProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
	}
	c0 := bench.ProcessCPU()
	r, err := netsim.Run(context.Background(), cfg)
	pprof.StopCPUProfile()
	if err != nil {
		return fail(err)
	}
	cpu := (bench.ProcessCPU() - c0).Seconds()
	b, err := json.Marshal(r)
	if err != nil {
		return fail(err)
	}
	sum := sha256.Sum256(b)
	json.NewEncoder(os.Stdout).Encode(simRun{CPU: cpu, Events: r.Events, Result: hex.EncodeToString(sum[:])})
	return 0
}

// FluidRow is one simulation under each filling.
type FluidRow struct {
	Case   string                 `json:"case"`
	Events int64                  `json:"events"`
	CPU    map[string]bench.Stats `json:"cpu_seconds"` // by filling: "default", "legacy", "full", "eager"
	// Speedup is the old filling's CPU time over the default's, per round.
	Speedup bench.Stats `json:"speedup_over_legacy"`
	// Identical: the default, full and eager fillings gave the same
	// result (they must); Legacy: so did the old filling (it need not).
	// Both false when those fillings did not run (see Modes).
	Identical bool     `json:"identical"`
	Legacy    bool     `json:"legacy_identical"`
	Modes     []string `json:"modes"` // the fillings run
}

// fluidModes are the fillings measured, the default first.
var fluidModes = []string{"default", "legacy", "full", "eager"}

func fluidSection(ctx context.Context, cfg *config) ([]bench.Section, []bench.Gate, error) {
	cases := []simCase{
		{Name: "paper fabric, 40 jobs, 30-60 iterations, baseline", Fabric: "paper", Jobs: 40, MinI: 30, MaxI: 60, Policy: netsim.Baseline},
		{Name: "paper fabric, 40 jobs, 30-60 iterations, cassini", Fabric: "paper", Jobs: 40, MinI: 30, MaxI: 60, Policy: netsim.Cassini},
	}
	rounds := 3
	if !cfg.smoke {
		cases = append(cases,
			simCase{Name: "Clos, 1000 servers, 300 jobs, 20-40 iterations, baseline", Fabric: "clos1000", Jobs: 300, MinI: 20, MaxI: 40, Policy: netsim.Baseline},
			simCase{Name: "Clos, 1000 servers, 300 jobs, 20-40 iterations, cassini", Fabric: "clos1000", Jobs: 300, MinI: 20, MaxI: 40, Policy: netsim.Cassini},
			// The references would take hours here: the default alone.
			simCase{Name: "Clos, 1000 servers, 3000 jobs, 20-40 iterations, baseline", Fabric: "clos1000", Jobs: 3000, MinI: 20, MaxI: 40, Policy: netsim.Baseline,
				Modes: []string{"default"}, Rounds: 1})
	}
	sec := bench.Section{ID: "fluid", Title: "Cluster simulation: the fluid network's max-min rates (internal/eval/fluid)",
		Notes:  []string{fmt.Sprintf("netsim.Run with Alibaba noise at 90%% load, 1 ms ticks, one process per run, the filling named on its command line: *default* keeps the rates incrementally (fluid.Network): when flows start or end it fills again only the hot components (flows joined by links whose connections' peaks can exceed capacity) that the changed links reach, with only hot links taking part; the other modes solve every flow at every change: *full* fills each connected component with every link; *eager* is the reference filling of the whole network, scanned every round; *legacy* is the package's filling before (one level for the whole network, residuals decremented every round). Default, full and eager compute the same rates bit for bit; legacy rounds differently (rates within about 1e-15). CPU time of the simulation in the worker process (GOMAXPROCS=1), median of %d rounds (min–max), the fillings interleaved; *speedup* is legacy over default per round. *Identical* compares the SHA-256 of the netsim.Result JSON. A row with dashes ran the default alone, once.", rounds)},
		Header: []string{"simulation", "events", "default (CPU)", "legacy", "speedup over legacy", "full", "eager", "identical (default, full, eager / legacy)"},
	}
	var rows []FluidRow
	var gates []bench.Gate
	for _, c := range cases {
		row, err := runFluidCase(ctx, cfg, c, rounds)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		rows = append(rows, row)
		cell := func(m string) string {
			if _, ok := row.CPU[m]; !ok {
				return "–"
			}
			return bench.Spread(row.CPU[m])
		}
		speed, same := "–", "–"
		if _, ok := row.CPU["legacy"]; ok {
			speed = bench.Ratio(row.Speedup.Median)
		}
		if len(row.Modes) == len(fluidModes) {
			same = yesNo(row.Identical) + " / " + yesNo(row.Legacy)
			gates = append(gates, bench.Gate{Name: "fluid " + c.Name + ": default, full and eager fillings give the same simulation",
				Pass: row.Identical, Value: b2f(row.Identical), Threshold: 1, Detail: yesNo(row.Identical)})
		}
		sec.Rows = append(sec.Rows, []string{c.Name, fmt.Sprint(row.Events), cell("default"), cell("legacy"),
			speed, cell("full"), cell("eager"), same})
	}
	sec.Data = rows
	return []bench.Section{sec}, gates, nil
}

// runFluidCase runs c under its fillings, rounds times, interleaved.
func runFluidCase(ctx context.Context, cfg *config, c simCase, rounds int) (FluidRow, error) {
	exe, err := os.Executable()
	if err != nil {
		return FluidRow{}, err
	}
	arg, _ := json.Marshal(c)
	modes := c.Modes
	if modes == nil {
		modes = fluidModes
	}
	if c.Rounds > 0 {
		rounds = c.Rounds
	}
	times := map[string][]float64{}
	var speed []float64
	hashes := map[string]string{}
	row := FluidRow{Case: c.Name, CPU: map[string]bench.Stats{}, Modes: modes}
	for r := range rounds {
		for i := range modes {
			mode := modes[(i+r)%len(modes)] // a different first mode each round
			cmd := exec.CommandContext(ctx, exe, simWorkerArg, cfg.root, string(arg), mode)
			cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				return FluidRow{}, fmt.Errorf("%s: %w", mode, err)
			}
			var run simRun
			if err := json.Unmarshal(out, &run); err != nil {
				return FluidRow{}, fmt.Errorf("%s: %w", mode, err)
			}
			times[mode] = append(times[mode], run.CPU)
			if h, ok := hashes[mode]; ok && h != run.Result {
				return FluidRow{}, fmt.Errorf("%s: two runs differ", mode)
			}
			hashes[mode] = run.Result
			row.Events = run.Events
		}
		if n := len(times["legacy"]); n > 0 {
			speed = append(speed, times["legacy"][n-1]/times["default"][n-1])
		}
	}
	for _, m := range modes {
		row.CPU[m] = bench.Summarize(times[m])
	}
	if len(speed) > 0 {
		row.Speedup = bench.Summarize(speed)
	}
	if len(modes) == len(fluidModes) {
		row.Identical = hashes["full"] == hashes["default"] && hashes["eager"] == hashes["default"]
		row.Legacy = hashes["legacy"] == hashes["default"]
	}
	return row, nil
}
