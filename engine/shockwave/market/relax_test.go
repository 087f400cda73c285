package market

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

// plainDP is the reference for welfare(τ): the textbook knapsack DP over
// jobs and GPU-rounds, O(N·C·T), with the same bounds and forced counts, in
// the same exact grid arithmetic. dp and nx hold C+1 numbers, ok and nok
// C+1 flags (false: no counts reach that capacity).
func plainDP(w *Workspace, tau float64, lo, hi []int32, dp, nx []uint64, ok, nok []bool) ([]uint64, bool) {
	W, C := w.ex.limbs, w.ks.capacity
	clear(dp)
	for b := range ok[:C+1] {
		ok[b] = true
	}
	v := make([]uint64, W)
	for j := range lo {
		lam := w.lambda(j, lo[j], hi[j], tau)
		if lam < 0 {
			return nil, false
		}
		wj := int(w.tab.width[j])
		for b := 0; b <= C; b++ {
			nok[b] = false
			for n := int(lam); n <= int(hi[j]) && n*wj <= b; n++ {
				if !ok[b-n*wj] {
					continue
				}
				copy(v, dp[(b-n*wj)*W:(b-n*wj+1)*W])
				w.addGain(v, j, n)
				if !nok[b] || cmpNum(v, nx[b*W:(b+1)*W]) > 0 {
					copy(nx[b*W:(b+1)*W], v)
					nok[b] = true
				}
			}
		}
		dp, nx = nx, dp
		ok, nok = nok, ok
	}
	return dp[C*W : (C+1)*W], ok[C]
}

// TestWelfareMatchesPlainDP checks the class-decomposed knapsack against
// the plain DP on random mid-size instances, at every makespan candidate,
// exactly.
func TestWelfareMatchesPlainDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ws := NewWorkspace()
	checked := 0
	limbs := map[int]int{} // numbers' widths seen: each has its own convolution loop
	for it := 0; it < 90; it++ {
		p := randomProblem(rng, 30, 12, 24, []int{1, 2, 4, 8, 3})
		if it%3 == 0 {
			hugePriorities(rng, p)
		}
		// Only the tables matter here; a short deadline keeps hard packings cheap.
		if err := solveSoon(ws, p); err != nil {
			t.Fatal(err)
		}
		// The workspace now holds the last path's tables and bounds.
		N, W := len(p.Jobs), ws.ex.limbs
		limbs[min(W, 5)]++
		lo, hi := ws.bb.baseLo[:N], ws.bb.baseHi[:N]
		dp, nx := make([]uint64, (ws.ks.capacity+1)*W), make([]uint64, (ws.ks.capacity+1)*W)
		ok, nok := make([]bool, ws.ks.capacity+1), make([]bool, ws.ks.capacity+1)
		got := make([]uint64, W)
		for _, tau := range []float64{0, 100, 1000, 5000, math.Inf(1)} {
			want, wantOK := plainDP(ws, tau, lo, hi, dp, nx, ok, nok)
			if !ws.welfare(tau, lo, hi, ws.bb.counts[:N], got) {
				if wantOK && ws.forced(tau, lo, hi) >= 0 && ws.forced(tau, lo, hi) <= ws.ks.capacity {
					t.Fatalf("case %d τ=%v: welfare infeasible, DP feasible", it, tau)
				}
				continue
			}
			if !wantOK || cmpNum(got, want) != 0 {
				t.Fatalf("case %d τ=%v: welfare %x (%g), plain DP %x (%g)", it, tau, got, ws.real(got), want, ws.real(want))
			}
			// The counts it returns attain the value and fit.
			s, used := make([]uint64, W), 0
			for j, n := range ws.bb.counts[:N] {
				ws.addGain(s, j, int(n))
				used += int(ws.tab.width[j]) * int(n)
				if n < lo[j] || n > hi[j] || ws.tab.res[j*(ws.cfg.T+1)+int(n)] > tau {
					t.Fatalf("case %d: job %d count %d outside its bounds", it, j, n)
				}
			}
			if used > ws.ks.capacity || cmpNum(s, got) != 0 {
				t.Fatalf("case %d: counts use %d of %d, value %x vs %x", it, used, ws.ks.capacity, s, got)
			}
			checked++
		}
	}
	if checked < 150 || limbs[2] == 0 || limbs[3] == 0 || limbs[4] == 0 || limbs[5] == 0 {
		t.Fatalf("only %d comparisons, widths %v", checked, limbs)
	}
	t.Logf("%d comparisons, widths (5: five or more limbs) %v", checked, limbs)
}

