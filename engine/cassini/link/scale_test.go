package link

import "runtime"

// scaled returns n, or a quarter of it under WebAssembly, where the tests
// run 10-40 times slower and check determinism rather than breadth (the
// native run covers that).
func scaled(n int) int {
	if runtime.GOARCH == "wasm" {
		return max(1, n/4)
	}
	return n
}
