// Package replay runs the papers' experiments end to end: CASSINI's
// ablation on a simulated cluster ([RunCassini], the fluid network of
// package netsim) and Shockwave's trace replays ([RunShockwave], the round
// simulator of package sim). The command line's "cassini simulate" and
// "shockwave simulate" are these two functions; they take typed options
// (a fabric, a scheduler, arms) and the command line parses its text into
// them.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// ErrInvalid is wrapped by every error of a replay's setup, which names
// the option at fault.
var ErrInvalid = errors.New("replay: invalid setup")

// Cassini is an experiment of the CASSINI paper in a max-min fair fluid
// network: a trace of training jobs on a fabric, GPUs allocated by a round
// scheduler whose every decision offers N placement candidates of the
// same allocation, run once per arm of the ablation (the scheduler's own
// placement, CASSINI's placement, CASSINI's placement and time shifts held
// by each job's agent, Ideal) and per seed. Every zero value means the
// default stated beside it; the zero Cassini is the paper's Poisson
// experiment (its 24-server 2:1 testbed, the 13 models of its Table 3,
// Themis with 10-minute leases placing as Themis does, 90% load) without
// iteration-time noise.
type Cassini struct {
	// Scenario is the trace; "" means Poisson, or Custom when Trace is set.
	// The fixed experiments (Fig2, Snapshot1..5) bring their own fabric and
	// pinned placements, and each job runs MaxIterations; Paper is the
	// Poisson experiment of the paper's Fig. 11 (see PaperModels).
	Scenario Scenario
	// Trace, when not nil, is the jobs to run (the Custom scenario, the same
	// on every seed): the caller's own arrivals, naming built-in models or
	// Profiles. workload.ReadJobs reads both from a file.
	Trace []workload.Job
	// Profiles are models of the caller's own that Trace may name.
	Profiles []workload.Model
	// Placement picks the GPUs of the scheduler's placements (and the
	// candidates it offers CASSINI); "" means PlaceThemis.
	Placement Placement
	// Auction is Themis's mechanism (the other schedulers have their own);
	// "" means the placement's: AuctionGreedy with PlaceContiguous (the
	// simulator's Themis before the paper's auction), AuctionPaper
	// otherwise.
	Auction Auction
	// Fabric is the cluster's network; nil means the paper's testbed
	// (topology.Paper). topology.Parse reads the command line's form.
	Fabric *topology.Topology
	// Scheduler allocates GPUs; the zero value is Themis (finish-time
	// fairness auctions with leases, the paper's integration).
	Scheduler netsim.Scheduler
	// Lease is Themis's lease, or Gavel's and Shockwave's round; 0 means
	// 10 minutes and 2 minutes.
	Lease         time.Duration
	GPUsPerServer int // 0 means 1
	Jobs          int // jobs of a Poisson trace; 0 means 40
	// Sweep makes a Poisson trace's jobs arrive in sweeps of this many
	// copies of one configuration (model, batch, GPUs, iterations), as a
	// hyperparameter search launches them; 0 or 1 means one job per arrival.
	Sweep int
	// Load is the average fraction of GPUs busy under Poisson arrivals; 0
	// means 0.9, a negative value starts every job at time 0.
	Load   float64
	Models []string // the models jobs are drawn from; nil means all 13
	Arrive []string // Dynamic: the arriving models; nil means DLRM, ResNet50, DLRM, ResNet50
	// MinIterations and MaxIterations bound a job's iterations; 0 means 200
	// (or MaxIterations if smaller) and 1000 (or MinIterations if larger).
	MinIterations, MaxIterations int
	Seeds                        []uint64      // traces and placements; nil means {1}
	Duration                     time.Duration // stop at this simulated time; 0 means when every job is done
	// Arms are the ablation's arms, in order; nil means [DefaultArms].
	// Speedups are over the first arm.
	Arms       []Arm
	Candidates int // placement candidates per decision; 0 means 10, the paper's
	// Noise is the iteration-time noise; the zero value is none. NoiseCV
	// is the Gaussian noise's coefficient of variation, and NoiseData holds
	// the Alibaba PAI files the other kinds replay (this repository's
	// internal/eval/data/alibaba).
	Noise     Noise
	NoiseCV   float64
	NoiseData fs.FS
	// AgentMode is how agents hold shifts; the zero value is Elastic (a
	// shared clock paced by the slowest job; shifts that do not pay are
	// given up).
	AgentMode agent.Mode
	Threshold float64 // the agent's re-alignment trigger, fraction of the period; 0 means 0.05
	NoGiveUp  bool    // Elastic agents never give their shifts up (the give-up rule's ablation)
	// FullBudget starts Elastic agents' budgets with their token, and
	// MeanGiveUp weighs their give-up by moving averages, the rule before
	// (agent.Options): ablations. PlanClock gives each Elastic agent the
	// plan's clock instead of a shared group clock
	// (netsim.CassiniOptions.PlanClock); PlanBudget applies the budget on
	// it, the rule before (agent.Options.PlanBudget).
	FullBudget, MeanGiveUp, PlanClock, PlanBudget bool
	// GiveUp is who decides an Elastic shift does not pay; the zero value
	// is the group (the members' summed wait against their summed saving).
	GiveUp agent.GiveUp
	// Budget caps an Elastic agent's adjustments per minute
	// (agent.Options.Budget): 0 means agent.DefaultBudget, negative no cap
	// (the budget's ablation).
	Budget float64
	// Rank is how CASSINI picks a candidate; the zero value is the least
	// predicted delay.
	Rank netsim.Rank
	// Hold says which jobs hold their shifts; the zero value is those on
	// links where a replay predicts a net gain for every job.
	Hold         netsim.Hold
	MinGain      float64       // least predicted gain per job with HoldGain, fraction of its period; 0 means 0.01
	MinScore     float64       // least link score with HoldScore; 0 means 1, -1 every link over capacity
	Headroom     float64       // idle fraction added to each profiled period; 0 as the paper
	MaxPerimeter int           // cap on a unified circle in ticks; 0 means 4096
	Tick         time.Duration // the profiles' tick; 0 means 1 ms
	LinkMode     link.Mode     // link search; the zero value is exact

	// Transport is the network's congestion control: the zero value is
	// max-min fair sharing (netsim.MaxMin), else DCQCN or MLTCP's DCQCN
	// variant (docs/transports.md). DCQCNStep is the DCQCN model's control
	// step (0: fluid.DefaultDCQCN's, 5 us); MLTCP its aggressiveness
	// function (the zero value: netsim.DefaultMLTCP).
	Transport netsim.Transport
	DCQCNStep time.Duration
	MLTCP     netsim.MLTCPParams

	// Progress, if not nil, is called (from one goroutine at a time) after
	// each run of an arm on a seed, with the runs done and their number.
	Progress func(done, runs int)
}

