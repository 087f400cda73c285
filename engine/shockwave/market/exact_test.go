package market

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigNum is the exact value of a number of ws's layout.
func bigNum(ws *Workspace, x []uint64) *big.Float {
	sum := new(big.Float).SetPrec(8192)
	for _, t := range ws.ex.tiers {
		v := new(big.Int)
		for _, l := range x[t.off : t.off+t.n] {
			v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(l))
		}
		f := new(big.Float).SetPrec(8192).SetInt(v)
		sum.Add(sum, f.SetMantExp(f, int(t.exp)))
	}
	return sum
}

// TestRealRounding: the value of a number (tiers concatenated) is rounded
// to the nearest float64, ties to even, on random layouts whose tiers obey
// the cut rule (each lower tier worth less than one unit of the tier above).
func TestRealRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ws := NewWorkspace()
	for it := 0; it < 20000; it++ {
		K := 1 + rng.IntN(3)
		ws.ex.tiers = ws.ex.tiers[:0]
		exp := int32(rng.IntN(1200) - 900)
		off := int32(0)
		for k := 0; k < K; k++ {
			n := int32(1 + rng.IntN(3))
			ws.ex.tiers = append(ws.ex.tiers, tier{off: off, n: n, exp: exp})
			off += n
			exp -= int32(64*n) + int32(rng.IntN(70)) - 60 // lower tiers may start inside the limbs above
		}
		ws.ex.limbs = int(off)
		x := make([]uint64, ws.ex.limbs)
		for k, tr := range ws.ex.tiers {
			limbs := x[tr.off : tr.off+tr.n]
			bitsMax := 64 * int(tr.n)
			if k > 0 { // worth less than one unit of the tier above
				bitsMax = min(bitsMax, int(ws.ex.tiers[k-1].exp-tr.exp))
			}
			nb := rng.IntN(bitsMax + 1)
			for q := 0; q < nb; q++ {
				if rng.IntN(4) != 0 || q == nb-1 || q < 2 {
					limbs[len(limbs)-1-q/64] |= 1 << (q % 64)
				}
			}
			if rng.IntN(5) == 0 {
				clear(limbs)
			}
		}
		want, _ := bigNum(ws, x).Float64()
		if got := ws.real(x); got != want {
			t.Fatalf("case %d: tiers %+v, x %x: real %v, exact rounding %v", it, ws.ex.tiers, x, got, want)
		}
	}
}

// TestToGrid: ⌊v/2^e⌋ and ⌊k·τ/2^e⌋ against math/big, subnormals included.
func TestToGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for it := 0; it < 20000; it++ {
		v := math.Float64frombits(rng.Uint64() &^ (1 << 63))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if it%5 == 0 {
			v = math.Float64frombits(rng.Uint64N(1 << 52)) // subnormal
		}
		_, x := math.Frexp(v)
		n := 1 + rng.IntN(4)
		e := int32(x - 64*n + rng.IntN(64*n+80)) // the value fits n limbs (or is cut to 0)
		z := make([]uint64, n)
		toGrid(z, v, e)
		want := new(big.Float).SetPrec(4096).SetFloat64(v)
		want.SetMantExp(want, -int(e))
		wi, _ := want.Int(nil) // truncation = floor for v ≥ 0
		got := new(big.Int)
		for _, l := range z {
			got.Lsh(got, 64).Or(got, new(big.Int).SetUint64(l))
		}
		if got.Cmp(wi) != 0 {
			t.Fatalf("toGrid(%v, %d) = %v, want %v", v, e, got, wi)
		}
	}
	ws := NewWorkspace()
	for it := 0; it < 5000; it++ {
		ws.cfg.k = math.Exp(rng.Float64()*40 - 20)
		tau := math.Exp(rng.Float64() * 20)
		_, xk := math.Frexp(ws.cfg.k)
		_, xt := math.Frexp(tau)
		n := int32(1 + rng.IntN(3))
		ws.ex.tiers = []tier{{off: 0, n: n, exp: int32(xk + xt - 64*int(n) + rng.IntN(64*int(n)))}}
		ws.ex.limbs, ws.ex.makespanTier = int(n), 0
		z := make([]uint64, n)
		ws.mkGrid(z, tau)
		want := new(big.Float).SetPrec(4096).SetFloat64(ws.cfg.k)
		want.Mul(want, new(big.Float).SetFloat64(tau))
		want.SetMantExp(want, -int(ws.ex.tiers[0].exp))
		wi, _ := want.Int(nil)
		got := new(big.Int)
		for _, l := range z {
			got.Lsh(got, 64).Or(got, new(big.Int).SetUint64(l))
		}
		if got.Cmp(wi) != 0 {
			t.Fatalf("mkGrid(k=%v, τ=%v) = %v, want %v", ws.cfg.k, tau, got, wi)
		}
	}
}

