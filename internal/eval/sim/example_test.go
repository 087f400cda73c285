package sim_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/orrery/orrery/internal/eval/policy"
	"github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// Two ResNet-18 jobs share one GPU under Gavel's max-min fairness. An
// epoch takes 100 s (15.625 it/s), each job has three. They take turns
// (rounds 0 1 1 0 0 1): a job resuming after a round off loses 20 s of its
// 120 s lease to the restart, falls behind and keeps the GPU one more
// round.
func ExampleRun() {
	table := `{"v100": {"('ResNet-18 (batch size 32)', 1)": {"null": 15.625}}}`
	lines := "ResNet-18 (batch size 32)\tcmd\tdir\t--steps\t0\t4689\t1\tstatic\t1\t-1\t300\t0\n" +
		"ResNet-18 (batch size 32)\tcmd\tdir\t--steps\t0\t4689\t1\tstatic\t1\t-1\t300\t0\n"
	tab, _ := throughput.Load(strings.NewReader(table))
	jobs, _ := trace.Parse(strings.NewReader(lines))
	w, err := sim.NewWorkload(jobs, tab, sim.WorkloadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := policy.New("gavel", policy.Config{GPUs: 1})
	res, err := sim.Run(context.Background(), w, p, sim.Options{GPUs: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range res.Jobs {
		fmt.Printf("job %d: JCT %.1f s, rho %.3f, %d leases, %d restarts\n", j.ID, j.JCT, j.FTF, j.Leases, j.Restarts)
	}
	fmt.Printf("makespan %.1f s, utilization %.3f\n", res.Summary.Makespan, res.Summary.Utilization)
	// Output:
	// job 0: JCT 560.1 s, rho 0.934, 3 leases, 1 restarts
	// job 1: JCT 640.3 s, rho 1.067, 3 leases, 1 restarts
	// makespan 640.3 s, utilization 0.938
}
