package market_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/shockwave/market"
)

// Four jobs on four GPUs, a window of four 120-second rounds. Job 4 cannot
// meet its fair finish time, so the finish-time-fair program is infeasible
// and the relaxed one weights the jobs behind their targets (job 4's
// projected ρ̂ = 1.12 gives priority 1.12^12). Job 2 needs only two rounds;
// the backfill gives it the idle GPU afterwards, as the authors' code does.
func ExampleSolve() {
	p := &market.Problem{
		GPUs:   4,
		Round:  10,
		Config: market.Config{Rounds: 4},
		Jobs: []market.Job{
			{ID: 1, GPUs: 2, Epochs: 50, Progress: 10, MeanEpoch: 60, Remaining: 2400, FairFinish: 9000},
			{ID: 2, GPUs: 1, Epochs: 20, Progress: 18, MeanEpoch: 90, Remaining: 180, FairFinish: 2500},
			{ID: 3, GPUs: 1, Epochs: 100, Progress: 0, MeanEpoch: 30, Remaining: 3000, FairFinish: 20000},
			{ID: 4, GPUs: 2, Epochs: 10, Progress: 2, MeanEpoch: 200, Remaining: 1600, FairFinish: 2500},
		},
	}
	sol, err := market.Solve(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v, relaxed %v, makespan term %.0f s\n", sol.Status, sol.Relaxed, sol.Makespan)
	for j, job := range p.Jobs {
		fmt.Printf("job %d: %d rounds, %.1f epochs, priority %.3g\n", job.ID, sol.Count[j], sol.Epochs[j], sol.Priority[j])
	}
	for t := range sol.Rounds {
		fmt.Print("round ", p.Round+t, ":")
		for _, j := range sol.Rounds[t] {
			fmt.Print(" ", p.Jobs[j].ID)
		}
		for _, j := range sol.Backfill[t] {
			fmt.Print(" +", p.Jobs[j].ID)
		}
		fmt.Println()
	}
	// Output:
	// optimal, relaxed true, makespan term 2520 s
	// job 1: 0 rounds, 0.0 epochs, priority 1
	// job 2: 2 rounds, 2.0 epochs, priority 1
	// job 3: 4 rounds, 16.0 epochs, priority 1
	// job 4: 4 rounds, 2.4 epochs, priority 3.9
	// round 10: 2 3 4
	// round 11: 2 3 4
	// round 12: 3 4 +2
	// round 13: 3 4 +2
}
