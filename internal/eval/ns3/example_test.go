package ns3_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/ns3"
)

// Export a fluid run of the paper's Fig. 2 under CASSINI for ns-3: both
// jobs' Pad agents hold a 282 ms period (268 ms plus 5% headroom), the
// second job's slots 118 ms after the first's; replayed in the fluid model,
// every iteration but the last is one period. (netsim's default Elastic
// agents are exported too, with their group: the cross-check's Elastic
// variant.)
func ExampleExport() {
	c, err := ns3.Snapshot("fig2", 4)
	if err != nil {
		panic(err)
	}
	cfg := c.Config
	cfg.Policy = netsim.Cassini
	cfg.Cassini.Headroom = 0.05
	cfg.Agent.Mode = agent.Pad
	res, err := netsim.Run(context.Background(), cfg)
	if err != nil {
		panic(err)
	}
	sc, err := ns3.Export(cfg, res, ns3.ExportOptions{})
	if err != nil {
		panic(err)
	}
	for _, j := range sc.Jobs {
		f := j.Steps[1].Flows[0]
		fmt.Printf("job %d: starts at %v, period %v, %d bytes per hop at %.0f Mbit/s\n", j.ID, j.Start, j.Plan.Period, f.Bytes, f.PeakBps/1e6)
	}
	out, err := ns3.Fluid(context.Background(), sc, ns3.FluidOptions{})
	if err != nil {
		panic(err)
	}
	for _, ms := range out.IterMs(1) {
		fmt.Printf("%.1f ", ms)
	}
	fmt.Println()
	// Output:
	// job 0: starts at 0s, period 282ms, 11513364 bytes per hop at 781 Mbit/s
	// job 1: starts at 118ms, period 282ms, 11513364 bytes per hop at 781 Mbit/s
	// 282.0 282.0 282.0 268.0
}
