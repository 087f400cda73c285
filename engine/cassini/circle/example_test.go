package circle_test

import (
	"fmt"
	"math"

	"github.com/orrery/orrery/engine/cassini/circle"
)

// The paper's Fig. 5: iteration times of 40 and 60 ms share a unified
// circle of 120 ms, on which the first job repeats 3 times and the second 2.
func ExampleUnify() {
	u, err := circle.Unify(nil, []int{40, 60}, circle.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("perimeter:", u.Perimeter, "repeats:", u.Repeats(0), u.Repeats(1))

	// 255 and 253 ms are coprime (LCM 64515). Under a cap of 10000 ticks,
	// rounding both up to a 3-tick grid gives one 255-tick circle.
	u, err = circle.Unify(nil, []int{255, 253}, circle.Options{MaxPerimeter: 10000, Round: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("grid:", u.Grid, "periods:", u.Periods, "perimeter:", u.Perimeter)
	// Output:
	// perimeter: 120 repeats: 3 2
	// grid: 3 periods: [255 255] perimeter: 255
}

// Eq. 5: rotating a 40 ms job by π/6 on a 120 ms unified circle delays its
// next iteration by 10 ms.
func ExampleShift() {
	fmt.Printf("%.6f ms\n", circle.Shift(math.Pi/6, 120, 40))
	// Output:
	// 10.000000 ms
}

// Coprime periods of 5000 and 4999 ms unify on a 24,995,000-tick circle, but
// share nothing: every shift overlays them the same way, and a search runs
// on one residue. Periods of 180, 200 and 240 ms share 120 residues of their
// 3600-tick circle, and the jobs' shifts matter modulo 60, 40 and 120.
func ExampleReduce() {
	u, err := circle.Reduce(nil, []int{5000, 4999}, circle.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("perimeter:", u.Perimeter, "shared:", u.Shared)
	u, err = circle.Reduce(nil, []int{180, 200, 240}, circle.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("perimeter:", u.Perimeter, "shared:", u.Shared, "residues:", u.Residues(0), u.Residues(1), u.Residues(2))
	// Output:
	// perimeter: 24995000 shared: 1
	// perimeter: 3600 shared: 120 residues: 60 40 120
}