// Placement names the rule that picks a placement's GPUs (netsim.Placement).
type Placement string

// The placements.
const (
	PlaceThemis     Placement = "themis"     // Themis's own rule: fewest machines, ties drawn at random; blind to links
	PlaceContiguous Placement = "contiguous" // first fit over the servers in order: rack-local where it can be
	PlaceScattered  Placement = "scattered"  // one GPU per server, round robin over the racks
)

// Placements lists the placements.
func Placements() []Placement { return []Placement{PlaceThemis, PlaceContiguous, PlaceScattered} }

// ParsePlacement parses a placement's name.
func ParsePlacement(s string) (Placement, error) {
	if slices.Contains(Placements(), Placement(s)) {
		return Placement(s), nil
	}
	return "", fmt.Errorf("%q: want themis, contiguous or scattered", s)
}

func (p Placement) netsim() netsim.Placement {
	switch p {
	case PlaceContiguous:
		return netsim.Contiguous
	case PlaceScattered:
		return netsim.Scattered
	}
	return netsim.ThemisGPUs
}

// Auction names Themis's mechanism (netsim.Auction).
type Auction string

// The auctions.
const (
	AuctionPaper  Auction = "paper"  // the Themis paper's partial allocation auction, worker counts re-tuned, moves at lease ends
	AuctionGreedy Auction = "greedy" // decreasing finish-time fairness, fixed worker counts, renewals in place
)

// ParseAuction parses an auction's name.
func ParseAuction(s string) (Auction, error) {
	if s == string(AuctionPaper) || s == string(AuctionGreedy) {
		return Auction(s), nil
	}
	return "", fmt.Errorf("%q: want paper or greedy", s)
}

func (a Auction) netsim() netsim.Auction {
	if a == AuctionPaper {
		return netsim.AuctionPaper
	}
	return netsim.AuctionGreedy
}

// Scenario names a trace of [Cassini].
type Scenario string

// The scenarios.
const (
	Poisson   Scenario = "poisson"   // Poisson arrivals at Load
	Dynamic   Scenario = "dynamic"   // a busy cluster, then the Arrive jobs every 30 s
	Fig2      Scenario = "fig2"      // the paper's Fig. 2: two VGG19 jobs on one link
	Snapshot1 Scenario = "snapshot1" // Table 2's snapshots: jobs pinned across two racks
	Snapshot2 Scenario = "snapshot2"
	Snapshot3 Scenario = "snapshot3"
	Snapshot4 Scenario = "snapshot4"
	Snapshot5 Scenario = "snapshot5"
	// Paper is the paper's Poisson experiment (§5.2, Fig. 11): its fabric
	// (24 servers, 50 Gbps, 2:1), its model mix (PaperModels), Poisson
	// arrivals at Load (90%, the paper's 80-100%), 1-12 GPUs and 200-1000
	// iterations per job, and Themis as its paper describes it (its
	// auction, worker counts re-tuned, its GPU rule).
	Paper  Scenario = "paper"
	Custom Scenario = "custom" // the caller's Trace
)

// PaperModels is the model mix of the paper's Fig. 11: its data-parallel
// models and DLRM (model parallel), no GPT (§5.2: "We use model
// parallelism for the DLRM model because of its large model size, and we
// use data parallelism for all the other DNN models"; the figure's legend
// lists these ten).
func PaperModels() []string {
	return []string{"VGG11", "VGG16", "VGG19", "WideResNet101", "ResNet50", "BERT", "RoBERTa", "CamemBERT", "XLM", "DLRM"}
}

// Scenarios lists the scenarios.
func Scenarios() []Scenario {
	return []Scenario{Poisson, Dynamic, Fig2, Snapshot1, Snapshot2, Snapshot3, Snapshot4, Snapshot5, Paper, Custom}
}

// ParseScenario parses a scenario's name.
func ParseScenario(s string) (Scenario, error) {
	if slices.Contains(Scenarios(), Scenario(s)) {
		return Scenario(s), nil
	}
	return "", fmt.Errorf("%q: want %s", s, scenarioNames)
}

// Noise is a kind of iteration-time noise.
type Noise int

// The kinds of noise.
const (
	NoNoise       Noise = iota // none
	Alibaba                    // Alibaba PAI worker traces times their iteration-to-iteration jitter
	AlibabaTraces              // the worker traces only: drift and stragglers
	AlibabaJitter              // the jitter only
	Gaussian                   // independent Gaussian multipliers of mean 1 and coefficient of variation NoiseCV
)

// ParseNoise parses the command line's noise: "none", "both" (Alibaba),
// "traces", "cov" or "gauss:CV", with the CV of the last.
func ParseNoise(s string) (Noise, float64, error) {
	src, cv, err := workload.ParseNoise(s)
	if err != nil {
		return 0, 0, err
	}
	return noiseOf(src), cv, nil
}

func noiseOf(src workload.Source) Noise {
	switch src {
	case workload.Both:
		return Alibaba
	case workload.Traces:
		return AlibabaTraces
	case workload.Jitter:
		return AlibabaJitter
	case workload.Gauss:
		return Gaussian
	}
	return NoNoise
}

// source is n as the workload package names it.
func (n Noise) source() workload.Source {
	switch n {
	case Alibaba:
		return workload.Both
	case AlibabaTraces:
		return workload.Traces
	case AlibabaJitter:
		return workload.Jitter
	case Gaussian:
		return workload.Gauss
	}
	return workload.None
}

// MaxJobs bounds the jobs of a simulated Poisson trace: a trace is built
// and replayed in memory, and -jobs 100000 -load 0 ran for minutes before
// any answer.
const MaxJobs = 10000

