package netsim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// ErrInvalid reports an invalid simulation.
var ErrInvalid = errors.New("netsim: invalid")

// Policy is how the jobs a scheduler runs are placed (and whether the
// network sees them), the arms of the ablation.
type Policy int

const (
	Baseline Policy = iota // the scheduler's own candidate (first fit)
	Random                 // a random candidate
	Cassini                // the best-ranked candidate, with time shifts applied by agents
	Ideal                  // the scheduler's own candidate, every job alone on the network
	// CassiniPlacement is Cassini's ranking without its time shifts: the
	// placement's share of the gain.
	CassiniPlacement
)

// Policies lists every policy in the ablation's order.
var Policies = []Policy{Baseline, Random, CassiniPlacement, Cassini, Ideal}

func (p Policy) String() string {
	switch p {
	case Baseline:
		return "baseline"
	case Random:
		return "random"
	case Cassini:
		return "cassini"
	case Ideal:
		return "ideal"
	case CassiniPlacement:
		return "cassini-placement"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy parses a policy's name.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if strings.EqualFold(s, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: policy %q (want baseline, random, cassini-placement, cassini or ideal)", ErrInvalid, s)
}

// Defaults of the zero Config and CassiniOptions.
const (
	DefaultCandidates  = 10
	DefaultTick        = time.Millisecond
	DefaultSampleEvery = time.Second
	DefaultBudget      = 1 << 22
	DefaultMinScore    = 1.0
	// DefaultMaxPerimeter is the simulator's cap on a unified circle: 4096
	// ticks, 4 s at 1 ms.
	DefaultMaxPerimeter = 4096
)

// Hold decides which jobs of a plan hold their time shifts (get an agent).
type Hold int

const (
	// HoldGain (the default): a shared link holds its jobs' shifts when
	// their peaks together exceed its capacity and a replay of the link
	// (see the package doc) predicts that every job on it gains more
	// than MinGain of its period by holding, idle time included.
	HoldGain Hold = iota
	// HoldScore: a link whose jobs' peaks exceed its capacity holds when it
	// scores at least MinScore, and a job with such a link below it runs
	// free (the previous default, MinScore 1).
	HoldScore
	// HoldAll: every job of the affinity graph holds its shift, as the
	// paper.
	HoldAll
)

func (h Hold) String() string {
	switch h {
	case HoldGain:
		return "gain"
	case HoldScore:
		return "score"
	case HoldAll:
		return "all"
	}
	return fmt.Sprintf("Hold(%d)", int(h))
}

// ParseHold parses "gain", "score" or "all"; "" is HoldGain.
func ParseHold(s string) (Hold, error) {
	switch s {
	case "", "gain":
		return HoldGain, nil
	case "score":
		return HoldScore, nil
	case "all":
		return HoldAll, nil
	}
	return 0, fmt.Errorf("%w: hold %q (want gain, score or all)", ErrInvalid, s)
}

// Rank is how the Cassini policy picks among the candidates.
type Rank int

const (
	// RankDelay (the default): the candidate with the least predicted
	// delay, the sum over its shared links of the jobs on the link times
	// 1 - its score (a link's mean excess over its capacity delays each of
	// its jobs by about that fraction of an iteration: exactly so for two
	// identical jobs fully overlapped) plus what each job being placed
	// loses alone on its servers (its iteration alone over its nominal one,
	// minus 1: an all-to-all across racks contends with itself). The mean
	// score cannot tell one shared link from three, nor see a job's own
	// contention.
	RankDelay Rank = iota
	// RankScore: the highest Aggregate of the shared links' scores (the
	// mean: the paper's).
	RankScore
)

func (r Rank) String() string {
	switch r {
	case RankDelay:
		return "delay"
	case RankScore:
		return "score"
	}
	return fmt.Sprintf("Rank(%d)", int(r))
}

// ParseRank parses "delay" or "score"; "" is RankDelay.
func ParseRank(s string) (Rank, error) {
	switch s {
	case "", "delay":
		return RankDelay, nil
	case "score":
		return RankScore, nil
	}
	return 0, fmt.Errorf("%w: rank %q (want delay or score)", ErrInvalid, s)
}

// DefaultMinGain is HoldGain's least predicted gain, as a fraction of a
// job's period: the replay knows no noise, and holding under noise costs
// the agents some idle time.
const DefaultMinGain = 0.01

func (c CassiniOptions) minGain() float64 {
	if c.MinGain == 0 {
		return DefaultMinGain
	}
	return max(c.MinGain, 0)
}

func (c CassiniOptions) minScore() float64 {
	switch {
	case c.MinScore == 0:
		return DefaultMinScore
	case c.MinScore < 0:
		return math.Inf(-1)
	}
	return c.MinScore
}

// CassiniOptions configure the Cassini policy. The zero value is exact link
// search at 1 ms ticks, unified circles capped at DefaultMaxPerimeter ticks
// with periods rounded past it, candidates ranked by predicted delay
// (RankDelay), no headroom, shifts held where the replay predicts a gain
// (HoldGain, DefaultMinGain), the Resolve loop policy and a search budget of
// DefaultBudget pair evaluations per link.
type CassiniOptions struct {
	Mode link.Mode
	Tick time.Duration // the profiles' tick; 0 means DefaultTick
	// MaxPerimeter caps a unified circle, in ticks; 0 means
	// DefaultMaxPerimeter. Past it the jobs' periods are rounded up to a
	// common grid (their agents pad to it) unless ExactPeriods is set, in
	// which case such candidates are discarded. A small cap keeps the link
	// searches cheap and makes periods commensurate (two jobs whose periods
	// have a huge LCM cannot hold a relative phase anyway), at the cost of
	// padding.
	MaxPerimeter int
	ExactPeriods bool
	// Headroom pads each profile's period by this fraction (idle time) so
	// that iterations a little slower than profiled (noise, a partly
	// compatible link) still fit their slot; 0 means none.
	Headroom float64
	// Hold selects which jobs hold their shifts.
	Hold Hold
	// MinGain (HoldGain) is the least gain, as a fraction of its period,
	// the replay must predict for every job of a link for the link to hold:
	// 0 means DefaultMinGain, negative means any gain above zero.
	MinGain float64
	// MinScore (HoldScore) is the least score a shared link needs for its
	// jobs to be held to their shifts: a job with any such link below it
	// runs free (no agent). 0 means DefaultMinScore; -1 holds every job
	// whose links' peaks exceed their capacity.
	MinScore float64
	// NoShifts ranks candidates but applies no time shifts (no agents): the
	// placement's share of CASSINI's gain.
	NoShifts bool
	// NoSlack gives the agents no slack (agent.Plan.Slack 0: every lateness
	// moves a group's clock), the agent before the interleaving's slack was
	// measured; the zero value centres each held job's shift and gives it
	// the slack of its held links (see slacks) when the agents are
	// Elastic (Pad and Free agents keep the plan's shifts).
	NoSlack bool
	// NoGiveUp keeps Elastic agents holding their shifts however much the
	// holding costs them (agent.Plan.FreeComm 0), for the ablation of the
	// give-up rule; the zero value lets an agent give its shift up when it
	// waits longer than the interleaving saves it.
	NoGiveUp bool
	// PlanClock gives each Elastic agent the plan's clock
	// (agent.NewPlanGroup) instead of a group clock its partners share:
	// agents that share nothing but the plan, as across processes or
	// hosts (the ablation of what a shared clock buys).
	PlanClock bool
	// Rank picks the candidate: RankDelay (the zero value) or RankScore
	// (the paper's mean score, or Aggregate's).
	Rank      Rank
	Budget    int64 // per link search; 0 means DefaultBudget, negative no limit
	Loops     affinity.Policy
	Aggregate candidate.Aggregate
	Workers   int // parallel searches; 0 means GOMAXPROCS (results do not depend on it)
}

// Placement is the rule that picks a placement's GPUs among the free
// ones: the scheduler's own candidate, and the others it offers CASSINI
// (equally good by the same rule, different GPUs).
type Placement int

const (
	// Contiguous (the zero value): first fit over the servers in index
	// order, job after job; the other candidates first fit from a random
	// server. Rack-local wherever the free GPUs allow: the gentle end of
	// the knob, and the simulator's placement before Themis's rule.
	Contiguous Placement = iota
	// ThemisGPUs is Themis's own rule (see themis.go): an app values an
	// allocation by its finish-time fairness, which depends on its GPUs
	// only through how many there are and how many machines they span; so
	// the fewest machines (servers with the most free GPUs first, capped
	// per server as the model needs), and among allocations that tie, any:
	// a uniform draw. It sees GPUs, not links: on one-GPU servers every
	// set of free servers ties.
	ThemisGPUs
	// Scattered spreads a job over the racks: one GPU per server, servers
	// taken round robin over the ToRs (the first server of every rack,
	// then the second, ...), so every hop of a ring leaves its rack where
	// the free GPUs allow: the harsh end of the knob.
	Scattered
)

// Placements lists the placements in order.
var Placements = []Placement{Contiguous, ThemisGPUs, Scattered}

func (p Placement) String() string {
	switch p {
	case Contiguous:
		return "contiguous"
	case ThemisGPUs:
		return "themis"
	case Scattered:
		return "scattered"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// ParsePlacement parses "contiguous", "themis" or "scattered".
func ParsePlacement(s string) (Placement, error) {
	for _, p := range Placements {
		if strings.EqualFold(s, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: placement %q (want themis, contiguous or scattered)", ErrInvalid, s)
}

// Auction is how the Themis scheduler allocates GPUs at its auctions.
type Auction int

const (
	// AuctionGreedy (the zero value): the bidders in decreasing
	// finish-time fairness each win their GPU count if it fits; counts are
	// fixed for life, and a job that wins again at its lease's end keeps
	// its servers. The simulator's Themis before the paper's auction.
	AuctionGreedy Auction = iota
	// AuctionPaper is Themis's mechanism (see themis.go): the 1-f worst-off
	// bidders share the GPUs by a partial allocation auction (worker
	// counts chosen by the proportional-fair allocation, hidden payments
	// withheld), the leftover goes to the other bidders at random, and a
	// job whose lease ends gives its GPUs up to the auction (it may come
	// back on other GPUs, with another worker count: a move).
	AuctionPaper
)

func (a Auction) String() string {
	switch a {
	case AuctionGreedy:
		return "greedy"
	case AuctionPaper:
		return "paper"
	}
	return fmt.Sprintf("Auction(%d)", int(a))
}

// ParseAuction parses "greedy" or "paper".
func ParseAuction(s string) (Auction, error) {
	switch s {
	case "greedy":
		return AuctionGreedy, nil
	case "paper":
		return AuctionPaper, nil
	}
	return 0, fmt.Errorf("%w: auction %q (want paper or greedy)", ErrInvalid, s)
}

// DefaultFairness is Themis's fairness knob f: each auction is among the
// 1-f fraction of the bidders worst off (Themis's default, 0.8).
const DefaultFairness = 0.8

// Config is a simulation.
type Config struct {
	ref reference // tests only: the reference rules (see reference)

	// Filling is the fluid model's filling; the zero value is the
	// incremental default, the others the references and ablations of
	// package fluid.
	Filling fluid.Filling

	Topology      *topology.Topology
	GPUsPerServer int            // 0 means 1
	Jobs          []workload.Job // the trace; IDs must be distinct
	// Models are models of the caller's own the jobs may name besides the
	// built-in ones (workload.Models); their names must differ from those.
	Models []workload.Model
	// Scheduler allocates the GPUs (the zero value is Themis, the paper's);
	// Lease is Themis's lease or Gavel's and Shockwave's round, 0 meaning
	// DefaultLease for Themis and DefaultRound for the others.
	Scheduler Scheduler
	Lease     time.Duration
	Policy    Policy
	// Placement picks a placement's GPUs (the zero value: Contiguous).
	Placement Placement
	// Auction is Themis's mechanism (the zero value: AuctionGreedy);
	// Fairness its knob f with AuctionPaper: 0 means DefaultFairness, a
	// negative value f = 0 (every bidder in the auction).
	Auction    Auction
	Fairness   float64
	Candidates int // joint placements proposed per scheduling decision; 0 means DefaultCandidates
	// Pinned places jobs (by ID) on the given servers, whatever the
	// policy, its GPUs spread evenly over them: a snapshot experiment. A
	// pinned job waits until those servers have the GPUs free.
	Pinned map[int][]int
	Seed   uint64 // candidate generation and random placement

	// Duration stops the simulation at that simulated time; 0 runs until
	// every job has finished.
	Duration time.Duration

	// Noise gives each job its per-iteration compute multipliers; the zero
	// Replay has none.
	Noise workload.Replay

	Agent   agent.Options // the Cassini agents' mode, threshold and cooldown (Clock is unused)
	Cassini CassiniOptions

	// SampleEvery is how often the score lost to drift is sampled (Cassini);
	// 0 means DefaultSampleEvery, negative never.
	SampleEvery time.Duration

	// Transport is the network's congestion control; the zero value is
	// MaxMin (max-min fair shares at every event). DCQCN's parameters
	// (DCQCN and MLTCP; the zero value means fluid.DefaultDCQCN) and
	// MLTCP's aggressiveness function (the zero value means DefaultMLTCP).
	Transport Transport
	DCQCN     fluid.DCQCNParams
	MLTCP     MLTCPParams
}

func (c Config) normalize() (Config, error) {
	if c.Topology == nil || c.Topology.Servers < 1 {
		return c, fmt.Errorf("%w: topology: no servers", ErrInvalid)
	}
	if c.GPUsPerServer == 0 {
		c.GPUsPerServer = 1
	}
	if c.Candidates == 0 {
		c.Candidates = DefaultCandidates
	}
	if c.Cassini.Tick == 0 {
		c.Cassini.Tick = DefaultTick
	}
	if c.Cassini.MaxPerimeter == 0 {
		c.Cassini.MaxPerimeter = DefaultMaxPerimeter
	}
	if c.Cassini.Budget == 0 {
		c.Cassini.Budget = DefaultBudget
	}
	if c.SampleEvery == 0 {
		c.SampleEvery = DefaultSampleEvery
	}
	if c.Fairness == 0 {
		c.Fairness = DefaultFairness
	}
	switch {
	case c.GPUsPerServer < 0 || c.GPUsPerServer > 1<<10:
		return c, fmt.Errorf("%w: GPUs per server %d", ErrInvalid, c.GPUsPerServer)
	case c.Candidates < 1 || c.Candidates > 1<<10:
		return c, fmt.Errorf("%w: candidates %d outside [1, 1024]", ErrInvalid, c.Candidates)
	case c.Duration < 0:
		return c, fmt.Errorf("%w: duration %v", ErrInvalid, c.Duration)
	case c.Policy < Baseline || c.Policy > CassiniPlacement:
		return c, fmt.Errorf("%w: policy %d", ErrInvalid, c.Policy)
	case c.Scheduler < Themis || c.Scheduler > FIFO:
		return c, fmt.Errorf("%w: scheduler %d", ErrInvalid, c.Scheduler)
	case c.Placement < Contiguous || c.Placement > Scattered:
		return c, fmt.Errorf("%w: placement %d", ErrInvalid, c.Placement)
	case c.Auction < AuctionGreedy || c.Auction > AuctionPaper:
		return c, fmt.Errorf("%w: auction %d", ErrInvalid, c.Auction)
	case !(c.Fairness >= -1 && c.Fairness < 1):
		return c, fmt.Errorf("%w: fairness %v outside [-1, 1)", ErrInvalid, c.Fairness)
	case c.Lease < 0 || c.Lease > 24*time.Hour:
		return c, fmt.Errorf("%w: lease %v outside [0, 24h]", ErrInvalid, c.Lease)
	case c.Cassini.Tick < time.Microsecond:
		return c, fmt.Errorf("%w: tick %v is under a microsecond", ErrInvalid, c.Cassini.Tick)
	case !(c.Cassini.MinScore >= -1 && c.Cassini.MinScore <= 1):
		return c, fmt.Errorf("%w: min score %v outside [-1, 1]", ErrInvalid, c.Cassini.MinScore)
	case c.Cassini.Rank < RankDelay || c.Cassini.Rank > RankScore:
		return c, fmt.Errorf("%w: rank %d", ErrInvalid, c.Cassini.Rank)
	case c.Cassini.Hold < HoldGain || c.Cassini.Hold > HoldAll:
		return c, fmt.Errorf("%w: hold %d", ErrInvalid, c.Cassini.Hold)
	case !(c.Cassini.MinGain >= -1 && c.Cassini.MinGain <= 1):
		return c, fmt.Errorf("%w: min gain %v outside [-1, 1]", ErrInvalid, c.Cassini.MinGain)
	case !(c.Cassini.Headroom >= 0 && c.Cassini.Headroom <= 1):
		return c, fmt.Errorf("%w: headroom %v outside [0, 1]", ErrInvalid, c.Cassini.Headroom)
	case c.Cassini.MaxPerimeter < 0:
		return c, fmt.Errorf("%w: max perimeter %d", ErrInvalid, c.Cassini.MaxPerimeter)
	case c.Transport < MaxMin || c.Transport > MLTCP:
		return c, fmt.Errorf("%w: transport %d", ErrInvalid, c.Transport)
	}
	if c.Transport != MaxMin {
		if err := c.dcqcnParams().Check(); err != nil {
			return c, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if err := c.MLTCP.check(); err != nil {
			return c, err
		}
	}
	if _, err := agent.New(agent.Plan{Reference: time.Unix(0, 0), Period: time.Second}, c.Agent); err != nil {
		return c, fmt.Errorf("%w: agent options: %w", ErrInvalid, err)
	}
	for i, l := range c.Topology.Links {
		if !(l.Gbps > 0) || math.IsInf(l.Gbps, 0) {
			return c, fmt.Errorf("%w: topology: link %d (%s) has %v Gbps", ErrInvalid, i, l.ID, l.Gbps)
		}
	}
	for i, m := range c.Models {
		if _, err := workload.Lookup(m.Name); err == nil || m.Name == "" {
			return c, fmt.Errorf("%w: models[%d]: %q is empty or a built-in model's name", ErrInvalid, i, m.Name)
		}
	}
	gpus := c.Topology.Servers * c.GPUsPerServer
	ids := make(map[int]bool, len(c.Jobs))
	for i, j := range c.Jobs {
		if ids[j.ID] {
			return c, fmt.Errorf("%w: jobs[%d]: ID %d repeats", ErrInvalid, i, j.ID)
		}
		ids[j.ID] = true
		m, err := c.model(j.Model)
		if err != nil {
			return c, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		switch {
		case j.GPUs < 1 || j.GPUs > gpus:
			return c, fmt.Errorf("%w: jobs[%d]: %d GPUs, the cluster has %d", ErrInvalid, i, j.GPUs, gpus)
		case j.Iterations < 1:
			return c, fmt.Errorf("%w: jobs[%d]: %d iterations", ErrInvalid, i, j.Iterations)
		case j.Arrival < 0:
			return c, fmt.Errorf("%w: jobs[%d]: arrival %v", ErrInvalid, i, j.Arrival)
		}
		if _, err := m.Iteration(j.Batch, workload.Servers(j.GPUs, c.GPUsPerServer)); err != nil {
			return c, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		if srv, ok := c.Pinned[j.ID]; ok {
			if err := checkPinned(srv, j.GPUs, c.GPUsPerServer, c.Topology.Servers, m.MinServers); err != nil {
				return c, fmt.Errorf("%w: jobs[%d]: pinned: %w", ErrInvalid, i, err)
			}
		}
		if workload.Servers(j.GPUs, c.GPUsPerServer) > c.Topology.Servers {
			return c, fmt.Errorf("%w: jobs[%d]: needs %d servers, the cluster has %d", ErrInvalid, i, workload.Servers(j.GPUs, c.GPUsPerServer), c.Topology.Servers)
		}
	}
	for id := range c.Pinned {
		if !ids[id] {
			return c, fmt.Errorf("%w: pinned job %d is not in the trace", ErrInvalid, id)
		}
	}
	return c, nil
}

// model returns the model called name: one of c.Models, or a built-in one.
func (c *Config) model(name string) (workload.Model, error) {
	for _, m := range c.Models {
		if m.Name == name {
			return m, nil
		}
	}
	return workload.Lookup(name)
}

func checkPinned(servers []int, gpus, perServer, nservers, minServers int) error {
	if len(servers) == 0 || len(servers) > gpus {
		return fmt.Errorf("%d servers for %d GPUs", len(servers), gpus)
	}
	if len(servers) < minServers {
		return fmt.Errorf("%d servers, the model needs %d", len(servers), minServers)
	}
	for k, s := range servers {
		if s < 0 || s >= nservers {
			return fmt.Errorf("server %d of %d", s, nservers)
		}
		if slices.Contains(servers[:k], s) {
			return fmt.Errorf("server %d twice", s)
		}
	}
	if (gpus+len(servers)-1)/len(servers) > perServer {
		return fmt.Errorf("%d GPUs do not fit on %d servers of %d", gpus, len(servers), perServer)
	}
	return nil
}

// reference holds this package's test switches: each makes the simulator
// follow the slower rule that a fast path replaces, so that the tests
// (incremental_test.go) can check the two give the same simulation to the
// bit. The zero value is the simulator as it runs.
type reference struct {
	everyFinish  bool  // every change of the rates computes every flow's finish (nearest's reference)
	scanTimers   bool  // nextEvent and process scan every running job for its timers (the timers heap's)
	syncEvery    bool  // every job syncs at every advance (lazy syncing's)
	allLinks     bool  // the network gets every flow of every step with every link of its route (netFlows's)
	scratchRates bool  // the whole network is solved at every change (the incremental solve's)
	dtLog        int   // intervals logged before every job syncs; 0 means dtLog
	anchorAge    int64 // events a flow's anchor may age; 0 means anchorAge
}
