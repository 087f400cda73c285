package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/cassini"
)

// RankRow is one ranking configuration on one instance.
type RankRow struct {
	Instance string      `json:"instance"`
	Mode     string      `json:"mode"`
	CPU      bench.Stats `json:"cpu_seconds_1_worker"` // one worker, process CPU time
	Wall1    bench.Stats `json:"wall_seconds_1_worker"`
	Wall2    bench.Stats `json:"wall_seconds_2_workers,omitempty"`
	Searches int         `json:"searches"` // distinct link problems solved
	Links    int         `json:"links"`    // shared links over all candidates
	Optimal  int         `json:"links_optimal"`
	Kept     int         `json:"kept"`
	Best     int         `json:"best"`
	// BestExactScore is the chosen candidate's score under orrery's
	// default (exact) ranking, so that modes are compared on one scale.
	BestExactScore float64 `json:"best_exact_score"`
}

func rankSection(ctx context.Context, cfg *config) ([]bench.Section, []bench.Gate, error) {
	type inst struct {
		name string
		in   *cassini.Instance
	}
	paper, err := cassini.PaperInstance(rand.New(rand.NewPCG(1, 2)), 20, 10)
	if err != nil {
		return nil, nil, err
	}
	insts := []inst{{"paper fabric (24 servers), 20 jobs, 10 candidates", paper}}
	if !cfg.smoke {
		clos, err := cassini.ClosInstance(rand.New(rand.NewPCG(1, 2)), cassini.ClosSpec(), 300, 10)
		if err != nil {
			return nil, nil, err
		}
		insts = append(insts, inst{"Clos, 1000 servers, 300 jobs, 10 candidates", clos})
	}
	round := link.Options{Circle: circle.Options{Round: true}}
	modes := []struct {
		name string
		opt  candidate.Options
	}{
		{"orrery (exact, resolve loops)", candidate.Options{Link: round}},
		{"paper angles (72), orrery's loops", candidate.Options{Link: link.Options{Mode: link.Paper, Circle: round.Circle}}},
		{"paper (72 angles, any loop discards)", candidate.Options{Link: link.Options{Mode: link.Paper, Circle: round.Circle}, Loops: affinity.Paper}},
	}
	sec := bench.Section{ID: "rank", Title: "Ranking placement candidates (engine/cassini/candidate)",
		Notes:  []string{fmt.Sprintf("candidate.Workspace.Rank on 10 locality-aware candidates (jobs take consecutive free servers in ToR order from a random start; on the Clos fabric 10%% of servers are held by other work), periods 181-255 ms at 1 ms ticks, rounded past the 2^20-tick cap (round_periods). Time per ranking (CPU and wall with one worker, wall with two); median over %d interleaved rounds (min–max). *Links optimal* counts the shared links, over all candidates, whose search was proven optimal. *Best* is the chosen candidate and its score under orrery's exact ranking, so that the modes are compared on one scale. The paper's own loop rule discards a candidate whose affinity graph has any loop; every ring all-reduce that crosses two shared links with another job makes one.", cfg.rounds)},
		Header: []string{"instance", "mode", "1 worker (CPU)", "1 worker (wall)", "2 workers (wall)", "searches", "links optimal", "kept", "best (exact score)"},
	}
	var rows []RankRow
	var gates []bench.Gate
	for _, it := range insts {
		var rk candidate.Workspace
		results := make([]candidate.Ranking, len(modes))
		var cases []bench.Case
		for m, md := range modes {
			opt1 := md.opt
			opt1.Workers = 1
			cases = append(cases, bench.Case{Name: md.name, Op: func() (err error) {
				results[m], err = rk.Rank(ctx, it.in.Jobs, it.in.Links, it.in.Candidates, opt1)
				return err
			}})
		}
		opt2 := modes[0].opt
		opt2.Workers = 2
		cases = append(cases, bench.Case{Name: "orrery, 2 workers", Op: func() error {
			_, err := rk.Rank(ctx, it.in.Jobs, it.in.Links, it.in.Candidates, opt2)
			return err
		}})
		samples, err := bench.Interleave(ctx, cases, bench.Options{Rounds: cfg.rounds, Target: cfg.target})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", it.name, err)
		}
		exact := results[0]
		for m, md := range modes {
			r := results[m]
			row := RankRow{Instance: it.name, Mode: md.name, CPU: bench.Summarize(bench.Times(samples[m])),
				Wall1: bench.Summarize(bench.WallTimes(samples[m])), Searches: r.Searches, Kept: len(r.Order), Best: r.Best}
			if m == 0 {
				row.Wall2 = bench.Summarize(bench.WallTimes(samples[len(modes)]))
			}
			for _, o := range r.Outcomes {
				for _, l := range o.Links {
					row.Links++
					if l.Status == link.Optimal {
						row.Optimal++
					}
				}
			}
			best := "none kept"
			if r.Best >= 0 {
				row.BestExactScore = exact.Outcomes[r.Best].Score
				best = fmt.Sprintf("c%d (%.4f)", r.Best, row.BestExactScore)
				if exact.Outcomes[r.Best].Err != nil {
					best = fmt.Sprintf("c%d (discarded by orrery)", r.Best)
				}
			}
			wall := "–"
			if m == 0 {
				wall = bench.Spread(row.Wall2)
			}
			frac := "–"
			if row.Links > 0 {
				frac = fmt.Sprintf("%d / %d (%.0f%%)", row.Optimal, row.Links, 100*float64(row.Optimal)/float64(row.Links))
			}
			sec.Rows = append(sec.Rows, []string{it.name, md.name, bench.Spread(row.CPU), bench.Spread(row.Wall1), wall,
				fmt.Sprint(row.Searches), frac, fmt.Sprintf("%d / %d", row.Kept, len(it.in.Candidates)), best})
			rows = append(rows, row)
		}
		if cfg.smoke {
			ok := exact.Best >= 0 && results[1].Best >= 0 && exact.Outcomes[exact.Best].Score >= exact.Outcomes[results[1].Best].Score
			gates = append(gates, bench.Gate{Name: "rank " + it.name + ": orrery's best candidate scores at least the paper angles' pick (exact scores)",
				Pass: ok, Value: b2f(ok), Threshold: 1, Detail: yesNo(ok)})
		}
	}
	sec.Data = rows
	scale, sg, err := scaleSection(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return []bench.Section{sec, scale}, append(gates, sg...), nil
}
