package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/mip"
	"github.com/orrery/orrery/internal/bench/shockwave"
)

// FamilyRow compares orrery and HiGHS on one instance of a family.
type FamilyRow struct {
	Family    string      `json:"family"`
	Seed      uint64      `json:"seed"`
	Path      string      `json:"orrery_path"`
	Status    string      `json:"orrery_status"`
	Time      bench.Stats `json:"orrery_cpu_seconds"`
	Objective float64     `json:"orrery_objective"`
	Nodes     int         `json:"orrery_nodes"`
	LPOK      bool        `json:"orrery_plan_feasible_in_lp"`

	HiGHSPath      string      `json:"highs_path"`
	HiGHSStatus    string      `json:"highs_status"`
	HiGHSCPU       float64     `json:"highs_cpu_seconds"` // both attempts, inside milp
	HiGHSPlanValue bench.Float `json:"highs_plan_objective"`
	HiGHSBound     bench.Float `json:"highs_bound"`
	HiGHSGap       bench.Float `json:"highs_gap"`
	HiGHSFeasible  bool        `json:"highs_plan_feasible"`
	Note           string      `json:"note,omitempty"`
	Ratio          bench.Float `json:"highs_over_orrery_cpu"` // NaN (null) without HiGHS
}

// FamilySummary is one family's speed ratio: the median over its seeds of
// HiGHS's CPU time over orrery's.
type FamilySummary struct {
	Family      string      `json:"family"`
	Instances   int         `json:"instances"`
	Optimal     int         `json:"orrery_optimal"`
	HiGHSProven int         `json:"highs_optimal"`
	Ratio       bench.Float `json:"median_highs_over_orrery"`
	MinRatio    bench.Float `json:"min_highs_over_orrery"`
}

