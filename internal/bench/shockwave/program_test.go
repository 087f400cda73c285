package shockwave

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/internal/bench/mip"
	"github.com/orrery/orrery/internal/eval/trace"
)

var (
	loadOnce sync.Once
	loaded32 *Loaded
	loadErr  error
)

func load32(t *testing.T) *Loaded {
	t.Helper()
	loadOnce.Do(func() {
		loaded32, loadErr = Load(filepath.Join("..", "..", "..", "internal", "eval", "data", "shockwave"), trace.Setups()[0])
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded32
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*max(1, math.Abs(a), math.Abs(b))
}

// solved is orrery's plan of in and the program of the path it took.
func solved(t *testing.T, in Instance) (*market.Solution, *Program) {
	t.Helper()
	p, err := load32(t).Problem(in)
	if err != nil {
		t.Fatal(err)
	}
	sol, err := market.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	path := Fair
	if sol.Relaxed {
		path = Relaxed
	}
	pg, err := Build(p, path)
	if err != nil {
		t.Fatal(err)
	}
	return sol, pg
}

// orrery's plans are feasible in the authors' program, and the program's
// objective at them is the objective orrery reports, on both paths.
func TestOrreryPlanInAuthorsProgram(t *testing.T) {
	paths := map[Path]int{}
	for _, in := range []Instance{
		{Jobs: 12, GPUs: 8, Rounds: 10, Seed: 1},
		{Jobs: 12, GPUs: 8, Rounds: 10, Seed: 1, FairScale: 4},
		{Jobs: 16, GPUs: 8, Rounds: 20, Seed: 2, Offset: 30},
		{Jobs: 16, GPUs: 8, Rounds: 20, Seed: 2, Offset: 30, FairScale: 4},
		{}, // the whole 120-job trace on 32 GPUs
		{FairScale: 4},
	} {
		sol, pg := solved(t, in)
		paths[pg.Path]++
		if sol.Status != market.Optimal {
			t.Fatalf("%+v: status %v", in, sol.Status)
		}
		if pg.Path == Relaxed {
			for j, p := range pg.Priority {
				if !near(p, sol.Priority[j], 1e-12) {
					t.Fatalf("%+v: priority of job %d: %v here, %v in market", in, j, p, sol.Priority[j])
				}
			}
		}
		x, err := pg.Assign(sol.Rounds)
		if err != nil {
			t.Fatal(err)
		}
		if v := pg.Model.Check(x, 1e-9, 0); len(v) != 0 {
			t.Fatalf("%+v (%v path): orrery's plan violates %v", in, pg.Path, v)
		}
		if obj := pg.Model.Objective(x); !near(obj, sol.Objective, 1e-9) {
			t.Fatalf("%+v: program objective %v, market's %v", in, obj, sol.Objective)
		}
		v, err := pg.Evaluate(sol.Rounds)
		if err != nil {
			t.Fatal(err)
		}
		if !near(v.Objective, sol.Objective, 1e-9) || !near(v.Welfare, sol.Welfare, 1e-9) || !near(v.Makespan, sol.Makespan, 1e-9) {
			t.Fatalf("%+v: counts give %+v, market %v %v %v", in, v, sol.Objective, sol.Welfare, sol.Makespan)
		}
		for j, n := range v.Counts {
			if n != sol.Count[j] {
				t.Fatalf("%+v: job %d: %d rounds in the plan, Count %d", in, j, n, sol.Count[j])
			}
		}
	}
	if paths[Fair] == 0 || paths[Relaxed] == 0 {
		t.Fatalf("paths covered: %v; want both", paths)
	}
}

func TestEvaluateRejects(t *testing.T) {
	_, pg := solved(t, Instance{Jobs: 12, GPUs: 8, Rounds: 10, Seed: 1, FairScale: 4})
	if pg.Path != Fair {
		t.Fatalf("path %v, want fair", pg.Path)
	}
	// Tighten job 0's target so that it needs at least one round.
	p := *pg.Problem
	p.Jobs = append([]market.Job(nil), p.Jobs...)
	par := pg.Params
	end := par.Delta * float64(p.Round+par.T)
	s := share(p.GPUs, len(p.Jobs))
	j0 := &p.Jobs[0]
	y1 := pg.epochs(0, 1)
	if y1 <= 0 || j0.Remaining <= j0.MeanEpoch*y1 {
		t.Fatalf("job 0 cannot be made to need a round: %+v", *j0)
	}
	j0.FairFinish = (end + (j0.Remaining-j0.MeanEpoch*y1)/s) / par.RhoMax
	pg, err := Build(&p, Fair)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, len(pg.Problem.Jobs))
	for j := range all {
		all[j] = j
	}
	for name, rounds := range map[string][][]int{
		"over capacity":  {all},
		"twice":          {{0, 0}},
		"unknown job":    {{99}},
		"too many":       make([][]int, par.T+1),
		"nothing (fair)": make([][]int, par.T),
	} {
		if _, err := pg.Evaluate(rounds); !errors.Is(err, ErrInfeasible) {
			t.Errorf("%s: %v, want ErrInfeasible", name, err)
		}
	}
	if _, err := pg.Evaluate([][]int{{0}}); err != nil {
		t.Errorf("one round of job 0: %v", err)
	}
	// Model.Check agrees on both.
	for _, c := range []struct {
		rounds [][]int
		ok     bool
	}{{make([][]int, par.T), false}, {[][]int{{0}}, true}} {
		x, err := pg.Assign(c.rounds)
		if err != nil {
			t.Fatal(err)
		}
		if v := pg.Model.Check(x, 1e-9, 0); (len(v) == 0) != c.ok {
			t.Errorf("Check(%v): %v, want feasible=%v", c.rounds, v, c.ok)
		}
	}
}

// CBC, given the authors' program, finds the optimum orrery finds, and its
// plan is feasible by orrery's count formulation with the same value.
func TestCBCAgrees(t *testing.T) {
	if !mip.Available() {
		t.Skip("cbc not on PATH")
	}
	for _, in := range []Instance{
		{Jobs: 8, GPUs: 4, Rounds: 6, Seed: 3, FairScale: 4},
		{Jobs: 8, GPUs: 4, Rounds: 6, Seed: 3},
	} {
		sol, pg := solved(t, in)
		res, err := mip.Solve(context.Background(), pg.Model, mip.Options{TimeLimit: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != mip.Optimal {
			t.Fatalf("%+v: CBC %v", in, res.Status)
		}
		if !near(res.Objective, sol.Objective, 1e-6) {
			t.Fatalf("%+v (%v): CBC %v, orrery %v", in, pg.Path, res.Objective, sol.Objective)
		}
		v, err := pg.Evaluate(pg.Plan(res.Values))
		if err != nil {
			t.Fatalf("%+v: CBC's plan: %v", in, err)
		}
		if !near(v.Objective, sol.Objective, 1e-6) {
			t.Fatalf("%+v: CBC's plan scores %v by counts, orrery %v", in, v.Objective, sol.Objective)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	p, err := load32(t).Problem(Instance{Jobs: 4, GPUs: 8, Rounds: 4})
	if err != nil {
		t.Fatal(err)
	}
	bad := *p
	bad.Config.Log = market.ExactLog
	if _, err := Build(&bad, Fair); !errors.Is(err, ErrProblem) {
		t.Errorf("exact log: %v", err)
	}
	bad = *p
	bad.Jobs = append([]market.Job(nil), p.Jobs...)
	bad.Jobs[0].MeanEpoch = 0
	if _, err := Build(&bad, Fair); !errors.Is(err, ErrProblem) {
		t.Errorf("zero mean epoch: %v", err)
	}
	if _, err := load32(t).Problem(Instance{Jobs: 120, GPUs: 2}); !errors.Is(err, ErrProblem) {
		t.Errorf("job wider than the cluster: %v", err)
	}
	if _, err := Build(p, Fair); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Program{Problem: p, Params: Params{T: 4}}).Assign(make([][]int, 5)); !errors.Is(err, ErrProblem) {
		t.Errorf("Assign with 5 rounds: %v", err)
	}
}
