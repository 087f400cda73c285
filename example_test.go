package orrery_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery"
)

// Two jobs with 72 ms iterations, each 30 ms at 40 Gbps then 42 ms of
// compute, on one 50 Gbps link: unshifted they collide; delaying one by
// 30 ms interleaves them.
func ExampleLink() {
	job := func(id string) orrery.JobSpec {
		return orrery.JobSpec{ID: id, Phases: []orrery.PhaseSpec{{Ms: 30, Gbps: 40}, {Ms: 42}}}
	}
	resp, err := orrery.Link(context.Background(), orrery.LinkRequest{
		CapacityGbps: 50,
		Jobs:         []orrery.JobSpec{job("a"), job("b")},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("score %.2f (unshifted %.2f), %s, shift of b %.0f ms\n", resp.Score, resp.UnshiftedScore, resp.Status, resp.ShiftsMs["b"])
	// Output: score 1.00 (unshifted 0.75), optimal, shift of b 30 ms
}

// Two placements of the same three jobs: in "spread", a and b share the
// uplink and can interleave; in "packed", a and c share it and cannot.
func ExampleRank() {
	pulse := func(id string, upMs float64) orrery.JobSpec {
		return orrery.JobSpec{ID: id, Phases: []orrery.PhaseSpec{{Ms: upMs, Gbps: 40}, {Ms: 72 - upMs}}}
	}
	resp, err := orrery.Rank(context.Background(), orrery.RankRequest{
		Links: []orrery.LinkSpec{{ID: "uplink", CapacityGbps: 50}},
		Jobs:  []orrery.JobSpec{pulse("a", 30), pulse("b", 30), pulse("c", 60)},
		Candidates: []orrery.CandidateSpec{
			{ID: "packed", Paths: map[string][]string{"a": {"uplink"}, "c": {"uplink"}}},
			{ID: "spread", Paths: map[string][]string{"a": {"uplink"}, "b": {"uplink"}}},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range resp.Candidates {
		fmt.Printf("%s: score %.3f\n", c.ID, c.Score)
	}
	fmt.Printf("best %s, shift of b %.0f ms\n", *resp.Best, resp.ShiftsMs["b"])
	// Output:
	// packed: score 0.850
	// spread: score 1.000
	// best spread, shift of b 30 ms
}

// Errors name the request's field by its JSON path.
func ExampleLink_error() {
	_, err := orrery.Link(context.Background(), orrery.LinkRequest{
		CapacityGbps: 50,
		Jobs:         []orrery.JobSpec{{ID: "a", Phases: []orrery.PhaseSpec{{Ms: 30, Gbps: -1}}}},
	})
	fmt.Println(err)
	// Output: jobs[0].phases[0].gbps: phase 0: bandwidth is negative, NaN or infinite
}

// The incremental scheduler: jobs arrive, each round asks which jobs run,
// and the scheduler re-plans when due.
func ExampleScheduler() {
	ctx := context.Background()
	s, err := orrery.NewScheduler(2, orrery.ShockwaveConfig{Rounds: new(4)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for id, d := range []float64{120, 300, 60} {
		s.Add(orrery.ShockwaveJob{ID: id + 1, GPUs: 1, EpochBS: []int{32, 32, 64}, EpochDurS: []float64{d, d, d / 2}})
	}
	done := map[int]int{}
	for range 3 {
		ids, err := s.Schedule(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("round %d: jobs %v\n", s.Round(), ids)
		for _, id := range ids { // say each ran one epoch
			done[id]++
			s.Progress(id, done[id])
		}
		s.EndRound()
	}
	// Output:
	// round 0: jobs [2 3]
	// round 1: jobs [1 2]
	// round 2: jobs [1 2]
}
