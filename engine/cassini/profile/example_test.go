package profile_test

import (
	"fmt"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// The VGG16 job of the paper's Fig. 3: a 255 ms iteration whose first
// 141 ms send nothing, then 114 ms at 25 Gbps, on the default grid (1 ms
// ticks, 1 Mbps units).
func ExampleFromPhases() {
	p, err := profile.FromPhases(255*time.Millisecond, []profile.Phase{
		{Duration: 141 * time.Millisecond, Bandwidth: 0},
		{Duration: 114 * time.Millisecond, Bandwidth: 25 * profile.Gbps},
	}, profile.Quantum{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("period:", p.Period, "ticks")
	fmt.Println("ticks 139..143:", p.Demand[139:144])
	fmt.Println("peak:", p.Peak(), "Mbps")
	fmt.Println("mass:", p.Mass(), "Mbit")
	// Output:
	// period: 255 ticks
	// ticks 139..143: [0 0 25000 25000 25000]
	// peak: 25000 Mbps
	// mass: 2850000 Mbit
}

// Bad input is a typed error naming the phase.
func ExampleFromPhases_error() {
	_, err := profile.FromPhases(0, []profile.Phase{
		{Duration: time.Millisecond, Bandwidth: profile.Gbps},
		{Duration: time.Millisecond, Bandwidth: -1},
	}, profile.Quantum{})
	fmt.Println(err)
	// Output:
	// phase 1: profile: bandwidth is negative, NaN or infinite
}
