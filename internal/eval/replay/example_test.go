package replay_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/internal/eval/data"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/replay"
)

// The paper's Fig. 2: two VGG19 jobs whose all-reduces share one 50 Gbps
// uplink, with CASSINI's placement alone and with its time shift held.
func ExampleRunCassini() {
	rep, err := replay.RunCassini(context.Background(), replay.Cassini{
		Scenario: replay.Fig2, MaxIterations: 200,
		Arms: []replay.Arm{{Policy: netsim.CassiniPlacement}, {Policy: netsim.Cassini}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range rep.Arms {
		fmt.Printf("%s: %.1f ms per iteration, %.0f Mbit above capacity per iteration\n", a.Arm, a.MeanIterMs.Mean, a.MarkedMbitPerIter.Mean)
	}
	// Output:
	// cassini-placement: 334.2 ms per iteration, 4605 Mbit above capacity per iteration
	// cassini: 268.0 ms per iteration, 0 Mbit above capacity per iteration
}

// Replay the first 30 jobs of the Shockwave authors' 120-job trace on their
// 32-GPU setup under Shockwave and Gavel, from the copy of their files
// inside the binary (package data).
func ExampleRunShockwave() {
	s, _ := replay.AuthorsSetup(32)
	s.Data = data.Shockwave // the authors' files, inside the binary
	s.Jobs, s.Policies = 30, []string{"shockwave", "gavel"}
	rep, err := replay.RunShockwave(context.Background(), s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Results {
		fmt.Printf("%s: makespan %.0f s, worst finish-time fairness %.2f\n", r.Legend, r.MakespanS, r.WorstFTF)
	}
	// Output:
	// Shockwave: makespan 17574 s, worst finish-time fairness 1.20
	// Gavel: makespan 17694 s, worst finish-time fairness 2.36
}
