package market

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// The brute force below is written from the program's statement (package
// doc), independently of the solver: it enumerates every x_{j,t} ∈ {0,1}
// that respects the round capacity, sets each y_j to its largest feasible
// value (both objective terms and the FTF left-hand side improve with y_j),
// interpolates the log through the breakpoints with the λ weights of the
// SOS2 formulation, and checks the FTF constraints literally.

type bruteCfg struct {
	T                              int
	delta, k, lambda, rho, logZero float64
	urgent                         float64
	bp                             []float64
	exact                          bool
}

func bruteConfig(c Config) bruteCfg {
	b := bruteCfg{T: 20, delta: 120, k: 1e-3, lambda: 12, rho: 1, logZero: 1e-6, urgent: 100,
		bp: []float64{0, .2, .4, .6, .8, 1}, exact: c.Log == ExactLog}
	if c.Rounds != 0 {
		b.T = c.Rounds
	}
	if c.RoundSeconds != 0 {
		b.delta = c.RoundSeconds
	}
	if c.K != 0 {
		b.k = c.K
	}
	if c.Lambda != 0 {
		b.lambda = c.Lambda
	}
	if c.RhoMax != 0 {
		b.rho = c.RhoMax
	}
	if c.Breakpoints != nil {
		b.bp = c.Breakpoints
	}
	return b
}

// logPWL interpolates (β_b, ln β_b) with λ weights on the bracketing pair.
func (c bruteCfg) logf(u float64) float64 {
	if c.exact {
		if u >= c.logZero {
			return math.Log(u)
		}
		return math.Log(c.logZero) + (u-c.logZero)/c.logZero
	}
	lv := func(b float64) float64 {
		if b == 0 {
			return math.Log(c.logZero)
		}
		return math.Log(b)
	}
	for i := 0; i+1 < len(c.bp); i++ {
		lo, hi := c.bp[i], c.bp[i+1]
		if u >= lo && u <= hi {
			l := (u - lo) / (hi - lo)
			return (1-l)*lv(lo) + l*lv(hi)
		}
	}
	panic("u outside [0,1]")
}

type bruteResult struct {
	obj     float64
	w, tau  float64
	relaxed bool
	found   bool
}

// evalPlan evaluates the program at x (x[j][t]); ok is false when x breaks a
// capacity constraint or, when ftf is set, an FTF constraint.
func evalPlan(p *Problem, c bruteCfg, x [][]bool, prio []float64, ftf bool) (w, tau float64, ok bool) {
	N := len(p.Jobs)
	for t := 0; t < c.T; t++ {
		used := 0
		for j := 0; j < N; j++ {
			if x[j][t] {
				used += p.Jobs[j].GPUs
			}
		}
		if used > p.GPUs {
			return 0, 0, false
		}
	}
	s := math.Min(1, float64(p.GPUs)/float64(N))
	end := c.delta * float64(p.Round+c.T)
	for j, job := range p.Jobs {
		rounds := 0
		for t := 0; t < c.T; t++ {
			if x[j][t] {
				rounds++
			}
		}
		y := math.Min(float64(rounds)*c.delta/job.MeanEpoch, float64(job.Epochs-job.Progress))
		u := (float64(job.Progress) + y) / float64(job.Epochs)
		w += prio[j] * c.logf(u) / float64(N*c.T)
		resid := math.Max(0, job.Remaining-job.MeanEpoch*y)
		tau = math.Max(tau, resid)
		if ftf && !(end+resid/s <= c.rho*job.FairFinish) {
			return 0, 0, false
		}
	}
	return w, tau, true
}

func brutePriorities(p *Problem, c bruteCfg) []float64 {
	N := len(p.Jobs)
	s := math.Min(1, float64(p.GPUs)/float64(N))
	out := make([]float64, N)
	for j, job := range p.Jobs {
		rho := (c.delta*float64(p.Round) + job.Remaining/s) / job.FairFinish
		out[j] = 1
		if rho > c.rho {
			out[j] = math.Pow(rho, c.lambda)
			if job.Remaining < c.delta {
				out[j] = math.Pow(rho, c.urgent)
			}
		}
	}
	return out
}

// fittingSets lists the sets of jobs (bit j for job j) whose GPUs fit in
// the cluster together: the possible contents of one round.
func fittingSets(p *Problem) []uint {
	N := len(p.Jobs)
	var fits []uint
	for m := uint(0); m < 1<<N; m++ {
		g := 0
		for j := 0; j < N; j++ {
			if m>>j&1 == 1 {
				g += p.Jobs[j].GPUs
			}
		}
		if g <= p.GPUs {
			fits = append(fits, m)
		}
	}
	return fits
}

