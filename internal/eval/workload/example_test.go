package workload_test

import (
	"fmt"

	"github.com/orrery/orrery/internal/eval/workload"
)

// VGG16 at its reference configuration is the paper's Fig. 3 circle: 141 ms
// of compute, then the ring all-reduce of its 528 MiB of parameters. On four
// servers every hop of the ring carries 1.5x the parameters, so the
// all-reduce takes 1.5x longer at the same rate.
func ExampleModel_Iteration() {
	m, err := workload.Lookup("VGG16")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, servers := range []int{2, 4} {
		steps, err := m.Iteration(1400, servers)
		if err != nil {
			fmt.Println(err)
			return
		}
		ar := steps[1]
		fmt.Printf("%d servers: %v iteration, all-reduce %.2f Gbit per hop at %.1f Gbps for %v\n",
			servers, workload.Period(steps), ar.Bits/1e9, ar.Peak/1e9, ar.Alone())
	}
	// Output:
	// 2 servers: 255ms iteration, all-reduce 4.43 Gbit per hop at 38.9 Gbps for 114ms
	// 4 servers: 312ms iteration, all-reduce 6.64 Gbit per hop at 38.9 Gbps for 171ms
}
