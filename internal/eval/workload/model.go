package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// Sentinel errors.
var (
	ErrUnknownModel = errors.New("workload: unknown model")
	ErrInvalid      = errors.New("workload: invalid")
)

// Parallelism is how a model is split across GPUs.
type Parallelism int

const (
	DataParallel  Parallelism = iota // PyTorch DDP, ring all-reduce
	ModelParallel                    // Megatron-DeepSpeed, DLRM: several communication phases
)

func (p Parallelism) String() string {
	if p == DataParallel {
		return "data parallel"
	}
	return "model parallel"
}

// Pattern is what a phase does.
type Pattern int

const (
	Compute  Pattern = iota // no network traffic
	Ring                    // ring all-reduce: server i sends to i+1, the last to the first
	Chain                   // pipeline: stage i sends to stage i+1
	AllToAll                // every server sends to every other
)

func (p Pattern) String() string {
	switch p {
	case Compute:
		return "compute"
	case Ring:
		return "ring"
	case Chain:
		return "chain"
	case AllToAll:
		return "all-to-all"
	}
	return fmt.Sprintf("Pattern(%d)", int(p))
}

// Scope is which of a job's servers a hybrid-parallel phase communicates
// among: a model of tensor degree t and pipeline degree p on n servers has
// n/(t·p) replicas; server s = r·t·p + q·t + i is replica r's pipeline stage
// q's tensor rank i.
type Scope int

const (
	All      Scope = iota // every server of the job, as one group
	Tensor                // the t servers of each stage of each replica
	Pipeline              // the p stages of each tensor rank of each replica, in stage order
	Data                  // the replicas of each (stage, tensor rank)
)

// Phase is one phase of a model's iteration at its reference configuration.
type Phase struct {
	Scope   Scope // hybrid phases only: among which servers
	Pattern Pattern
	// Duration is how long the phase takes at the reference batch and
	// server count, alone on the network.
	Duration time.Duration
	// Gbps is the rate a communication phase sends at (per server, at its
	// NIC). Zero for a data-parallel model's all-reduce: the rate then
	// follows from the gradient size and Duration.
	Gbps float64
}

// Model is one of the paper's models.
type Model struct {
	Name        string
	Parallelism Parallelism
	MemoryMB    [2]float64 // Table 3's memory in MB: one value, or a range for model-parallel models
	Batch       [2]int     // Table 3's batch size per GPU, min and max
	RefBatch    int        // the batch size the phases are given at
	RefServers  int        // the server count the phases are given at
	MinServers  int        // fewest servers the model runs on (model-parallel: 2)
	Phases      []Phase
	Note        string // where the numbers come from
	// Hybrid, when set, is the iteration on HybridServers or more servers
	// (a multiple of Tensor·Pipeline): tensor, pipeline and data
	// parallelism at once, its phases given at HybridServers.
	Hybrid *Hybrid
}

// Hybrid is a model's hybrid-parallel layout.
type Hybrid struct {
	Tensor, Pipeline int // degrees
	Servers          int // the reference (and least) server count
	Phases           []Phase
	Note             string
}

// The batch scaling of compute phases: a fixed share plus a per-sample part.
const fixedShare = 0.2

