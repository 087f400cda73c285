package cassini

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/eval/topology"
)

// Instance is a ranking problem: the jobs' profiles, the fabric's links and
// the scheduler's placement candidates.
type Instance struct {
	Topology   *topology.Topology
	Jobs       []profile.Profile
	Links      []candidate.Link
	Candidates []candidate.Candidate
	Servers    []int // servers each job needs (GPUs in PaperInstance, and in Clos on multi-GPU servers)
	// Placements[c][j] lists the servers job j runs on in candidate c.
	Placements [][][]int
}

// periods are the iteration times (ms, = ticks at 1 ms) jobs draw from, as
// engine/cassini/candidate's benchmark: pairwise LCMs of up to ~65k ticks.
var periods = []int{181, 200, 220, 240, 255}

// job draws a data-parallel job: a period from periods, communication for
// 30-50% of it at lo..hi Gbps (1 Mbps units).
func job(rng *rand.Rand, loGbps, hiGbps int) profile.Profile {
	t := periods[rng.IntN(len(periods))]
	up := t * (30 + rng.IntN(20)) / 100
	d := make([]int32, t)
	for i := t - up; i < t; i++ {
		d[i] = int32(1000 * (loGbps + rng.IntN(hiGbps-loGbps+1)))
	}
	return profile.Profile{Period: t, Demand: d}
}

func links(tp *topology.Topology) []candidate.Link {
	out := make([]candidate.Link, len(tp.Links))
	for i, l := range tp.Links {
		out[i] = candidate.Link{Capacity: int32(l.Gbps * 1000)}
	}
	return out
}

// PaperInstance is engine/cassini/candidate's benchmark instance: njobs jobs of 1-3
// GPUs on the CASSINI testbed fabric with two GPUs per server, in n
// candidates, each filling the GPUs in ToR order from a random server with
// the jobs in a random order, every job a ring all-reduce over its servers,
// 15-35 Gbps on 50 Gbps links.
func PaperInstance(rng *rand.Rand, njobs, n int) (*Instance, error) {
	tp := topology.Paper()
	in := &Instance{Topology: tp, Links: links(tp), Jobs: make([]profile.Profile, njobs), Servers: make([]int, njobs)}
	for j := range in.Jobs {
		in.Jobs[j] = job(rng, 15, 34)
		in.Servers[j] = 1 + rng.IntN(3) // GPUs, two per server
	}
	slots := 2 * tp.Servers
	in.Candidates = make([]candidate.Candidate, n)
	in.Placements = make([][][]int, n)
	for c := range in.Candidates {
		next := rng.IntN(slots)
		in.Candidates[c].Paths = make([][]int, njobs)
		in.Placements[c] = make([][]int, njobs)
		for _, j := range rng.Perm(njobs) {
			var servers []int
			for range in.Servers[j] {
				s := (next / 2) % tp.Servers
				if len(servers) == 0 || servers[len(servers)-1] != s {
					servers = append(servers, s)
				}
				next++
			}
			path, err := tp.Ring(servers)
			if err != nil {
				return nil, err
			}
			in.Candidates[c].Paths[j] = path
			in.Placements[c][j] = servers
		}
	}
	return in, nil
}

// ClosSpec is the fabric of [ClosInstance]: 1000 single-GPU servers (as
// the CASSINI testbed), 8 per ToR, 25 ToRs and 4 aggregation switches per
// pod, 5 pods, 8 cores, 100 Gbps links (2:1 oversubscribed at the ToRs).
func ClosSpec() topology.Spec {
	return topology.Spec{Pods: 5, ToRsPerPod: 25, ServersPerToR: 8, AggsPerPod: 4, Cores: 8,
		ServerGbps: 100, ToRGbps: 100, AggGbps: 100}
}

// ScaleSpec is a Clos fabric of servers servers for the growth benchmark, a
// multiple of 10 (at most 250 per pod, 50 pods at 12,500): 10 servers per
// ToR, up to 25 ToRs and 4 aggregation switches per pod, 16 cores, 400 Gbps
// links (2.5:1 oversubscribed at the ToRs). It is two-tier up to 250
// servers.
func ScaleSpec(servers int) (topology.Spec, error) {
	if servers < 10 || servers%10 != 0 || servers > 250 && servers%250 != 0 {
		return topology.Spec{}, fmt.Errorf("cassini: %d servers: want a multiple of 10 up to 250, of 250 past it", servers)
	}
	s := topology.Spec{Pods: 1, ToRsPerPod: servers / 10, ServersPerToR: 10, AggsPerPod: 4,
		ServerGbps: 400, ToRGbps: 400, AggGbps: 400}
	if servers > 250 {
		s.Pods, s.ToRsPerPod, s.Cores = servers/250, 25, 16
	}
	return s, nil
}

// Busy is the fraction of a Clos instance's servers held by work outside
// it (at most what the jobs leave free).
const Busy = 0.1

// Fill is the percentage of a multi-GPU Clos instance's GPUs its jobs take
// at most: a job whose drawn size would pass it takes the largest size that
// does not (on small fabrics, where a few large jobs would not fit). On
// single-GPU servers the jobs may take every server.
const Fill = 90

// Job sizes and their weights. On single-GPU servers, servers per job:
// mean 2.9, so 300 jobs fill about 87% of 1000 servers and many cannot stay
// under one ToR. On multi-GPU servers, GPUs per job, from one GPU to 16
// servers of 8: mean 25.2, so 3000 jobs take 76% of 100,000 GPUs.
var (
	sizes        = []int{1, 2, 3, 4, 6, 8}
	weights      = []float64{0.3, 0.25, 0.15, 0.15, 0.08, 0.07}
	gpuSizes     = []int{1, 2, 4, 8, 16, 32, 64, 128}
	gpuSizeShare = []float64{0.15, 0.10, 0.10, 0.20, 0.15, 0.12, 0.10, 0.08}
)

