package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/mip"
	"github.com/orrery/orrery/internal/bench/shockwave"
	"github.com/orrery/orrery/internal/eval/trace"
)

// plannerCase is one planner instance.
type plannerCase struct {
	name  string
	setup trace.Setup
	in    shockwave.Instance
	gate  bool // small enough for CBC to prove optimality: orrery must equal it
	smoke bool // in the CI subset
	// behind divides job 0's FT* (0: leave it): a job far behind its fair
	// share, whose relaxed-path priority ρ̂^λ is enormous (about 1e20).
	behind float64
}

func plannerCases(smoke bool) []plannerCase {
	s := trace.Setups()
	cases := []plannerCase{
		{name: "12 jobs, 8 GPUs, 10 rounds", setup: s[0], in: shockwave.Instance{Jobs: 12, GPUs: 8, Rounds: 10, Seed: 1}, gate: true, smoke: true},
		{name: "12 jobs, 8 GPUs, 10 rounds, FT*×4", setup: s[0], in: shockwave.Instance{Jobs: 12, GPUs: 8, Rounds: 10, Seed: 1, FairScale: 4}, gate: true, smoke: true},
		{name: "16 jobs, 8 GPUs, 20 rounds", setup: s[0], in: shockwave.Instance{Jobs: 16, GPUs: 8, Rounds: 20, Seed: 2, Offset: 30}, gate: true, smoke: true},
		{name: "16 jobs, 8 GPUs, 20 rounds, FT*×4", setup: s[0], in: shockwave.Instance{Jobs: 16, GPUs: 8, Rounds: 20, Seed: 2, Offset: 30, FairScale: 4}, gate: true, smoke: true},
		// Priorities spanning 20 orders of magnitude: engine/shockwave/market compares
		// objectives exactly, so the small jobs' welfare is not lost to
		// rounding against the huge term.
		{name: "16 jobs, 8 GPUs, 20 rounds, one job far behind (FT*÷100)", setup: s[0], in: shockwave.Instance{Jobs: 16, GPUs: 8, Rounds: 20, Seed: 4, Offset: 30}, gate: true, smoke: true, behind: 100},
	}
	for _, st := range s {
		for _, fs := range []float64{1, 4} {
			name := fmt.Sprintf("%d GPUs, every job of the %s-job trace", st.GPUs, strings.SplitN(st.Trace, "_", 2)[0])
			if fs != 1 {
				name += ", FT*×4"
			}
			cases = append(cases, plannerCase{name: name, setup: st, in: shockwave.Instance{FairScale: fs}})
		}
	}
	if !smoke {
		return cases
	}
	var out []plannerCase
	for _, c := range cases {
		if c.smoke {
			out = append(out, c)
		}
	}
	return out
}

// PlannerRow compares orrery and CBC on one instance.
type PlannerRow struct {
	Instance string  `json:"instance"`
	Jobs     int     `json:"jobs"`
	GPUs     int     `json:"gpus"`
	Rounds   int     `json:"rounds"`
	K        float64 `json:"k"`

	// orrery
	Path       string      `json:"orrery_path"` // fair or relaxed
	Status     string      `json:"orrery_status"`
	Time       bench.Stats `json:"orrery_cpu_seconds"`
	Objective  float64     `json:"orrery_objective"`
	Welfare    float64     `json:"orrery_welfare"`
	Makespan   float64     `json:"orrery_makespan_s"`
	LPFeasible bool        `json:"orrery_plan_feasible_in_lp"`
	LPObj      float64     `json:"orrery_plan_lp_objective"` // the LP's objective at orrery's plan
	Violations []string    `json:"orrery_plan_violations,omitempty"`

	// CBC (one run per program; the fair attempt first, as the authors)
	CBCPath      string  `json:"cbc_path"` // the program CBC ended on; "" if undecided
	CBCStatus    string  `json:"cbc_status"`
	CBCWall      float64 `json:"cbc_wall_seconds"` // both attempts
	CBCCPU       float64 `json:"cbc_cpu_seconds"`
	CBCObjective float64 `json:"cbc_objective"`       // the LP's objective at CBC's solution
	CBCPlanValue float64 `json:"cbc_plan_objective"`  // CBC's rounds scored by counts (orrery's program)
	CBCBound     float64 `json:"cbc_bound"`           // CBC's bound on the optimum
	CBCGap       float64 `json:"cbc_gap"`             // relative, as CBC reports it
	CBCFeasible  bool    `json:"cbc_plan_feasible"`   // CBC's rounds pass orrery's program
	CBCLPOk      bool    `json:"cbc_solution_in_lp"`  // CBC's values pass the LP's rows (tolerance 1e-6)
	CBCNote      string  `json:"cbc_note,omitempty"`  // why CBC has no figure
	Difference   float64 `json:"orrery_minus_cbc"`    // orrery − CBC plan value
	Nodes        int     `json:"cbc_nodes,omitempty"` //
}

