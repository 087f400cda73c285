//go:build linux

package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// Options configure a testbed run. The zero value runs Fig. 2 under Cubic:
// each job alone, then overlapped, then with its agents (Elastic on the
// plan's clock), 200 iterations each (40 alone), at real-time priority.
type Options struct {
	// Scenario is a fixed experiment of the paper (replay.Fixed: fig2,
	// snapshot1..5); "" means fig2.
	Scenario replay.Scenario
	// Congestion is the jobs' sockets' congestion control (cubic, reno,
	// bbr, dctcp where the kernel has it); "" means cubic.
	Congestion string
	// Iterations per job in every arm but alone; 0 means 200.
	Iterations int
	// AloneIterations per job alone (its profile is measured there); 0
	// means 40.
	AloneIterations int
	// Arms, in order; nil means Alone, Overlapped, Agents. Alone always
	// runs first (it measures the profiles the plan needs) when a later
	// arm needs a plan.
	Arms []Arm
	// AgentMode is the agents': "elastic" (default: the plan's clock,
	// agent.NewPlanGroup) or "pad".
	AgentMode string
	// Edge holds the search's edge shifts (cassini.rank's shifts_ms)
	// instead of the centred ones (centred_shifts_ms), with no slack.
	Edge bool
	// Headroom pads each measured period by this fraction of idle time
	// before the plan is made (the agents' slots then leave the jobs'
	// jitter that much room); 0 means none, negative is invalid.
	Headroom float64
	// Threshold, Budget and GiveUp are the agents' (agent.Options); a
	// NoGiveUp agent never gives its shift up (no FreeComm in its plan).
	Threshold, Budget float64
	GiveUp            string
	NoGiveUp          bool
	MeanGiveUp        bool // the give-up rule before (agent.Options.MeanGiveUp): its ablation
	PlanBudget        bool // the budget applies on the plan's clock (agent.Options.PlanBudget): its ablation
	// Fabric: Scale divides the rates (0: DefaultScale), QueueBytes is
	// each port's buffer (0: 32 ms at its rate), ECN marks with RED.
	Scale      float64
	QueueBytes int
	ECN        bool
	// Priority is the workers' SCHED_FIFO priority (chrt -f); 0 means 10,
	// negative runs them at normal priority.
	Priority int
	// StallMs is how late a sleep must wake to count as a host stall; 0
	// means 10.
	StallMs float64
	// NoiseCV jitters every iteration's compute by a Gaussian of this
	// coefficient of variation, from Seed (the same draws in every arm);
	// 0 is none: the host's own jitter only.
	NoiseCV float64
	Seed    uint64
	// Torch runs every rank as real PyTorch DDP over gloo with the Python
	// time-shift agent (python/ddp_worker.py, the engine through the C
	// library) instead of the Go worker: it needs python3 with torch
	// (ErrUnavailable otherwise), a congestion control a namespace may
	// default to (reno or bbr here: gloo's sockets cannot be given one),
	// and it shapes each server's NIC to its job's peak (gloo's sockets
	// cannot be paced).
	Torch bool
	// Worker is the worker binary; "" builds it (go build) into a temporary
	// directory.
	Worker string
	// Log, if not nil, gets a line per step.
	Log io.Writer
}

// Arm is one arm of a testbed run.
type Arm string

// The arms.
const (
	Alone      Arm = "alone"      // each job by itself: its profile
	Overlapped Arm = "overlapped" // every job from the same instant, no agent
	Shifted    Arm = "shifted"    // each job started at its planned shift, no agent holds it
	Agents     Arm = "agents"     // every job on its planned shift, held by its agents
)

// ParseArm parses an arm's name.
func ParseArm(s string) (Arm, error) {
	switch a := Arm(s); a {
	case Alone, Overlapped, Shifted, Agents:
		return a, nil
	}
	return "", fmt.Errorf("arm %q (want alone, overlapped, shifted or agents)", s)
}

