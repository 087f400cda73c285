package policy_test

import (
	"fmt"

	"github.com/orrery/orrery/internal/eval/policy"
)

// Gavel's max-min fairness on 4 GPUs: two 1-GPU jobs and a 4-GPU job. The
// small jobs get their GPU full time; the large one gets the remaining 2
// GPUs' worth, half of the time.
func ExampleMaxMinFairness() {
	jobs := []policy.Demand{{ID: 0, GPUs: 1}, {ID: 1, GPUs: 1}, {ID: 2, GPUs: 4}}
	x := make([]float64, len(jobs))
	var a policy.MaxMinFairness
	if err := a.Allocate(x, jobs, 4); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x)
	// Output: [1 1 0.5]
}

// The smallest makespan for three jobs needing 100, 50 and 10 s alone (the
// last on 2 GPUs) on 2 GPUs is 100 s; each job is paced to end then.
func ExampleMinTotalDuration() {
	jobs := []policy.Demand{{GPUs: 1, Throughput: 1, Remaining: 100}, {GPUs: 1, Throughput: 2, Remaining: 100},
		{GPUs: 2, Throughput: 1, Remaining: 10}}
	x := make([]float64, len(jobs))
	var a policy.MinTotalDuration
	if err := a.Allocate(x, jobs, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x)
	// Output: [1 0.5 0.1]
}

// The figures' legends name the authors' policies.
func ExampleCanonical() {
	for _, legend := range []string{"Gavel", "Themis", "OSSP", "MST"} {
		name, _ := policy.Canonical(legend)
		fmt.Println(legend, "=", name)
	}
	// Output:
	// Gavel = max_min_fairness
	// Themis = finish_time_fairness
	// OSSP = min_total_duration
	// MST = max_sum_throughput_perf
}
