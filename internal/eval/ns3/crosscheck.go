package ns3

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// Case is a fluid simulation to cross-check: its Config's Policy is set
// by each variant.
type Case struct {
	Name   string
	Config netsim.Config
	// Variants, CCs and Cassini, if not nil, replace the Options' for this
	// case.
	Variants []Variant
	CCs      []CC
	Cassini  *netsim.CassiniOptions
}

// Snapshot returns one of the paper's fixed experiments as the CLI's
// `orrery cassini simulate -scenario NAME` runs them (cmd/orrery): fig2 (two
// VGG19 jobs, one server in each of two racks of two) or snapshot1 to
// snapshot5 (Table 2, racks of three), every job on 2 GPUs, one server in
// each rack, starting at time 0, for the given iterations, without noise.
func Snapshot(name string, iterations int) (Case, error) {
	jobs, ok := map[string][]string{
		"fig2":      {"VGG19/1400", "VGG19/1400"},
		"snapshot1": {"WideResNet101/800", "VGG16/1400"},
		"snapshot2": {"VGG19/1400", "VGG16/1700", "ResNet50/1600"},
		"snapshot3": {"VGG19/1024", "VGG16/1200"},
		"snapshot4": {"RoBERTa/12", "RoBERTa/12"},
		"snapshot5": {"BERT/8", "VGG19/1400", "WideResNet101/800"},
	}[name]
	if !ok {
		return Case{}, fmt.Errorf("%w: scenario %q (want fig2 or snapshot1..snapshot5)", ErrInvalid, name)
	}
	if iterations < 2 {
		return Case{}, fmt.Errorf("%w: %d iterations (want at least 2)", ErrInvalid, iterations)
	}
	perRack := 3
	if name == "fig2" {
		perRack = 2
	}
	t, err := topology.New(topology.Spec{Pods: 1, ToRsPerPod: 2, ServersPerToR: perRack, AggsPerPod: 1, ServerGbps: 50, ToRGbps: 50})
	if err != nil {
		return Case{}, err
	}
	cfg := netsim.Config{Topology: t, Pinned: map[int][]int{}}
	for i, j := range jobs {
		model, b, _ := strings.Cut(j, "/")
		batch, err := strconv.Atoi(b)
		if err != nil {
			return Case{}, err
		}
		cfg.Jobs = append(cfg.Jobs, workload.Job{ID: i, Model: model, GPUs: 2, Batch: batch, Iterations: iterations})
		cfg.Pinned[i] = []int{i, perRack + i}
	}
	return Case{Name: name, Config: cfg}, nil
}

// Cluster returns a Poisson trace on the paper's fabric (24 single-GPU
// servers, 2:1 oversubscribed): jobs jobs of the given models (nil: all
// 13), GPU counts drawn from gpus (nil: workload's defaults), iterations
// uniform in [minIt, maxIt], arrivals at the load, without noise.
func Cluster(name string, jobs int, models []string, gpus []int, minIt, maxIt int, load float64, seed uint64) (Case, error) {
	t := topology.Paper()
	js, err := workload.Generate(workload.Config{Models: models, Jobs: jobs, Load: load, ClusterGPUs: t.Servers,
		GPUChoices: gpus, MinIterations: minIt, MaxIterations: maxIt, Seed: seed})
	if err != nil {
		return Case{}, err
	}
	return Case{Name: name, Config: netsim.Config{Topology: t, Jobs: js, Seed: seed}}, nil
}

// Variant is how a case's jobs are placed and shifted.
type Variant string

// The variants of a case.
const (
	// Unshifted is the scheduler alone (netsim.Baseline): jobs start when
	// placed and run back to back.
	Unshifted Variant = "unshifted"
	// Cassini is netsim.Cassini: CASSINI's placement and time shifts, held
	// by Pad agents (the previous default: fixed slots, with the
	// Options' CASSINI settings, 5% headroom by default).
	Cassini Variant = "cassini"
	// Elastic is netsim.Cassini as its defaults run it: shifts held by
	// Elastic agents sharing a group clock (no headroom; the held links
	// chosen by the gate's replay), with Options.Cassini if set.
	Elastic Variant = "elastic"
	// Shifted is CASSINI's placement and first starts (the shifts) with no
	// agent: jobs run back to back from there, so only the network keeps
	// (or loses) the interleaving.
	Shifted Variant = "shifted"
	// Half is Shifted with every first start halved (Options.Partial): on
	// Fig. 2 the two
	// jobs' communication phases overlap by half, where the fluid model's
	// equal shares keep them, and the packet level's congestion controls
	// pull them apart or together.
	Half Variant = "half"
)

