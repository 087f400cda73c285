package cassini

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/candidate"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
	"github.com/orrery/orrery/engine/topology"
)

// Instance is a ranking problem: the jobs' profiles, the fabric's links and
// the scheduler's placement candidates.
type Instance struct {
	Topology   *topology.Topology
	Jobs       []profile.Profile
	Links      []candidate.Link
	Candidates []candidate.Candidate
	Servers    []int // servers each job needs (GPUs in PaperInstance)
	// Placements[c][j] lists the servers job j runs on in candidate c.
	Placements [][][]int
}

// periods are the iteration times (ms, = ticks at 1 ms) jobs draw from, as
// engine/candidate's benchmark: pairwise LCMs of up to ~65k ticks.
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

// PaperInstance is engine/candidate's benchmark instance: njobs jobs of 1-3
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

// Busy is the fraction of a Clos instance's servers held by work outside
// it (at most what the jobs leave free).
const Busy = 0.1

// sizes and their weights: servers (GPUs) per job, mean 2.9, so 300 jobs
// fill about 87% of 1000 servers and many cannot stay under one ToR.
var (
	sizes   = []int{1, 2, 3, 4, 6, 8}
	weights = []float64{0.3, 0.25, 0.15, 0.15, 0.08, 0.07}
)

// ClosInstance places njobs jobs on the Clos fabric of spec in n
// candidates, as a locality-aware scheduler proposes them (engine/
// candidate's model, on a larger fabric): a fraction [Busy] of the servers,
// at random, is held by work outside the instance (the fragmentation a
// cluster's churn leaves); then, per candidate, the jobs in a random order
// take the next free servers in ToR order from a random starting server, so
// most jobs stay under one ToR and some span two. Every job is a ring
// all-reduce over its servers at 20-90 Gbps.
func ClosInstance(rng *rand.Rand, spec topology.Spec, njobs, n int) (*Instance, error) {
	tp, err := topology.New(spec)
	if err != nil {
		return nil, err
	}
	in := &Instance{Topology: tp, Links: links(tp), Jobs: make([]profile.Profile, njobs), Servers: make([]int, njobs)}
	total := 0
	for j := range in.Jobs {
		in.Jobs[j] = job(rng, 20, 90)
		x, k := rng.Float64(), 0
		for k < len(sizes)-1 && x >= weights[k] {
			x -= weights[k]
			k++
		}
		in.Servers[j] = sizes[k]
		total += sizes[k]
	}
	if total > tp.Servers {
		return nil, fmt.Errorf("cassini: %d jobs need %d servers, the fabric has %d", njobs, total, tp.Servers)
	}
	held := make([]bool, tp.Servers)
	for _, s := range rng.Perm(tp.Servers)[:min(int(Busy*float64(tp.Servers)), tp.Servers-total)] {
		held[s] = true
	}
	taken := make([]bool, tp.Servers)
	in.Candidates = make([]candidate.Candidate, n)
	in.Placements = make([][][]int, n)
	for c := range in.Candidates {
		copy(taken, held)
		next := rng.IntN(tp.Servers)
		in.Candidates[c].Paths = make([][]int, njobs)
		in.Placements[c] = make([][]int, njobs)
		for _, j := range rng.Perm(njobs) {
			servers := make([]int, 0, in.Servers[j])
			for len(servers) < in.Servers[j] {
				if !taken[next] {
					taken[next] = true
					servers = append(servers, next)
				}
				next = (next + 1) % tp.Servers
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

// CorpusSearchProblem is the flat link search the hosts are benchmarked on:
// the request testdata/corpus/ok/link_exact_coprime_periods.json (two jobs
// of 255 and 181 ms, a 46155-tick circle) quantized as cassini.link does.
// corpus is the corpus directory.
func CorpusSearchProblem(corpus string) (link.Problem, error) {
	var env struct{ Request orrery.LinkRequest }
	b, err := os.ReadFile(filepath.Join(corpus, "ok", "link_exact_coprime_periods.json"))
	if err == nil {
		err = json.Unmarshal(b, &env)
	}
	if err != nil {
		return link.Problem{}, err
	}
	pr, _, err := env.Request.Problem()
	return pr, err
}