// bruteForce enumerates every capacity-feasible x.
func bruteForce(p *Problem) bruteResult {
	c := bruteConfig(p.Config)
	N := len(p.Jobs)
	fits := fittingSets(p)
	x := make([][]bool, N)
	for j := range x {
		x[j] = make([]bool, c.T)
	}
	best := func(prio []float64, ftf bool) bruteResult {
		r := bruteResult{obj: math.Inf(-1)}
		var rec func(t int)
		rec = func(t int) {
			if t == c.T {
				if w, tau, ok := evalPlan(p, c, x, prio, ftf); ok {
					if o := w - c.k*tau; o > r.obj {
						r = bruteResult{obj: o, w: w, tau: tau, found: true}
					}
				}
				return
			}
			for _, m := range fits {
				for j := 0; j < N; j++ {
					x[j][t] = m>>j&1 == 1
				}
				rec(t + 1)
			}
		}
		rec(0)
		return r
	}
	ones := make([]float64, N)
	for j := range ones {
		ones[j] = 1
	}
	if r := best(ones, true); r.found {
		return r
	}
	r := best(brutePriorities(p, c), false)
	r.relaxed = true
	return r
}

// randomProblem draws a small instance; about half take the relaxed path.
func randomProblem(rng *rand.Rand, maxJobs, maxRounds, maxGPUs int, widths []int) *Problem {
	M := 1 + rng.IntN(maxGPUs)
	N := 1 + rng.IntN(maxJobs)
	T := 1 + rng.IntN(maxRounds)
	delta := []float64{60, 120, 300}[rng.IntN(3)]
	p := &Problem{GPUs: M, Round: rng.IntN(12), Config: Config{
		Rounds: T, RoundSeconds: delta,
		K:      []float64{1e-3, 1e-5, 1e-1, 10, 1e5}[rng.IntN(5)],
		Lambda: []float64{5, 12, 15}[rng.IntN(3)],
	}}
	if rng.IntN(4) == 0 {
		p.Config.Log = ExactLog
	}
	s := math.Min(1, float64(M)/float64(N))
	for j := 0; j < N; j++ {
		w := widths[rng.IntN(len(widths))]
		for w > M {
			w = widths[rng.IntN(len(widths))]
		}
		E := 1 + rng.IntN(40)
		F := rng.IntN(E + 1)
		// float64() around products keeps arm64 from fusing them, so the
		// instances (and TestPlanDigest) are the same on every host.
		D := 20 + float64(rng.Float64()*400)
		R := rng.Float64() * 1.3 * D * float64(E-F)
		if rng.IntN(8) == 0 {
			R = rng.Float64() * delta // about to finish
		}
		ft := float64(delta*float64(p.Round+T)) + float64(R/s*(0.2+float64(rng.Float64()*1.2))) + float64(rng.Float64()*100)
		p.Jobs = append(p.Jobs, Job{ID: 100 + 7*j, GPUs: w, Epochs: E, Progress: F, MeanEpoch: D, Remaining: R, FairFinish: ft})
	}
	return p
}

// randomProblemOn is randomProblem on exactly M GPUs, with at least two
// jobs and two rounds (packing needs both to be hard).
func randomProblemOn(rng *rand.Rand, maxJobs, maxRounds, M int, widths []int) *Problem {
	for {
		p := randomProblem(rng, maxJobs, maxRounds, M, widths)
		if len(p.Jobs) < 2 || p.Config.Rounds < 2 {
			continue
		}
		// The cluster is M GPUs, the widths redrawn up to M (the jobs'
		// times and targets stay as drawn).
		p.GPUs = M
		for j := range p.Jobs {
			w := widths[rng.IntN(len(widths))]
			for w > M {
				w = widths[rng.IntN(len(widths))]
			}
			p.Jobs[j].GPUs = w
		}
		return p
	}
}

func planX(p *Problem, sol *Solution, T int) [][]bool {
	x := make([][]bool, len(p.Jobs))
	for j := range x {
		x[j] = make([]bool, T)
	}
	for t, js := range sol.Rounds {
		for _, j := range js {
			x[j][t] = true
		}
	}
	return x
}

