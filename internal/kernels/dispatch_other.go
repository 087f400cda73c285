//go:build (!amd64 && !wasip1) || purego || noasm

package kernels

func excess(a, b []int32, c int32) int64 { return excessGeneric(a, b, c) }

func rotations(dst []int64, base, rotor []int32, c int32, s0 int) {
	rotationsGeneric(dst, base, rotor, c, s0)
}

// Implementation names the kernel path in use: "avx512", "avx2" or "generic".
func Implementation() string { return "generic" }