// TestLastClassCell checks that welfare, which fills each width class's DP
// row only at the capacities the classes after it read (the last class at
// the capacity alone), gives the value and the counts of filling every
// capacity, at every makespan candidate of random and trace instances.
func TestLastClassCell(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ws := NewWorkspace()
	checked := 0
	var problems []*Problem
	for range 60 {
		p := randomProblem(rng, 40, 12, 32, []int{1, 2, 4, 8, 3, 5, 6})
		if rng.IntN(3) == 0 {
			hugePriorities(rng, p)
		}
		problems = append(problems, p)
	}
	problems = append(problems, traceProblem(t, 32, 120, 1, 1), traceProblem(t, 128, 460, 2, 1))
	for it, p := range problems {
		if err := solveSoon(ws, p); err != nil {
			t.Fatal(err)
		}
		N, W := len(p.Jobs), ws.ex.limbs
		lo, hi := ws.bb.baseLo[:N], ws.bb.baseHi[:N]
		got, want := make([]uint64, W), make([]uint64, W)
		gotN, wantN := make([]int32, N), make([]int32, N)
		for _, tau := range append(ws.tauCandidates(lo, hi), math.Inf(1)) {
			ws.ks.allCells = true
			okFull := ws.welfare(tau, lo, hi, wantN, want)
			ws.ks.allCells = false
			ok := ws.welfare(tau, lo, hi, gotN, got)
			if ok != okFull {
				t.Fatalf("case %d τ=%v: feasible %v, full convolution %v", it, tau, ok, okFull)
			}
			if !ok {
				continue
			}
			if cmpNum(got, want) != 0 {
				t.Fatalf("case %d τ=%v: welfare %x, full convolution %x", it, tau, got, want)
			}
			if d := gocmp.Diff(wantN, gotN); d != "" {
				t.Fatalf("case %d τ=%v: counts differ from the full convolution's:\n%s", it, tau, d)
			}
			if len(ws.ks.classWidth) > 1 {
				checked++
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d comparisons with two classes or more", checked)
	}
	t.Logf("%d comparisons", checked)
}

// TestSortGains checks the radix sort of the marginals against the
// comparison sort with the same order (key descending, then the tie rule):
// keys with ties, zeros of both signs, negatives, subnormals and huge values.
func TestSortGains(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	tie := func(a, b marg) int {
		if a.j != b.j {
			return cmp.Compare(b.j, a.j)
		}
		return cmp.Compare(a.n, b.n)
	}
	pool := []float64{0, math.Copysign(0, -1), 1, 1, 0.5, 2.5e-310, 1e300, -3, 7}
	for it := 0; it < 300; it++ {
		n := rng.IntN(400)
		ms := make([]marg, n)
		for i := range ms {
			d := pool[rng.IntN(len(pool))]
			if rng.IntN(2) == 0 {
				d = rng.Float64() * math.Pow(2, float64(rng.IntN(80)-40))
			}
			ms[i] = marg{d: d, j: int32(i % 37), n: int32(i)}
		}
		rng.Shuffle(n, func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
		want := slices.Clone(ms)
		slices.SortFunc(want, func(a, b marg) int {
			if a.d != b.d {
				if a.d > b.d {
					return -1
				}
				return 1
			}
			return tie(a, b)
		})
		sortGains(ms, make([]marg, n), tie)
		for i := range ms {
			if ms[i].j != want[i].j || ms[i].n != want[i].n || ms[i].d != want[i].d {
				t.Fatalf("case %d: position %d holds %+v, want %+v", it, i, ms[i], want[i])
			}
		}
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
	lo, hi := ws.bb.baseLo[:N], ws.bb.baseHi[:N]
	tau := 0.0
	for j := range lo {
		tau = max(tau, ws.tab.res[j*(ws.cfg.T+1)+int(hi[j])])
	}
	tau += 600
	total := make([]uint64, ws.ex.limbs)
	b.Run("classes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ws.welfare(tau, lo, hi, nil, total)
		}
	})
	b.Run("plainDP", func(b *testing.B) {
		W := ws.ex.limbs
		dp, nx := make([]uint64, (ws.ks.capacity+1)*W), make([]uint64, (ws.ks.capacity+1)*W)
		ok, nok := make([]bool, ws.ks.capacity+1), make([]bool, ws.ks.capacity+1)
		for b.Loop() {
			plainDP(ws, tau, lo, hi, dp, nx, ok, nok)
		}
	})
}

// solveSoon solves p with a short limit, which only bounds the tests'
// time: what they check are the first plan's tables, which a loaded
// machine may not reach in 20 ms (ErrTimeLimit); then the limit grows.
func solveSoon(ws *Workspace, p *Problem) error {
	for limit := 20 * time.Millisecond; ; limit *= 4 {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		_, err := ws.Solve(ctx, p)
		cancel()
		if !errors.Is(err, ErrTimeLimit) || limit > 5*time.Second {
			return err
		}
	}
}