// packableCounts lists every count vector some capacity-feasible x has
// (each job at most once per round), by search over the rounds.
func packableCounts(p *Problem, T int) [][]int {
	N := len(p.Jobs)
	fits := fittingSets(p)
	seen := map[[16]int8]bool{}
	var out [][]int
	var n [16]int8
	var rec func(t int)
	rec = func(t int) {
		key := n
		key[15] = int8(t)
		if seen[key] {
			return
		}
		seen[key] = true
		if t == T {
			c := make([]int, N)
			for j := range c {
				c[j] = int(n[j])
			}
			out = append(out, c)
			return
		}
		for _, m := range fits {
			for j := 0; j < N; j++ {
				n[j] += int8(m >> j & 1)
			}
			rec(t + 1)
			for j := 0; j < N; j++ {
				n[j] -= int8(m >> j & 1)
			}
		}
	}
	rec(0)
	return out
}

// cappedPriorities are the brute force's priorities capped at MaxPriority.
func cappedPriorities(p *Problem, c bruteCfg) []float64 {
	pr := brutePriorities(p, c)
	for j := range pr {
		pr[j] = min(pr[j], MaxPriority)
	}
	return pr
}

// exactProgram evaluates the program by counts in exact arithmetic, from
// the statement (brute_test.go's curve and priorities, math.Log and
// math.Pow): N·T times the objective, Σ_j p_j·f(u_j) − N·T·k·τ, summed in
// math/big with room for every bit of every term.
type exactProgram struct {
	p    *Problem
	c    bruteCfg
	prio []float64
	ftf  bool
	term [][]*big.Float // term[j][n] = p_j·f(u_j(n))
	res  [][]float64    // res[j][n]
}

func newExactProgram(p *Problem, prio []float64, ftf bool) *exactProgram {
	c := bruteConfig(p.Config)
	e := &exactProgram{p: p, c: c, prio: prio, ftf: ftf}
	for j, job := range p.Jobs {
		var tr []*big.Float
		var rr []float64
		for n := 0; n <= c.T; n++ {
			y := math.Min(float64(n)*c.delta/job.MeanEpoch, float64(job.Epochs-job.Progress))
			u := (float64(job.Progress) + y) / float64(job.Epochs)
			f := new(big.Float).SetPrec(4096).SetFloat64(c.logf(u))
			tr = append(tr, f.Mul(f, new(big.Float).SetFloat64(prio[j])))
			rr = append(rr, math.Max(0, job.Remaining-float64(job.MeanEpoch*y))) // float64(): no FMA on arm64
		}
		e.term = append(e.term, tr)
		e.res = append(e.res, rr)
	}
	return e
}

// feasible checks the FTF constraints (on the fair path) of counts n.
func (e *exactProgram) feasible(n []int) bool {
	if !e.ftf {
		return true
	}
	s := math.Min(1, float64(e.p.GPUs)/float64(len(e.p.Jobs)))
	end := e.c.delta * float64(e.p.Round+e.c.T)
	for j, job := range e.p.Jobs {
		if !(end+e.res[j][n[j]]/s <= e.c.rho*job.FairFinish) {
			return false
		}
	}
	return true
}