// models is the paper's Table 3 with the phases the package doc explains.
var models = []Model{
	dp("VGG11", 507, 512, 1800, 1400, 110, 110, "assumed: like VGG16, a shallower net (no fact in the paper)"),
	dp("VGG16", 528, 512, 1800, 1400, 141, 114, "Fig. 3: 255 ms iteration, 141 ms without traffic"),
	dp("VGG19", 549, 512, 1800, 1400, 150, 118, "Fig. 2: two jobs interleave with a 120 ms shift; 268 ms iteration (the paper: 220-320 ms)"),
	dp("WideResNet101", 243, 256, 1200, 800, 190, 65, "§2, Table 2 snapshot 1: interleaves with VGG16 delayed by 150 ms (same 255 ms period)"),
	dp("ResNet50", 98, 256, 1800, 1600, 120, 30, "Table 2 snapshot 2: small demand, overlaps other jobs compatibly; durations assumed"),
	dp("BERT", 450, 8, 32, 8, 100, 110, "§2: cannot interleave with VGG19 (210 vs 268 ms); durations assumed"),
	dp("RoBERTa", 800, 8, 32, 12, 90, 150, "Table 2 snapshot 4: two jobs score about 0.8"),
	dp("CamemBERT", 266, 8, 32, 16, 110, 50, "assumed: a smaller RoBERTa"),
	dp("XLM", 1116, 4, 32, 16, 160, 200, "assumed: the largest data-parallel model, near line rate"),
	{
		Name: "GPT1", Parallelism: ModelParallel, MemoryMB: [2]float64{650, 9000}, Batch: [2]int{32, 80}, RefBatch: 64,
		RefServers: 4, MinServers: 2,
		Phases: []Phase{{All, Compute, ms(80), 0}, {All, Ring, ms(120), 40}},
		Note:   "Fig. 1(a): forward pass at ~0 Gbps, then backprop and all-reduce at high utilization, ~200 ms on 4 servers",
	},
	{
		Name: "GPT2", Parallelism: ModelParallel, MemoryMB: [2]float64{1623, 27000}, Batch: [2]int{32, 80}, RefBatch: 64,
		RefServers: 2, MinServers: 2,
		Phases: []Phase{
			{All, Compute, ms(35), 0}, {All, Chain, ms(10), 20},
			{All, Compute, ms(35), 0}, {All, Chain, ms(10), 20},
			{All, Compute, ms(35), 0}, {All, Chain, ms(10), 20},
			{All, Ring, ms(65), 40},
		},
		Note: "Fig. 1(b): pipeline over 2 servers, 3 micro-batches: three small activation peaks, then a heavy embedding all-reduce, ~200 ms",
	},
	{
		Name: "GPT3", Parallelism: ModelParallel, MemoryMB: [2]float64{1952, 155000}, Batch: [2]int{16, 48}, RefBatch: 32,
		RefServers: 2, MinServers: 2,
		Phases: []Phase{{All, Ring, ms(150), 25}, {All, Ring, ms(300), 25}, {All, Compute, ms(50), 0}},
		Note:   "Fig. 1(c): tensor parallel over 2 servers, ~25 Gbps through forward and backprop, idle while loading data, ~0.5 s",
		Hybrid: &Hybrid{Tensor: 2, Pipeline: 2, Servers: 8,
			Phases: []Phase{
				{All, Compute, ms(250), 0}, {Tensor, Ring, ms(300), 40}, // forward, tensor all-reduces
				{All, Compute, ms(200), 0}, {Pipeline, Chain, ms(150), 25}, // activations to the next stage
				{All, Compute, ms(400), 0}, {Tensor, Ring, ms(300), 40}, // backward, tensor all-reduces
				{All, Compute, ms(200), 0}, {Pipeline, Chain, ms(150), 25}, // gradients to the previous stage
				{All, Compute, ms(250), 0}, {Tensor, Ring, ms(300), 40}, // recomputation, tensor all-reduces
				{All, Compute, ms(100), 0}, {Data, Ring, ms(300), 50}, // gradient all-reduce across replicas
			},
			Note: "Fig. 1(d): pipeline 2 x tensor 2 x data 2 on 8 servers, six Up-Down phases of 25-50 Gbps, ~3 s (durations assumed)",
		},
	},
	{
		Name: "DLRM", Parallelism: ModelParallel, MemoryMB: [2]float64{890, 1962}, Batch: [2]int{16, 1024}, RefBatch: 512,
		RefServers: 4, MinServers: 2,
		Phases: []Phase{
			{All, Compute, ms(20), 0}, {All, AllToAll, ms(25), 40},
			{All, Compute, ms(40), 0}, {All, AllToAll, ms(25), 40},
			{All, Ring, ms(15), 40},
		},
		Note: "assumed (Meta's DLRM, embedding tables partitioned across GPUs): embedding all-to-all forward and backward, dense all-reduce, ~125 ms on 4 servers",
	},
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// dp is a data-parallel model: compute, then one ring all-reduce of the
// parameters, at the reference batch on 2 servers.
func dp(name string, mb float64, bmin, bmax, ref, computeMs, commMs int, note string) Model {
	return Model{
		Name: name, Parallelism: DataParallel, MemoryMB: [2]float64{mb, mb}, Batch: [2]int{bmin, bmax}, RefBatch: ref,
		RefServers: 2, MinServers: 1,
		Phases: []Phase{{All, Compute, ms(computeMs), 0}, {All, Ring, ms(commMs), 0}},
		Note:   note,
	}
}

// Models returns the paper's 13 models in Table 3's order.
func Models() []Model {
	out := make([]Model, len(models))
	for i, m := range models {
		out[i] = m.clone()
	}
	return out
}

func (m Model) clone() Model {
	m.Phases = slices.Clone(m.Phases)
	if m.Hybrid != nil {
		h := *m.Hybrid
		h.Phases = slices.Clone(h.Phases)
		m.Hybrid = &h
	}
	return m
}

// Lookup returns the model called name (exactly as in [Models]).
func Lookup(name string) (Model, error) {
	for _, m := range models {
		if m.Name == name {
			return m.clone(), nil
		}
	}
	return Model{}, fmt.Errorf("%w: %q", ErrUnknownModel, name)
}

// GradientBits is the payload of a data-parallel model's all-reduce: its
// parameter size (Table 3's memory, in MiB) in bits.
func (m Model) GradientBits() float64 { return m.MemoryMB[0] * (1 << 20) * 8 }

// Step is one phase of an iteration of a concrete job.
type Step struct {
	Pattern Pattern
	Compute time.Duration // a compute step's length at the nominal speed
	// Bits is what each connection of a communication step carries, and
	// Peak the most each can send, in bits per second. Ring and chain steps
	// have one connection per hop; an all-to-all has one per ordered pair of
	// servers, each at the server's rate divided by the n-1 destinations.
	Bits, Peak float64
	// Bandwidth is the step's demand at a server's NIC, bits per second.
	Bandwidth float64
	// Groups lists the servers (indices into the job's) each group of
	// the step's pattern runs among; nil means all of them, in order.
	Groups [][]int
}

// Alone is the step's length with no contention.
func (s Step) Alone() time.Duration {
	if s.Pattern == Compute {
		return s.Compute
	}
	if s.Bits == 0 {
		return 0
	}
	return time.Duration(math.Round(s.Bits / s.Peak * 1e9))
}

// perConnection is the share of a pattern's payload each connection
// carries on n servers, and the number of connections sharing a server's
// NIC.
func perConnection(p Pattern, n int) (share float64, fanout int) {
	switch p {
	case Ring:
		return 2 * float64(n-1) / float64(n), 1
	case Chain:
		return 1, 1
	case AllToAll:
		return 1 / float64(n), n - 1
	}
	return 0, 1
}

// Iteration returns the steps of one iteration of m at the given batch size
// (per GPU) on the given number of servers: its hybrid layout on
// Hybrid.Servers or more (a multiple of its tensor times pipeline degree),
// else its phases.
func (m Model) Iteration(batch, servers int) ([]Step, error) {
	if batch < m.Batch[0] || batch > m.Batch[1] {
		return nil, fmt.Errorf("%w: %s: batch %d outside Table 3's [%d, %d]", ErrInvalid, m.Name, batch, m.Batch[0], m.Batch[1])
	}
	if servers < m.MinServers {
		return nil, fmt.Errorf("%w: %s needs at least %d servers, got %d", ErrInvalid, m.Name, m.MinServers, servers)
	}
	scale := fixedShare + (1-fixedShare)*float64(batch)/float64(m.RefBatch)
	phases, ref := m.Phases, m.RefServers
	h := m.Hybrid
	hybrid := h != nil && servers >= h.Servers && servers%(h.Tensor*h.Pipeline) == 0
	if hybrid {
		phases, ref = h.Phases, h.Servers
	}
	steps := make([]Step, len(phases))
	for i, ph := range phases {
		if ph.Pattern == Compute {
			steps[i] = Step{Pattern: Compute, Compute: time.Duration(math.Round(float64(ph.Duration) * scale))}
			continue
		}
		var groups [][]int
		n, refN := servers, ref
		if hybrid {
			groups = h.groups(ph.Scope, servers)
			n, refN = len(groups[0]), len(h.groups(ph.Scope, h.Servers)[0])
		}
		refShare, refFan := perConnection(ph.Pattern, refN)
		var payload, rate float64 // payload in bits; rate per server
		if ph.Gbps == 0 {         // data parallel: the gradient sets the payload, the reference length the rate
			payload = m.GradientBits()
			rate = payload * refShare * float64(refFan) / ph.Duration.Seconds()
		} else {
			rate = ph.Gbps * 1e9
			payload = rate * ph.Duration.Seconds() / (refShare * float64(refFan))
		}
		st := Step{Pattern: ph.Pattern, Bandwidth: rate, Groups: groups}
		if n > 1 {
			share, fan := perConnection(ph.Pattern, n)
			st.Bits = payload * share
			st.Peak = rate / float64(fan)
		} else {
			st.Bandwidth = 0 // within one server: no network traffic
		}
		steps[i] = st
	}
	return steps, nil
}

// groups returns the server groups of a scope on n servers (a multiple of
// the tensor times the pipeline degree).
func (h *Hybrid) groups(sc Scope, n int) [][]int {
	t, p := h.Tensor, h.Pipeline
	replicas := n / (t * p)
	at := func(r, q, i int) int { return r*t*p + q*t + i }
	var out [][]int
	switch sc {
	case Tensor:
		for r := range replicas {
			for q := range p {
				g := make([]int, t)
				for i := range t {
					g[i] = at(r, q, i)
				}
				out = append(out, g)
			}
		}
	case Pipeline:
		for r := range replicas {
			for i := range t {
				g := make([]int, p)
				for q := range p {
					g[q] = at(r, q, i)
				}
				out = append(out, g)
			}
		}
	case Data:
		for q := range p {
			for i := range t {
				g := make([]int, replicas)
				for r := range replicas {
					g[r] = at(r, q, i)
				}
				out = append(out, g)
			}
		}
	default:
		g := make([]int, n)
		for i := range g {
			g[i] = i
		}
		out = [][]int{g}
	}
	return out
}

// Period is the length of an iteration of steps with no contention.
func Period(steps []Step) time.Duration {
	var t time.Duration
	for _, s := range steps {
		t += s.Alone()
	}
	return t
}

// Profile is the CASSINI profile of an iteration: each step's length alone
// and its bandwidth demand at a NIC, quantized onto q's grid.
func Profile(steps []Step, q profile.Quantum) (profile.Profile, error) {
	phases := make([]profile.Phase, 0, len(steps))
	for _, s := range steps {
		if d := s.Alone(); d > 0 {
			phases = append(phases, profile.Phase{Duration: d, Bandwidth: s.Bandwidth})
		}
	}
	return profile.FromPhases(0, phases, q)
}

// CommOffset is where the first communication step with traffic starts
// within an iteration alone, or -1 if the iteration has none.
func CommOffset(steps []Step) time.Duration {
	var t time.Duration
	for _, s := range steps {
		if s.Pattern != Compute && s.Bits > 0 {
			return t
		}
		t += s.Alone()
	}
	return -1
}