// MarshalJSON writes r with null for the figures CBC did not produce.
func (r PlannerRow) MarshalJSON() ([]byte, error) {
	type plain PlannerRow
	return json.Marshal(struct {
		plain
		CBCObjective bench.Float `json:"cbc_objective"`
		CBCPlanValue bench.Float `json:"cbc_plan_objective"`
		CBCBound     bench.Float `json:"cbc_bound"`
		CBCGap       bench.Float `json:"cbc_gap"`
		Difference   bench.Float `json:"orrery_minus_cbc"`
	}{plain(r), bench.Float(r.CBCObjective), bench.Float(r.CBCPlanValue), bench.Float(r.CBCBound), bench.Float(r.CBCGap), bench.Float(r.Difference)})
}

// tolerance is how close two objectives must be to count as equal.
func tolerance(a, b float64) float64 { return 1e-6 * max(1, math.Abs(a), math.Abs(b)) }

func plannerSection(ctx context.Context, cfg *config) ([]bench.Section, []bench.Gate, error) {
	haveCBC := mip.Available()
	if !haveCBC && cfg.requireCBC {
		return nil, nil, fmt.Errorf("cbc is not on PATH (run bench/install-cbc.sh)")
	}
	cases := plannerCases(cfg.smoke)
	loaded := map[string]*shockwave.Loaded{}
	sec := bench.Section{ID: "planner", Title: "Shockwave planner: orrery's exact solver vs COIN-OR CBC on the authors' program",
		Notes: []string{
			fmt.Sprintf("Both solve the authors' per-round program (scheduler/shockwave.py: x_{j,t} binaries, y_j, the SOS2 λ/z log with breakpoints 0, .2, …, 1, capacity per round, progress, finish-time fairness on the first attempt, − k·max residual). CBC gets it as an LP file (internal/bench/shockwave), one thread, a time limit of %s of CPU, the fair program first and the relaxed one (priorities p_j) when CBC proves the fair one infeasible, as the authors' code does. Instances as engine/shockwave/market's benchmarks: the authors' traces, throughput tables and configurations, every job active with seeded progress; FT*×4 relaxes the targets so that the fair path is feasible; FT*÷100 puts one job far behind its fair share, so that its relaxed-path priority ρ̂^λ is about 1e20. orrery's time is the CPU time of market.Workspace.Solve (median of %d rounds, min–max); CBC's is the CPU time of one run (both attempts). *CBC bound* is CBC's bound on the optimum, also when it found no solution. Objectives are Welfare − k·Makespan of the same program: orrery's plan is scored by the LP's own objective and checked against every LP row; CBC's plan is read back and checked and scored by orrery's count formulation.", cfg.cbcTime, cfg.rounds),
		},
		Header: []string{"instance", "k", "path", "orrery (CPU)", "orrery objective", "CBC (CPU)", "CBC status (gap)", "CBC objective", "CBC bound", "orrery − CBC"},
	}
	var rows []PlannerRow
	var gates []bench.Gate
	for _, pc := range cases {
		l := loaded[pc.setup.Trace]
		if l == nil {
			var err error
			if l, err = shockwave.Load(filepath.Join(cfg.root, "internal", "eval", "data", "shockwave"), pc.setup); err != nil {
				return nil, nil, err
			}
			loaded[pc.setup.Trace] = l
		}
		p, err := l.Problem(pc.in)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pc.name, err)
		}
		if pc.behind > 0 {
			p.Jobs[0].FairFinish /= pc.behind
		}
		fmt.Fprintf(os.Stderr, "  planner: %s\n", pc.name)
		row, gs, err := comparePlanner(ctx, cfg, pc, p, haveCBC)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pc.name, err)
		}
		rows = append(rows, row)
		gates = append(gates, gs...)
		cbcTime, status, obj, bound, diff := "–", row.CBCNote, "–", "–", "–"
		if row.CBCStatus != "" {
			cbcTime = bench.Duration(row.CBCCPU)
			status = row.CBCStatus
			if row.CBCStatus == mip.Feasible.String() && !math.IsNaN(row.CBCGap) {
				status += fmt.Sprintf(" (%.3g%%)", 100*row.CBCGap)
			}
			if row.CBCPath != "" && row.CBCPath != row.Path {
				status += ", " + row.CBCPath + " path"
			}
			if !math.IsNaN(row.CBCPlanValue) {
				obj = fmt.Sprintf("%.7g", row.CBCPlanValue)
				diff = fmt.Sprintf("%.3g", row.Difference)
			}
			if !math.IsNaN(row.CBCBound) {
				bound = fmt.Sprintf("%.7g", row.CBCBound)
			}
		}
		sec.Rows = append(sec.Rows, []string{pc.name, fmt.Sprintf("%g", row.K), row.Path, bench.Spread(row.Time),
			fmt.Sprintf("%.7g", row.Objective), cbcTime, status, obj, bound, diff})
	}
	sec.Data = rows
	return []bench.Section{sec}, gates, nil
}