// value is N·T times the objective at counts n, exactly, and the makespan.
func (e *exactProgram) value(n []int) (*big.Float, float64) {
	v := new(big.Float).SetPrec(4096)
	tau := 0.0
	for j := range n {
		v.Add(v, e.term[j][n[j]])
		tau = max(tau, e.res[j][n[j]])
	}
	nt := float64(len(n) * e.c.T)
	mk := new(big.Float).SetPrec(4096).SetFloat64(e.c.k)
	mk.Mul(mk, new(big.Float).SetFloat64(tau))
	mk.Mul(mk, new(big.Float).SetFloat64(nt))
	return v.Sub(v, mk), tau
}

// slack bounds how far the solver's term for job j (detLog, detPow, its
// grid) may sit from this evaluation's, in N·T units: a few 2^-40 of the
// term's scale p_j·(1 + |ln ε|).
func (e *exactProgram) slack(j int) float64 {
	return 0x1p-40 * e.prio[j] * (1 - math.Log(e.c.logZero) + 1)
}

// TestSolveExactHugePriorities: with priorities from 1 to MaxPriority in one
// instance (a few jobs at 1e20 and 1e300 next to jobs at 1), the solver's
// plan attains the exact optimum. Every packable count vector is scored in
// math/big; the solver's plan may trail the best only by the evaluation
// slack of the jobs whose counts differ (identical counts cancel exactly),
// so losing a small job's welfare to a huge job's rounding fails.
//
// The second part draws the wide-job families on clusters that are not
// powers of two: widths {3,5,6,1} on 7, 10 or 13 GPUs, {1,2,4,8} on 10.
func TestSolveExactHugePriorities(t *testing.T) {
	t.Run("widths1234", func(t *testing.T) {
		testExactHuge(t, 21, 1500, 1000, 3, func(rng *rand.Rand) *Problem { return randomProblem(rng, 6, 4, 6, []int{1, 2, 4, 3}) })
	})
	t.Run("wide", func(t *testing.T) {
		testExactHuge(t, 25, 400, 250, 2, func(rng *rand.Rand) *Problem {
			if rng.IntN(3) == 0 {
				return randomProblemOn(rng, 5, 3, 10, []int{1, 2, 4, 8})
			}
			return randomProblemOn(rng, 5, 3, []int{7, 10, 13}[rng.IntN(3)], []int{3, 5, 6, 1})
		})
	})
}

