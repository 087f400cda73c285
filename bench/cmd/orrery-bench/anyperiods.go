package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/cassini"
)

// commAt is a job of period t ms sending units for up ms from start.
func commAt(t, start, up int, units int32) profile.Profile {
	d := make([]int32, t)
	for i := range up {
		d[(start+i)%t] = units
	}
	return profile.Profile{Period: t, Demand: d}
}

// anyProblems are links whose unified circles today's search refuses, or
// must round, or searches at length: the three and two links of
// three and four jobs with irregular phases (no phase spreads evenly over
// the residues the periods share, so nothing folds away).
func anyProblems(smoke bool) []anyProblem {
	c := cassini.Comm
	probs := []anyProblem{
		{linkProblem{"two jobs, 5000 and 4999 ms (24,995,000-tick circle)", link.Problem{Jobs: []profile.Profile{c(5000, 2000, 40000), c(4999, 1800, 35000)}, Capacity: 50000}}, 0},
		{linkProblem{"two jobs, 255 and 181 ms (46,155-tick circle)", link.Problem{Jobs: []profile.Profile{c(255, 114, 40000), c(181, 60, 40000)}, Capacity: 50000}}, 0},
		{linkProblem{"three jobs, 1009/1013/1019 ms (1.04e9-tick circle)", link.Problem{Jobs: []profile.Profile{c(1009, 300, 30000), c(1013, 350, 30000), c(1019, 400, 30000)}, Capacity: 50000}}, 0},
		{linkProblem{"three jobs, 180/200/240 ms, irregular phases (3600 ticks)", link.Problem{Jobs: []profile.Profile{commAt(180, 119, 61, 30000), commAt(200, 127, 73, 30000), commAt(240, 153, 87, 30000)}, Capacity: 50000}}, -1},
		{linkProblem{"four jobs, 120/150/200/240 ms, irregular phases (1200 ticks)", link.Problem{Jobs: []profile.Profile{commAt(120, 70, 41, 25000), commAt(150, 90, 47, 25000), commAt(200, 100, 63, 25000), commAt(240, 150, 71, 25000)}, Capacity: 50000}}, -1},
	}
	if smoke {
		return probs[:2]
	}
	return probs
}

// anyProblem is a link and the budget both searches get (0: the default;
// -1: none, so that both prove their optimum and times compare proofs).
type anyProblem struct {
	linkProblem
	budget int64
}

// AnyRow is one link of the any-periods table.
type AnyRow struct {
	Problem   string                 `json:"problem"`
	Perimeter int                    `json:"perimeter_ticks"`
	Shared    int                    `json:"shared_ticks"`
	Times     map[string]bench.Stats `json:"seconds"` // shared, today
	// TodayOverShared: per round, today's search's time over the shared
	// circle's.
	TodayOverShared bench.Stats      `json:"today_over_shared"`
	Evaluations     map[string]int64 `json:"evaluations"` // shared, today
	BruteForce      float64          `json:"brute_force_evaluations"`
	Score           float64          `json:"score"`       // the shared circle's, proven optimal
	TodayScore      float64          `json:"today_score"` // today's own figure (for its rounded periods when Grid > 1)
	TodayGrid       int              `json:"today_grid"`
	TodayReal       float64          `json:"today_real_score"` // today's shifts scored on the real periods
	Status          string           `json:"status"`
	TodayStatus     string           `json:"today_status"`
	Budget          int64            `json:"budget"`
	Agree           bool             `json:"agree"` // same excess and shifts as today's search where it answers the real periods, or as the closed form
}