// Variants lists the variants in report order; Half and Elastic are not
// among them.
var Variants = []Variant{Unshifted, Cassini, Shifted}

// agentOptions returns the agents' options of variant v: Elastic for
// Elastic, otherwise o with Elastic mode, the zero Mode, replaced by Pad.
func agentOptions(v Variant, o agent.Options) agent.Options {
	if v == Elastic {
		o.Mode = agent.Elastic
	} else if o.Mode == agent.Elastic {
		o.Mode = agent.Pad
	}
	return o
}

// Options configure [CrossCheck]. The zero value runs the Variants under
// every congestion control, Cassini with Pad agents and 5% headroom,
// Elastic (when asked for) with netsim's defaults, and DefaultExport.
type Options struct {
	Variants []Variant // nil means Variants
	CCs      []CC      // nil means CCs
	// Cassini and Agent configure the Cassini policy and its agents, in
	// the fluid run and in the packet-level replay; a nil Cassini means
	// Headroom 0.05 for the Cassini variant (the Pad agents' previous
	// default) and netsim's defaults for Elastic. Agent's zero Mode,
	// Elastic, runs as Pad but in the Elastic variant.
	Cassini *netsim.CassiniOptions
	Agent   agent.Options
	Export  ExportOptions // Net.CC is set per run
	// Parallel bounds the ns-3 processes run at once; 0 means GOMAXPROCS.
	Parallel int
	Keep     string // if not "", each run's scenario and output go to Keep/CASE-VARIANT-CC
	// Partial is the fraction of CASSINI's first starts the Half variant
	// keeps; 0 means one half.
	Partial float64
}

// JobRow compares one job's iterations.
type JobRow struct {
	ID         int
	Model      string
	AloneMs    float64 // uncontended iteration (fluid)
	Iterations int     // compared: the fewer of the two runs'
	FluidMs    float64 // mean iteration, fluid
	PacketMs   float64 // mean iteration, packet level
	FluidP90   float64
	PacketP90  float64
	// CalibratedMs is the mean iteration of the fluid replay with the
	// congestion control's calibrated shares (Calibrated).
	CalibratedMs float64
	// The first iteration's communication time (from its first
	// communication step to its end), at the packet level, in the fair
	// fluid replay and in the calibrated one.
	FirstCommMs, FluidFirstCommMs, CalibratedFirstCommMs float64
	FirstMs                                              float64 // packet level: the first iteration
	FluidFirstMs                                         float64 // the fluid run's first iteration
	LastMs                                               float64 // packet level: the mean of the last quarter of the iterations
	Marks                                                int64   // packet level: CE marks on its data packets
	// Overlap is the fraction of its communication time, at the packet
	// level, during which a job sharing one of its links also
	// communicated; OverlapFirst and OverlapLast are over the first and
	// the last quarter of its iterations.
	Overlap, OverlapFirst, OverlapLast float64
}

// MarksPerIter is the job's marks per iteration.
func (j JobRow) MarksPerIter() float64 {
	if j.Iterations == 0 {
		return 0
	}
	return float64(j.Marks) / float64(j.Iterations)
}

// Run is one variant of a case under one congestion control.
type Run struct {
	Case    string
	Variant Variant
	CC      CC
	Jobs    []JobRow
	// Means and 90th percentiles over every compared iteration.
	FluidMs, PacketMs, FluidP90, PacketP90 float64
	CalibratedMs                           float64 // the fluid replay with Calibrated(CC)
	FluidExcessGbit                        float64 // the fluid model's traffic above capacity
	Marks, Drops, AckDrops                 int64
	Agents                                 int   // jobs with an agent
	FluidAdjustments, PacketAdjustments    int64 // agent re-alignments
	// Offsets are, iteration by iteration, how long after the first job's
	// communication phase the second job's began at the packet level
	// (ms; cases of at least two jobs): the fluid model keeps it fixed
	// while the jobs run back to back at equal shares.
	Offsets []float64
	SimSec  float64
	CPUSec  float64
	Events  int64
	Scale   float64
}

