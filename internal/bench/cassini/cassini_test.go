package cassini

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// The brute force and orrery's exact search agree on the optimum and on the
// tie-break (lexicographically smallest shifts), with kernels and with the
// plain loop.
func TestNaiveMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var nv Naive
	var w link.Workspace
	for i := range 60 {
		k := 1 + rng.IntN(3)
		jobs := make([]profile.Profile, k)
		for j := range jobs {
			p := 6 + rng.IntN(40)
			d := make([]int32, p)
			for x := range d {
				if rng.IntN(3) == 0 {
					d[x] = int32(rng.IntN(60))
				}
			}
			jobs[j] = profile.Profile{Period: p, Demand: d}
		}
		pr := link.Problem{Jobs: jobs, Capacity: int32(20 + rng.IntN(60))}
		want, err := w.Search(context.Background(), pr, link.Options{Budget: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want.Status != link.Optimal {
			t.Fatalf("case %d: link status %v", i, want.Status)
		}
		for _, plain := range []bool{false, true} {
			got, err := nv.Search(pr, NaiveOptions{Plain: plain})
			if err != nil {
				t.Fatal(err)
			}
			if got.Excess != want.Excess || !slices.Equal(got.Shifts, want.Shifts) || got.Score != want.Score {
				t.Fatalf("case %d (plain %v): naive %d %v, exact %d %v", i, plain, got.Excess, got.Shifts, want.Excess, want.Shifts)
			}
		}
	}
}

func TestNaiveErrors(t *testing.T) {
	var nv Naive
	if _, err := nv.Search(link.Problem{Capacity: 1}, NaiveOptions{}); err == nil {
		t.Error("no jobs: no error")
	}
	big := []profile.Profile{Comm(10007, 10, 1), Comm(10009, 10, 1), Comm(10037, 10, 1)}
	if _, err := nv.Search(link.Problem{Jobs: big, Capacity: 5}, NaiveOptions{Circle: circle.Options{MaxPerimeter: 1 << 24}}); err == nil {
		t.Error("huge circle: no error")
	}
}

func TestNaiveAllocs(t *testing.T) {
	var nv Naive
	pr := link.Problem{Jobs: []profile.Profile{Comm(40, 10, 30), Comm(30, 12, 30), Comm(24, 5, 20)}, Capacity: 50}
	if _, err := nv.Search(pr, NaiveOptions{}); err != nil {
		t.Fatal(err)
	}
	// One allocation: the returned Shifts.
	if a := testing.AllocsPerRun(20, func() { nv.Search(pr, NaiveOptions{}) }); a > 1 {
		t.Errorf("%v allocations per warm search", a)
	}
}

// Every candidate places every job on distinct servers, each server
// holding at most gpus jobs (one on single-GPU servers), and its paths are
// the jobs' rings.
func checkInstance(t *testing.T, in *Instance, gpus int) {
	t.Helper()
	for c, cand := range in.Candidates {
		seen := map[int]int{}
		for j, servers := range in.Placements[c] {
			distinct := map[int]bool{}
			for _, s := range servers {
				distinct[s] = true
			}
			if len(distinct) != len(servers) {
				t.Fatalf("candidate %d job %d: servers %v repeat", c, j, servers)
			}
			for s := range distinct {
				if seen[s]++; seen[s] > gpus {
					t.Fatalf("candidate %d: server %d holds %d jobs", c, s, seen[s])
				}
			}
			want, err := in.Topology.Ring(servers)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cand.Paths[j], want) {
				t.Fatalf("candidate %d job %d: path %v, ring %v", c, j, cand.Paths[j], want)
			}
		}
	}
}

