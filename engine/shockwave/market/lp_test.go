package market

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// lpSetupFor solves p (which prepares the tables, the classes and the
// exact layout) and points the configuration LP's slopes at the layout's
// last tier, as lagrangeRoot does; it reports false for a problem without
// an LP to test.
func lpSetupFor(ws *Workspace, p *Problem) bool {
	if _, err := ws.Solve(context.Background(), p); err != nil || len(p.Jobs) == 0 || len(ws.ex.tiers) == 0 {
		return false
	}
	ws.lag.tier = int32(len(ws.ex.tiers) - 1)
	ws.lag.fixed = ws.lag.fixed[:0]
	return true
}

// lpValue is the LP's objective at its current point: each job's
// piecewise-linear welfare (scaled slopes) less the artificial column's
// cost.
func lpValue(lp *cfgLP) float64 {
	v := 0.0
	for j := range lp.N {
		x := lp.x[j]
		for i := 0; i < lp.T && float64(i) < x; i++ {
			v += lp.slope[j*lp.T+i] * min(1, x-float64(i))
		}
	}
	if art := lp.N + lp.R - 1; lp.pos[art] >= 0 {
		v -= lp.mcost * lp.x[art]
	}
	return v
}

// randomBox draws lower bounds in [0, top_j] (mostly low, so that the LP
// is often feasible) and hi = top.
func randomBox(rng *rand.Rand, ws *Workspace, N int) (lo, hi []int32) {
	lo, hi = make([]int32, N), make([]int32, N)
	for j := range N {
		hi[j] = ws.tab.top[j]
		if rng.IntN(3) == 0 {
			lo[j] = int32(rng.IntN(int(hi[j]) + 1))
		}
	}
	return lo, hi
}

// TestLPWarmStartMatchesCold: a solve from the last basis reaches the LP
// optimum a solve from the slack basis reaches (the value is unique even
// where the vertex is not), after a change of the box and after new rows.
func TestLPWarmStartMatchesCold(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	ws := NewWorkspace()
	ctx := context.Background()
	shapes := []struct {
		widths []int
		gpus   []int
	}{{[]int{1, 2, 3}, []int{7, 13}}, {[]int{3, 5, 6, 1}, []int{10, 13}}, {[]int{1, 2, 4, 8}, []int{10, 32}}}
	same := func(a, b float64) bool { return math.Abs(a-b) <= 1e-7*max(1, math.Abs(a)) }
	warmBox, warmRows := 0, 0
	for it := 0; it < 400; it++ {
		sh := shapes[it%len(shapes)]
		p := randomProblemOn(rng, 12, 8, sh.gpus[rng.IntN(len(sh.gpus))], sh.widths)
		if !lpSetupFor(ws, p) {
			continue
		}
		N := len(p.Jobs)
		loA, hi := randomBox(rng, ws, N)
		loB, _ := randomBox(rng, ws, N)
		lp := &ws.lp
		// Rows from a separating solve at box A, then box B cold on them.
		ws.solveLP(ctx, loA, hi, 3, false, lpCold)
		okCold := ws.solveLP(ctx, loB, hi, 0, true, lpCold)
		vCold := lpValue(lp)
		// Box A again, then box B from its basis.
		ws.solveLP(ctx, loA, hi, 0, true, lpCold)
		ws.lpSetup(loB, hi, true)
		if lp.warm() {
			warmBox++
		} else {
			lp.start()
		}
		okWarm := lp.solve(ctx)
		if okWarm != okCold || !same(lpValue(lp), vCold) {
			t.Fatalf("case %d, new box: warm %v %.12g, cold %v %.12g", it, okWarm, lpValue(lp), okCold, vCold)
		}
		// New rows on B's optimum: from its basis and from the slack basis.
		if !okWarm || lp.separate(ws.ks.class, maxLPRows-len(lp.rowClass)) == 0 {
			continue
		}
		if lp.warm() {
			warmRows++
		} else {
			lp.start()
		}
		okWarm = lp.solve(ctx)
		vWarm := lpValue(lp)
		lp.start()
		okCold = lp.solve(ctx)
		if okWarm != okCold || !same(vWarm, lpValue(lp)) {
			t.Fatalf("case %d, new rows: warm %v %.12g, cold %v %.12g", it, okWarm, vWarm, okCold, lpValue(lp))
		}
	}
	t.Logf("warm starts taken: %d after a new box, %d after new rows", warmBox, warmRows)
	if warmBox < 200 || warmRows < 20 {
		t.Fatalf("warm starts taken: %d after a new box, %d after new rows", warmBox, warmRows)
	}
}

