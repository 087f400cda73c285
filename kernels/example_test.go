package kernels_test

import (
	"fmt"

	"github.com/orrery/orrery/kernels"
)

// Two jobs share a 10-unit link on a circle of 6 ticks; the second job's
// burst collides with the first's unless it is delayed.
func ExampleRotations() {
	base := []int32{8, 8, 0, 0, 0, 0} // placed job
	rot := []int32{8, 8, 0, 0, 0, 0}  // job to rotate
	rotor := kernels.PrepareRotor(nil, rot)

	scores := make([]int64, len(base))
	kernels.Rotations(scores, base, rotor, 10, 0)
	fmt.Println("excess per delay:", scores)
	// Output:
	// excess per delay: [12 6 0 0 0 6]
}

func ExampleExcess() {
	a := []int32{5, 7, 9}
	b := []int32{6, 2, 4}
	fmt.Println(kernels.Excess(a, b, 10)) // (11-10) + 0 + (13-10)
	// Output:
	// 4
}
