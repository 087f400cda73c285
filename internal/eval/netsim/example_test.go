package netsim_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// The paper's Fig. 2: two VGG19 jobs whose all-reduces cross the same
// 50 Gbps uplinks. Started together they stay in lock step and share every
// all-reduce; CASSINI delays one so that they interleave.
func Example() {
	tp, err := topology.New(topology.Spec{Pods: 1, ToRsPerPod: 2, ServersPerToR: 2, AggsPerPod: 1, ServerGbps: 50, ToRGbps: 50})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := netsim.Config{
		Topology: tp,
		Jobs: []workload.Job{
			{ID: 0, Model: "VGG19", GPUs: 2, Batch: 1400, Iterations: 100},
			{ID: 1, Model: "VGG19", GPUs: 2, Batch: 1400, Iterations: 100},
		},
		Pinned: map[int][]int{0: {0, 2}, 1: {1, 3}}, // one server in each rack
	}
	for _, p := range []netsim.Policy{netsim.Baseline, netsim.Cassini, netsim.Ideal} {
		cfg.Policy = p
		r, err := netsim.Run(context.Background(), cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8v mean iteration %.1f ms, excess %.0f Gbit\n", p, r.Mean(), r.ExcessGbit)
	}
	// Output:
	// baseline mean iteration 334.2 ms, excess 2067 Gbit
	// cassini  mean iteration 268.0 ms, excess 0 Gbit
	// ideal    mean iteration 268.0 ms, excess 0 Gbit
}