// TestNodeFloorCertificate: where the LP's duals certify that the counts a
// makespan forces in a box do not pack (the raise of a node's makespan
// floor, search.go), no count vector of the box with that makespan or less
// packs, by exhaustive search; and forced counts that pack pass the node
// LP's feasibility test.
func TestNodeFloorCertificate(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	ws := NewWorkspace()
	ctx := context.Background()
	certified := 0
	for it := 0; it < 400; it++ {
		widths, gpus := []int{1, 2, 3}, 7
		if it%2 == 1 {
			widths, gpus = []int{3, 5, 6, 1}, 10
		}
		p := randomProblemOn(rng, 6, 4, gpus, widths)
		if !lpSetupFor(ws, p) {
			continue
		}
		N, T := len(p.Jobs), ws.cfg.T
		// A box, and a makespan that forces many rounds: the largest of
		// the jobs' residuals at their upper bounds, or one near it.
		lo, hi := make([]int32, N), make([]int32, N)
		tau := 0.0
		for j := range N {
			lo[j] = int32(rng.IntN(int(ws.tab.top[j]) + 1))
			hi[j] = lo[j] + int32(rng.IntN(int(ws.tab.top[j]-lo[j])+1))
			tau = max(tau, ws.tab.res[j*(T+1)+int(hi[j])])
		}
		if rng.IntN(2) == 0 {
			j := rng.IntN(N)
			tau = max(tau, ws.tab.res[j*(T+1)+int(lo[j])])
		}
		nlo := make([]int32, N)
		reach := true
		for j := range N {
			n := ws.lambda(j, lo[j], hi[j], tau)
			reach = reach && n >= 0
			nlo[j] = max(lo[j], n)
		}
		if !reach {
			continue
		}
		w := make([]int, N)
		c := make([]int, N)
		for j := range N {
			w[j], c[j] = p.Jobs[j].GPUs, int(nlo[j])
		}
		if brutePackable(w, c, gpus, T) && !ws.lpHolds(ctx, nlo) {
			t.Fatalf("case %d: forced counts %v pack, the LP test says not", it, nlo)
		}
		// The certificate is checked exactly whatever the LP concluded, so
		// it is tested on every LP's duals, not only an infeasible one's.
		ws.solveLP(ctx, nlo, nlo, 0, true, lpCold)
		if !ws.farkas(nlo) {
			continue
		}
		certified++
		// Every count vector of the box with makespan ≤ τ.
		n := append([]int32(nil), lo...)
		for {
			tauN := 0.0
			for j := range N {
				tauN = max(tauN, ws.tab.res[j*(T+1)+int(n[j])])
				c[j] = int(n[j])
			}
			if tauN <= tau && brutePackable(w, c, gpus, T) {
				t.Fatalf("case %d: certified no plan at makespan ≤ %g, but %v (makespan %g) packs", it, tau, n, tauN)
			}
			j := 0
			for j < N && n[j] == hi[j] {
				n[j] = lo[j]
				j++
			}
			if j == N {
				break
			}
			n[j]++
		}
	}
	t.Logf("%d certificates", certified)
	if certified < 20 {
		t.Fatalf("only %d certificates", certified)
	}
}
