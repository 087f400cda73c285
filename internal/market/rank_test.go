package market

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
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
