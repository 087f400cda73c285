//go:build wasip1 && !purego && !noasm

package kernels

import "unsafe"

// useImports is true unless ORRERY_KERNELS says "generic"; the kernel
// tests flip it to run the generic path under the same host.
var useImports = !envDisables(envGeneric)

//go:wasmimport orrery_kernels excess
//go:noescape
func importExcess(a, b *int32, n, c int32) int64

//go:wasmimport orrery_kernels rotations
//go:noescape
func importRotations(dst *int64, base, rotor *int32, n, c, s0, m int32)

func excess(a, b []int32, c int32) int64 {
	if useImports {
		return hostExcess(a, b, c)
	}
	return excessGeneric(a, b, c)
}

func rotations(dst []int64, base, rotor []int32, c int32, s0 int) {
	if useImports {
		hostRotations(dst, base, rotor, c, s0)
		return
	}
	rotationsGeneric(dst, base, rotor, c, s0)
}

// hostExcess is excess through the import; len(b) >= len(a).
func hostExcess(a, b []int32, c int32) int64 {
	if len(a) == 0 {
		return 0
	}
	return importExcess(unsafe.SliceData(a), unsafe.SliceData(b), int32(len(a)), c)
}

// hostRotations is rotations through the import (a range that does not
// wrap; len(rotor) = RotorLen(len(base))).
func hostRotations(dst []int64, base, rotor []int32, c int32, s0 int) {
	if len(dst) == 0 {
		return
	}
	importRotations(unsafe.SliceData(dst), unsafe.SliceData(base), unsafe.SliceData(rotor),
		int32(len(base)), c, int32(s0), int32(len(dst)))
}

// Implementation names the kernel path in use: "host" (the imports) or
// "generic".
func Implementation() string {
	if useImports {
		return "host"
	}
	return "generic"
}
