package abi_test

import (
	"fmt"

	"github.com/orrery/orrery/internal/abi"
)

// Two jobs of 8 ticks send 40 units for 3 ticks on a 50-unit link; the
// flat search delays the second by 3 ticks so they never overlap.
func ExampleSearcher_Search() {
	periods := []int32{8, 8}
	demand := []int32{40, 40, 40, 0, 0, 0, 0, 0, 40, 40, 40, 0, 0, 0, 0, 0}
	shifts := make([]int32, 2)
	var s abi.Searcher
	var res abi.LinkResult
	code := s.Search(periods, demand, 50, nil, nil, shifts, &res)
	fmt.Println(code, shifts, res.Score, res.Unshifted)

	// Errors come back as codes with a message.
	code = s.Search(periods, demand, 0, nil, nil, shifts, &res)
	fmt.Println(code, res.Text())
	// Output:
	// ok [0 3] 1 0.775
	// invalid_argument link: capacity must be in [1, kernels.MaxValue] units: got 0
}

// The module hands out blocks and checks every pointer against them.
func ExampleArena() {
	var a abi.Arena
	p := a.Alloc(16)
	_, inside := a.Int32s(p, 4)
	_, past := a.Int32s(p, 5)
	_, misaligned := a.Int32s(p+2, 1)
	fmt.Println(inside, past, misaligned, a.Free(p), a.Free(p))
	// Output:
	// true false false true false
}
