package cassini

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/orrery/orrery/engine/candidate"
	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
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

// Every candidate places every job on distinct servers, the right number
// of them, and its paths are the jobs' rings.
func checkInstance(t *testing.T, in *Instance) {
	t.Helper()
	for c, cand := range in.Candidates {
		seen := map[int]bool{}
		for j, servers := range in.Placements[c] {
			distinct := map[int]bool{}
			for _, s := range servers {
				distinct[s] = true
			}
			if len(distinct) != len(servers) {
				t.Fatalf("candidate %d job %d: servers %v repeat", c, j, servers)
			}
			for s := range distinct {
				if seen[s] {
					t.Fatalf("candidate %d: server %d used twice", c, s)
				}
				seen[s] = true
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
	checkInstance(t, in)
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
