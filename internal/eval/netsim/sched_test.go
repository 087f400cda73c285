package netsim

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// Every scheduler runs every job to its last iteration, under every
// placement policy, and the same configuration gives the same result (run
// twice under Cassini, whose agents and rankings have the most state).
func TestSchedulersComplete(t *testing.T) {
	jobs, err := workload.Generate(workload.Config{Jobs: 10, Load: 1, ClusterGPUs: 24, Seed: 4, MinIterations: 20, MaxIterations: 50})
	if err != nil {
		t.Fatal(err)
	}
	noise := loadNoise(t, workload.Both)
	for _, sch := range Schedulers {
		for _, p := range Policies {
			cfg := Config{Topology: topology.Paper(), Jobs: jobs, Scheduler: sch, Lease: 20 * time.Second, Policy: p, Seed: 2,
				Noise: noise}
			r := run(t, cfg)
			if r.Status != Complete || r.Scheduler != sch {
				t.Fatalf("%v %v: %v", sch, p, r.Status)
			}
			preempted := 0
			for _, j := range r.Jobs {
				if j.Iterations != jobs[j.ID].Iterations || j.End < j.Start || j.Start < j.Arrival {
					t.Fatalf("%v %v: job %+v", sch, p, j)
				}
				preempted += j.Preemptions
			}
			if sch == FIFO && preempted != 0 {
				t.Fatalf("FIFO preempted %d times", preempted)
			}
			if p != Cassini {
				continue
			}
			if again := run(t, cfg); !reflect.DeepEqual(r, again) {
				t.Fatalf("%v %v: two runs differ", sch, p)
			}
		}
	}
}

// Themis's leases: a job whose lease expires while a worse-off job waits
// for its GPUs loses them; with nobody waiting it renews on its servers.
func TestThemisLeases(t *testing.T) {
	jobs := []workload.Job{
		{ID: 0, Model: "VGG16", GPUs: 4, Batch: 1400, Iterations: 200},
		{ID: 1, Model: "VGG16", GPUs: 4, Batch: 1400, Iterations: 40, Arrival: time.Second},
	}
	cfg := Config{Topology: twoRacks(t), Jobs: jobs, Lease: 10 * time.Second}
	r := run(t, cfg)
	a, b := r.Jobs[0], r.Jobs[1]
	if a.Preemptions != 1 || b.Preemptions != 0 || b.Start != 10*time.Second || a.End < b.End {
		t.Fatalf("job 0 %+v\njob 1 %+v", a, b)
	}
	// Alone, its leases renew: no preemption, the same servers.
	cfg.Jobs = jobs[:1]
	r = run(t, cfg)
	if j := r.Jobs[0]; j.Preemptions != 0 || !slices.Equal(j.Servers, []int{0, 1, 2, 3}) || j.Iterations != 200 {
		t.Fatalf("alone: %+v", j)
	}
}

// Gavel's and Shockwave's rounds: a job arriving mid-round waits for the
// next boundary when nothing is free.
func TestRounds(t *testing.T) {
	jobs := []workload.Job{
		{ID: 0, Model: "VGG16", GPUs: 4, Batch: 1400, Iterations: 200},
		{ID: 1, Model: "VGG16", GPUs: 4, Batch: 1400, Iterations: 20, Arrival: time.Second},
	}
	for _, sch := range []Scheduler{Gavel, Shockwave} {
		r := run(t, Config{Topology: twoRacks(t), Jobs: jobs, Scheduler: sch, Lease: 5 * time.Second})
		if s := r.Jobs[1].Start; s%(5*time.Second) != 0 || s == 0 {
			t.Errorf("%v: the second job started at %v, not on a round boundary", sch, s)
		}
		if r.Jobs[0].Iterations != 200 || r.Jobs[1].Iterations != 20 {
			t.Errorf("%v: %+v", sch, r.Jobs)
		}
	}
}