func comparePlanner(ctx context.Context, cfg *config, pc plannerCase, p *market.Problem, haveCBC bool) (PlannerRow, []bench.Gate, error) {
	nan := math.NaN()
	row := PlannerRow{Instance: pc.name, Jobs: len(p.Jobs), GPUs: p.GPUs, CBCObjective: nan, CBCPlanValue: nan, CBCBound: nan, CBCGap: nan, Difference: nan}
	run, err := solveOrrery(ctx, cfg, p)
	if err != nil {
		return row, nil, err
	}
	sol, rounds, path, pg := run.sol, run.rounds, run.path, run.pg
	row.Time = run.time
	row.Status, row.Objective, row.Welfare, row.Makespan = sol.Status.String(), sol.Objective, sol.Welfare, sol.Makespan
	row.Path = path.String()
	row.Rounds, row.K = pg.Params.T, pg.Params.K

	// orrery's plan in the authors' program.
	x, err := pg.Assign(rounds)
	if err != nil {
		return row, nil, err
	}
	viol := pg.Model.Check(x, 1e-9, 0)
	row.LPFeasible = len(viol) == 0
	for i, v := range viol {
		if i == 5 {
			row.Violations = append(row.Violations, fmt.Sprintf("... %d in all", len(viol)))
			break
		}
		row.Violations = append(row.Violations, v.String())
	}
	row.LPObj = pg.Model.Objective(x)
	var gates []bench.Gate
	name := "planner " + pc.name
	lpOK := row.LPFeasible && math.Abs(row.LPObj-row.Objective) <= 1e-9*max(1, math.Abs(row.Objective))
	gates = append(gates, bench.Gate{Name: name + ": orrery's plan is feasible in the authors' program and scores its reported objective there",
		Pass: lpOK, Value: row.LPObj, Threshold: row.Objective,
		Detail: fmt.Sprintf("feasible %s, LP objective %.10g vs %.10g", yesNo(row.LPFeasible), row.LPObj, row.Objective)})

	if !haveCBC {
		row.CBCNote = "cbc not installed"
		return row, gates, nil
	}
	// CBC: the fair program first, then the relaxed one if that is
	// proven infeasible.
	var lpDir string
	if cfg.keepLP {
		lpDir = filepath.Join(cfg.out, "lp")
	}
	stem := strings.NewReplacer(" ", "", ",", "_", "*", "", "×", "x").Replace(pc.name)
	var res *mip.Result
	var cpg *shockwave.Program
	for _, try := range []shockwave.Path{shockwave.Fair, shockwave.Relaxed} {
		cpg = pg
		if try != path {
			if cpg, err = shockwave.Build(p, try); err != nil {
				return row, nil, err
			}
		}
		r, err := mip.Solve(ctx, cpg.Model, mip.Options{TimeLimit: cfg.cbcTime, Dir: lpDir, Name: stem + "_" + try.String()})
		if err != nil {
			return row, nil, err
		}
		row.CBCWall += r.Wall.Seconds()
		row.CBCCPU += r.CPU.Seconds()
		res = r
		if r.Status != mip.Infeasible {
			row.CBCPath = try.String()
			if r.Status == mip.NoSolution && try == shockwave.Fair {
				row.CBCPath = "" // feasibility of the fair program undecided
			}
			break
		}
	}
	row.CBCStatus, row.CBCBound, row.CBCGap, row.Nodes = res.Status.String(), res.Bound, res.Gap, res.Nodes
	if res.Values != nil {
		row.CBCObjective = res.Objective
		row.CBCLPOk = len(cpg.Model.Check(res.Values, 1e-6, 1e-6)) == 0
		v, err := cpg.Evaluate(cpg.Plan(res.Values))
		row.CBCFeasible = err == nil
		if err == nil {
			row.CBCPlanValue = v.Objective
			row.Difference = row.Objective - v.Objective
		} else {
			row.CBCNote = err.Error()
		}
	}

	samePath := row.CBCPath == row.Path
	if row.CBCPath != "" {
		gates = append(gates, bench.Gate{Name: name + ": CBC takes the same path (fair or relaxed) as orrery",
			Pass: samePath, Value: b2f(samePath), Threshold: 1, Detail: fmt.Sprintf("orrery %s, CBC %s", row.Path, row.CBCPath)})
	}
	if res.Values != nil {
		gates = append(gates, bench.Gate{Name: name + ": CBC's plan is feasible in orrery's program",
			Pass: row.CBCFeasible, Value: b2f(row.CBCFeasible), Threshold: 1, Detail: yesNo(row.CBCFeasible) + " " + row.CBCNote})
	}
	if samePath && row.CBCFeasible {
		tol := tolerance(row.Objective, row.CBCPlanValue)
		g := bench.Gate{Name: name + ": orrery's objective ≥ CBC's plan's (orrery is optimal)",
			Value: row.Difference, Threshold: -tol, Pass: row.Difference >= -tol,
			Detail: fmt.Sprintf("orrery %.10g, CBC %.10g", row.Objective, row.CBCPlanValue)}
		gates = append(gates, g)
	}
	if samePath && !math.IsNaN(row.CBCBound) {
		tol := tolerance(row.Objective, row.CBCBound)
		ok := row.Objective <= row.CBCBound+tol
		gates = append(gates, bench.Gate{Name: name + ": orrery's objective ≤ CBC's bound",
			Value: row.Objective, Threshold: row.CBCBound + tol, Pass: ok,
			Detail: fmt.Sprintf("orrery %.10g, bound %.10g", row.Objective, row.CBCBound)})
	}
	if pc.gate {
		g := bench.Gate{Name: name + ": orrery's objective equals CBC's proven optimum (relative 1e-6)"}
		if res.Status != mip.Optimal || !samePath || !row.CBCFeasible {
			g.Skipped = true
			g.Detail = "CBC did not prove optimality: " + res.Status.String()
		} else {
			g.Value, g.Threshold = math.Abs(row.Difference), tolerance(row.Objective, row.CBCPlanValue)
			g.Pass = g.Value <= g.Threshold
			g.Detail = fmt.Sprintf("orrery %.10g, CBC %.10g (CBC %s CPU)", row.Objective, row.CBCPlanValue, bench.Duration(row.CBCCPU))
		}
		gates = append(gates, g)
	}
	return row, gates, nil
}

