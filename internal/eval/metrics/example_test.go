package metrics_test

import (
	"fmt"

	"github.com/orrery/orrery/internal/eval/metrics"
)

// A simulator fills one record per finished job and summarizes the run.
func ExampleSummarize() {
	jobs := []metrics.Job{
		// Times in seconds; Isolated is trace.Profile.Isolated().
		{ID: 0, Arrival: 0, Completion: 100, Isolated: 40, GPUSeconds: 80},
		{ID: 1, Arrival: 10, Completion: 210, Isolated: 100, GPUSeconds: 200},
		{ID: 2, Arrival: 20, Completion: 60, Isolated: 20, GPUSeconds: 40},
		{ID: 3, Arrival: 50, Completion: 250, Isolated: 93, GPUSeconds: 120},
	}
	s, err := metrics.Summarize(jobs, metrics.Cluster{GPUs: 2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("makespan %.0f s, avg JCT %.0f s, worst FTF %.3f\n", s.Makespan, s.AvgJCT, s.WorstFTF)
	fmt.Printf("unfair (>1.05) %.0f%%, (>1.1) %.0f%%, utilization %.0f%%\n",
		100*s.Unfair105, 100*s.Unfair110, 100*s.Utilization)
	// Output:
	// makespan 250 s, avg JCT 135 s, worst FTF 1.250
	// unfair (>1.05) 50%, (>1.1) 25%, utilization 88%
}
