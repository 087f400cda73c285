package shockwave_test

import (
	"fmt"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/internal/bench/shockwave"
)

// The authors' program for two jobs on 2 GPUs over 3 rounds, and a plan
// judged by it and by the count formulation: job 0 gets 2 rounds, 4 epochs,
// progress 0.6 (ln 0.6 = −0.511); job 1 gets 1 round, 1 epoch, progress
// 0.25 (−1.436 on the chord from ln 0.2 to ln 0.4); welfare
// (−0.511 − 1.436)/(2·3) = −0.324, minus k·360 s = 0.36.
func ExampleBuild() {
	p := &market.Problem{GPUs: 2, Round: 0, Config: market.Config{Rounds: 3},
		Jobs: []market.Job{
			{ID: 1, GPUs: 1, Epochs: 10, Progress: 2, MeanEpoch: 60, Remaining: 480, FairFinish: 5000},
			{ID: 2, GPUs: 2, Epochs: 4, Progress: 0, MeanEpoch: 120, Remaining: 480, FairFinish: 5000},
		}}
	pg, err := shockwave.Build(p, shockwave.Fair)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(pg.Model.Vars), "variables,", len(pg.Model.Rows), "rows")
	plan := [][]int{{1}, {0}, {0}} // job 1 (2 GPUs) in round 0, job 0 in rounds 1 and 2
	x, err := pg.Assign(plan)
	if err != nil {
		panic(err)
	}
	v, err := pg.Evaluate(plan)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(pg.Model.Check(x, 1e-9, 0)), "violations")
	fmt.Printf("objective %.6f (LP) %.6f (counts), makespan %.0f s\n", pg.Model.Objective(x), v.Objective, v.Makespan)
	// Output:
	// 35 variables, 49 rows
	// 0 violations
	// objective -0.684496 (LP) -0.684496 (counts), makespan 360 s
}
