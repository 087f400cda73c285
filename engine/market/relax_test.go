package market

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// plainDP is the reference for welfare(τ): the textbook knapsack DP over
// jobs and GPU-rounds, O(N·C·T), with the same bounds and forced counts.
func plainDP(w *Workspace, tau float64, lo, hi []int32, dp, nx []float64) float64 {
	T, C := w.cfg.T, w.C
	for b := range dp[:C+1] {
		dp[b] = 0
	}
	inf := math.Inf(-1)
	for j := range lo {
		lam := w.lambda(j, lo[j], hi[j], tau)
		if lam < 0 {
			return inf
		}
		wj := int(w.wid[j])
		row := j * (T + 1)
		for b := 0; b <= C; b++ {
			best := inf
			for n := int(lam); n <= int(hi[j]) && n*wj <= b; n++ {
				if v := dp[b-n*wj] + w.val[row+n]; v > best {
					best = v
				}
			}
			nx[b] = best
		}
		dp, nx = nx, dp
	}
	return dp[C]
}

// TestWelfareMatchesPlainDP checks the class-decomposed knapsack against
// the plain DP on random mid-size instances, at every makespan candidate.
func TestWelfareMatchesPlainDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ws := NewWorkspace()
	checked := 0
	for it := 0; it < 60; it++ {
		p := randomProblem(rng, 30, 12, 24, []int{1, 2, 4, 8, 3})
		// Only the tables matter here; a short deadline keeps hard packings cheap.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := ws.Solve(ctx, p)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		// The workspace now holds the last path's tables and bounds.
		N := len(p.Jobs)
		lo, hi := ws.lo0[:N], ws.hi0[:N]
		dp, nx := make([]float64, ws.C+1), make([]float64, ws.C+1)
		for _, tau := range []float64{0, 100, 1000, 5000, math.Inf(1)} {
			want := plainDP(ws, tau, lo, hi, dp, nx)
			got, ok := ws.welfare(tau, lo, hi, ws.counts[:N])
			if !ok {
				if !math.IsInf(want, -1) && ws.forced(tau, lo, hi) >= 0 && ws.forced(tau, lo, hi) <= ws.C {
					t.Fatalf("case %d τ=%v: welfare infeasible, DP %v", it, tau, want)
				}
				continue
			}
			if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("case %d τ=%v: welfare %.15g, plain DP %.15g", it, tau, got, want)
			}
			// The counts it returns attain the value and fit.
			s, used := 0.0, 0
			for j, n := range ws.counts[:N] {
				s += ws.val[j*(ws.cfg.T+1)+int(n)]
				used += int(ws.wid[j]) * int(n)
				if n < lo[j] || n > hi[j] || ws.res[j*(ws.cfg.T+1)+int(n)] > tau {
					t.Fatalf("case %d: job %d count %d outside its bounds", it, j, n)
				}
			}
			if used > ws.C || math.Abs(s-got) > 1e-9*(1+math.Abs(got)) {
				t.Fatalf("case %d: counts use %d of %d, value %v vs %v", it, used, ws.C, s, got)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d comparisons", checked)
	}
}

// BenchmarkWelfare times one evaluation of W(τ) on the 900-job, 256-GPU
// trace instance: the class-decomposed knapsack against the plain DP
// (the baseline of the notes' outline, O(N·C·T)).
func BenchmarkWelfare(b *testing.B) {
	p := traceProblem(b, 256, 900, 1, 1)
	ws := NewWorkspace()
	if _, err := ws.Solve(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	N := len(p.Jobs)
	lo, hi := ws.lo0[:N], ws.hi0[:N]
	tau := 0.0
	for j := range lo {
		tau = max(tau, ws.res[j*(ws.cfg.T+1)+int(hi[j])])
	}
	tau += 600
	b.Run("classes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ws.welfare(tau, lo, hi, nil)
		}
	})
	b.Run("plainDP", func(b *testing.B) {
		dp, nx := make([]float64, ws.C+1), make([]float64, ws.C+1)
		for b.Loop() {
			plainDP(ws, tau, lo, hi, dp, nx)
		}
	})
}
