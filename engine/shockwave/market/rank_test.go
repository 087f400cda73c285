package market

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bruteRank is the exact optimum of the authors' re-ranking MIP: over every
// x with the plan's counts that fits the rounds, the least
// Σ_j p_j/n_j · Σ_t t·x_{j,t}.
func bruteRank(p *Problem, T int, counts []int, prio []float64) float64 {
	N := len(p.Jobs)
	free := make([]int, T)
	for t := range free {
		free[t] = p.GPUs
	}
	best := math.Inf(1)
	var rec func(j int, cost float64)
	rec = func(j int, cost float64) {
		if cost >= best {
			return
		}
		if j == N {
			best = cost
			return
		}
		if counts[j] == 0 {
			rec(j+1, cost)
			return
		}
		c := prio[j] / float64(counts[j])
		var pick func(t, left int, cost float64)
		pick = func(t, left int, cost float64) {
			if left == 0 {
				rec(j+1, cost)
				return
			}
			if T-t < left {
				return
			}
			if free[t] >= p.Jobs[j].GPUs {
				free[t] -= p.Jobs[j].GPUs
				pick(t+1, left-1, cost+c*float64(t))
				free[t] += p.Jobs[j].GPUs
			}
			pick(t+1, left, cost)
		}
		pick(0, counts[j], cost)
	}
	rec(0, 0)
	return best
}

// TestRankAgainstBruteForce measures the ranking rule (rank.go) against the
// exact re-ranking optimum on small instances. The rule is a local search,
// so it may lose; the test bounds how often and by how much, and checks it
// never reports a cost below the optimum (which would mean a broken plan).
func TestRankAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	ws := NewWorkspace()
	n, exact, worst, sumGap := 0, 0, 0.0, 0.0
	for it := 0; it < 400; it++ {
		p := randomProblem(rng, 7, 5, 4, []int{1, 2, 4})
		sol, err := ws.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		opt := bruteRank(p, len(sol.Rounds), sol.Count, sol.Priority)
		got := sol.RankCost
		if got < opt-1e-9*(1+math.Abs(opt)) {
			t.Fatalf("case %d: rank cost %v below the optimum %v", it, got, opt)
		}
		gap := (got - opt) / math.Max(opt, 1e-300)
		if opt == 0 {
			gap = got
		}
		n++
		if gap <= 1e-9 {
			exact++
		}
		worst = max(worst, gap)
		sumGap += gap
	}
	t.Logf("ranking: optimal in %d of %d plans, mean relative excess %.3g, worst %.3g", exact, n, sumGap/float64(n), worst)
	if float64(exact) < 0.9*float64(n) || sumGap/float64(n) > 0.01 {
		t.Fatalf("ranking optimal in only %d of %d plans (mean excess %.3g)", exact, n, sumGap/float64(n))
	}
}

// refImprovePair is improvePair as the ranking rule defines it, reading
// every movable job's row: moves into b's idle GPUs in rank order, then
// per width class the pairwise swaps of a\b against b\a.
func (w *Workspace) refImprovePair(mov []int32, b, a, K int) bool {
	T := w.cfg.T
	x, free := w.inc.x, w.rk.free
	changed := false
	if free[b] > 0 {
		for _, j := range mov {
			r := int(j) * T
			if x[r+a] && !x[r+b] && w.tab.width[j] <= free[b] {
				x[r+a], x[r+b] = false, true
				free[a] += w.tab.width[j]
				free[b] -= w.tab.width[j]
				changed = true
			}
		}
	}
	for cl := 0; cl < K; cl++ {
		var A, B []int32
		for _, j := range w.rk.movable[w.rk.movStart[cl]:w.rk.movStart[cl+1]] {
			r := int(j) * T
			if x[r+a] && !x[r+b] {
				A = append(A, j)
			} else if x[r+b] && !x[r+a] {
				B = append(B, j)
			}
		}
		for q := 0; q < len(A) && q < len(B); q++ {
			ja, ib := A[q], B[len(B)-1-q]
			if w.rk.rankOf[ja] >= w.rk.rankOf[ib] {
				break
			}
			ra, rb := int(ja)*T, int(ib)*T
			x[ra+a], x[ra+b] = false, true
			x[rb+b], x[rb+a] = false, true
			changed = true
		}
	}
	return changed
}

// TestRankBitsMatchRows ranks plans of 120 and 460 jobs (bitsets of up to
// 8 words) from rounds shuffled at random, once with the bitset
// improvePair and once with the row-scanning definition, and requires the
// same plan after every pass.
func TestRankBitsMatchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	ws := NewWorkspace()
	for _, sz := range []struct{ N, M int }{{120, 32}, {460, 128}} {
		p := traceProblem(t, sz.M, sz.N, 1, 1)
		sol, err := ws.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		T, K := len(sol.Rounds), len(ws.ks.classWidth)
		counts := append([]int32(nil), ws.inc.counts...)
		moved := 0
		for trial := 0; trial < 4; trial++ {
			// A shuffle of the plan's rounds: the same counts, packed.
			perm := rng.Perm(T)
			x := append([]bool(nil), ws.inc.x...)
			for j := range p.Jobs {
				for t2 := range T {
					ws.inc.x[j*T+t2] = x[j*T+perm[t2]]
				}
			}
			start := append([]bool(nil), ws.inc.x...)
			ws.rankJobs(counts)
			ws.permuteRounds()
			mov := ws.movableJobs(counts)
			ref := NewWorkspace()
			*ref = *ws
			ref.inc.x = append([]bool(nil), ws.inc.x...)
			ref.rk.free = append([]int32(nil), ws.rk.free...)
			for pass := 0; pass < 4*T; pass++ {
				changed, refChanged := false, false
				for a := 1; a < T; a++ {
					for b := 0; b < a; b++ {
						changed = ws.improvePair(b, a, K) || changed
						refChanged = ref.refImprovePair(mov, b, a, K) || refChanged
					}
				}
				if d := cmp.Diff(ref.inc.x, ws.inc.x); d != "" || changed != refChanged {
					t.Fatalf("%d jobs, trial %d, pass %d: the bitset ranking differs (changed %v, want %v):\n%s", sz.N, trial, pass, changed, refChanged, d)
				}
				if !changed {
					break
				}
			}
			for i := range start {
				if start[i] != ws.inc.x[i] {
					moved++
				}
			}
		}
		if moved == 0 {
			t.Fatalf("%d jobs: the ranking moved nothing; the test compares nothing", sz.N)
		}
	}
}
