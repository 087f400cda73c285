package mip

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func needCBC(t *testing.T) {
	t.Helper()
	if !Available() {
		t.Skip("cbc not on PATH (Debian: apt-get install coinor-cbc)")
	}
}

// bruteKnapsack is the optimum of knapsack(v, w, capacity) by enumeration.
func bruteKnapsack(v, w []float64, capacity float64) float64 {
	best := math.Inf(-1)
	for mask := 0; mask < 1<<len(v); mask++ {
		val, wt := 0.0, 0.0
		for i := range v {
			if mask&(1<<i) != 0 {
				val, wt = val+v[i], wt+w[i]
			}
		}
		if wt <= capacity {
			best = max(best, val)
		}
	}
	return best + 0.5*2 + 3 // the slack at its bound, f at its floor
}

func TestSolveKnapsacks(t *testing.T) {
	needCBC(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 5 {
		n := 6 + k
		v, w := make([]float64, n), make([]float64, n)
		sum := 0.0
		for i := range v {
			v[i], w[i] = float64(1+rng.IntN(30)), float64(1+rng.IntN(20))
			sum += w[i]
		}
		capacity := math.Floor(sum / 2)
		m := knapsack(v, w, capacity)
		m.ObjConst = 10
		res, err := Solve(context.Background(), m, Options{TimeLimit: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		want := bruteKnapsack(v, w, capacity) + 10
		if res.Status != Optimal || math.Abs(res.Objective-want) > 1e-6 || math.Abs(res.Bound-want) > 1e-6 {
			t.Fatalf("knapsack %d: %v objective %v bound %v, want %v", k, res.Status, res.Objective, res.Bound, want)
		}
		if v := m.Check(res.Values, 1e-7, 1e-6); len(v) != 0 {
			t.Fatalf("knapsack %d: CBC's solution violates %v", k, v)
		}
	}
}

func TestSolveInfeasible(t *testing.T) {
	needCBC(t)
	m := &Model{}
	x := m.Add("x", Binary, 0, 1)
	y := m.Add("y", Binary, 0, 1)
	m.Obj = []Term{{x, 1}}
	m.Constrain("both", []Term{{x, 1}, {y, 1}}, GE, 1.5)
	m.Constrain("one", []Term{{x, 1}, {y, 1}}, LE, 1.2)
	res, err := Solve(context.Background(), m, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Infeasible || res.Values != nil {
		t.Fatalf("status %v values %v, want infeasible without values", res.Status, res.Values)
	}
}

func TestSolveMissingBinary(t *testing.T) {
	m := knapsack([]float64{1}, []float64{1}, 1)
	if _, err := Solve(context.Background(), m, Options{Binary: "no-such-solver-orrery"}); err == nil {
		t.Fatal("no error for a missing solver")
	}
}

func TestParseLog(t *testing.T) {
	m := &Model{Maximize: true, ObjConst: 1}
	res := &Result{Bound: math.NaN(), Log: `Cbc0010I After 100 nodes, 3 on tree, 10.331175 best solution, best possible 10.331003 (1.00 seconds)
Cbc0005I Partial search - best objective 10.331175 (best possible 10.331104), took 147027 iterations and 12016 nodes (59.83 seconds)
Result - Stopped on time limit

Objective value:                10.33117525
Lower bound:                    10.331
Enumerated nodes:               12016
`}
	parseLog(res, m)
	if res.Bound != -10.331104+1 || res.Nodes != 12016 {
		t.Fatalf("bound %v nodes %d", res.Bound, res.Nodes)
	}
	// No incumbent yet: "best possible" still bounds; 1e+50 is CBC's
	// "none".
	res = &Result{Bound: math.NaN(), Log: "Cbc0010I After 200 nodes, 134 on tree, 1e+50 best solution, best possible 13.4869 (14.17 seconds)\nLower bound: 13.487\n"}
	parseLog(res, &Model{})
	if res.Bound != 13.4869 {
		t.Fatalf("bound %v", res.Bound)
	}
	res = &Result{Bound: math.NaN(), Log: "Lower bound:  -2.5\n"}
	parseLog(res, &Model{})
	if res.Bound != -2.5 {
		t.Fatalf("bound from the summary: %v", res.Bound)
	}
}
