package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(1, math.Abs(b)) }

func alloc(t *testing.T, a Allocator, jobs []Demand, gpus int) []float64 {
	t.Helper()
	x := make([]float64, len(jobs))
	if err := a.Allocate(x, jobs, gpus); err != nil {
		t.Fatal(err)
	}
	var used float64
	for i, v := range x {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("x[%d] = %v", i, v)
		}
		used += v * float64(jobs[i].GPUs)
	}
	if used > float64(gpus)*(1+1e-12) {
		t.Fatalf("allocation uses %v of %d GPUs: %v", used, gpus, x)
	}
	return x
}

func randDemands(r *rand.Rand, n, gpus int) []Demand {
	jobs := make([]Demand, n)
	for i := range jobs {
		w := 1 << r.IntN(4)
		for w > gpus {
			w /= 2
		}
		jobs[i] = Demand{ID: 100 - i, GPUs: w, Throughput: 0.5 + 20*r.Float64(),
			Remaining: 1 + 1e5*r.Float64(), Elapsed: 1e4 * r.Float64() * float64(r.IntN(2)),
			Weight: []float64{0, 1, 2, 5}[r.IntN(4)]}
	}
	return jobs
}

func TestMaxMinFairnessHand(t *testing.T) {
	// Σw = 6 > 4: the 1-GPU jobs saturate, the 4-GPU job gets the rest.
	x := alloc(t, &MaxMinFairness{}, []Demand{{GPUs: 1}, {GPUs: 1}, {GPUs: 4}}, 4)
	if !slices.Equal(x, []float64{1, 1, 0.5}) {
		t.Fatalf("x = %v", x)
	}
	// Nobody saturates: equal GPU shares of 3/4.
	x = alloc(t, &MaxMinFairness{}, []Demand{{GPUs: 1}, {GPUs: 2}, {GPUs: 2}, {GPUs: 2}}, 3)
	for i, w := range []float64{1, 2, 2, 2} {
		if !near(x[i]*w, 0.75, 1e-15) {
			t.Fatalf("x = %v", x)
		}
	}
	// Everything fits.
	if x = alloc(t, &MaxMinFairness{}, []Demand{{GPUs: 2}, {GPUs: 2}}, 4); !slices.Equal(x, []float64{1, 1}) {
		t.Fatalf("x = %v", x)
	}
}

// The water-filling point is the max-min fair optimum: every unsaturated
// job sits at the common level t = max share, every saturated job's full
// share is at most t, and the cluster is full unless everyone is
// saturated. Such a point maximizes the smallest share, then the next, and
// so on.
func TestMaxMinFairnessOptimality(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		gpus := 1 + r.IntN(32)
		jobs := randDemands(r, 1+r.IntN(12), gpus)
		x := alloc(t, &MaxMinFairness{}, jobs, gpus)
		var level, used float64
		all := true
		for i, d := range jobs {
			used += x[i] * float64(d.GPUs)
			if x[i] < 1 {
				all = false
				level = max(level, x[i]*float64(d.GPUs)/d.weight())
			}
		}
		for i, d := range jobs {
			c := float64(d.GPUs) / d.weight()
			if x[i] < 1 && !near(x[i]*c, level, 1e-9) || x[i] == 1 && !all && c > level*(1+1e-9) {
				t.Fatalf("job %d (c %v) at %v, level %v: %v", i, c, x[i]*c, level, jobs)
			}
		}
		if !all && !near(used, float64(gpus), 1e-9) {
			t.Fatalf("cluster not full: %v of %d", used, gpus)
		}
	}
}

func TestFinishTimeFairnessHand(t *testing.T) {
	// Two equal jobs on one GPU: equal halves, ρ = 1 each.
	f := &FinishTimeFairness{}
	jobs := []Demand{{ID: 1, GPUs: 1, Throughput: 1, Remaining: 100}, {ID: 2, GPUs: 1, Throughput: 1, Remaining: 100}}
	x := alloc(t, f, jobs, 1)
	if !near(x[0], 0.5, 1e-12) || !near(x[1], 0.5, 1e-12) {
		t.Fatalf("x = %v", x)
	}
	// Progress at the isolated rate keeps the denominator: after 50 steps
	// of job 1, I_1 = 50/0.5 = 100 and b_1 = 100 + 50/0.5 = 200, so job 1
	// now needs x_1 with (0 + 50/x_1)/200 = ρ, job 2 (100/x_2)/200 = ρ:
	// x = (1/3, 2/3).
	jobs[0].Remaining = 50
	x = alloc(t, f, jobs, 1)
	if !near(x[0], 1.0/3, 1e-12) || !near(x[1], 2.0/3, 1e-12) {
		t.Fatalf("x = %v", x)
	}
	// A job that already waited needs more: elapsed 100 on job 2,
	// ρ_1 = (50/x_1)/200, ρ_2 = (100 + 100/x_2)/200 with x_1 + x_2 = 1.
	jobs[1].Elapsed = 100
	x = alloc(t, &FinishTimeFairness{}, jobs, 1)
	r1 := (50 / x[0]) / 100 // fresh policy: b_1 = 50/0.5
	r2 := (100 + 100/x[1]) / 200
	if !near(r1, r2, 1e-12) || !near(x[0]+x[1], 1, 1e-12) {
		t.Fatalf("x = %v, ρ = %v, %v", x, r1, r2)
	}
}