// familySection runs orrery and HiGHS (SciPy's milp, mip_rel_gap 0) on the
// synthetic families (shockwave.FamilySpecs): the CI subset with -smoke.
func familySection(ctx context.Context, cfg *config) ([]bench.Section, []bench.Gate, error) {
	haveHiGHS := mip.HiGHSAvailable()
	if !haveHiGHS && cfg.requireHiGHS {
		return nil, nil, fmt.Errorf("no python3 with scipy.optimize.milp (run bench/install-highs.sh)")
	}
	sec := bench.Section{ID: "planner-families", Title: "Shockwave planner on wide jobs: orrery's exact solver vs HiGHS on the authors' program",
		Notes: []string{
			fmt.Sprintf("Synthetic families (internal/bench/shockwave.Family): job widths drawn from a set on clusters whose size is or is not a power of two, the fair path (targets met by a random packing, so that the finish-time-fair program is feasible and its lower bounds bind) and the relaxed path (one job past its target; optionally one to three jobs with priorities from 1e6 to 1e300). HiGHS is SciPy's milp on the authors' program (the same model as CBC's LP file), mip_rel_gap 0, a time limit of %s, the fair program first and the relaxed one when HiGHS proves the fair one infeasible; its time is the CPU time inside milp. orrery's is the CPU time of market.Workspace.Solve (median of %d rounds). Per family, over its seeds: the medians of both times and of their ratio (HiGHS's over orrery's), and the least ratio; every instance (status, objectives, bounds, nodes) is in report.json. Objectives are scored by orrery's count formulation (HiGHS's rounds read back); the gates require orrery to prove optimality wherever HiGHS does, its objective to be at least HiGHS's plan's and at most HiGHS's bound (relative 1e-6).", cfg.cbcTime, cfg.rounds),
		},
		Header: []string{"family", "instances", "orrery optimal", "HiGHS optimal", "orrery (CPU, median)", "HiGHS (CPU, median)", "ratio (median)", "ratio (min)"},
	}
	var rows []FamilyRow
	var sums []FamilySummary
	var gates []bench.Gate
	for _, spec := range shockwave.FamilySpecs() {
		if cfg.smoke && !spec.Smoke {
			continue
		}
		seeds := spec.Seeds
		if cfg.smoke {
			seeds = 1
		}
		sum := FamilySummary{Family: spec.Name}
		minRatio := math.Inf(1)
		var ratios, ot, ht []float64
		for s := 1; s <= seeds; s++ {
			f := spec.Family
			f.Seed = uint64(s)
			p, err := f.Problem()
			if err != nil {
				return nil, nil, err
			}
			fmt.Fprintf(os.Stderr, "  families: %s, seed %d\n", spec.Name, s)
			row, gs, err := compareHiGHS(ctx, cfg, spec.Name, uint64(s), p, haveHiGHS)
			if err != nil {
				return nil, nil, fmt.Errorf("%s seed %d: %w", spec.Name, s, err)
			}
			rows = append(rows, row)
			gates = append(gates, gs...)
			sum.Instances++
			if row.Status == market.Optimal.String() {
				sum.Optimal++
			}
			if row.HiGHSStatus == mip.Optimal.String() {
				sum.HiGHSProven++
			}
			if r := float64(row.Ratio); !math.IsNaN(r) {
				ratios = append(ratios, r)
				minRatio = min(minRatio, r)
			}
			ot = append(ot, row.Time.Median)
			if row.HiGHSStatus != "" {
				ht = append(ht, row.HiGHSCPU)
			}
		}
		sum.Ratio, sum.MinRatio = bench.Float(math.NaN()), bench.Float(math.NaN())
		if len(ratios) > 0 {
			sum.Ratio, sum.MinRatio = bench.Float(bench.Summarize(ratios).Median), bench.Float(minRatio)
		}
		sums = append(sums, sum)
		highs := "–"
		if len(ht) > 0 {
			highs = bench.Duration(bench.Summarize(ht).Median)
		}
		sec.Rows = append(sec.Rows, []string{spec.Name, fmt.Sprint(sum.Instances), fmt.Sprint(sum.Optimal), fmt.Sprint(sum.HiGHSProven),
			bench.Duration(bench.Summarize(ot).Median), highs, speedup(float64(sum.Ratio)), speedup(float64(sum.MinRatio))})
	}
	sec.Data = struct {
		Families  []FamilySummary `json:"families"`
		Instances []FamilyRow     `json:"instances"`
	}{sums, rows}
	return []bench.Section{sec}, gates, nil
}

func speedup(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "–"
	}
	return fmt.Sprintf("%.3gx", r)
}

