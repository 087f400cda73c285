package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// barrier is the function centre maximizes; -Inf outside the interior.
func barrier(x, lo []float64, w []int, M float64) float64 {
	f, used := 0.0, 0.0
	for j := range x {
		if lo[j] >= 1 {
			if x[j] != 1 {
				return math.Inf(-1)
			}
		} else {
			if !(x[j] > max(lo[j], 0) && x[j] < 1) {
				return math.Inf(-1)
			}
			f += math.Log(x[j]) + math.Log(x[j]-lo[j]) + math.Log(1-x[j])
		}
		used += float64(w[j]) * x[j]
	}
	if !(used < M) {
		return math.Inf(-1)
	}
	return f + math.Log(M-used)
}

// The centre is strictly inside the set, no small move inside it raises the
// barrier, and without room in the capacity it is the lower bounds.
func TestCentre(t *testing.T) {
	// One job, one GPU, lo = 0: maximize 2·log x + 2·log(1−x): x = 1/2.
	x := []float64{0}
	centre(x, []float64{0}, []int{1}, 1)
	if !near(x[0], 0.5, 1e-12) {
		t.Fatalf("one job: %v", x)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := 1 + r.IntN(10)
		M := float64(1 + r.IntN(16))
		lo, w := make([]float64, n), make([]int, n)
		var base float64
		for j := range lo {
			w[j] = 1 + r.IntN(4)
			switch r.IntN(5) {
			case 0:
				lo[j] = 1
			case 1:
				lo[j] = 0
			default:
				lo[j] = r.Float64() * M / float64(n*w[j])
			}
			base += float64(w[j]) * min(lo[j], 1)
		}
		x := make([]float64, n)
		centre(x, lo, w, M)
		if base >= M {
			for j := range x {
				if x[j] != min(lo[j], 1) {
					t.Fatalf("trial %d: no interior, x %v lo %v", trial, x, lo)
				}
			}
			continue
		}
		f := barrier(x, lo, w, M)
		if math.IsInf(f, -1) {
			t.Fatalf("trial %d: centre %v not interior (lo %v, w %v, M %v)", trial, x, lo, w, M)
		}
		y := make([]float64, n)
		for range 200 {
			copy(y, x)
			for j := range y {
				if lo[j] < 1 {
					y[j] += 1e-4 * (2*r.Float64() - 1) * (1 - max(lo[j], 0))
				}
			}
			if g := barrier(y, lo, w, M); g > f+1e-9 {
				t.Fatalf("trial %d: %v has barrier %v > centre's %v at %v", trial, y, g, f, x)
			}
		}
	}
}

// Authors' OSSP: T replays their 5% search (T* ≤ T < 1.05·T* above 100 s)
// and the interior point gives every job at least what it needs to finish
// by T while staying strictly inside the cluster.
func TestMinTotalDurationAuthors(t *testing.T) {
	for _, c := range []struct{ tStar, want float64 }{
		// Every midpoint is feasible: [100, 1e6] halves 18 times, until
		// 100 + 999900/2^18 ≤ 1.05·100.
		{50, 100 + (1e6-100)/262144},
		{1e6, 1e6},
	} {
		if got := authorsMakespan(c.tStar); !near(got, c.want, 1e-12) && c.tStar < 1e6 {
			t.Errorf("T* %v: T %v, want %v", c.tStar, got, c.want)
		}
	}
	for _, ts := range []float64{1, 99, 100, 150, 12345, 999999, 1e6 + 1, 3.3e7} {
		T := authorsMakespan(ts)
		lo := max(ts, 100)
		if !(T >= ts && T < 1.05*lo) {
			t.Errorf("T* %v: T %v outside [T*, 1.05·max(T*, 100))", ts, T)
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 500 {
		gpus := 1 + r.IntN(32)
		jobs := randDemands(r, 1+r.IntN(12), gpus)
		canon := alloc(t, &MinTotalDuration{Bisect: true}, jobs, gpus)
		x := alloc(t, &MinTotalDuration{Bisect: true, Interior: true}, jobs, gpus)
		var used float64
		for i := range jobs {
			if x[i] < canon[i] {
				t.Fatalf("job %d: interior %v below the pace %v", i, x[i], canon[i])
			}
			used += x[i] * float64(jobs[i].GPUs)
		}
		var need float64
		for i := range jobs {
			need += canon[i] * float64(jobs[i].GPUs)
		}
		if need < float64(gpus)*(1-1e-9) && !(used < float64(gpus)) {
			t.Fatalf("interior uses the whole cluster: %v of %d", used, gpus)
		}
	}
}

// Authors' Themis: the interior point is still a min-max optimum, its
// worst ρ the canonical one's (a saturated job that is not the worst may
// get less than the canonical 1).
func TestFinishTimeFairnessInterior(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 500 {
		gpus := 1 + r.IntN(32)
		jobs := randDemands(r, 1+r.IntN(12), gpus)
		n := float64(len(jobs))
		worst := func(x []float64) float64 {
			var w float64
			for i, d := range jobs {
				iso := d.Throughput * min(1, float64(gpus)/(n*float64(d.GPUs)))
				w = max(w, (d.Elapsed+d.Remaining/(d.Throughput*x[i]))/(d.Remaining/iso))
			}
			return w
		}
		canon := alloc(t, &FinishTimeFairness{}, jobs, gpus)
		x := alloc(t, &FinishTimeFairness{Interior: true}, jobs, gpus)
		if a, b := worst(x), worst(canon); !near(a, b, 1e-9) {
			t.Fatalf("worst ρ: interior %v, canonical %v", a, b)
		}
	}
}