func testExactHuge(t *testing.T, seed uint64, cases, minRelaxed, minTiers int, draw func(*rand.Rand) *Problem) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	ws := NewWorkspace()
	paths := map[bool]int{}
	tiers := 0
	for it := 0; it < cases; it++ {
		p := draw(rng)
		hugePriorities(rng, p)
		if it%3 == 0 {
			hugePriorities(rng, p)
		}
		sol, err := ws.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		c := bruteConfig(p.Config)
		all := packableCounts(p, c.T)
		ones := make([]float64, len(p.Jobs))
		for j := range ones {
			ones[j] = 1
		}
		e := newExactProgram(p, ones, true)
		var best []int
		var bestV *big.Float
		for pass := 0; pass < 2 && best == nil; pass++ {
			if pass == 1 {
				e = newExactProgram(p, cappedPriorities(p, c), false)
			}
			for _, n := range all {
				if !e.feasible(n) {
					continue
				}
				if v, _ := e.value(n); bestV == nil || v.Cmp(bestV) > 0 {
					best, bestV = n, v
				}
			}
		}
		relaxed := !e.ftf
		paths[relaxed]++
		tiers = max(tiers, len(ws.ex.tiers))
		for j, pr := range sol.Priority {
			if math.Abs(pr-e.prio[j]) > 1e-12*e.prio[j] {
				t.Fatalf("case %d: priority %d is %v, want %v", it, j, pr, e.prio[j])
			}
		}
		if sol.Relaxed != relaxed {
			t.Fatalf("case %d: relaxed %v, brute force %v", it, sol.Relaxed, relaxed)
		}
		want := Optimal
		if ws.ex.coarse {
			want = Feasible
		}
		if sol.Status != want {
			t.Fatalf("case %d: status %v (coarse %v)", it, sol.Status, ws.ex.coarse)
		}
		if !e.feasible(sol.Count) {
			t.Fatalf("case %d: plan breaks the FTF constraints", it)
		}
		got, tau := e.value(sol.Count)
		slack := 0.0
		for j := range best {
			if best[j] != sol.Count[j] {
				slack += 2 * e.slack(j)
			}
		}
		nt := float64(len(p.Jobs) * c.T)
		_, bestTau := e.value(best)
		if tau != bestTau {
			slack += 0x1p-50 * nt * c.k * max(tau, bestTau)
		}
		gap := new(big.Float).Sub(bestV, got)
		if g, _ := gap.Float64(); g > slack && !ws.ex.coarse {
			t.Fatalf("case %d: plan %v scores %.17g·NT, the optimum %v scores %.17g·NT (gap %g, slack %g); priorities %v",
				it, sol.Count, got, best, bestV, g, slack, e.prio)
		}
		// Reported figures: the plan's exact objective (within the
		// evaluation slack of every job), its makespan, and a bound at least
		// the optimum.
		objSlack := 0.0
		for j := range p.Jobs {
			objSlack += e.slack(j)
		}
		exact, _ := new(big.Float).Quo(got, new(big.Float).SetFloat64(nt)).Float64()
		if math.Abs(sol.Objective-exact) > objSlack/nt+1e-15*math.Abs(exact) || sol.Makespan != tau {
			t.Fatalf("case %d: objective %.17g, makespan %v; exact %.17g, %v (slack %g)", it, sol.Objective, sol.Makespan, exact, tau, objSlack/nt)
		}
		opt, _ := new(big.Float).Quo(bestV, new(big.Float).SetFloat64(nt)).Float64()
		if sol.Bound < opt-objSlack/nt-1e-15*math.Abs(opt) || sol.Bound < sol.Objective {
			t.Fatalf("case %d: bound %v below the optimum %v or the objective %v", it, sol.Bound, opt, sol.Objective)
		}
	}
	t.Logf("paths %v, at most %d tiers", paths, tiers)
	if paths[true] < minRelaxed || tiers < minTiers {
		t.Fatalf("instances do not cover the relaxed path with several tiers: %v, at most %d tiers", paths, tiers)
	}
}

// TestSolveGridOptimal: on its own grid the solver is exactly optimal: no
// packable count vector (meeting the FTF bounds on the fair path) scores
// more than the plan, compared exactly.
func TestSolveGridOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	ws := NewWorkspace()
	for it := 0; it < 600; it++ {
		p := randomProblem(rng, 6, 4, 6, []int{1, 2, 4, 3})
		if it%2 == 0 {
			hugePriorities(rng, p)
		}
		sol, err := ws.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		N := len(p.Jobs)
		s := make([]uint64, ws.ex.limbs)
		n32 := make([]int32, N)
		for _, n := range packableCounts(p, ws.cfg.T) {
			ok := true
			for j := range n {
				n32[j] = int32(n[j])
				ok = ok && n32[j] >= ws.bb.pathLo[j]
			}
			if !ok {
				continue
			}
			ws.evalCounts(n32, s)
			if cmpNum(s, ws.inc.score) > 0 {
				t.Fatalf("case %d: counts %v score %g above the plan %v (%g), status %v", it, n, ws.objective(s, make([]uint64, ws.ex.limbs)), sol.Count, sol.Objective, sol.Status)
			}
		}
	}
}

