package netsim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// Themis's rule on a hand-checked cluster: four servers of four GPUs with
// 1, 4, 2 and 4 free. Six GPUs on the fewest machines take the two servers
// with four free (4 + 2, either way round: a tie Themis values the same,
// drawn at random, both ways about equally often); a model-parallel
// request of four GPUs over at least two servers takes two from each of
// two of them; three GPUs fit on one server with four free.
func TestThemisRuleFewestMachines(t *testing.T) {
	c := newCluster(4, 4)
	c.take(alloc{servers: []int{0, 2}, gpus: []int{3, 2}})
	rng := rand.New(rand.NewPCG(1, 2))
	first := map[int]int{}
	const draws = 2000
	for range draws {
		cands, placed := c.joint([]request{{gpus: 6, perServer: 6, minServers: 1}}, 1, ThemisGPUs, rng, nil)
		a := cands[0][0]
		if !placed[0] || !slices.Equal(a.servers, []int{1, 3}) || sum(a.gpus) != 6 {
			t.Fatalf("6 GPUs: %+v, want servers 1 and 3", a)
		}
		if a.gpus[0] == 4 {
			first[1]++
		} else {
			first[3]++
		}
	}
	if n := first[1]; n < draws*45/100 || n > draws*55/100 {
		t.Errorf("server 1 filled first in %d of %d draws, want about half", n, draws)
	}
	cands, _ := c.joint([]request{{gpus: 4, perServer: 2, minServers: 2}}, 1, ThemisGPUs, rng, nil)
	if a := cands[0][0]; !slices.Equal(a.servers, []int{1, 3}) || !slices.Equal(a.gpus, []int{2, 2}) {
		t.Errorf("model parallel, 4 GPUs over at least 2 servers: %+v", a)
	}
	cands, _ = c.joint([]request{{gpus: 3, perServer: 3, minServers: 1}}, 1, ThemisGPUs, rng, nil)
	if a := cands[0][0]; len(a.servers) != 1 || (a.servers[0] != 1 && a.servers[0] != 3) {
		t.Errorf("3 GPUs: %+v, want one server with 4 free", a)
	}
}

// On one-GPU servers every set of free servers ties: Themis's rule draws
// each with the same probability (here the 6 pairs of 4 free servers,
// 6000 draws: each within 5 standard deviations of 1000), and sees no
// racks: a pair within one rack is as likely as one across.
func TestThemisRuleUniform(t *testing.T) {
	c := newCluster(8, 1)
	c.take(alloc{servers: []int{1, 3, 4, 6}, gpus: []int{1, 1, 1, 1}})
	rng := rand.New(rand.NewPCG(7, 7))
	count := map[[2]int]int{}
	for range 6000 {
		cands, _ := c.joint([]request{{gpus: 2, perServer: 1, minServers: 1}}, 1, ThemisGPUs, rng, nil)
		a := cands[0][0].servers
		count[[2]int{a[0], a[1]}]++
	}
	if len(count) != 6 {
		t.Fatalf("%d distinct pairs drawn, want the 6 of servers 0, 2, 5, 7: %v", len(count), count)
	}
	sd := math.Sqrt(6000 * (1.0 / 6) * (5.0 / 6))
	for pair, n := range count {
		if math.Abs(float64(n)-1000) > 5*sd {
			t.Errorf("pair %v drawn %d times of 6000", pair, n)
		}
	}
}

// Scattered takes the servers round robin over the racks: on the paper's
// fabric (six racks of four), a 6-GPU job gets the first server of every
// rack, the next job the second, and every ring hop leaves its rack.
func TestScattered(t *testing.T) {
	c := newCluster(24, 1)
	c.roundRobin(racks(topology.Paper()))
	cands, _ := c.joint([]request{{gpus: 6, perServer: 1, minServers: 1}, {gpus: 3, perServer: 1, minServers: 1}}, 1, Scattered, nil, nil)
	if a, b := cands[0][0].servers, cands[0][1].servers; !slices.Equal(a, []int{0, 4, 8, 12, 16, 20}) || !slices.Equal(b, []int{1, 5, 9}) {
		t.Fatalf("scattered: %v and %v", a, b)
	}
}