func (o Options) resolve() (Options, error) {
	if o.Scenario == "" {
		o.Scenario = replay.Fig2
	}
	if o.Congestion == "" {
		o.Congestion = "cubic"
	}
	if o.Iterations == 0 {
		o.Iterations = 200
	}
	if o.AloneIterations == 0 {
		o.AloneIterations = 40
	}
	if o.Arms == nil {
		o.Arms = []Arm{Alone, Overlapped, Agents}
	}
	if o.AgentMode == "" {
		o.AgentMode = "elastic"
	}
	if o.Scale == 0 {
		o.Scale = DefaultScale
	}
	if o.Priority == 0 {
		o.Priority = 10
	}
	if o.StallMs == 0 {
		o.StallMs = 10
	}
	switch {
	case o.Iterations < 2 || o.Iterations > 100000 || o.AloneIterations < 8 || o.AloneIterations > 100000:
		return o, fmt.Errorf("testbed: %d iterations, %d alone (want 2.. and 8..)", o.Iterations, o.AloneIterations)
	case o.AgentMode != "elastic" && o.AgentMode != "pad":
		return o, fmt.Errorf("testbed: agent mode %q (want elastic or pad)", o.AgentMode)
	case !(o.Headroom >= 0 && o.Headroom < 1):
		return o, fmt.Errorf("testbed: headroom %v (want 0..1)", o.Headroom)
	case !(o.NoiseCV >= 0 && o.NoiseCV <= 1):
		return o, fmt.Errorf("testbed: noise %v (want a coefficient of variation in 0..1)", o.NoiseCV)
	case o.Priority > 99:
		return o, fmt.Errorf("testbed: priority %d (want 1..99)", o.Priority)
	}
	if _, _, _, ok := replay.Fixed(o.Scenario); !ok {
		return o, fmt.Errorf("testbed: scenario %q is not a fixed experiment (fig2, snapshot1..snapshot5)", o.Scenario)
	}
	return o, nil
}

// job is a scenario's job on the testbed.
type job struct {
	id      int
	model   string
	servers []int
	steps   []WorkerStep
	links   []int // directed links its ring crosses
}

// Run builds the scenario's fabric in fresh namespaces, runs the arms and
// removes everything it created, also when it fails or ctx ends (an
// interrupt). It first removes the leftovers of killed runs.
func Run(ctx context.Context, opt Options) (Report, error) {
	opt, err := opt.resolve()
	if err != nil {
		return Report{}, err
	}
	if err := Check(); err != nil {
		return Report{}, err
	}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	if removed, err := Leftovers(ctx); err == nil && len(removed) > 0 {
		logf("removed %d namespaces of killed runs: %s", len(removed), strings.Join(removed, " "))
	}
	name := NewName()
	kernel, err := Detect(ctx, name)
	if err != nil {
		return Report{}, err
	}
	if !kernel.Has(opt.Congestion) {
		return Report{}, fmt.Errorf("%w: congestion control %q is not in this kernel's %v", ErrUnavailable, opt.Congestion, kernel.Congestion)
	}
	if opt.ECN && !kernel.ECN() {
		return Report{}, fmt.Errorf("%w: ECN marking needs RED and DCTCP; this kernel has RED %v, congestion controls %v", ErrUnavailable, kernel.Qdiscs["red"], kernel.Congestion)
	}
	fabricSpec, wjobs, pinned, _ := replay.Fixed(opt.Scenario)
	topo, err := topology.Parse(fabricSpec)
	if err != nil {
		return Report{}, err
	}
	jobs, err := testbedJobs(topo, wjobs, pinned, opt.Scale)
	if err != nil {
		return Report{}, err
	}
	worker := opt.Worker
	if opt.Torch {
		worker = "-" // python3 python/ddp_worker.py
	}
	if worker == "" {
		dir, err := os.MkdirTemp("", "orrery-testbed-")
		if err != nil {
			return Report{}, err
		}
		defer os.RemoveAll(dir)
		if worker, err = BuildWorker(ctx, dir); err != nil {
			return Report{}, err
		}
	}
	cfgDir, err := os.MkdirTemp("", "orrery-testbed-cfg-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(cfgDir)
	start := time.Now()
	f, err := Build(ctx, name, topo, FabricOptions{Scale: opt.Scale, QueueBytes: opt.QueueBytes, ECN: opt.ECN})
	if err != nil {
		return Report{}, err
	}
	defer f.Close()
	logf("fabric %s (%s, %d servers) in namespaces %s-*, links at 1/%v of their rate", fabricSpec, opt.Scenario, topo.Servers, name, opt.Scale)
	r := &runner{opt: opt, f: f, jobs: jobs, worker: worker, dir: cfgDir, logf: logf}
	if opt.Torch {
		if err := r.torchSetup(ctx, kernel); err != nil {
			return Report{}, err
		}
	}
	rep := Report{Scenario: string(opt.Scenario), Fabric: fabricSpec, Scale: opt.Scale, Congestion: opt.Congestion,
		Kernel: kernel, AgentMode: opt.AgentMode, Edge: opt.Edge, Headroom: opt.Headroom, Priority: max(opt.Priority, 0),
		NoiseCV: opt.NoiseCV, Seed: opt.Seed, StallMs: opt.StallMs, Torch: opt.Torch}
	for _, j := range jobs {
		rep.Jobs = append(rep.Jobs, JobPlan{ID: j.id, Model: j.model, Servers: j.servers})
	}
	needPlan := slices.ContainsFunc(opt.Arms, func(a Arm) bool { return a == Shifted || a == Agents })
	arms := opt.Arms
	if needPlan && !slices.Contains(arms, Alone) {
		arms = append([]Arm{Alone}, arms...)
	}
	for _, arm := range arms {
		var res ArmResult
		switch arm {
		case Alone:
			res, err = r.alone(ctx, &rep)
			if err == nil && needPlan {
				err = r.plan(ctx, &rep)
			}
		case Overlapped:
			res, err = r.together(ctx, arm, &rep)
		case Shifted, Agents:
			if rep.Plan == nil {
				err = errors.New("testbed: no plan (the alone arm measures the profiles)")
				break
			}
			res, err = r.together(ctx, arm, &rep)
		}
		if err != nil {
			return rep, fmt.Errorf("arm %s: %w", arm, err)
		}
		rep.Arms = append(rep.Arms, res)
		logf("%-10s %s", arm, res.summary())
	}
	if rep.Fluid, err = fluid(ctx, opt); err != nil {
		return rep, fmt.Errorf("the fluid model: %w", err)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// testbedJobs maps a scenario's jobs onto the fabric: their iterations
// (workload.Model.Iteration), bytes and rates divided by scale, and the
// links their rings cross.
func testbedJobs(topo *topology.Topology, wjobs []workload.Job, pinned map[int][]int, scale float64) ([]job, error) {
	var out []job
	for _, wj := range wjobs {
		m, err := workload.Lookup(wj.Model)
		if err != nil {
			return nil, err
		}
		servers := pinned[wj.ID]
		steps, err := m.Iteration(wj.Batch, len(servers))
		if err != nil {
			return nil, err
		}
		j := job{id: wj.ID, model: m.Name, servers: servers}
		for _, st := range steps {
			switch {
			case st.Pattern == workload.Compute:
				j.steps = append(j.steps, WorkerStep{ComputeNs: int64(st.Compute)})
			case st.Pattern == workload.Ring && st.Groups == nil:
				j.steps = append(j.steps, WorkerStep{Bytes: int64(math.Round(st.Bits / 8 / scale)), PeakBps: st.Peak / scale})
			default:
				return nil, fmt.Errorf("testbed: %s's %v step over groups %v: only compute and a ring over the job's servers run here", m.Name, st.Pattern, st.Groups)
			}
		}
		ring, err := topo.Ring(servers)
		if err != nil {
			return nil, err
		}
		sorted := slices.Sorted(slices.Values(ring))
		if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
			return nil, fmt.Errorf("testbed: job %d's ring crosses a link twice", wj.ID)
		}
		j.links = sorted
		out = append(out, j)
	}
	return out, nil
}

// BuildWorker builds the worker binary (package
// internal/eval/testbed/worker) into dir with the go command.
func BuildWorker(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "worker")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/orrery/orrery/internal/eval/testbed/worker")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testbed: go build worker: %v: %s", err, out)
	}
	return bin, nil
}

