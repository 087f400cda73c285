package round_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/round"
)

// The incremental Scheduler: jobs arrive, each round asks for its jobs,
// progress is reported, and the plan is reused until a trigger re-plans.
func ExampleScheduler() {
	s, err := round.New(2, round.Config{Market: market.Config{Rounds: 4}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Profiles: batch size and seconds of each epoch on the job's GPUs.
	s.Add(round.Job{ID: 1, GPUs: 1, EpochBS: []int{32, 32, 64, 64, 64, 64}, EpochDur: []float64{100, 100, 80, 80, 80, 80}})
	s.Add(round.Job{ID: 2, GPUs: 1, EpochBS: []int{16, 16, 16}, EpochDur: []float64{150, 150, 150}})
	s.Add(round.Job{ID: 3, GPUs: 2, Submit: 60, EpochBS: []int{64, 64}, EpochDur: []float64{110, 110}})
	ctx := context.Background()
	done := map[int]int{} // epochs done; here every round runs one epoch
	for r := 0; r < 3; r++ {
		ids, err := s.Schedule(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("round %d runs %v (plan made in round %d)\n", s.Round(), ids, s.LastPlan().Round)
		for _, id := range ids {
			done[id]++
			s.Progress(id, done[id])
		}
		s.EndRound()
	}
	// Output:
	// round 0 runs [3] (plan made in round 0)
	// round 1 runs [1 2] (plan made in round 0)
	// round 2 runs [1 2] (plan made in round 0)
}

// Plan is a pure function of the cluster state; jobs may carry the
// caller's own predictions instead of a profile.
func ExamplePlan() {
	st := &round.State{
		GPUs:   4,
		Round:  30,
		Config: round.Config{Market: market.Config{Rounds: 3}},
		Jobs: []round.Job{
			{ID: 10, GPUs: 2, Epochs: 40, Progress: 30, Known: &round.Known{Remaining: 700, MeanEpoch: 70, FairFinish: 9000}},
			{ID: 11, GPUs: 2, Epochs: 10, Progress: 1, Known: &round.Known{Remaining: 2700, MeanEpoch: 300, FairFinish: 9000}},
			{ID: 12, GPUs: 1, Epochs: 5, Progress: 4, Known: &round.Known{Remaining: 60, MeanEpoch: 60, FairFinish: 9000}},
		},
	}
	res, err := round.Plan(context.Background(), st)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Relaxed)
	for t, ids := range res.Rounds {
		fmt.Printf("round %d: %v (backfill %v)\n", res.Round+t, ids, res.Backfill[t])
	}
	// Output:
	// optimal false
	// round 30: [11 12] (backfill [])
	// round 31: [10 11] (backfill [])
	// round 32: [10 11] (backfill [])
}