// orreryRun is orrery's timed solve of a planner instance: its solution,
// its plan's rounds (copied out of the workspace), the path it took, and the
// authors' program on that path, to score the plan and hand to a MILP solver.
type orreryRun struct {
	sol    *market.Solution
	time   bench.Stats
	rounds [][]int
	path   shockwave.Path
	pg     *shockwave.Program
}

// solveOrrery times market.Workspace.Solve on p over cfg.rounds rounds.
func solveOrrery(ctx context.Context, cfg *config, p *market.Problem) (orreryRun, error) {
	ws := market.NewWorkspace()
	var r orreryRun
	samples, err := bench.Interleave(ctx, []bench.Case{{Name: "orrery", Op: func() (err error) {
		r.sol, err = ws.Solve(ctx, p)
		return err
	}}}, bench.Options{Rounds: cfg.rounds, Target: cfg.target})
	if err != nil {
		return r, err
	}
	r.time = bench.Summarize(bench.Times(samples[0]))
	r.rounds = make([][]int, len(r.sol.Rounds))
	for t, js := range r.sol.Rounds {
		r.rounds[t] = slices.Clone(js)
	}
	r.path = shockwave.Fair
	if r.sol.Relaxed {
		r.path = shockwave.Relaxed
	}
	r.pg, err = shockwave.Build(p, r.path)
	return r, err
}