// runner runs arms on a fabric.
type runner struct {
	opt    Options
	f      *Fabric
	jobs   []job
	worker string
	dir    string
	logf   func(string, ...any)
	seq    int
	// results holds each arm's latest workers' reports.
	results map[Arm][]WorkerResult
	torch   torchLeg
}

// rank is one worker to start.
type rank struct {
	job *job
	cfg WorkerConfig
}

// launch starts every rank, waits for all and returns their results. If
// one fails or ctx ends, the others are killed.
func (r *runner) launch(ctx context.Context, ranks []rank) ([]WorkerResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]WorkerResult, len(ranks))
	errs := make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, rk := range ranks {
		r.seq++
		path := filepath.Join(r.dir, fmt.Sprintf("w%d.json", r.seq))
		b, err := json.Marshal(rk.cfg)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
		args := []string{"netns", "exec", r.f.Server[rk.job.servers[rk.cfg.Rank]]}
		if r.opt.Priority > 0 {
			args = append(args, "chrt", "-f", strconv.Itoa(r.opt.Priority))
		}
		if r.opt.Torch {
			args = append(args, r.torch.python, r.torch.script, path)
		} else {
			args = append(args, r.worker, path)
		}
		cmd := exec.CommandContext(ctx, "ip", args...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		if r.opt.Torch {
			cmd.Env = append(cmd.Env, "ORRERY_LIB="+r.torch.lib, "OMP_NUM_THREADS=1")
		}
		cmd.WaitDelay = 5 * time.Second
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				errs[i] = fmt.Errorf("job %d rank %d: %v: %s", rk.cfg.Job, rk.cfg.Rank, err, strings.TrimSpace(errb.String()))
				cancel() // the ring is broken: stop the others
				return
			}
			if err := json.Unmarshal(out.Bytes(), &results[i]); err != nil {
				errs[i] = fmt.Errorf("job %d rank %d: its report: %v", rk.cfg.Job, rk.cfg.Rank, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("%w (%v)", err, context.Cause(ctx))
		}
		return nil, err
	}
	return results, nil
}