func TestClosInstance(t *testing.T) {
	in, err := ClosInstance(rand.New(rand.NewPCG(1, 2)), ClosSpec(), 300, 4)
	if err != nil {
		t.Fatal(err)
	}
	if in.Topology.Servers != 1000 || len(in.Jobs) != 300 || len(in.Candidates) != 4 {
		t.Fatalf("%d servers, %d jobs, %d candidates", in.Topology.Servers, len(in.Jobs), len(in.Candidates))
	}
	checkInstance(t, in, 1)
	// Locality: most multi-server jobs stay under one ToR.
	per := ClosSpec().ServersPerToR
	one, multi := 0, 0
	for _, servers := range in.Placements[0] {
		if len(servers) < 2 {
			continue
		}
		multi++
		if servers[0]/per == servers[len(servers)-1]/per {
			one++
		}
	}
	if one*2 < multi {
		t.Errorf("%d of %d multi-server jobs under one ToR", one, multi)
	}
	shared := 0
	for _, l := range sharedLinks(in, 0) {
		if l > 1 {
			shared++
		}
	}
	t.Logf("%d of %d multi-server jobs under one ToR; %d links shared in candidate 0", one, multi, shared)
	r, err := candidate.Rank(context.Background(), in.Jobs, in.Links, in.Candidates,
		candidate.Options{Link: link.Options{Circle: circle.Options{Round: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Searches == 0 {
		t.Fatal("no link searches: the instance shares no link")
	}
}

func TestPaperInstance(t *testing.T) {
	in, err := PaperInstance(rand.New(rand.NewPCG(1, 2)), 20, 10)
	if err != nil {
		t.Fatal(err)
	}
	for c := range in.Candidates {
		for j, servers := range in.Placements[c] {
			want, err := in.Topology.Ring(servers)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(in.Candidates[c].Paths[j], want) {
				t.Fatalf("candidate %d job %d: path is not the ring", c, j)
			}
		}
	}
}

// sharedLinks counts the jobs crossing each link in candidate c.
func sharedLinks(in *Instance, c int) []int {
	n := make([]int, len(in.Links))
	for _, p := range in.Candidates[c].Paths {
		for _, l := range p {
			n[l]++
		}
	}
	return n
}

// The hosts' benchmark problem is the corpus request, quantized.
func TestCorpusSearchProblem(t *testing.T) {
	pr, err := CorpusSearchProblem("../../../testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Capacity != 50000 || len(pr.Jobs) != 2 || pr.Jobs[0].Period != 255 || pr.Jobs[1].Period != 181 ||
		pr.Jobs[0].Demand[140] != 0 || pr.Jobs[0].Demand[141] != 25000 || pr.Jobs[1].Demand[120] != 30000 {
		t.Fatalf("problem %+v", pr)
	}
	if _, err := CorpusSearchProblem(t.TempDir()); err == nil {
		t.Fatal("no corpus: want an error")
	}
}

// The benchmark instances are the ones docs/performance.md's figures were measured
// on: the same draws, the same routes (this hash was taken before routing
// moved from a BFS table to the fabric's structure, and re-taken when
// candidate.Candidate gained its Profiles field, which fmt prints: main
// before the routing change gives the same hash).
func TestInstancesStable(t *testing.T) {
	in, err := ClosInstance(rand.New(rand.NewPCG(1, 2)), ClosSpec(), 300, 10)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	fmt.Fprint(h, in.Jobs, in.Servers, in.Candidates, in.Placements, in.Links)
	p, err := PaperInstance(rand.New(rand.NewPCG(1, 2)), 20, 10)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(h, p.Jobs, p.Servers, p.Candidates, p.Placements)
	if got, want := fmt.Sprintf("%x", h.Sum(nil)), "2e9bc5e8843baa5bb12c4f856df3b50756c84f43d320d4c50ad3f515907b515c"; got != want {
		t.Fatalf("instances changed: hash %s, want %s", got, want)
	}
}

// On 8-GPU servers a job's GPUs on one server talk over no link: a job on
// one server crosses none, every other job's path is the ring over its
// distinct servers, and the jobs take at most Fill percent of the GPUs.
func TestClosMultiGPU(t *testing.T) {
	spec, err := ScaleSpec(1000)
	if err != nil {
		t.Fatal(err)
	}
	in, err := Clos(rand.New(rand.NewPCG(3, 4)), ClosConfig{Spec: spec, GPUsPerServer: 8, Jobs: 240, Candidates: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkInstance(t, in, 8)
	gpus, single, local := 0, 0, 0
	for j, n := range in.Servers {
		gpus += n
		for c := range in.Candidates {
			servers := in.Placements[c][j]
			if want := (n + 7) / 8; len(servers) < want || len(servers) > want+1 {
				t.Fatalf("job %d of %d GPUs on %d servers", j, n, len(servers))
			}
			if len(servers) == 1 {
				single++
				if in.Candidates[c].Paths[j] != nil {
					t.Fatalf("job %d on one server crosses %v", j, in.Candidates[c].Paths[j])
				}
			}
			if len(servers) > 1 && servers[0]/10 == servers[len(servers)-1]/10 {
				local++
			}
		}
	}
	if gpus > 8*1000*Fill/100 || single == 0 || local == 0 {
		t.Fatalf("%d GPUs taken, %d single-server and %d single-ToR placements", gpus, single, local)
	}
	for _, n := range []int{0, 15, 260, 1100} {
		if _, err := ScaleSpec(n); err == nil {
			t.Errorf("ScaleSpec(%d): no error", n)
		}
	}
	if _, err := Clos(rand.New(rand.NewPCG(3, 4)), ClosConfig{Spec: spec, GPUsPerServer: 8, Jobs: 8000, Candidates: 1}); err == nil {
		t.Error("8000 jobs on 8000 GPUs: no error")
	}
}