// ClosInstance places njobs jobs on the single-GPU-server Clos fabric of
// spec in n candidates: [Clos] with one GPU per server and 20-90 Gbps jobs.
func ClosInstance(rng *rand.Rand, spec topology.Spec, njobs, n int) (*Instance, error) {
	return Clos(rng, ClosConfig{Spec: spec, Jobs: njobs, Candidates: n})
}

// ClosConfig is a Clos ranking instance.
type ClosConfig struct {
	Spec          topology.Spec
	GPUsPerServer int // 0 means 1
	Jobs          int
	Candidates    int
	// LoGbps and HiGbps bound each job's bandwidth while it communicates;
	// 0 means 20 and 90.
	LoGbps, HiGbps int
}

// Clos places cfg.Jobs jobs on the Clos fabric of cfg.Spec in
// cfg.Candidates candidates, as a locality-aware scheduler proposes them
// (engine/cassini/candidate's model, on a larger fabric): a fraction [Busy] of the
// servers, at random, is held by work outside the instance (the
// fragmentation a cluster's churn leaves); then, per candidate, the jobs in a
// random order take the next free GPUs in ToR order from a random starting
// GPU, so most jobs stay under one ToR (or on one server) and some span two.
// Every job is a ring all-reduce over its servers; its GPUs on one server
// talk over no network link, so a job on one server crosses none.
// Instance.Servers holds each job's GPUs.
func Clos(rng *rand.Rand, cfg ClosConfig) (*Instance, error) {
	tp, err := topology.New(cfg.Spec)
	if err != nil {
		return nil, err
	}
	g := max(cfg.GPUsPerServer, 1)
	lo, hi := cfg.LoGbps, cfg.HiGbps
	if lo == 0 && hi == 0 {
		lo, hi = 20, 90
	}
	if lo < 1 || hi < lo {
		return nil, fmt.Errorf("cassini: job bandwidth %d-%d Gbps", lo, hi)
	}
	in := &Instance{Topology: tp, Links: links(tp), Jobs: make([]profile.Profile, cfg.Jobs), Servers: make([]int, cfg.Jobs)}
	sz, wt := sizes, weights
	if g > 1 {
		sz, wt = gpuSizes, gpuSizeShare
	}
	slots := tp.Servers * g
	limit := slots * Fill / 100
	if g == 1 {
		limit = slots // as the instances of the rank benchmarks were drawn
	}
	if cfg.Jobs > limit {
		return nil, fmt.Errorf("cassini: %d jobs on %d GPUs", cfg.Jobs, slots)
	}
	total := 0
	for j := range in.Jobs {
		in.Jobs[j] = job(rng, lo, hi)
		x, k := rng.Float64(), 0
		for k < len(sz)-1 && x >= wt[k] {
			x -= wt[k]
			k++
		}
		// Past the fill, the largest size that leaves a GPU for each job
		// still to come.
		for k > 0 && total+sz[k]+(cfg.Jobs-j-1) > limit {
			k--
		}
		in.Servers[j] = sz[k]
		total += sz[k]
	}
	held := make([]bool, slots)
	for _, s := range rng.Perm(tp.Servers)[:min(int(Busy*float64(tp.Servers)), tp.Servers-(total+g-1)/g)] {
		for k := range g {
			held[s*g+k] = true
		}
	}
	if err := in.place(rng, held, g, cfg.Candidates); err != nil {
		return nil, err
	}
	return in, nil
}

// place draws the candidates: per candidate, the jobs in a random order
// take the next free GPUs from a random start.
func (in *Instance) place(rng *rand.Rand, held []bool, g, n int) error {
	taken := make([]bool, len(held))
	in.Candidates = make([]candidate.Candidate, n)
	in.Placements = make([][][]int, n)
	var ring []int
	for c := range in.Candidates {
		copy(taken, held)
		next := rng.IntN(len(held))
		in.Candidates[c].Paths = make([][]int, len(in.Jobs))
		in.Placements[c] = make([][]int, len(in.Jobs))
		for _, j := range rng.Perm(len(in.Jobs)) {
			var servers []int
			for need := in.Servers[j]; need > 0; {
				if !taken[next] {
					taken[next] = true
					need--
					if s := next / g; len(servers) == 0 || servers[len(servers)-1] != s {
						servers = append(servers, s)
					}
				}
				next = (next + 1) % len(held)
			}
			var err error
			if ring, err = in.Topology.Ring(servers); err != nil {
				return err
			}
			in.Candidates[c].Paths[j] = ring
			in.Placements[c][j] = servers
		}
	}
	return nil
}

// CorpusSearchProblem returns the link problem the fast-path benchmarks
// share: the request testdata/corpus/ok/link_exact_coprime_periods.json (two
// jobs of 255 and 181 ms, a 46155-tick circle) quantized as cassini.link
// does. corpus is the corpus directory.
func CorpusSearchProblem(corpus string) (link.Problem, error) {
	return CorpusProblem(corpus, "link_exact_coprime_periods.json")
}

// CorpusProblem returns the link problem of the cassini.link request in the
// corpus file ok/name, quantized as cassini.link does.
func CorpusProblem(corpus, name string) (link.Problem, error) {
	var env struct{ Request orrery.LinkRequest }
	b, err := os.ReadFile(filepath.Join(corpus, "ok", name))
	if err == nil {
		err = json.Unmarshal(b, &env)
	}
	if err != nil {
		return link.Problem{}, err
	}
	pr, _, err := env.Request.Problem()
	return pr, err
}