// compareHiGHS times orrery on p, runs HiGHS on the authors' program (the
// fair program first, as the authors' code), and gates orrery's status and
// objective against HiGHS's.
func compareHiGHS(ctx context.Context, cfg *config, family string, seed uint64, p *market.Problem, haveHiGHS bool) (FamilyRow, []bench.Gate, error) {
	nan := math.NaN()
	row := FamilyRow{Family: family, Seed: seed, HiGHSPlanValue: bench.Float(nan), HiGHSBound: bench.Float(nan), HiGHSGap: bench.Float(nan), Ratio: bench.Float(nan)}
	run, err := solveOrrery(ctx, cfg, p)
	if err != nil {
		return row, nil, err
	}
	sol, rounds, path, pg := run.sol, run.rounds, run.path, run.pg
	row.Time = run.time
	row.Status, row.Objective, row.Nodes = sol.Status.String(), sol.Objective, sol.Nodes
	row.Path = path.String()
	name := fmt.Sprintf("families %s, seed %d", family, seed)
	var gates []bench.Gate
	lpObj := math.NaN()
	if x, err := pg.Assign(rounds); err == nil {
		lpObj = pg.Model.Objective(x)
		row.LPOK = len(pg.Model.Check(x, 1e-9, 0)) == 0 && math.Abs(lpObj-row.Objective) <= 1e-9*max(1, math.Abs(row.Objective))
	}
	gates = append(gates, bench.Gate{Name: name + ": orrery's plan is feasible in the authors' program and scores its objective there",
		Pass: row.LPOK, Value: lpObj, Threshold: row.Objective, Detail: fmt.Sprintf("%s, LP objective %.12g", yesNo(row.LPOK), lpObj)})
	if !haveHiGHS {
		row.Note = "HiGHS not installed"
		return row, gates, nil
	}
	var res *mip.Result
	var hpg *shockwave.Program
	for _, try := range []shockwave.Path{shockwave.Fair, shockwave.Relaxed} {
		hpg = pg
		if try != path {
			if hpg, err = shockwave.Build(p, try); err != nil {
				return row, nil, err
			}
		}
		r, err := mip.SolveHiGHS(ctx, hpg.Model, mip.HiGHSOptions{TimeLimit: cfg.cbcTime, SetRelGap: true, RelGap: 0,
			Name: strings.NewReplacer(" ", "", ",", "_", "{", "", "}", "").Replace(family) + fmt.Sprint("_", seed, "_", try)})
		if err != nil {
			return row, nil, err
		}
		row.HiGHSCPU += r.CPU.Seconds()
		res = r
		if r.Status != mip.Infeasible {
			row.HiGHSPath = try.String()
			if r.Status == mip.NoSolution && try == shockwave.Fair {
				row.HiGHSPath = ""
			}
			break
		}
	}
	row.HiGHSStatus, row.HiGHSBound, row.HiGHSGap = res.Status.String(), bench.Float(res.Bound), bench.Float(res.Gap)
	if t := row.Time.Median; t > 0 {
		row.Ratio = bench.Float(row.HiGHSCPU / t)
	}
	if res.Values != nil {
		v, err := hpg.Evaluate(hpg.Plan(res.Values))
		row.HiGHSFeasible = err == nil
		if err == nil {
			row.HiGHSPlanValue = bench.Float(v.Objective)
		} else {
			row.Note = err.Error()
		}
	}
	samePath := row.HiGHSPath == row.Path
	if row.HiGHSPath != "" {
		gates = append(gates, bench.Gate{Name: name + ": HiGHS takes the same path as orrery",
			Pass: samePath, Value: b2f(samePath), Threshold: 1, Detail: fmt.Sprintf("orrery %s, HiGHS %s", row.Path, row.HiGHSPath)})
	}
	if res.Status == mip.Optimal && samePath {
		ok := sol.Status == market.Optimal
		gates = append(gates, bench.Gate{Name: name + ": orrery proves optimality where HiGHS does",
			Pass: ok, Value: b2f(ok), Threshold: 1, Detail: "orrery " + row.Status})
	}
	if samePath && row.HiGHSFeasible {
		hv := float64(row.HiGHSPlanValue)
		tol := tolerance(row.Objective, hv)
		d := row.Objective - hv
		gates = append(gates, bench.Gate{Name: name + ": orrery's objective ≥ HiGHS's plan's",
			Pass: d >= -tol, Value: d, Threshold: -tol, Detail: fmt.Sprintf("orrery %.12g, HiGHS %.12g", row.Objective, hv)})
	}
	if hb := res.Bound; samePath && !math.IsNaN(hb) && res.Status != mip.NoSolution {
		// A plan the authors' own model accepts at its objective shows a
		// bound below it to be HiGHS's (its tolerances), not orrery's.
		tol := tolerance(row.Objective, hb)
		ok := row.Objective <= hb+tol
		detail := fmt.Sprintf("orrery %.12g, bound %.12g", row.Objective, hb)
		if !ok && row.LPOK {
			ok, detail = true, detail+": HiGHS's bound is below a plan its model accepts"
			row.Note = "HiGHS's bound below orrery's verified plan"
		}
		gates = append(gates, bench.Gate{Name: name + ": orrery's objective ≤ HiGHS's bound (or its plan verified in the model)",
			Pass: ok, Value: row.Objective, Threshold: hb + tol, Detail: detail})
	}
	return row, gates, nil
}