// When a throughput change makes a denominator negative, cvxpy rejects the
// program (DCPError) and the authors fall back to the isolated allocation
// without updating their state; so does this.
func TestFinishTimeFairnessFallback(t *testing.T) {
	f := &FinishTimeFairness{}
	jobs := []Demand{{ID: 1, GPUs: 1, Throughput: 1, Remaining: 100}, {ID: 2, GPUs: 1, Throughput: 1, Remaining: 100}}
	alloc(t, f, jobs, 1)
	// Job 1's batch grew: 10× the steps at 100× the throughput.
	jobs[0].Remaining, jobs[0].Throughput = 1000, 100
	for range 2 {
		x := alloc(t, f, jobs, 1)
		if x[0] != 0.5 || x[1] != 0.5 {
			t.Fatalf("fallback x = %v", x)
		}
	}
	if f.prevRem[1] != 100 {
		t.Fatalf("state updated on fallback: %v", f.prevRem)
	}
}

// The lexicographic min-max point: every unsaturated job at the common ρ*,
// every saturated job unable to get below it, the cluster full unless
// everyone is saturated.
func TestFinishTimeFairnessOptimality(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		gpus := 1 + r.IntN(32)
		jobs := randDemands(r, 1+r.IntN(12), gpus)
		f := &FinishTimeFairness{}
		x := alloc(t, f, jobs, gpus)
		n := float64(len(jobs))
		rho := func(i int, xi float64) float64 {
			d := jobs[i]
			iso := d.Throughput * min(1, float64(gpus)/(n*float64(d.GPUs)))
			return (d.Elapsed + d.Remaining/(d.Throughput*xi)) / (d.Remaining / iso)
		}
		var level, used float64
		all := true
		for i := range jobs {
			used += x[i] * float64(jobs[i].GPUs)
			if x[i] < 1 {
				all = false
				level = max(level, rho(i, x[i]))
			}
		}
		for i := range jobs {
			if x[i] < 1 && !near(rho(i, x[i]), level, 1e-9) || x[i] == 1 && !all && rho(i, 1) < level*(1-1e-9) {
				t.Fatalf("job %d: x %v ρ %v, level %v", i, x[i], rho(i, x[i]), level)
			}
		}
		if !all && !near(used, float64(gpus), 1e-9) {
			t.Fatalf("cluster not full: %v of %d", used, gpus)
		}
	}
}

func TestMinTotalDuration(t *testing.T) {
	// Isolated times 100, 50, 10 s: T* = max(100, (100 + 50 + 2·10)/2) = 100.
	jobs := []Demand{{GPUs: 1, Throughput: 1, Remaining: 100}, {GPUs: 1, Throughput: 2, Remaining: 100},
		{GPUs: 2, Throughput: 1, Remaining: 10}}
	if x := alloc(t, &MinTotalDuration{}, jobs, 2); !slices.Equal(x, []float64{1, 0.5, 0.1}) {
		t.Fatalf("x = %v", x)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		gpus := 1 + r.IntN(32)
		jobs := randDemands(r, 1+r.IntN(12), gpus)
		x := alloc(t, &MinTotalDuration{}, jobs, gpus)
		// Every job finishes at the same T; T is minimal: either a job runs
		// full time or the cluster is full.
		T := jobs[0].Remaining / (jobs[0].Throughput * x[0])
		var used float64
		full := false
		for i, d := range jobs {
			if !near(d.Remaining/(d.Throughput*x[i]), T, 1e-9) {
				t.Fatalf("job %d finishes at %v, not %v", i, d.Remaining/(d.Throughput*x[i]), T)
			}
			used += x[i] * float64(d.GPUs)
			full = full || x[i] == 1
		}
		if !full && !near(used, float64(gpus), 1e-9) {
			t.Fatalf("T not minimal: %v of %d GPUs used", used, gpus)
		}
	}
}

