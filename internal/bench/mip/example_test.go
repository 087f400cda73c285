package mip_test

import (
	"fmt"
	"os"

	"github.com/orrery/orrery/internal/bench/mip"
)

// A two-item knapsack written as an LP file, and a candidate solution
// checked and scored against it.
func ExampleModel() {
	m := &mip.Model{Maximize: true}
	a := m.Add("take_a", mip.Binary, 0, 1)
	b := m.Add("take_b", mip.Binary, 0, 1)
	m.Obj = []mip.Term{{Var: a, Coef: 5}, {Var: b, Coef: 4}}
	m.Constrain("weight", []mip.Term{{Var: a, Coef: 4}, {Var: b, Coef: 3}}, mip.LE, 5)
	if err := m.WriteLP(os.Stdout); err != nil {
		panic(err)
	}
	fmt.Println(m.Check([]float64{1, 1}, 1e-9, 1e-9))
	fmt.Println(m.Objective([]float64{1, 0}))
	// Output:
	// \ 2 variables, 1 rows
	// Minimize
	//  obj: - 5 take_a - 4 take_b
	// Subject To
	//  weight: + 4 take_a + 3 take_b <= 5
	// Bounds
	// Binaries
	//  take_a take_b
	// End
	// [row weight violated by 2]
	// 5
}