// anyPeriodsSection measures the shared-circle search against today's
// (link.Options.Materialize, rounding where its cap requires) on links of
// any periods.
func anyPeriodsSection(ctx context.Context, cfg *config) (bench.Section, []bench.Gate, error) {
	sec := bench.Section{ID: "link-any-periods", Title: "Link search on any periods: the shared circle vs today's search",
		Notes: []string{
			fmt.Sprintf("One link's search (engine/cassini/link). **shared** is the default: the search runs on the shared circle (the LCM of the periods' pairwise gcds, folded by the classes' own periods), proven optimal on the real periods. **today** is the search as it was (`Options.Materialize`): the whole unified circle materialized, under the 2^20-tick cap, so the first and third links are answered for rounded periods (`round_periods`); its score is for those, and *today, real periods* scores its shifts on the real ones. The two searches get the default budget on the first three links (as a user would run them) and none on the last two, so that both prove their optimum and the times compare proofs. Brute force counts every shift of every job but the first over the unified circle. Time per search, median over %d interleaved rounds (min–max); the ratio is per round.", cfg.rounds),
		},
		Header: []string{"problem", "shared circle", "shared", "today", "today / shared", "pair evaluations (shared / today / brute force)", "status (shared / today)", "score (exact)", "score today (its periods)", "today, real periods"},
	}
	var rows []AnyRow
	var gates []bench.Gate
	for _, lp := range anyProblems(cfg.smoke) {
		row, err := measureAny(ctx, cfg, lp)
		if err != nil {
			return sec, nil, fmt.Errorf("%s: %w", lp.name, err)
		}
		rows = append(rows, row)
		today := fmt.Sprintf("%.4f", row.TodayScore)
		if row.TodayGrid > 1 {
			today = fmt.Sprintf("%.4f (grid %d ms)", row.TodayScore, row.TodayGrid)
		}
		sec.Rows = append(sec.Rows, []string{lp.name, fmt.Sprintf("%s of %s", bench.SI(float64(row.Shared)), bench.SI(float64(row.Perimeter))),
			bench.Spread(row.Times["shared"]), bench.Spread(row.Times["today"]), ratioCell(row.TodayOverShared),
			fmt.Sprintf("%s / %s / %s", bench.SI(float64(row.Evaluations["shared"])), bench.SI(float64(row.Evaluations["today"])), bench.SI(row.BruteForce)),
			row.Status + " / " + row.TodayStatus, fmt.Sprintf("%.4f", row.Score), today, fmt.Sprintf("%.4f", row.TodayReal)})
		gates = append(gates, bench.Gate{Name: "link " + lp.name + ": the shared circle proves an optimum that today's search (or the closed form for coprime periods) confirms",
			Pass: row.Agree && row.Status == "optimal", Value: b2f(row.Agree), Threshold: 1, Detail: yesNo(row.Agree)})
		if threshold := map[int]float64{5000: 5, 120: 2}[lp.pr.Jobs[0].Period]; threshold > 0 {
			g := bench.Gate{Name: fmt.Sprintf("link %s: shared circle ≥ %g× faster than today's search (median of per-round ratios, CPU time)", lp.name, threshold),
				Threshold: threshold, Value: row.TodayOverShared.Median}
			g.Pass = g.Value >= g.Threshold
			g.Detail = fmt.Sprintf("%s (min %s)", bench.Ratio(g.Value), bench.Ratio(row.TodayOverShared.Min))
			gates = append(gates, g)
		}
	}
	sec.Data = rows
	return sec, gates, nil
}

func measureAny(ctx context.Context, cfg *config, lp anyProblem) (AnyRow, error) {
	pr := lp.pr
	var ws, wt link.Workspace
	dst, dstT := make([]int, len(pr.Jobs)), make([]int, len(pr.Jobs))
	sopt := link.Options{Budget: lp.budget}
	topt := link.Options{Budget: lp.budget, Materialize: true, Circle: circle.Options{Round: true}}
	var shared, today link.Result
	cases := []bench.Case{
		{Name: "shared", Op: func() (err error) {
			shared, err = ws.Search(ctx, pr, sopt, dst)
			return err
		}},
		{Name: "today", Op: func() (err error) {
			today, err = wt.Search(ctx, pr, topt, dstT)
			return err
		}},
	}
	samples, err := bench.Interleave(ctx, cases, bench.Options{Rounds: cfg.rounds, Target: cfg.target})
	if err != nil {
		return AnyRow{}, err
	}
	row := AnyRow{Problem: lp.name, Perimeter: shared.Circle.Perimeter, Shared: shared.Circle.Shared, Times: map[string]bench.Stats{},
		Evaluations: map[string]int64{"shared": shared.Evaluated, "today": today.Evaluated},
		Score:       shared.Score, TodayScore: today.Score, TodayGrid: today.Circle.Grid, Status: shared.Status.String(),
		TodayStatus: today.Status.String(), Budget: lp.budget}
	for i, c := range cases {
		row.Times[c.Name] = bench.Summarize(bench.Times(samples[i]))
	}
	row.TodayOverShared = bench.Summarize(bench.Ratios(samples[1], samples[0]))
	row.BruteForce = float64(shared.Circle.Perimeter)
	for _, jb := range pr.Jobs[1:] {
		row.BruteForce *= float64(jb.Period)
	}
	real, pts, err := ws.Evaluate(pr, link.Options{}, today.Shifts)
	if err != nil {
		return AnyRow{}, err
	}
	row.TodayReal = 1 - float64(real)/(float64(pts)*float64(pr.Capacity))
	if today.Circle.Grid == 1 {
		row.Agree = today.Status == link.Optimal && today.Excess == shared.Excess && slices.Equal(today.Shifts, shared.Shifts)
	} else {
		e, ok := coprimeExcess(pr)
		row.Agree = ok && e == shared.Excess
	}
	return row, nil
}

// coprimeExcess is the excess of jobs with pairwise coprime periods, where
// every tuple of their ticks meets exactly once on the unified circle:
// summed over the product of their demand histograms, without the engine.
func coprimeExcess(pr link.Problem) (int64, bool) {
	for i, a := range pr.Jobs {
		for _, b := range pr.Jobs[i+1:] {
			if circle.GCD(a.Period, b.Period) != 1 {
				return 0, false
			}
		}
	}
	sums := map[int64]int64{0: 1} // summed demand -> tuples
	for _, jb := range pr.Jobs {
		h := map[int64]int64{}
		for _, d := range jb.Demand {
			h[int64(d)]++
		}
		next := map[int64]int64{}
		for s, n := range sums {
			for v, m := range h {
				next[s+v] += n * m
			}
		}
		sums = next
	}
	var e int64
	for s, n := range sums {
		e += n * max(s-int64(pr.Capacity), 0)
	}
	return e, true
}