// RunCassini runs the experiment: every arm on every seed's trace (in
// parallel; the result does not depend on it). A bad setting is an error
// wrapping [ErrInvalid] naming the field; the output is deterministic.
func RunCassini(ctx context.Context, s Cassini) (CassiniReport, error) {
	o, err := s.resolve()
	if err != nil {
		return CassiniReport{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return o.simulate(ctx)
}

// resolve fills in the defaults and checks the options.
func (s Cassini) resolve() (Cassini, error) {
	o := s
	switch {
	case o.Scenario == "" && o.Trace != nil:
		o.Scenario = Custom
	case o.Scenario == "":
		o.Scenario = Poisson
	}
	if (o.Scenario == Custom) != (o.Trace != nil) {
		return o, badField("Trace", "%d jobs for scenario %q (a Trace is the custom scenario, and only it)", len(o.Trace), o.Scenario)
	}
	if o.Scenario == Custom && len(o.Trace) == 0 {
		return o, badField("Trace", "no jobs")
	}
	if o.Scenario == Custom {
		o.Load = -1 // the trace has its own arrivals
	}
	if sc, ok := cassiniScenarios[o.Scenario]; ok {
		fabric, err := topology.Parse(sc.topology)
		if err != nil {
			panic(err) // a constant spec
		}
		o.Fabric, o.GPUsPerServer, o.Load = fabric, 1, -1
		// Pinned: the rule has nothing to choose; the greedy auction
		// starts the jobs in their order, as before placements were a knob.
		o.Placement, o.Auction = PlaceContiguous, AuctionGreedy
	}
	if o.Scenario == Paper && o.Models == nil {
		o.Models = PaperModels()
	}
	if o.Placement == "" {
		o.Placement = PlaceThemis
	}
	if o.Auction == "" {
		o.Auction = AuctionPaper
		if o.Placement == PlaceContiguous {
			o.Auction = AuctionGreedy
		}
	}
	if o.Fabric == nil {
		o.Fabric = topology.Paper()
	}
	if o.GPUsPerServer == 0 {
		o.GPUsPerServer = 1
	}
	if o.Jobs == 0 {
		o.Jobs = 40
	}
	switch {
	case o.Load == 0:
		o.Load = 0.9
	case o.Load < 0:
		o.Load = 0
	}
	if o.MinIterations == 0 {
		o.MinIterations = 200
		if o.MaxIterations > 0 {
			o.MinIterations = min(o.MinIterations, o.MaxIterations)
		}
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = max(1000, o.MinIterations)
	}
	if o.Seeds == nil {
		o.Seeds = []uint64{1}
	}
	if o.Candidates == 0 {
		o.Candidates = netsim.DefaultCandidates
	}
	if o.Threshold == 0 {
		o.Threshold = agent.DefaultThreshold
	}
	if o.MinScore == 0 {
		o.MinScore = 1
	}
	if o.MaxPerimeter == 0 {
		o.MaxPerimeter = 4096
	}
	if o.Tick == 0 {
		o.Tick = time.Millisecond
	}
	if o.Arms == nil {
		o.Arms = DefaultArms()
	}
	switch {
	case !slices.Contains(Scenarios(), o.Scenario):
		return o, badField("Scenario", "%q: want %s", o.Scenario, scenarioNames)
	case !slices.Contains(Placements(), o.Placement):
		return o, badField("Placement", "%q: want themis, contiguous or scattered", o.Placement)
	case o.Auction != AuctionPaper && o.Auction != AuctionGreedy:
		return o, badField("Auction", "%q: want paper or greedy", o.Auction)
	case o.GPUsPerServer < 0:
		return o, badField("GPUsPerServer", "%d", o.GPUsPerServer)
	case o.Jobs < 0 || o.Jobs > MaxJobs:
		return o, badField("Jobs", "%d (want 1..%d, or 0 for 40)", o.Jobs, MaxJobs)
	case o.Sweep < 0 || o.Sweep > o.Jobs:
		return o, badField("Sweep", "%d (want 0..%d, the jobs)", o.Sweep, o.Jobs)
	case o.Scenario == Custom && (o.Sweep > 0 || o.Models != nil || o.Arrive != nil):
		return o, badField("Sweep, Models or Arrive", "set with a Trace of the caller's (they shape generated traces)")
	case o.Sweep > 1 && o.Scenario != Poisson && o.Scenario != Dynamic && o.Scenario != Paper:
		return o, badField("Sweep", "%d for scenario %q (sweeps are of the poisson and dynamic traces)", o.Sweep, o.Scenario)
	case o.MinIterations < 1 || o.MaxIterations < o.MinIterations:
		return o, badField("MinIterations", "%d, MaxIterations %d: want 1 <= min <= max", o.MinIterations, o.MaxIterations)
	case o.Candidates < 0:
		return o, badField("Candidates", "%d", o.Candidates)
	case o.MaxPerimeter < 0:
		return o, badField("MaxPerimeter", "%d", o.MaxPerimeter)
	case o.Tick < 0 || o.Lease < 0 || o.Duration < 0:
		return o, badField("Tick, Lease or Duration", "negative")
	case len(o.Seeds) == 0 || len(o.Seeds) > 1<<10:
		return o, badField("Seeds", "%d of them (want 1 to 1024)", len(o.Seeds))
	case len(o.Arms) == 0:
		return o, badField("Arms", "none")
	case o.Noise < NoNoise || o.Noise > Gaussian:
		return o, badField("Noise", "%d", o.Noise)
	case o.Noise == Gaussian && !(o.NoiseCV >= 0 && o.NoiseCV <= 1):
		return o, badField("NoiseCV", "%v (want 0 to 1)", o.NoiseCV)
	case o.Noise != NoNoise && o.Noise != Gaussian && o.NoiseData == nil:
		return o, badField("NoiseData", "nil: the Alibaba PAI files are needed for %s noise", o.Noise.source())
	case o.Fabric.Servers == 0:
		return o, badField("Fabric", "no servers")
	case o.DCQCNStep < 0 || o.DCQCNStep > fluid.DefaultDCQCN().CNPInterval:
		return o, badField("DCQCNStep", "%v (want 0 < step <= %v, or 0 for the default)", o.DCQCNStep, fluid.DefaultDCQCN().CNPInterval)
	}
	for _, m := range append(slices.Clip(o.Models), o.Arrive...) {
		if _, err := workload.Lookup(m); err != nil {
			return o, badField("Models or Arrive", "%v", err)
		}
	}
	for i, a := range o.Arms {
		if err := a.check(); err != nil {
			return o, badField(fmt.Sprintf("Arms[%d]", i), "%v", err)
		}
	}
	for _, c := range []struct {
		field string
		name  fmt.Stringer
	}{{"Transport", o.Transport}, {"Scheduler", o.Scheduler}, {"AgentMode", o.AgentMode}, {"GiveUp", o.GiveUp}, {"Rank", o.Rank}, {"Hold", o.Hold}, {"LinkMode", o.LinkMode}} {
		if strings.Contains(c.name.String(), "(") { // an enum's String of a value it does not name
			return o, badField(c.field, "%v", c.name)
		}
	}
	return o, nil
}

// badField is an error about a field of the simulation, named first.
func badField(field, format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{field}, args...)...)
}

