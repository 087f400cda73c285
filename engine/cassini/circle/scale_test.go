package circle_test

import "runtime"

// scaled returns n, or a quarter of it under WebAssembly (see the link
// package's tests).
func scaled(n int) int {
	if runtime.GOARCH == "wasm" {
		return max(1, n/4)
	}
	return n
}