// ranksOf returns the worker configurations of job j's ranks.
func (r *runner) ranksOf(j *job, iterations int, epoch time.Time) []rank {
	var addrs []string
	for _, s := range j.servers {
		addrs = append(addrs, r.f.Addr[s].String()+":"+port(j.id))
	}
	out := make([]rank, len(j.servers))
	for k, s := range j.servers {
		out[k] = rank{job: j, cfg: WorkerConfig{Job: j.id, Rank: k, Ranks: addrs, Iterations: iterations, EpochNs: epoch.UnixNano(),
			Steps: j.steps, Congestion: r.opt.Congestion, StallMs: r.opt.StallMs, NoiseCV: r.opt.NoiseCV, Seed: r.opt.Seed}}
		if r.opt.Torch {
			c := &out[k].cfg
			c.Congestion = "" // the namespace's default, set to the arm's
			c.TorchMaster = r.f.Addr[j.servers[0]].String() + ":" + strconv.Itoa(29500+j.id)
			_, c.Iface = r.f.port(r.f.uplink(s))
			c.BindingsPath = r.torch.bindings
		}
	}
	return out
}

// epochAfter is when the ranks started now may all have connected: a
// second per fifty ranks, at least two; fifteen for Python, which imports
// torch and warms gloo up first.
func (r *runner) epochAfter(ranks int) time.Time {
	d := time.Duration(2+ranks/50) * time.Second
	if r.opt.Torch {
		d += 13 * time.Second
	}
	return time.Now().Add(d)
}

// arm runs ranks and measures the fabric's queues over the run.
func (r *runner) arm(ctx context.Context, name Arm, ranks []rank) (ArmResult, []WorkerResult, error) {
	before, err := r.f.Stats(ctx)
	if err != nil {
		return ArmResult{}, nil, err
	}
	t0 := time.Now()
	results, err := r.launch(ctx, ranks)
	if err != nil {
		return ArmResult{}, nil, err
	}
	after, err := r.f.Stats(ctx)
	if err != nil {
		return ArmResult{}, nil, err
	}
	res := summarize(name, r.jobs, results, r.opt.StallMs)
	res.WallSeconds = time.Since(t0).Seconds()
	res.Workers = results
	for li := range after {
		res.Drops += after[li].Drops - before[li].Drops
		res.Marks += after[li].Marks - before[li].Marks
	}
	return res, results, nil
}

// alone runs each job by itself and records its measured iterations.
func (r *runner) alone(ctx context.Context, rep *Report) (ArmResult, error) {
	var all ArmResult
	all.Arm = string(Alone)
	var results []WorkerResult
	for k := range r.jobs {
		j := &r.jobs[k]
		ranks := r.ranksOf(j, r.opt.AloneIterations, r.epochAfter(len(j.servers)))
		res, rs, err := r.arm(ctx, Alone, ranks)
		if err != nil {
			return all, err
		}
		results = append(results, rs...)
		all.Drops += res.Drops
		all.Marks += res.Marks
		all.WallSeconds += res.WallSeconds
	}
	merged := summarize(Alone, r.jobs, results, r.opt.StallMs)
	merged.Drops, merged.Marks, merged.WallSeconds = all.Drops, all.Marks, all.WallSeconds
	merged.Workers = results
	r.keep(Alone, results)
	for k := range rep.Jobs {
		rep.Jobs[k].AloneMs = merged.Jobs[k].MedianMs
		rep.Jobs[k].AloneCommMs = merged.Jobs[k].CommMs
	}
	return merged, nil
}

// ModelAlone returns each job's iteration time alone in the scenario as
// its model has it (compute plus bytes over the peak rate): the fluid
// model's uncontended time, which the alone arm should measure.
func ModelAlone(s replay.Scenario) ([]float64, error) {
	fabric, wjobs, pinned, ok := replay.Fixed(s)
	if !ok {
		return nil, fmt.Errorf("testbed: scenario %q is not a fixed experiment", s)
	}
	topo, err := topology.Parse(fabric)
	if err != nil {
		return nil, err
	}
	jobs, err := testbedJobs(topo, wjobs, pinned, DefaultScale)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(jobs))
	for k, j := range jobs {
		for _, st := range j.steps {
			out[k] += float64(st.ComputeNs) / 1e6
			if st.Bytes > 0 {
				out[k] += float64(float64(st.Bytes) * 8 / st.PeakBps * 1e3)
			}
		}
	}
	return out, nil
}