// TestSolveMatchesBruteForce: the family (up to 6 jobs, 4 rounds,
// 4 GPUs, widths 1/2/4), then widths outside the packing theorem (3 GPUs, or
// 4 on 5–7 GPUs) where the exact packing search decides.
//
// Then the wide-job families where the packing theorem does not hold and
// the configuration LP's bound, its heuristic and its packing certificates
// decide: widths {1,2,4,8}, {1,2,3} and {3,5,6,1} on clusters that are not
// powers of two (7, 10, 13 GPUs). (Priorities up to 1e300 on these widths:
// TestSolveExactHugePriorities, whose brute force is exact.)
func TestSolveMatchesBruteForce(t *testing.T) {
	t.Run("widths124", func(t *testing.T) { testBrute(t, 1, 400, 6, 4, 4, []int{1, 2, 4}, nil, false) })
	t.Run("widths1234", func(t *testing.T) { testBrute(t, 3, 600, 5, 3, 7, []int{1, 2, 3, 4}, nil, false) })
	t.Run("widths1248on10", func(t *testing.T) { testBrute(t, 5, 200, 5, 3, 0, []int{1, 2, 4, 8}, []int{10}, false) })
	t.Run("widths123on7", func(t *testing.T) { testBrute(t, 7, 200, 5, 3, 0, []int{1, 2, 3}, []int{7}, false) })
	t.Run("widths3561on7_10_13", func(t *testing.T) { testBrute(t, 9, 250, 5, 3, 0, []int{3, 5, 6, 1}, []int{7, 10, 13}, false) })
}

// testBrute compares the solver with the brute force on random instances:
// clusters of 1..maxGPUs GPUs, or one of gpus when given; with huge, a few
// jobs get priorities from 1e6 to 1e305 (hugePriorities).
func testBrute(t *testing.T, seed uint64, cases, maxJobs, maxRounds, maxGPUs int, widths, gpus []int, huge bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	ws := NewWorkspace()
	seen := map[bool]int{}
	for it := 0; it < cases; it++ {
		var p *Problem
		if gpus != nil {
			p = randomProblemOn(rng, maxJobs, maxRounds, gpus[rng.IntN(len(gpus))], widths)
		} else {
			p = randomProblem(rng, maxJobs, maxRounds, maxGPUs, widths)
		}
		if huge {
			hugePriorities(rng, p)
		}
		want := bruteForce(p)
		sol, err := ws.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		seen[want.relaxed]++
		c := bruteConfig(p.Config)
		tol := 1e-9*(1+math.Abs(want.w)) + 1e-12*c.k*want.tau
		// Both terms must match, not just their sum: with k = 1e5 the sum
		// is dominated by k·τ and a welfare error would hide in its rounding.
		sameW := math.Abs(sol.Welfare-want.w) <= 1e-9*(1+math.Abs(want.w))
		sameTau := math.Abs(sol.Makespan-want.tau) <= 1e-9*(1+want.tau)
		if sol.Status != Optimal || sol.Relaxed != want.relaxed || !sameW || !sameTau || math.Abs(sol.Objective-want.obj) > tol {
			t.Fatalf("case %d: got %v relaxed=%v obj=%.12g (W=%.12g τ=%g) counts=%v; brute force relaxed=%v obj=%.12g (W=%.12g τ=%g)\n%+v",
				it, sol.Status, sol.Relaxed, sol.Objective, sol.Welfare, sol.Makespan, sol.Count, want.relaxed, want.obj, want.w, want.tau, p)
		}
		// The returned rounds are a feasible x with the reported objective.
		w, tau, ok := evalPlan(p, c, planX(p, sol, c.T), sol.Priority, !sol.Relaxed)
		if !ok || math.Abs((w-c.k*tau)-sol.Objective) > tol {
			t.Fatalf("case %d: plan x infeasible (%v) or objective %.12g != reported %.12g", it, ok, w-c.k*tau, sol.Objective)
		}
		for j, n := range sol.Count {
			got := 0
			for tt := range sol.Rounds {
				for _, i := range sol.Rounds[tt] {
					if i == j {
						got++
					}
				}
			}
			if got != n {
				t.Fatalf("case %d: job %d has %d rounds, count %d", it, j, got, n)
			}
		}
	}
	if seen[false] < cases/8 || seen[true] < cases/8 {
		t.Fatalf("instances do not cover both paths: %v", seen)
	}
}

// hugePriorities puts a few jobs far behind their fair finish time, so that
// the relaxed path weighs them from 1e6 up to MaxPriority (1e20 and 1e300
// among them) next to jobs weighing 1: FT*_j is set so that ρ̂_j^λ (ρ̂^100
// for a job about to finish) hits the target.
func hugePriorities(rng *rand.Rand, p *Problem) {
	c := bruteConfig(p.Config)
	s := math.Min(1, float64(p.GPUs)/float64(len(p.Jobs)))
	targets := []float64{1e6, 1e12, 1e20, 1e20, 1e22, 1e40, 1e100, 1e300, 1e300, 1e305}
	for q := 0; q < 1+rng.IntN(3); q++ {
		j := rng.IntN(len(p.Jobs))
		job := &p.Jobs[j]
		num := float64(c.delta*float64(p.Round)) + job.Remaining/s
		if num <= 0 {
			continue
		}
		power := c.lambda
		if job.Remaining < c.delta {
			power = c.urgent
		}
		rho := math.Pow(targets[rng.IntN(len(targets))], 1/power)
		job.FairFinish = num / rho
	}
}