// Joint candidates: the first is first fit, request after request; the
// others are distinct and hold every request.
func TestJointCandidates(t *testing.T) {
	c := newCluster(24, 1)
	c.take(alloc{servers: []int{1, 5}, gpus: []int{1, 1}})
	reqs := []request{{gpus: 3, perServer: 1, minServers: 1}, {gpus: 2, perServer: 1, minServers: 2}, {gpus: 30, perServer: 1}}
	cands, placed := c.joint(reqs, 10, Contiguous, nil, rand.New(rand.NewPCG(3, 3)))
	if !slices.Equal(placed, []bool{true, true, false}) || len(cands) != 10 {
		t.Fatalf("placed %v, %d candidates", placed, len(cands))
	}
	if first := cands[0]; !slices.Equal(first[0].servers, []int{0, 2, 3}) || !slices.Equal(first[1].servers, []int{4, 6}) {
		t.Fatalf("first fit: %+v", first)
	}
	for i, cand := range cands {
		used := map[int]bool{1: true, 5: true}
		for k, a := range cand[:2] {
			if sum(a.gpus) != reqs[k].gpus {
				t.Fatalf("candidate %d: request %d gets %v", i, k, a)
			}
			for _, s := range a.servers {
				if used[s] {
					t.Fatalf("candidate %d: server %d twice or busy", i, s)
				}
				used[s] = true
			}
		}
		for _, other := range cands[:i] {
			if slices.EqualFunc(other, cand, alloc.equal) {
				t.Fatalf("candidate %d repeats", i)
			}
		}
	}
}

// The congestion measure: in Fig. 2 without shifts both jobs deliver their
// all-reduces while the uplinks are offered 78 of 50 Gbps; interleaved,
// nothing is marked, and alone nothing either.
func TestMarked(t *testing.T) {
	cfg := fig2(100)
	cfg.Topology = twoRacks(t)
	for _, tc := range []struct {
		p   Policy
		min float64 // marked over sent
		max float64
	}{{Baseline, 0.99, 1}, {Cassini, 0, 1e-6}, {Ideal, 0, 0}} {
		cfg.Policy = tc.p
		r := run(t, cfg)
		for _, j := range r.Jobs {
			if f := j.MarkedGbit / j.SentGbit; !(f >= tc.min && f <= tc.max) || j.SentGbit <= 0 {
				t.Errorf("%v: job %d marked %v of %v Gbit", tc.p, j.ID, j.MarkedGbit, j.SentGbit)
			}
		}
	}
}

// CASSINI's view of a job's traffic link by link: DLRM over 2+2 servers
// puts 4 of its 12 all-to-all connections on each rack's uplink, offered
// 53 Gbps, carried 50; a server's link carries its 3 connections, 37.5 on
// average over the step (its NIC profile). The dense all-reduce is one ring
// connection on every link, 40 Gbps. (Only the policies that read the
// profiles, CASSINI's, build them.)
func TestPerLinkDemand(t *testing.T) {
	tp := twoRacks(t)
	cfg, err := Config{Topology: tp, Policy: Cassini, Jobs: []workload.Job{{ID: 0, Model: "DLRM", GPUs: 4, Batch: 512, Iterations: 1}}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSim(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := workload.Lookup("DLRM")
	l, err := s.layout(m, 512, []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	const a2a, ring = 21, -3 // ticks: inside the first all-to-all and the all-reduce (quantization averages the boundary ticks)
	at := func(p []int32, tick int) int32 { return p[(tick+len(p))%len(p)] }
	up, _ := tp.Route(0, 2)
	checked := 0
	for x, li := range l.links {
		d := l.linkProf[x].Demand
		want := int32(37500)
		if li == up[1] { // tor0 > spine
			want = 50000
		}
		if li != up[1] && tp.Links[li].From >= tp.Servers {
			continue
		}
		checked++
		if at(d, a2a) != want || at(d, ring) != 40000 || l.linkProf[x].Period != l.prof.Period {
			t.Errorf("%s: all-to-all %d Mbps (want %d), all-reduce %d", tp.Links[li].ID, at(d, a2a), want, at(d, ring))
		}
	}
	if checked != 5 || at(l.prof.Demand, a2a) != 37500 || at(l.prof.Demand, ring) != 40000 {
		t.Errorf("%d links checked; NIC profile %d, %d", checked, at(l.prof.Demand, a2a), at(l.prof.Demand, ring))
	}
}