// The greedy fractional knapsack against every vertex of the polytope (all
// but at most one job at 0 or 1).
func TestMaxSumThroughput(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		gpus := 1 + r.IntN(16)
		jobs := randDemands(r, 1+r.IntN(8), gpus)
		if r.IntN(4) == 0 {
			jobs[0].Throughput = jobs[len(jobs)-1].Throughput // ties
			jobs[0].GPUs = jobs[len(jobs)-1].GPUs
		}
		x := alloc(t, &MaxSumThroughput{}, jobs, gpus)
		var got float64
		for i := range jobs {
			got += x[i] * jobs[i].Throughput
		}
		best := 0.0
		n := len(jobs)
		for mask := 0; mask < 1<<n; mask++ {
			var used, val float64
			for i := range n {
				if mask>>i&1 == 1 {
					used += float64(jobs[i].GPUs)
					val += jobs[i].Throughput
				}
			}
			if used > float64(gpus) {
				continue
			}
			best = max(best, val)
			for i := range n { // one fractional job on the leftover
				if mask>>i&1 == 0 {
					best = max(best, val+jobs[i].Throughput*min(1, (float64(gpus)-used)/float64(jobs[i].GPUs)))
				}
			}
		}
		if !near(got, best, 1e-9) {
			t.Fatalf("objective %v, optimum %v: %v", got, best, jobs)
		}
	}
}

func TestAllocatorsBadInput(t *testing.T) {
	for _, a := range []Allocator{&MaxMinFairness{}, &FinishTimeFairness{}, &FinishTimeFairness{Interior: true}, &MinTotalDuration{},
		&MinTotalDuration{Bisect: true, Interior: true}, &MaxSumThroughput{}} {
		for _, c := range []struct {
			jobs []Demand
			gpus int
		}{
			{[]Demand{{GPUs: 0, Throughput: 1}}, 4},
			{[]Demand{{GPUs: 8, Throughput: 1}}, 4},
			{[]Demand{{GPUs: 1, Throughput: math.NaN()}}, 4},
			{[]Demand{{GPUs: 1, Throughput: 1, Remaining: math.Inf(1)}}, 4},
			{[]Demand{{GPUs: 1, Throughput: 1, Elapsed: -1}}, 4},
			{[]Demand{{GPUs: 1, Throughput: 1}}, 0},
		} {
			if err := a.Allocate(make([]float64, len(c.jobs)), c.jobs, c.gpus); err == nil {
				t.Errorf("%s accepted %+v on %d GPUs", a.Name(), c.jobs, c.gpus)
			}
		}
		if err := a.Allocate(nil, []Demand{{GPUs: 1, Throughput: 1}}, 1); err == nil {
			t.Errorf("%s accepted a short dst", a.Name())
		}
	}
}

// Warm allocators do not allocate.
func TestAllocatorsAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	jobs := randDemands(r, 120, 32)
	x := make([]float64, len(jobs))
	for _, a := range []Allocator{&MaxMinFairness{}, &FinishTimeFairness{}, &FinishTimeFairness{Interior: true}, &MinTotalDuration{},
		&MinTotalDuration{Bisect: true, Interior: true}, &MaxSumThroughput{}} {
		if err := a.Allocate(x, jobs, 32); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(20, func() { a.Allocate(x, jobs, 32) }); n != 0 {
			t.Errorf("%s: %v allocations per call", a.Name(), n)
		}
	}
}

// The interior-point optimum of MST against what ECOS returns on the same
// LPs (ECOSolveR 0.5, default tolerances): max 3a + 2b + 2c + d on 2 GPUs
// gives (1, 0.5, 0.5, 4.8e-11), the tied jobs sharing the marginal GPU and
// the left-out one a tiny fraction; max 3a + 2b + 1.5c + d + 0.5e gives
// (1, 1, 1.2e-9, 2.1e-10, −1.2e-10), the left-out jobs in decreasing
// throughput (the last clipped to 0 upstream). The canonical optimum gives
// the marginal GPU to the lower ID and 0 to the rest.
func TestMaxSumThroughputInterior(t *testing.T) {
	jobs := func(tput ...float64) []Demand {
		d := make([]Demand, len(tput))
		for i, v := range tput {
			d[i] = Demand{ID: i, GPUs: 1, Throughput: v, Remaining: 100}
		}
		return d
	}
	x := make([]float64, 4)
	ms := &MaxSumThroughput{Interior: true}
	if err := ms.Allocate(x, jobs(3, 2, 2, 1), 2); err != nil {
		t.Fatal(err)
	}
	if x[0] != 1 || x[1] != 0.5 || x[2] != 0.5 || !(x[3] > 0 && x[3] < 1e-9) {
		t.Fatalf("interior %v", x)
	}
	if err := (&MaxSumThroughput{}).Allocate(x, jobs(3, 2, 2, 1), 2); err != nil {
		t.Fatal(err)
	}
	if x[0] != 1 || x[1] != 1 || x[2] != 0 || x[3] != 0 {
		t.Fatalf("canonical %v", x)
	}
	y := make([]float64, 5)
	if err := ms.Allocate(y, jobs(3, 2, 1.5, 1, 0.5), 2); err != nil {
		t.Fatal(err)
	}
	if y[0] != 1 || y[1] != 1 || !(y[2] > y[3] && y[3] > y[4] && y[4] > 0 && y[2] < 1e-9) {
		t.Fatalf("interior, left out %v", y)
	}
}