// The proportional-fair allocation and the partial allocation on a hand
// example. App A bids ρ = 4, 2, 1.5, 1.2 for 0..3 GPUs, app B ρ = 3, 1.5, 1
// for 0..2, four GPUs. The products of 1/ρ: (3,1) 1/1.8, (2,2) 1/1.5, (1,2)
// 1/2, (2,1) 1/2.25, (3,0) 1/3.6: (2,2) is proportional fair. Without A,
// B's best is 1/1 (2 GPUs), with A it has 1/1 too: c_A = 1, A keeps 2.
// Without B, A's best is 1/1.2 (3 GPUs), with B 1/1.5: c_B = 1.2/1.5 =
// 0.8, B gets floor(0.8 x 2) = 1 GPU. One GPU is left over (the hidden
// payment).
func TestPartialAllocation(t *testing.T) {
	bids := func(rho ...float64) []float64 {
		u := make([]float64, len(rho))
		for g, r := range rho {
			u[g] = -math.Log(r)
		}
		return u
	}
	u := [][]float64{bids(4, 2, 1.5, 1.2), bids(3, 1.5, 1)}
	pf, best := proportionalFair(u, 4, -1)
	if !slices.Equal(pf, []int{2, 2}) || math.Abs(best+math.Log(1.5)) > 1e-12 {
		t.Fatalf("proportional fair %v (log product %v), want [2 2] (%v)", pf, best, -math.Log(1.5))
	}
	if got := partial(u, []int{1, 1}, 4); !slices.Equal(got, []int{2, 1}) {
		t.Fatalf("partial allocation %v, want [2 1]", got)
	}
	// With B unable to run on fewer than 2 GPUs, its 1 is none.
	if got := partial(u, []int{1, 2}, 4); !slices.Equal(got, []int{2, 0}) {
		t.Fatalf("partial allocation %v, want [2 0]", got)
	}
	// One app alone takes its proportional-fair count: no payment.
	if got := partial(u[:1], []int{1}, 2); !slices.Equal(got, []int{2}) {
		t.Fatalf("alone: %v, want [2]", got)
	}
	// A GPU count that is not an option (NaN) is never chosen.
	u[0][2] = math.NaN()
	if pf, _ := proportionalFair(u, 4, -1); pf[0] == 2 {
		t.Fatalf("chose a count that is not an option: %v", pf)
	}
}

// A job re-tuned to fewer workers keeps its global batch: on g GPUs its
// batch per GPU is G·b/g, within Table 3's, and it needs at least the
// GPUs Table 3's largest batch allows.
func TestRetunedBatch(t *testing.T) {
	m, _ := workload.Lookup("VGG16") // batch per GPU 512..1800
	j := &jobRun{job: workload.Job{Model: "VGG16", GPUs: 4, Batch: 900}, model: m}
	s := &sim{}
	if got := s.minGPUs(j); got != 2 { // 3600 samples, at most 1800 a GPU
		t.Fatalf("fewest GPUs %d, want 2", got)
	}
	for g, want := range map[int]int{4: 900, 3: 1200, 2: 1800} {
		if got := batchAt(j, g); got != want {
			t.Errorf("batch on %d GPUs %d, want %d", g, got, want)
		}
	}
}

// Placement statistics against a hand count on the paper's fabric (racks of
// four servers): a job on servers 0, 1, 4, 9 has ring hops 0-1 (in rack),
// 1-4, 4-9 and 9-0 (across): 3 of 4; one on 2, 3 has hops 2-3 and 3-2, in
// rack. Two placements, one spanning racks, 3 of 6 hops across.
func TestPlacementCounts(t *testing.T) {
	s := &sim{rack: racks(topology.Paper())}
	for _, srv := range [][]int{{0, 1, 4, 9}, {2, 3}} {
		s.countPlacement(&jobRun{place: alloc{servers: srv}, gpus: len(srv), job: workload.Job{GPUs: len(srv)}})
	}
	p := s.pstats.PlacementStats
	if p.Placements != 2 || p.CrossRack != 1 || p.RingHops != 6 || p.UplinkHops != 3 || p.Resized != 0 {
		t.Fatalf("%+v", p)
	}
	if p.CrossRackFraction() != 0.5 || p.UplinkHopFraction() != 0.5 {
		t.Fatalf("fractions %v, %v", p.CrossRackFraction(), p.UplinkHopFraction())
	}
}