// TestCoarseLayout: priorities chained 1e15 apart need more limbs than
// maxLimbs; the solver then coarsens the grid, says Feasible, and its bound
// still covers the exact optimum.
func TestCoarseLayout(t *testing.T) {
	p := &Problem{GPUs: 2, Round: 5, Config: Config{Rounds: 3, Lambda: 1}}
	s := 2.0 / 12 // M/N
	for j := 0; j < 12; j++ {
		R := 5000.0 + 100*float64(j)
		p.Jobs = append(p.Jobs, Job{ID: j, GPUs: 1 + j%2, Epochs: 50, Progress: 10, MeanEpoch: 100, Remaining: R,
			FairFinish: (120*5 + R/s) / math.Pow(10, 15*float64(j))})
	}
	ws := NewWorkspace()
	sol, err := ws.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !ws.ex.coarse || sol.Status != Feasible || !sol.Relaxed {
		t.Fatalf("coarse %v, status %v, relaxed %v (tiers %+v)", ws.ex.coarse, sol.Status, sol.Relaxed, ws.ex.tiers)
	}
	c := bruteConfig(p.Config)
	e := newExactProgram(p, cappedPriorities(p, c), false)
	var bestV *big.Float
	for _, n := range packableCounts(p, c.T) {
		if v, _ := e.value(n); bestV == nil || v.Cmp(bestV) > 0 {
			bestV = v
		}
	}
	nt := float64(len(p.Jobs) * c.T)
	opt, _ := new(big.Float).Quo(bestV, new(big.Float).SetFloat64(nt)).Float64()
	if sol.Bound < opt*(1+1e-12) || sol.Objective > sol.Bound {
		t.Fatalf("bound %v, objective %v, exact optimum %v", sol.Bound, sol.Objective, opt)
	}
	// The reported objective is the plan's, on the fine grid: the makespan
	// term included.
	got, tau := e.value(sol.Count)
	exact, _ := new(big.Float).Quo(got, new(big.Float).SetFloat64(nt)).Float64()
	slack := 0.0
	for j := range p.Jobs {
		slack += e.slack(j) / nt
	}
	if math.Abs(sol.Objective-exact) > slack || sol.Makespan != tau || sol.Objective > sol.Welfare-c.k*tau*(1-1e-12) {
		t.Fatalf("objective %v, welfare %v, makespan %v; the plan's exact objective %v (slack %g), makespan %v",
			sol.Objective, sol.Welfare, sol.Makespan, exact, slack, tau)
	}
}

// TestCurveBreakpoints: the piecewise log is exact at its breakpoints, so
// f(1) = 0 and a finished job weighs nothing even at p_j = MaxPriority.
func TestCurveBreakpoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < 2000; it++ {
		bp := []float64{0}
		for len(bp) < 2+rng.IntN(6) {
			bp = append(bp, bp[len(bp)-1]+(1-bp[len(bp)-1])*rng.Float64())
		}
		bp = append(bp, 1)
		var c config
		if err := (&Config{Breakpoints: bp}).resolve(&c); err != nil {
			continue // a draw repeated a breakpoint
		}
		for i, b := range c.bp {
			if got := c.curve(b); got != c.bpLogs[i] {
				t.Fatalf("breakpoints %v: f(%v) = %v, want %v", bp, b, got, c.bpLogs[i])
			}
		}
	}
	p := &Problem{GPUs: 1, Round: 50, Config: Config{Rounds: 2, Breakpoints: []float64{0, 0.052, 1}}, Jobs: []Job{
		{ID: 1, GPUs: 1, Epochs: 10, Progress: 9, MeanEpoch: 60, Remaining: 50, FairFinish: 1e-200},
		{ID: 2, GPUs: 1, Epochs: 10, Progress: 2, MeanEpoch: 60, Remaining: 480, FairFinish: 1e9},
	}}
	sol, err := Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Priority[0] != MaxPriority || sol.Count[0] != 1 || sol.Count[1] != 1 || sol.Status != Optimal || math.Abs(sol.Welfare) > 1 {
		t.Fatalf("got %v counts %v priorities %v welfare %v", sol.Status, sol.Count, sol.Priority, sol.Welfare)
	}
}