// Arm is one arm of the ablation: a placement policy and, for CASSINI with
// shifts, how the shifts are held.
type Arm struct {
	Policy netsim.Policy
	// Shifts (Cassini only) overrides how shifts are held: "" (the
	// options'), "elastic", "pad" or "paper".
	Shifts string
}

// DefaultArms are the arms of a [Cassini] whose Arms is nil: the
// scheduler's own placement, CASSINI's placement, CASSINI's placement and
// shifts, and Ideal.
func DefaultArms() []Arm {
	return []Arm{{Policy: netsim.Baseline}, {Policy: netsim.CassiniPlacement}, {Policy: netsim.Cassini}, {Policy: netsim.Ideal}}
}

func (a Arm) String() string {
	if a.Shifts != "" {
		return a.Policy.String() + "/" + a.Shifts
	}
	return a.Policy.String()
}

func (a Arm) check() error {
	switch {
	case strings.Contains(a.Policy.String(), "("):
		return fmt.Errorf("policy %v", a.Policy)
	case a.Shifts == "":
	case a.Policy != netsim.Cassini:
		return fmt.Errorf("%v: only cassini takes a shift variant", a)
	case a.Shifts != "elastic" && a.Shifts != "pad" && a.Shifts != "paper":
		return fmt.Errorf("%v: shift variant %q (want elastic, pad or paper)", a, a.Shifts)
	}
	return nil
}

// ArmNames lists the names [ParseArm] takes.
func ArmNames() []string {
	return []string{"baseline", "random", "cassini-placement", "cassini", "cassini/elastic", "cassini/pad", "cassini/paper", "ideal"}
}