// CrossCheck runs each case's variants in the fluid model, exports them and
// replays them at the packet level under each congestion control, and
// compares the two. The runs are independent; up to opt.Parallel ns-3
// processes run at once.
func CrossCheck(ctx context.Context, prog Program, cases []Case, opt Options) ([]Run, error) {
	if opt.Variants == nil {
		opt.Variants = Variants
	}
	if opt.CCs == nil {
		opt.CCs = CCs
	}
	if opt.Parallel <= 0 {
		opt.Parallel = runtime.GOMAXPROCS(0)
	}
	type job struct {
		c   Case
		v   Variant
		cc  CC
		cfg netsim.Config
		res netsim.Result
		sc  Scenario
	}
	var jobs []*job
	for _, c := range cases {
		variants, ccs := opt.Variants, opt.CCs
		if c.Variants != nil {
			variants = c.Variants
		}
		if c.CCs != nil {
			ccs = c.CCs
		}
		for _, v := range variants {
			// One fluid run per transport the congestion controls map to
			// (max-min for the TCPs, DCQCN's law for DCQCN, ...), in the
			// order they first appear.
			type fluidOut struct {
				cfg netsim.Config
				res netsim.Result
				sc  Scenario
			}
			runs := map[netsim.Transport]*fluidOut{}
			for _, cc := range ccs {
				tr := cc.Transport()
				fo := runs[tr]
				if fo == nil {
					cfg, res, sc, err := fluidRun(ctx, c, v, tr, opt)
					if err != nil {
						return nil, fmt.Errorf("%s %s %v: %w", c.Name, v, tr, err)
					}
					fo = &fluidOut{cfg, res, sc}
					runs[tr] = fo
				}
				s := fo.sc
				s.Net.CC = cc
				jobs = append(jobs, &job{c: c, v: v, cc: cc, cfg: fo.cfg, res: fo.res, sc: s})
			}
		}
	}
	runs := make([]Run, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, opt.Parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ag := agentOptions(j.v, opt.Agent)
			ro := RunOptions{Agent: ag}
			if opt.Keep != "" {
				ro.Keep = fmt.Sprintf("%s/%s-%s-%s", opt.Keep, j.c.Name, j.v, j.cc)
			}
			out, err := prog.Run(ctx, j.sc, ro)
			if err != nil {
				errs[i] = fmt.Errorf("%s %s %s: %w", j.c.Name, j.v, j.cc, err)
				return
			}
			fair, err := Fluid(ctx, j.sc, FluidOptions{Agent: ag})
			if err != nil {
				errs[i] = fmt.Errorf("%s %s %s: fluid replay: %w", j.c.Name, j.v, j.cc, err)
				return
			}
			co := Calibrated(j.cc)
			co.Agent = ag
			cal, err := Fluid(ctx, j.sc, co)
			if err != nil {
				errs[i] = fmt.Errorf("%s %s %s: calibrated fluid: %w", j.c.Name, j.v, j.cc, err)
				return
			}
			runs[i] = Compare(j.c.Name, j.v, j.res, j.sc, out)
			runs[i].calibrate(fair, cal)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// fluidRun runs variant v of c in the fluid model under transport tr and
// exports it.
func fluidRun(ctx context.Context, c Case, v Variant, tr netsim.Transport, opt Options) (netsim.Config, netsim.Result, Scenario, error) {
	cfg := c.Config
	cfg.Noise = workload.Replay{Source: workload.None}
	cfg.Transport = tr
	if tr != netsim.MaxMin {
		cfg.DCQCN, cfg.MLTCP = opt.Export.Net.DCQCN, opt.Export.Net.MLTCP
	}
	cfg.Agent = agentOptions(v, opt.Agent)
	switch {
	case c.Cassini != nil:
		cfg.Cassini = *c.Cassini
	case opt.Cassini != nil:
		cfg.Cassini = *opt.Cassini
	case v == Elastic:
		cfg.Cassini = netsim.CassiniOptions{}
	default:
		cfg.Cassini = netsim.CassiniOptions{Headroom: 0.05}
	}
	cfg.Cassini.Workers = 1
	ex := opt.Export
	switch v {
	case Unshifted:
		cfg.Policy = netsim.Baseline
	case Cassini, Elastic:
		cfg.Policy = netsim.Cassini
	case Shifted, Half:
		// CASSINI's placements and first starts, then no agent: in the
		// fluid model, the jobs pinned there and arriving then.
		cfg.Policy = netsim.Cassini
		res, err := netsim.Run(ctx, cfg)
		if err != nil {
			return cfg, res, Scenario{}, err
		}
		sc, err := Export(cfg, res, ExportOptions{Gbps: ex.Gbps, LinkDelay: ex.LinkDelay, NoAgents: true})
		if err != nil {
			return cfg, res, Scenario{}, err
		}
		free := cfg
		free.Policy = netsim.Baseline
		free.Pinned = map[int][]int{}
		free.Jobs = nil
		byID := map[int]workload.Job{}
		for _, j := range cfg.Jobs {
			byID[j.ID] = j
		}
		for _, j := range sc.Jobs {
			wj := byID[j.ID]
			wj.Arrival = j.Start
			if v == Half {
				f := opt.Partial
				if f == 0 {
					f = 0.5
				}
				wj.Arrival = time.Duration(math.Round(float64(j.Start) * f))
			}
			wj.Iterations = j.Iterations
			free.Jobs = append(free.Jobs, wj)
			free.Pinned[j.ID] = j.Servers
		}
		cfg = free
		ex.NoAgents = true
	default:
		return cfg, netsim.Result{}, Scenario{}, fmt.Errorf("%w: variant %q", ErrInvalid, v)
	}
	res, err := netsim.Run(ctx, cfg)
	if err != nil {
		return cfg, res, Scenario{}, err
	}
	if res.Status != netsim.Complete {
		return cfg, res, Scenario{}, fmt.Errorf("%w: the fluid run ended %v", ErrInvalid, res.Status)
	}
	sc, err := Export(cfg, res, ex)
	return cfg, res, sc, err
}

// Compare sets the packet-level output of scenario sc beside the fluid
// result res it was exported from.
func Compare(name string, v Variant, res netsim.Result, sc Scenario, out Output) Run {
	r := Run{Case: name, Variant: v, CC: sc.Net.normalize().CC, FluidExcessGbit: res.ExcessGbit,
		SimSec: out.End.Seconds(), CPUSec: out.CPU.Seconds(), Events: out.Events, Scale: sc.Scale, FluidAdjustments: res.Agent.Adjustments}
	for _, j := range out.Jobs {
		r.Drops += j.Drops
		r.AckDrops += j.AckDrops
		if j.Agent != nil {
			r.Agents++
			r.PacketAdjustments += j.Agent.Adjustments
		}
	}
	fluidMs := map[int][]float64{}
	k := 0
	for _, j := range res.Jobs {
		fluidMs[j.ID] = res.IterMs[k : k+j.Iterations]
		k += j.Iterations
	}
	alone := map[int]float64{}
	for _, j := range res.Jobs {
		alone[j.ID] = float64(j.Alone) / 1e6
	}
	overlap := overlaps(sc, out)
	var allF, allP []float64
	for _, j := range sc.Jobs {
		f, p := fluidMs[j.ID], out.IterMs(j.ID)
		n := min(len(f), len(p))
		f, p = f[:n], p[:n]
		row := JobRow{ID: j.ID, Model: j.Model, AloneMs: alone[j.ID], Iterations: n,
			FluidMs: netsim.Mean(f), PacketMs: netsim.Mean(p), FluidP90: netsim.Percentile(f, 90), PacketP90: netsim.Percentile(p, 90)}
		if n > 0 {
			row.FirstMs, row.FluidFirstMs = p[0], f[0]
			row.LastMs = netsim.Mean(p[n-max(n/4, 1):])
		}
		for _, it := range out.Job(j.ID)[:n] {
			row.Marks += it.Marks
		}
		row.FirstCommMs = firstComm(out, j.ID)
		o := overlap[j.ID]
		row.Overlap, row.OverlapFirst, row.OverlapLast = o.all, o.first, o.last
		r.Marks += row.Marks
		r.Jobs = append(r.Jobs, row)
		allF = append(allF, f...)
		allP = append(allP, p...)
	}
	if len(sc.Jobs) >= 2 {
		a, b := out.Job(sc.Jobs[0].ID), out.Job(sc.Jobs[1].ID)
		for k := range min(len(a), len(b)) {
			if a[k].Comm >= 0 && b[k].Comm >= 0 {
				r.Offsets = append(r.Offsets, float64(b[k].Comm-a[k].Comm)/1e6)
			}
		}
	}
	r.FluidMs, r.PacketMs = netsim.Mean(allF), netsim.Mean(allP)
	r.FluidP90, r.PacketP90 = netsim.Percentile(allF, 90), netsim.Percentile(allP, 90)
	return r
}

// calibrate sets what the fair and the calibrated fluid replays measure.
func (r *Run) calibrate(fair, cal Output) {
	var all []float64
	for i := range r.Jobs {
		j := &r.Jobs[i]
		ms := cal.IterMs(j.ID)
		ms = ms[:min(len(ms), j.Iterations)]
		j.CalibratedMs = netsim.Mean(ms)
		all = append(all, ms...)
		j.FluidFirstCommMs, j.CalibratedFirstCommMs = firstComm(fair, j.ID), firstComm(cal, j.ID)
	}
	r.CalibratedMs = netsim.Mean(all)
}

// firstComm returns job id's first iteration's communication time in ms,
// 0 if it has none.
func firstComm(o Output, id int) float64 {
	its := o.Job(id)
	if len(its) == 0 || its[0].Comm < 0 {
		return 0
	}
	return float64(its[0].End-its[0].Comm) / 1e6
}

type overlapStat struct{ all, first, last float64 }

// overlaps measures, per job, the share of its communication time during
// which another job crossing one of its links communicates too. A job's
// communication runs from its iteration's first communication step to the
// iteration's end (the data-parallel models' single phase; for
// model-parallel ones an upper bound).
func overlaps(sc Scenario, out Output) map[int]overlapStat {
	type span struct{ a, b time.Duration }
	links := map[int]map[[2]int]bool{}
	for _, j := range sc.Jobs {
		m := map[[2]int]bool{}
		for _, c := range j.Conns {
			for k := 0; k+1 < len(c.Path); k++ {
				m[[2]int{c.Path[k], c.Path[k+1]}] = true
			}
		}
		links[j.ID] = m
	}
	share := func(a, b int) bool {
		for l := range links[a] {
			if links[b][l] {
				return true
			}
		}
		return false
	}
	spans := map[int][]span{}
	for _, j := range sc.Jobs {
		for _, it := range out.Job(j.ID) {
			if it.Comm >= 0 {
				spans[j.ID] = append(spans[j.ID], span{it.Comm, it.End})
			}
		}
	}
	res := map[int]overlapStat{}
	for _, j := range sc.Jobs {
		var others []span
		for _, o := range sc.Jobs {
			if o.ID != j.ID && share(j.ID, o.ID) {
				others = append(others, spans[o.ID]...)
			}
		}
		slices.SortFunc(others, func(x, y span) int { return int(x.a - y.a) })
		frac := func(ss []span) float64 {
			var tot, over time.Duration
			for _, s := range ss {
				tot += s.b - s.a
				at := s.a
				for _, o := range others {
					if o.b <= at || o.a >= s.b {
						continue
					}
					lo, hi := max(o.a, at), min(o.b, s.b)
					if hi > lo {
						over += hi - lo
						at = hi
					}
				}
			}
			if tot == 0 {
				return 0
			}
			return float64(over) / float64(tot)
		}
		ss := spans[j.ID]
		q := max(len(ss)/4, 1)
		st := overlapStat{all: frac(ss)}
		if len(ss) > 0 {
			st.first, st.last = frac(ss[:min(q, len(ss))]), frac(ss[len(ss)-min(q, len(ss)):])
		}
		res[j.ID] = st
	}
	return res
}
