package market

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestSolveDeadline: an expired context still yields a feasible plan (the
// FTF lower bounds, packed) with status Feasible and a finite bound, never
// an error, for a problem under WatchedCells; and the bound is above the
// optimum found without a deadline. A larger problem fails with
// ErrTimeLimit instead of building its tables past the deadline.
func TestSolveDeadline(t *testing.T) {
	big := traceProblem(t, 128, 460, 2, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Solve(ctx, big); !errors.Is(err, ErrTimeLimit) {
		t.Errorf("460 jobs, past the deadline: %v, want ErrTimeLimit", err)
	}
	for _, scale := range []float64{1, 4} {
		p := traceProblem(t, 128, 150, 2, scale)
		if cells := len(p.Jobs) * (20 + 1); cells >= WatchedCells {
			t.Fatalf("%d cells: not a problem under WatchedCells", cells)
		}
		full, err := Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		sol, err := Solve(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if sol.Status != Feasible || sol.Relaxed != full.Relaxed || math.IsInf(sol.Bound, 0) || sol.Bound < full.Objective-1e-9*math.Abs(full.Objective) {
			t.Fatalf("scale %v: deadline plan %v relaxed=%v bound %v; full optimum %v", scale, sol.Status, sol.Relaxed, sol.Bound, full.Objective)
		}
		if sol.Objective > full.Objective+1e-9*math.Abs(full.Objective) {
			t.Fatalf("deadline plan %v beats the optimum %v", sol.Objective, full.Objective)
		}
		for r, js := range sol.Rounds {
			used := 0
			for _, j := range js {
				used += p.Jobs[j].GPUs
			}
			for _, j := range sol.Backfill[r] {
				used += p.Jobs[j].GPUs
			}
			if used > p.GPUs {
				t.Fatalf("round %d uses %d GPUs", r, used)
			}
		}
	}
}

// TestSolveAllocations: a reused workspace plans without allocating.
func TestSolveAllocations(t *testing.T) {
	for _, scale := range []float64{1, 4} {
		p := traceProblem(t, 32, 120, 3, scale)
		ws := NewWorkspace()
		if _, err := ws.Solve(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(10, func() { ws.Solve(context.Background(), p) }); n != 0 {
			t.Fatalf("scale %v: %v allocations per solve", scale, n)
		}
	}
}

// TestSolveInfeasible: with NoRelax, an infeasible FTF program is reported
// as such, with an empty plan.
func TestSolveInfeasible(t *testing.T) {
	p := &Problem{GPUs: 2, Config: Config{Rounds: 2, NoRelax: true}, Jobs: []Job{
		{ID: 1, GPUs: 2, Epochs: 10, MeanEpoch: 100, Remaining: 1000, FairFinish: 100},
	}}
	sol, err := Solve(context.Background(), p)
	if err != nil || sol.Status != Infeasible || sol.Count[0] != 0 || len(sol.Rounds[0]) != 0 || len(sol.Backfill[0]) != 0 {
		t.Fatalf("got %+v, %v", sol, err)
	}
	p.Config.NoRelax = false
	sol, _ = Solve(context.Background(), p)
	if sol.Status != Optimal || !sol.Relaxed || sol.Count[0] != 2 {
		t.Fatalf("relaxed: %v relaxed=%v counts %v", sol.Status, sol.Relaxed, sol.Count)
	}
}

// TestValidate: every invalid value is a *FieldError naming its Go field
// (and the job, by index and ID), wrapping the sentinel, and the message
// names it once.
func TestValidate(t *testing.T) {
	ok := Job{ID: 7, GPUs: 1, Epochs: 3, MeanEpoch: 10, Remaining: 30, FairFinish: 100}
	cases := []struct {
		name  string
		edit  func(*Problem)
		job   int // −1: a field of the Problem
		field string
		want  error
	}{
		{"gpus", func(p *Problem) { p.GPUs = 0 }, -1, "GPUs", ErrInvalid},
		{"rounds", func(p *Problem) { p.Config.Rounds = -1 }, -1, "Config.Rounds", ErrInvalid},
		{"too many rounds", func(p *Problem) { p.Config.Rounds = MaxRounds + 1 }, -1, "Config.Rounds", ErrLimit},
		{"capacity", func(p *Problem) { p.GPUs = 1 << 20; p.Jobs[0].GPUs = 1 }, -1, "GPUs", ErrLimit},
		{"round length", func(p *Problem) { p.Config.RoundSeconds = -1 }, -1, "Config.RoundSeconds", ErrInvalid},
		{"NaN k", func(p *Problem) { p.Config.K = math.NaN() }, -1, "Config.K", ErrInvalid},
		{"k·remaining overflows", func(p *Problem) { p.Config.K = 1e299 }, -1, "Config.K", ErrInvalid},
		{"lambda", func(p *Problem) { p.Config.Lambda = math.Inf(1) }, -1, "Config.Lambda", ErrInvalid},
		{"rho max", func(p *Problem) { p.Config.RhoMax = -2 }, -1, "Config.RhoMax", ErrInvalid},
		{"urgent power", func(p *Problem) { p.Config.UrgentPower = -2 }, -1, "Config.UrgentPower", ErrInvalid},
		{"log zero", func(p *Problem) { p.Config.LogZero = 1 }, -1, "Config.LogZero", ErrInvalid},
		{"gap", func(p *Problem) { p.Config.Gap = 1 }, -1, "Config.Gap", ErrInvalid},
		{"max nodes", func(p *Problem) { p.Config.MaxNodes = -1 }, -1, "Config.MaxNodes", ErrInvalid},
		{"round", func(p *Problem) { p.Round = MaxRound + 1 }, -1, "Round", ErrInvalid},
		{"too few breakpoints", func(p *Problem) { p.Config.Breakpoints = []float64{0} }, -1, "Config.Breakpoints", ErrInvalid},
		{"breakpoints", func(p *Problem) { p.Config.Breakpoints = []float64{0, 0.5, 0.5, 1} }, -1, "Config.Breakpoints[2]", ErrInvalid},
		{"last breakpoint", func(p *Problem) { p.Config.Breakpoints = []float64{0, 0.5} }, -1, "Config.Breakpoints[1]", ErrInvalid},
		{"log mode", func(p *Problem) { p.Config.Log = 9 }, -1, "Config.Log", ErrInvalid},
		{"width", func(p *Problem) { p.Jobs[0].GPUs = 5 }, 0, "GPUs", ErrInvalid},
		{"epochs", func(p *Problem) { p.Jobs[0].Epochs = 0 }, 0, "Epochs", ErrInvalid},
		{"progress", func(p *Problem) { p.Jobs[0].Progress = 4 }, 0, "Progress", ErrInvalid},
		{"mean epoch", func(p *Problem) { p.Jobs[0].MeanEpoch = math.Inf(1) }, 0, "MeanEpoch", ErrInvalid},
		{"remaining", func(p *Problem) { p.Jobs[0].Remaining = -1 }, 0, "Remaining", ErrInvalid},
		{"fair finish", func(p *Problem) { p.Jobs[0].FairFinish = 0 }, 0, "FairFinish", ErrInvalid},
		{"duplicate", func(p *Problem) { p.Jobs = append(p.Jobs, p.Jobs[0]) }, 1, "ID", ErrInvalid},
	}
	for _, c := range cases {
		p := &Problem{GPUs: 4, Jobs: []Job{ok}}
		c.edit(p)
		_, err := Solve(context.Background(), p)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Job != c.job || fe.Field != c.field || !errors.Is(err, c.want) {
			t.Errorf("%s: got %v (%+v), want job %d field %q wrapping %v", c.name, err, fe, c.job, c.field, c.want)
			continue
		}
		prefix := c.field + ": "
		if c.job >= 0 {
			prefix = "job 7: " + prefix
			if fe.ID != 7 {
				t.Errorf("%s: ID %d, want 7", c.name, fe.ID)
			}
		}
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || strings.Count(msg, c.field+": ") != 1 {
			t.Errorf("%s: %q does not start with %q or names the field more than once", c.name, msg, prefix)
		}
	}
}

// TestHugeK: a makespan weight near the limit dominates the objective and
// is not lost in the exact arithmetic (k·τ near 1.8e308 used to overflow it
// and the objective came back as the welfare alone).
func TestHugeK(t *testing.T) {
	for _, k := range []float64{1e-3, 1e200, 1e296, MaxPriority / 8000} {
		p := &Problem{GPUs: 2, Config: Config{K: k}, Jobs: []Job{
			{ID: 1, GPUs: 1, Epochs: 50, MeanEpoch: 100, Remaining: 5000, FairFinish: 6000},
			{ID: 2, GPUs: 2, Epochs: 80, MeanEpoch: 100, Remaining: 8000, FairFinish: 9000},
		}}
		sol, err := Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("k = %g: %v", k, err)
		}
		want := sol.Welfare - k*sol.Makespan
		if sol.Makespan <= 0 {
			t.Fatalf("k = %g: makespan %g: the term is not exercised", k, sol.Makespan)
		}
		if sol.Status != Optimal || math.Abs(sol.Objective-want) > 1e-12*math.Abs(want) {
			t.Errorf("k = %g: %v objective %g, welfare − k·makespan = %g", k, sol.Status, sol.Objective, want)
		}
	}
}

// TestHugePriorityRegressions: the benchmark suite's instances where a job
// far behind its fair share weighs p_j = ρ̂^λ ≈ 1e17–1e22 next to jobs
// weighing about 1. The float64 solver lost the other jobs' welfare to
// rounding and returned worse plans, marked optimal. The references are
// COIN-OR CBC's on the authors' MILP (bench/cmd/orrery-bench, planner);
// orrery must reach them to 1e-6 (the suite's tolerance), proving optimality.
func TestHugePriorityRegressions(t *testing.T) {
	cases := []struct {
		name string
		p    *Problem
		cbc  float64 // CBC's objective (proven optimal unless noted)
	}{
		{"16 jobs, 8 GPUs, 20 rounds, job 0's FT*÷100", func() *Problem {
			p := traceInstance(t, specs[32], 8, 16, 30, 20, 4, 1)
			p.Jobs[0].FairFinish /= 100
			return p
		}(), -10.67225224065},
		{"120-job trace on 32 GPUs (CBC: feasible, not proven)", traceProblem(t, 32, 120, 1, 1), -10.33117},
		{"460-job trace on 128 GPUs", traceProblem(t, 128, 460, 1, 1), -13.48690},
	}
	for _, c := range cases {
		sol, err := Solve(context.Background(), c.p)
		if err != nil {
			t.Fatal(err)
		}
		huge := 0.0
		for _, pr := range sol.Priority {
			huge = max(huge, pr)
		}
		if !sol.Relaxed || huge < 1e17 {
			t.Fatalf("%s: relaxed %v, largest priority %g: not the instance", c.name, sol.Relaxed, huge)
		}
		if sol.Status != Optimal || sol.Objective < c.cbc-1e-6*math.Abs(c.cbc) || sol.Bound != sol.Objective {
			t.Errorf("%s: %v objective %.10g (bound %.10g), CBC %.10g", c.name, sol.Status, sol.Objective, sol.Bound, c.cbc)
		}
		t.Logf("%s: objective %.10g, CBC %.10g", c.name, sol.Objective, c.cbc)
	}
}

// wideProblem is a wide-job instance whose root counts do not pack, so that
// the configuration LP, its heuristic and the Lagrangian bound all run:
// 24 jobs on 10 GPUs, widths {1,2,4,8}, 10 rounds.
func wideProblem(t *testing.T, seed uint64) *Problem {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 77))
	for {
		p := randomProblemOn(rng, 24, 10, 10, []int{1, 2, 4, 8})
		if len(p.Jobs) < 16 || p.Config.Rounds < 8 {
			continue
		}
		ws := NewWorkspace()
		if _, err := ws.Solve(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if ws.lag.active {
			return p
		}
	}
}

// TestSolveDeadlineWide: on an instance the LP is needed for, an expired
// context or one that ends mid-search still gives a plan that fits the
// cluster, status Feasible unless it was proven, and a bound at least the
// optimum.
func TestSolveDeadlineWide(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		p := wideProblem(t, seed)
		full, err := Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if full.Status != Optimal {
			t.Fatalf("seed %d: %v without a deadline", seed, full.Status)
		}
		for _, d := range []time.Duration{0, 200 * time.Microsecond, 2 * time.Millisecond} {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			sol, err := Solve(ctx, p)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-9 * math.Abs(full.Objective)
			if sol.Objective > full.Objective+tol || sol.Bound < full.Objective-tol || (sol.Status == Optimal && math.Abs(sol.Objective-full.Objective) > tol) {
				t.Fatalf("seed %d, deadline %v: %v objective %v bound %v; optimum %v", seed, d, sol.Status, sol.Objective, sol.Bound, full.Objective)
			}
			for r, js := range sol.Rounds {
				used := 0
				for _, j := range append(append([]int(nil), js...), sol.Backfill[r]...) {
					used += p.Jobs[j].GPUs
				}
				if used > p.GPUs {
					t.Fatalf("seed %d, deadline %v: round %d uses %d GPUs", seed, d, r, used)
				}
			}
		}
	}
}

// TestSolveAllocationsWide: the LP, the heuristic and the bound allocate
// nothing on a reused workspace either.
func TestSolveAllocationsWide(t *testing.T) {
	p := wideProblem(t, 4)
	ws := NewWorkspace()
	if _, err := ws.Solve(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() { ws.Solve(context.Background(), p) }); n != 0 {
		t.Fatalf("%v allocations per solve", n)
	}
}