// The loads against a hand count: Fig. 2 on two racks of two servers, the
// two VGG19 jobs on servers {0, 2} and {1, 3}: both cross all four uplink
// directions, each at its all-reduce's 39 Gbps alone, so every uplink
// binds (78 of 50 Gbps) with 2 jobs on it for the whole run (the jobs run
// in lock step and end together), and each carries twice a job's mean
// demand (its all-reduce's bits over its period) of 50 Gbps.
func TestPlacementLoads(t *testing.T) {
	cfg := fig2(50)
	cfg.Topology = twoRacks(t)
	r := run(t, cfg)
	p := r.Placement
	if p.Placements != 2 || p.CrossRack != 2 || p.RingHops != 4 || p.UplinkHops != 4 {
		t.Fatalf("%+v", p)
	}
	end := r.End.Seconds()
	if r.Jobs[0].End != r.Jobs[1].End || !near(p.LinkSeconds, 4*end, 1e-9) {
		t.Fatalf("jobs end at %v and %v; link-seconds %v, want 4 x %v", r.Jobs[0].End, r.Jobs[1].End, p.LinkSeconds, end)
	}
	if p.BindingShare() != 1 || p.BindingSharers() != 2 {
		t.Fatalf("binding share %v, sharers %v; want 1 and 2", p.BindingShare(), p.BindingSharers())
	}
	m, _ := workload.Lookup("VGG19")
	steps, _ := m.Iteration(1400, 2)
	var bits float64
	for _, st := range steps {
		bits += st.Bits
	}
	period := workload.Period(steps)
	want := 2 * bits / period.Seconds() / 50e9
	if !near(p.UplinkLoad(), want, 1e-9) {
		t.Fatalf("uplink load %v, want %v", p.UplinkLoad(), want)
	}
}

// The auction: three identical jobs of 12 GPUs on 24 arrive together.
// With f = 0.8 only the first (ties in arrival order) is auctioned and
// takes its 12 (alone, no hidden payment); the other 12 go at random to
// one of the two others, and across seeds to each. With f = 0 all three
// share by the partial allocation: fewer workers than they asked for
// (re-tuned), within the model's range.
func TestThemisAuction(t *testing.T) {
	jobs := make([]workload.Job, 3)
	for i := range jobs {
		jobs[i] = workload.Job{ID: i, Model: "ResNet50", GPUs: 12, Batch: 256, Iterations: 50}
	}
	won := map[int]int{}
	for seed := range uint64(20) {
		r := run(t, Config{Topology: topology.Paper(), Jobs: jobs, Placement: ThemisGPUs, Auction: AuctionPaper, Seed: seed, Duration: time.Millisecond})
		if len(r.Jobs[0].Servers) != 12 {
			t.Fatalf("seed %d: the auctioned job got %d GPUs, want 12", seed, len(r.Jobs[0].Servers))
		}
		n1, n2 := len(r.Jobs[1].Servers), len(r.Jobs[2].Servers)
		if n1+n2 != 12 || n1*n2 != 0 {
			t.Fatalf("seed %d: the leftover went %d and %d, want 12 to one", seed, n1, n2)
		}
		if n1 > 0 {
			won[1]++
		} else {
			won[2]++
		}
	}
	if won[1] == 0 || won[2] == 0 {
		t.Fatalf("the leftover's draw never changes: %v", won)
	}
	r := run(t, Config{Topology: topology.Paper(), Jobs: jobs, Placement: ThemisGPUs, Auction: AuctionPaper, Fairness: -1, Seed: 1})
	if r.Placement.Resized == 0 {
		t.Fatalf("every job ran on the GPUs it asked for: %+v", r.Placement)
	}
	for _, j := range r.Jobs {
		if j.Iterations != 50 || j.End == 0 {
			t.Fatalf("job %d: %d iterations, end %v", j.ID, j.Iterations, j.End)
		}
	}
}
