package orrerywasm_test

import (
	"context"
	"fmt"
	"os"

	"github.com/orrery/orrery"
	orrerywasm "github.com/orrery/orrery/bindings/go"
)

// Two jobs with a 72 ms iteration send 40 Gbps for 30 ms on a 50 Gbps
// link; the module finds that delaying the second by 30 ms interleaves
// them.
func ExampleModule_Link() {
	ctx := context.Background()
	wasm, err := os.ReadFile(os.Getenv("ORRERY_EXAMPLE_WASM")) // orrery.wasm, from make wasm
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := orrerywasm.New(ctx, wasm, orrerywasm.Options{Instances: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close(ctx)

	phases := []orrery.PhaseSpec{{Ms: 30, Gbps: 40}, {Ms: 42, Gbps: 0}}
	res, err := m.Link(ctx, orrery.LinkRequest{
		CapacityGbps: 50,
		Jobs:         []orrery.JobSpec{{ID: "a", Phases: phases}, {ID: "b", Phases: phases}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("score %v (unshifted %v), %s, shifts %v ms\n", res.Score, res.UnshiftedScore, res.Status, res.ShiftsMs)

	// Bad input is an error with the native code and field.
	_, err = m.Link(ctx, orrery.LinkRequest{CapacityGbps: 0, Jobs: []orrery.JobSpec{{ID: "a", Phases: phases}}})
	fmt.Println(err)
	// Output:
	// score 1 (unshifted 0.75), optimal, shifts map[a:0 b:30] ms
	// capacity_gbps: capacity must be in [1, 16777215] units: 0 Gbps
}