// ParseArm parses an arm's name: a policy, or cassini/elastic,
// cassini/pad or cassini/paper.
func ParseArm(s string) (Arm, error) {
	name, shifts, _ := strings.Cut(strings.TrimSpace(s), "/")
	p, err := netsim.ParsePolicy(name)
	if err != nil {
		return Arm{}, err
	}
	a := Arm{p, shifts}
	if err := a.check(); err != nil {
		return Arm{}, err
	}
	return a, nil
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
var cassiniScenarios = map[Scenario]cassiniScenario{
	Fig2:      snapshot("clos:1,2,2,1,0", "VGG19/1400", "VGG19/1400"),
	Snapshot1: snapshot("clos:1,2,3,1,0", "WideResNet101/800", "VGG16/1400"),
	Snapshot2: snapshot("clos:1,2,3,1,0", "VGG19/1400", "VGG16/1700", "ResNet50/1600"),
	Snapshot3: snapshot("clos:1,2,3,1,0", "VGG19/1024", "VGG16/1200"),
	Snapshot4: snapshot("clos:1,2,3,1,0", "RoBERTa/12", "RoBERTa/12"),
	Snapshot5: snapshot("clos:1,2,3,1,0", "BERT/8", "VGG19/1400", "WideResNet101/800"),
}

const scenarioNames = "poisson, paper, dynamic, fig2 or snapshot1..snapshot5"

// Fixed returns a fixed experiment's fabric (as topology.Parse reads it),
// its jobs (Iterations unset) and the servers each is pinned to; ok is
// false for a trace (Poisson, Dynamic). The kernel testbed runs the same
// experiments.
func Fixed(s Scenario) (fabric string, jobs []workload.Job, pinned map[int][]int, ok bool) {
	sc, ok := cassiniScenarios[s]
	if !ok {
		return "", nil, nil, false
	}
	pinned = make(map[int][]int, len(sc.pinned))
	for j, servers := range sc.pinned {
		pinned[j] = slices.Clone(servers)
	}
	return sc.topology, slices.Clone(sc.jobs), pinned, true
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

// cassiniTrace returns the jobs of o's scenario for one seed, their pinned
// servers (snapshots) and the topology spec to run them on.
func cassiniTrace(o Cassini, seed uint64, gpus int) ([]workload.Job, map[int][]int, error) {
	base := workload.Config{Models: o.Models, Jobs: o.Jobs, Load: o.Load, ClusterGPUs: gpus, GPUsPerServer: o.GPUsPerServer,
		MinIterations: o.MinIterations, MaxIterations: o.MaxIterations, Seed: seed, Sweep: o.Sweep}
	switch o.Scenario {
	case Poisson, Paper:
		jobs, err := workload.Generate(base)
		return jobs, nil, err
	case Dynamic:
		jobs, err := workload.GenerateDynamic(workload.Dynamic{Base: base, Arrive: o.Arrive})
		return jobs, nil, err
	case Custom:
		return slices.Clone(o.Trace), nil, nil
	}
	sc, ok := cassiniScenarios[o.Scenario]
	if !ok {
		return nil, nil, badField("Scenario", "%q: want %s", o.Scenario, scenarioNames)
	}
	var jobs []workload.Job
	for _, j := range sc.jobs {
		j.Iterations = o.MaxIterations
		jobs = append(jobs, j)
	}
	return jobs, sc.pinned, nil
}

// config is the simulation of one arm of o on jobs.
func (o Cassini) config(arm Arm, jobs []workload.Job, pinned map[int][]int, seed uint64, noise workload.Replay) netsim.Config {
	cfg := netsim.Config{
		Topology: o.Fabric, GPUsPerServer: o.GPUsPerServer, Jobs: jobs, Models: o.Profiles, Pinned: pinned, Scheduler: o.Scheduler, Lease: o.Lease,
		Placement: o.Placement.netsim(), Auction: o.Auction.netsim(),
		Policy: arm.Policy, Candidates: o.Candidates, Seed: seed, Duration: o.Duration, Noise: noise,
		Agent: agent.Options{Mode: o.AgentMode, Threshold: o.Threshold, GiveUp: o.GiveUp, Budget: o.Budget, FullBudget: o.FullBudget, MeanGiveUp: o.MeanGiveUp, PlanBudget: o.PlanBudget},
		Cassini: netsim.CassiniOptions{Mode: o.LinkMode, Tick: o.Tick, MaxPerimeter: o.MaxPerimeter,
			Headroom: o.Headroom, Rank: o.Rank, Hold: o.Hold, MinGain: o.MinGain, MinScore: o.MinScore, NoGiveUp: o.NoGiveUp, PlanClock: o.PlanClock, Workers: 1},
	}
	if o.Transport != netsim.MaxMin {
		cfg.Transport, cfg.MLTCP = o.Transport, o.MLTCP
		cfg.DCQCN = fluid.DefaultDCQCN()
		if o.DCQCNStep > 0 {
			cfg.DCQCN.Step = o.DCQCNStep
		}
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

// simulate runs every arm of o on every seed's trace, in parallel; the
// result does not depend on the parallelism.
func (o Cassini) simulate(ctx context.Context) (CassiniReport, error) {
	var err error
	noise := workload.Replay{Source: o.Noise.source(), CV: o.NoiseCV}
	if o.Noise != NoNoise && o.Noise != Gaussian {
		if noise, err = workload.LoadReplay(o.NoiseData, noise.Source); err != nil {
			return CassiniReport{}, fmt.Errorf("%w: NoiseData: %w (the Alibaba PAI files: internal/eval/data/alibaba in the repository)", ErrInvalid, err)
		}
	}
	gpus := o.Fabric.Servers * max(o.GPUsPerServer, 1)
	traces := make([][]workload.Job, len(o.Seeds))
	var pinned map[int][]int
	for i, seed := range o.Seeds {
		if traces[i], pinned, err = cassiniTrace(o, seed, gpus); err != nil {
			return CassiniReport{}, err
		}
	}
	runs := make([][]CassiniRun, len(o.Arms)) // arm, seed
	for a := range runs {
		runs[a] = make([]CassiniRun, len(o.Seeds))
	}
	errs := make([]error, len(o.Arms)*len(o.Seeds))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for a, arm := range o.Arms {
		for i, seed := range o.Seeds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				n := noise
				n.Seed, n.Offset = seed, int((seed-1)%1024) // seed 1 deals the release as it comes
				r, err := netsim.Run(ctx, o.config(arm, traces[i], pinned, seed, n))
				if err != nil {
					errs[a*len(o.Seeds)+i] = fmt.Errorf("%v, seed %d: %w", arm, seed, err)
					return
				}
				runs[a][i] = summarizeCassini(arm, seed, r, o.Profiles)
				if o.Progress != nil {
					mu.Lock()
					done++
					o.Progress(done, len(errs))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return CassiniReport{}, err
	}
	noiseName := o.Noise.source().String()
	if o.Noise == Gaussian {
		noiseName = fmt.Sprintf("gauss:%g", o.NoiseCV)
	}
	res := CassiniReport{Scenario: string(o.Scenario), Scheduler: o.Scheduler.String(), Topology: o.Fabric.Name, Servers: o.Fabric.Servers,
		Jobs: len(traces[0]), Load: o.Load, Seeds: o.Seeds, Noise: noiseName, Placement: string(o.Placement), Auction: string(o.Auction)}
	if o.Sweep > 1 {
		res.Sweep = o.Sweep
	}
	if o.Transport != netsim.MaxMin {
		res.Transport = o.Transport.String()
	}
	for a, arm := range o.Arms {
		res.Arms = append(res.Arms, aggregateCassini(arm, runs[a], runs[0], profileNames(o.Profiles)))
	}
	pool(res.Arms)
	return res, nil
}

// pool sets each arm's pooled metrics: every seed's iterations together,
// the first arm's over the arm's, and the fraction of the gap between the
// first arm and Ideal (if an arm is Ideal) the arm closes.
func pool(arms []CassiniArm) {
	all := make([][]float64, len(arms))
	for a, arm := range arms {
		for _, r := range arm.Runs {
			all[a] = append(all[a], r.IterMs...)
		}
		p := &arms[a].Pooled
		p.MeanIterMs, p.P99IterMs = cassiniRound(netsim.Mean(all[a])), cassiniRound(netsim.Percentile(all[a], 99))
	}
	first := arms[0].Pooled
	ideal := slices.IndexFunc(arms, func(a CassiniArm) bool { return a.Arm == netsim.Ideal.String() })
	for a := range arms {
		p := &arms[a].Pooled
		if p.MeanIterMs > 0 {
			p.SpeedupMean = cassiniRound(first.MeanIterMs / p.MeanIterMs)
		}
		if p.P99IterMs > 0 {
			p.SpeedupP99 = cassiniRound(first.P99IterMs / p.P99IterMs)
		}
		if ideal >= 0 {
			v := cassiniRound(GapClosed(netsim.Mean(all[0]), netsim.Mean(all[a]), netsim.Mean(all[ideal])))
			p.GapClosed = &v
		}
	}
}

// GapClosed is the fraction of the gap between the scheduler alone and
// Ideal that an arm closes, on (pooled mean) iteration times:
// (base - arm) / (base - ideal). It is 1 for an arm as fast as Ideal, 0
// for one as slow as the scheduler, negative for a slower one, and 0 when
// there is no gap (base <= ideal).
func GapClosed(base, arm, ideal float64) float64 {
	if !(base > ideal) {
		return 0
	}
	return (base - arm) / (base - ideal)
}

// cassiniRound rounds to three decimals, halves away from zero.
func cassiniRound(v float64) float64 { return math.Round(v*1000) / 1000 }

// CassiniReport is what `orrery cassini simulate` measures: per arm of
// the ablation, its runs (one per seed) and their Spread.
type CassiniReport struct {
	Scenario   string       `json:"scenario"`
	Scheduler  string       `json:"scheduler"`
	Topology   string       `json:"topology"`
	Servers    int          `json:"servers"`
	Jobs       int          `json:"jobs"`            // of the first seed's trace
	Sweep      int          `json:"sweep,omitempty"` // copies per arrival, when above 1
	Load       float64      `json:"load"`
	Seeds      []uint64     `json:"seeds"`
	Noise      string       `json:"noise"`
	Placement  string       `json:"placement"`           // the placement rule
	Auction    string       `json:"auction"`             // Themis's mechanism
	Transport  string       `json:"transport,omitempty"` // "" for max-min sharing
	Arms       []CassiniArm `json:"arms"`
	ElapsedSec float64      `json:"-"` // wall-clock time of the whole run
}

// CassiniPooled is the paper's metric for an arm: its iteration times over
// every seed together (the paper's CDFs pool every job's iterations), the
// first arm's over the arm's, and the fraction of the gap to Ideal it
// closes (GapClosed; nil without an Ideal arm).
type CassiniPooled struct {
	MeanIterMs  float64  `json:"mean_iter_ms"`
	P99IterMs   float64  `json:"p99_iter_ms"`
	SpeedupMean float64  `json:"speedup_mean"`
	SpeedupP99  float64  `json:"speedup_p99"`
	GapClosed   *float64 `json:"gap_closed,omitempty"`
}

// CassiniPlacement is where a run's jobs ran (netsim.PlacementStats): the
// fraction of its placements spanning racks, of their ring hops crossing
// the ToRs' uplinks, the mean jobs on a binding uplink (one whose jobs'
// peak demands exceed its capacity) while it binds, the fraction of the
// uplinks' time they bind, their mean offered load (the jobs' mean demand
// alone over capacity), and the placements, moves and re-sized
// placements counted.
type CassiniPlacement struct {
	CrossRack      float64 `json:"cross_rack"`
	UplinkHops     float64 `json:"uplink_hops"`
	BindingSharers float64 `json:"binding_sharers"`
	BindingShare   float64 `json:"binding_share"`
	UplinkLoad     float64 `json:"uplink_load"`
	Placements     int     `json:"placements"`
	Moves          int     `json:"moves"`
	Resized        int     `json:"resized"`
}

// CassiniPlacementSpread is CassiniPlacement's fractions across seeds.
type CassiniPlacementSpread struct {
	CrossRack      Spread `json:"cross_rack"`
	UplinkHops     Spread `json:"uplink_hops"`
	BindingSharers Spread `json:"binding_sharers"`
	BindingShare   Spread `json:"binding_share"`
	UplinkLoad     Spread `json:"uplink_load"`
	Moves          Spread `json:"moves"`
	Resized        Spread `json:"resized"`
}

// CassiniArm is one arm over every seed: each metric's mean, standard
// deviation, minimum and maximum across the seeds, the speedups over the
// first arm on the same seeds, and the per-model means.
type CassiniArm struct {
	Arm          string `json:"arm"`
	MeanIterMs   Spread `json:"mean_iter_ms"`
	P99IterMs    Spread `json:"p99_iter_ms"`
	MeanSlowdown Spread `json:"mean_slowdown"`
	P99Slowdown  Spread `json:"p99_slowdown"`
	ExcessGbit   Spread `json:"excess_gbit"`
	// MarkedMbitPerIter is the traffic a job delivers while a link on its
	// path is offered more than its capacity (the ECN-mark stand-in), per
	// job-iteration.
	MarkedMbitPerIter Spread `json:"marked_mbit_per_iter"`
	// SpeedupMean and SpeedupP99 are the first arm's mean (p99) iteration
	// time over this arm's, per seed.
	SpeedupMean Spread `json:"speedup_mean"`
	SpeedupP99  Spread `json:"speedup_p99"`
	// Cassini only: adjustments per job-minute of the agents (per seed),
	// the same pooled over the seeds (every seed's adjustments over every
	// seed's agent job-minutes: a seed whose agents gave up after a minute
	// does not weigh as much as one whose agents held for the whole run),
	// jobs that held a shift, agents that gave theirs up.
	AdjustmentsPerMin       *Spread  `json:"adjustments_per_min,omitempty"`
	PooledAdjustmentsPerMin *float64 `json:"pooled_adjustments_per_min,omitempty"`
	Agents                  *Spread  `json:"agents,omitempty"`
	Released                *Spread  `json:"released,omitempty"`
	// Sharing (the CASSINI arms) is the fraction of the jobs CASSINI
	// placed that share a binding link (its jobs' peaks exceed its
	// capacity) with another job on the chosen candidate: those a time
	// shift can matter to.
	Sharing *Spread `json:"sharing,omitempty"`
	// Pooled is the paper's metric; Placement where the jobs ran.
	Pooled    CassiniPooled          `json:"pooled"`
	Placement CassiniPlacementSpread `json:"placement"`

	Models []CassiniModel `json:"models"`
	Runs   []CassiniRun   `json:"runs"`
}

// Spread summarizes one metric across seeds (rounded to three decimals).
type Spread struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := Spread{Min: v[0], Max: v[0]}
	for _, x := range v {
		s.Mean += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean /= float64(len(v))
	for _, x := range v {
		s.SD += float64((x - s.Mean) * (x - s.Mean)) // rounded: no fused multiply-add
	}
	if len(v) > 1 {
		s.SD = math.Sqrt(s.SD / float64(len(v)-1))
	} else {
		s.SD = 0
	}
	s.Mean, s.SD, s.Min, s.Max = cassiniRound(s.Mean), cassiniRound(s.SD), cassiniRound(s.Min), cassiniRound(s.Max)
	return s
}

// CassiniRun is one arm's run on one seed. Iteration times run
// start to start, so they include the agents' waiting.
type CassiniRun struct {
	Arm               string  `json:"arm"`
	Seed              uint64  `json:"seed"`
	Status            string  `json:"status"`
	MeanIterMs        float64 `json:"mean_iter_ms"`
	P50IterMs         float64 `json:"p50_iter_ms"`
	P90IterMs         float64 `json:"p90_iter_ms"`
	P99IterMs         float64 `json:"p99_iter_ms"`
	MeanSlowdown      float64 `json:"mean_slowdown"` // iteration time / its uncontended time on its placement
	P99Slowdown       float64 `json:"p99_slowdown"`
	ExcessGbit        float64 `json:"excess_gbit"` // traffic offered above capacity, summed over links
	MarkedMbitPerIter float64 `json:"marked_mbit_per_iter"`
	Iterations        int     `json:"iterations"`
	Finished          int     `json:"jobs_finished"`
	Preemptions       int     `json:"preemptions"`
	MeanJCTSec        float64 `json:"mean_jct_s"` // arrival to finish, over the finished jobs
	SimSeconds        float64 `json:"sim_seconds"`

	// Cassini only.
	AdjustmentsPerMin *float64 `json:"adjustments_per_min,omitempty"` // per job-minute of the agents
	Adjustments       *int64   `json:"adjustments,omitempty"`
	AgentMinutes      *float64 `json:"agent_minutes,omitempty"` // the agents' summed spans
	Agents            *int     `json:"agents,omitempty"`
	Released          *int64   `json:"released,omitempty"` // agents that gave their shift up
	// PaddingSec is the time the agents made their jobs wait for slots;
	// SavedSec the communication time the held shifts saved against the
	// hold gate's free estimate (Elastic agents). Both summed over the jobs.
	PaddingSec    *float64 `json:"padding_s,omitempty"`
	SavedSec      *float64 `json:"saved_s,omitempty"`
	MeanDriftMs   *float64 `json:"mean_drift_ms,omitempty"`
	PlannedScore  *float64 `json:"planned_score,omitempty"`
	RealizedScore *float64 `json:"realized_score,omitempty"`
	MeanRankScore *float64 `json:"mean_rank_score,omitempty"`
	Sharing       *float64 `json:"sharing,omitempty"` // of the jobs CASSINI placed, those sharing a binding link

	Placement CassiniPlacement `json:"placement"`

	Models []CassiniModel `json:"models"`

	IterMs    []float64 `json:"-"` // every iteration, for plots
	Slowdowns []float64 `json:"-"` // every iteration / its uncontended time where it ran
}

// CassiniModel is one model's jobs in a run (or, in an arm, the mean
// over its runs).
type CassiniModel struct {
	Model             string  `json:"model"`
	Jobs              int     `json:"jobs"`
	Iterations        int     `json:"iterations"`
	MeanIterMs        float64 `json:"mean_iter_ms"`
	P99IterMs         float64 `json:"p99_iter_ms"`
	MeanSlowdown      float64 `json:"mean_slowdown"`
	MarkedMbitPerIter float64 `json:"marked_mbit_per_iter"`
}

func summarizeCassini(arm Arm, seed uint64, r netsim.Result, own []workload.Model) CassiniRun {
	slow := r.Slowdowns()
	pr := CassiniRun{
		Arm: arm.String(), Seed: seed, Status: r.Status.String(),
		MeanIterMs: cassiniRound(r.Mean()), P50IterMs: cassiniRound(r.Percentile(50)), P90IterMs: cassiniRound(r.Percentile(90)), P99IterMs: cassiniRound(r.Percentile(99)),
		MeanSlowdown: cassiniRound(netsim.Mean(slow)), P99Slowdown: cassiniRound(netsim.Percentile(slow, 99)),
		ExcessGbit: cassiniRound(r.ExcessGbit), Iterations: len(r.IterMs), SimSeconds: cassiniRound(r.End.Seconds()),
		IterMs: r.IterMs, Slowdowns: slow,
	}
	var marked, jct float64
	for _, j := range r.Jobs {
		marked += j.MarkedGbit
		pr.Preemptions += j.Preemptions
		if j.End > 0 {
			pr.Finished++
			jct += (j.End - j.Arrival).Seconds()
		}
	}
	if pr.Iterations > 0 {
		pr.MarkedMbitPerIter = cassiniRound(marked * 1e3 / float64(pr.Iterations))
	}
	if pr.Finished > 0 {
		pr.MeanJCTSec = cassiniRound(jct / float64(pr.Finished))
	}
	pr.Models = modelResults(r, profileNames(own))
	ps := r.Placement
	pr.Placement = CassiniPlacement{CrossRack: cassiniRound(ps.CrossRackFraction()), UplinkHops: cassiniRound(ps.UplinkHopFraction()),
		BindingSharers: cassiniRound(ps.BindingSharers()), BindingShare: cassiniRound(ps.BindingShare()), UplinkLoad: cassiniRound(ps.UplinkLoad()),
		Placements: ps.Placements, Moves: ps.Moves, Resized: ps.Resized}
	if r.Policy == netsim.Cassini {
		f := func(v float64) *float64 { v = cassiniRound(v); return &v }
		agents, released := r.Agent.Agents, r.Agent.Released
		pr.Agents, pr.Released = &agents, &released
		pr.AdjustmentsPerMin = f(r.Agent.PerMinute)
		adjustments := r.Agent.Adjustments
		pr.Adjustments, pr.AgentMinutes = &adjustments, f(r.Agent.JobMinutes)
		pr.PaddingSec, pr.SavedSec = f(r.Agent.Padding.Seconds()), f(r.Agent.Saved.Seconds())
		pr.MeanDriftMs = f(float64(r.Agent.MeanAbs) / 1e6)
		pr.PlannedScore, pr.RealizedScore = f(r.Drift.Planned), f(r.Drift.Realized)
	}
	if r.Policy == netsim.Cassini || r.Policy == netsim.CassiniPlacement {
		v := cassiniRound(r.Rank.MeanBest)
		pr.MeanRankScore = &v
		sh := 0.0
		if r.Rank.Placed > 0 {
			sh = cassiniRound(float64(r.Rank.Sharing) / float64(r.Rank.Placed))
		}
		pr.Sharing = &sh
	}
	return pr
}

// profileNames lists the names of the caller's models.
func profileNames(ms []workload.Model) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// modelOrder is the order of models in the tables: Table 3's, then the
// caller's own.
func modelOrder(own []string) []string {
	return append(workload.ModelNames(), own...)
}

// modelResults splits r's iterations by model, in Table 3's order, then
// the caller's models' (own).
func modelResults(r netsim.Result, own []string) []CassiniModel {
	type acc struct {
		jobs, iterations int
		ms, slow         []float64
		markedGbit       float64
	}
	by := map[string]*acc{}
	k := 0
	for _, j := range r.Jobs {
		a := by[j.Model]
		if a == nil {
			a = &acc{}
			by[j.Model] = a
		}
		a.jobs++
		a.iterations += j.Iterations
		a.markedGbit += j.MarkedGbit
		for i, x := range r.IterMs[k : k+j.Iterations] {
			a.ms = append(a.ms, x)
			if alone := r.AloneMs[k+i]; alone > 0 {
				a.slow = append(a.slow, x/alone)
			}
		}
		k += j.Iterations
	}
	var out []CassiniModel
	for _, name := range modelOrder(own) {
		a := by[name]
		if a == nil {
			continue
		}
		mr := CassiniModel{Model: name, Jobs: a.jobs, Iterations: a.iterations,
			MeanIterMs: cassiniRound(netsim.Mean(a.ms)), P99IterMs: cassiniRound(netsim.Percentile(a.ms, 99)),
			MeanSlowdown: cassiniRound(netsim.Mean(a.slow))}
		if a.iterations > 0 {
			mr.MarkedMbitPerIter = cassiniRound(a.markedGbit * 1e3 / float64(a.iterations))
		}
		out = append(out, mr)
	}
	return out
}

// aggregateCassini summarizes an arm's runs, with speedups over base (the
// first arm's runs on the same seeds).
func aggregateCassini(arm Arm, runs, base []CassiniRun, own []string) CassiniArm {
	pick := func(f func(CassiniRun) float64) Spread {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return spreadOf(v)
	}
	a := CassiniArm{Arm: arm.String(), Runs: runs,
		MeanIterMs:        pick(func(r CassiniRun) float64 { return r.MeanIterMs }),
		P99IterMs:         pick(func(r CassiniRun) float64 { return r.P99IterMs }),
		MeanSlowdown:      pick(func(r CassiniRun) float64 { return r.MeanSlowdown }),
		P99Slowdown:       pick(func(r CassiniRun) float64 { return r.P99Slowdown }),
		ExcessGbit:        pick(func(r CassiniRun) float64 { return r.ExcessGbit }),
		MarkedMbitPerIter: pick(func(r CassiniRun) float64 { return r.MarkedMbitPerIter }),
	}
	sp := func(f func(CassiniRun) float64) Spread {
		v := make([]float64, len(runs))
		for i, r := range runs {
			if x := f(r); x > 0 {
				v[i] = f(base[i]) / x
			}
		}
		return spreadOf(v)
	}
	a.SpeedupMean = sp(func(r CassiniRun) float64 { return r.MeanIterMs })
	a.SpeedupP99 = sp(func(r CassiniRun) float64 { return r.P99IterMs })
	a.Placement = CassiniPlacementSpread{
		CrossRack:      pick(func(r CassiniRun) float64 { return r.Placement.CrossRack }),
		UplinkHops:     pick(func(r CassiniRun) float64 { return r.Placement.UplinkHops }),
		BindingSharers: pick(func(r CassiniRun) float64 { return r.Placement.BindingSharers }),
		BindingShare:   pick(func(r CassiniRun) float64 { return r.Placement.BindingShare }),
		UplinkLoad:     pick(func(r CassiniRun) float64 { return r.Placement.UplinkLoad }),
		Moves:          pick(func(r CassiniRun) float64 { return float64(r.Placement.Moves) }),
		Resized:        pick(func(r CassiniRun) float64 { return float64(r.Placement.Resized) }),
	}
	if runs[0].Agents != nil {
		adj := pick(func(r CassiniRun) float64 { return *r.AdjustmentsPerMin })
		ag := pick(func(r CassiniRun) float64 { return float64(*r.Agents) })
		rel := pick(func(r CassiniRun) float64 { return float64(*r.Released) })
		a.AdjustmentsPerMin, a.Agents, a.Released = &adj, &ag, &rel
		var n int64
		var minutes float64
		for _, r := range runs {
			n += *r.Adjustments
			minutes += *r.AgentMinutes
		}
		pooled := 0.0
		if minutes > 0 {
			pooled = cassiniRound(float64(n) / minutes)
		}
		a.PooledAdjustmentsPerMin = &pooled
	}
	if runs[0].Sharing != nil {
		sh := pick(func(r CassiniRun) float64 { return *r.Sharing })
		a.Sharing = &sh
	}
	for _, name := range modelNames(runs, own) {
		m := CassiniModel{Model: name}
		var n float64
		for _, r := range runs {
			for _, x := range r.Models {
				if x.Model != name {
					continue
				}
				n++
				m.Jobs += x.Jobs
				m.Iterations += x.Iterations
				m.MeanIterMs += x.MeanIterMs
				m.P99IterMs += x.P99IterMs
				m.MeanSlowdown += x.MeanSlowdown
				m.MarkedMbitPerIter += x.MarkedMbitPerIter
			}
		}
		m.MeanIterMs, m.P99IterMs = cassiniRound(m.MeanIterMs/n), cassiniRound(m.P99IterMs/n)
		m.MeanSlowdown, m.MarkedMbitPerIter = cassiniRound(m.MeanSlowdown/n), cassiniRound(m.MarkedMbitPerIter/n)
		a.Models = append(a.Models, m)
	}
	return a
}

// modelNames are the models of r's runs, in Table 3's order, then the
// caller's (own).
func modelNames(runs []CassiniRun, own []string) []string {
	seen := map[string]bool{}
	for _, r := range runs {
		for _, m := range r.Models {
			seen[m.Model] = true
		}
	}
	var out []string
	for _, m := range modelOrder(own) {
		if seen[m] {
			out = append(out, m)
		}
	}
	return slices.Clip(out)
}
