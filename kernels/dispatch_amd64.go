//go:build !purego && !noasm

package kernels

import "github.com/klauspost/cpuid/v2"

// The feature flags: set once at init from the CPU (cpuid checks that the OS
// saves the vector state) and from ORRERY_KERNELS; the kernel tests flip them
// to run every path. The generated kernels list the instructions they use in
// kernels_amd64.s ("Requires: ..."); the checks below cover those lists.
var (
	useAVX2 = cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.CMOV) &&
		!envDisables(envNoAVX2)
	useAVX512 = useAVX2 &&
		cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512VL, cpuid.BMI2) &&
		!envDisables(envNoAVX512)
)

// avx512Min is the shortest slice (circle) the AVX-512 kernels are given.
// Below it they are no faster than AVX2 (measured), and their masked tails
// would reach past the slices: harmless, but a microcode assist per load
// when that memory is an unmapped page. From 16 on every lane they touch lies
// inside the slices.
const avx512Min = 16

func excess(a, b []int32, c int32) int64 {
	switch {
	case useAVX512 && len(a) >= avx512Min:
		return excessAVX512(a, b, c)
	case useAVX2:
		return excessAVX2(a, b, c)
	}
	return excessGeneric(a, b, c)
}

func rotations(dst []int64, base, rotor []int32, c int32, s0 int) {
	switch {
	case useAVX512 && len(base) >= avx512Min:
		rotations512(dst, base, rotor, c, s0)
	case useAVX2:
		rotations2(dst, base, rotor, c, s0)
	default:
		rotationsGeneric(dst, base, rotor, c, s0)
	}
}

// rotations2 is the AVX2 path of rotations: the along-i kernel for few
// shifts over a long circle, the across-shift kernel otherwise.
func rotations2(dst []int64, base, rotor []int32, c int32, s0 int) {
	n := len(base)
	if len(dst) == 0 {
		return
	}
	_ = rotor[2*n+6] // the across kernel reads its padding, up to rotor[2n+6]
	k := sumAVX2(base) - int64(n)*int64(c)
	if n >= 8 && alongFaster(n, len(dst), 8) {
		alongAVX2(dst, base, rotor, c, s0, k)
		return
	}
	acrossAVX2(dst, base, rotor, c, s0, k)
}

// rotations512 is the AVX-512 path of rotations. Fewer than 16 shifts always
// go along the circle: the across kernel would mask its stores at the end of
// so short a dst.
func rotations512(dst []int64, base, rotor []int32, c int32, s0 int) {
	n := len(base)
	if len(dst) == 0 {
		return
	}
	_ = rotor[2*n-1]
	k := sumAVX512(base) - int64(n)*int64(c)
	if len(dst) < 16 || alongFaster(n, len(dst), 16) {
		alongAVX512(dst, base, rotor, c, s0, k)
		return
	}
	acrossAVX512(dst, base, rotor, c, s0, k)
}

func excessSlack(a []int32, c int32) (excess, slack int64) {
	switch {
	case useAVX512 && len(a) >= avx512Min:
		return excessSlackAVX512(a, c)
	case useAVX2:
		return excessSlackAVX2(a, c)
	}
	return excessSlackGeneric(a, c)
}

// addRotated and foldDelta load, add and store every value; their AVX2
// kernels serve the AVX-512 path too (none of their own).
func addRotated(dst, tile []int32, t int) {
	if useAVX2 {
		addRotated2(dst, tile, t)
		return
	}
	addRotatedGeneric(dst, tile, t)
}

// addRotated2 is addRotatedGeneric's two straight runs in the AVX2 kernel.
func addRotated2(dst, tile []int32, t int) {
	n := len(dst)
	addAVX2(dst[t:], tile[:n-t])
	addAVX2(dst[:t], tile[n-t:])
}

// reverse is PrepareRotor's reversed period (len(src) = len(dst)).
func reverse(dst, src []int32) {
	if useAVX2 {
		reverseAVX2(dst, src)
		return
	}
	reverseGeneric(dst, src)
}

func foldDelta(psi []int64, base []int32, v, c int32) {
	if useAVX2 {
		foldDeltaAVX2(psi, base, v, c)
		return
	}
	foldDeltaGeneric(psi, base, v, c)
}

// The residue walk has no vector path of its own natively.
func residues(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (excess, evals int64) {
	return residuesGeneric(dst, cls, base, v, c, scratch)
}

// The window scan has no vector path of its own natively.
func windows(out []int64, x0 int64, psi []int64, runs []Run, from0 int, pre []int64) {
	windowsGeneric(out, x0, psi, runs, from0, pre)
}

// Implementation names the kernel path in use: "avx512", "avx2" or "generic".
// The AVX-512 path hands slices shorter than 16 to the AVX2 kernels.
func Implementation() string {
	switch {
	case useAVX512:
		return "avx512"
	case useAVX2:
		return "avx2"
	}
	return "generic"
}

// alongFaster reports whether the along-i loop shape beats the across-shift
// one for m shifts over a circle of n, with lanes int32s per register.
// Measured on AMD Zen 5 (BenchmarkShapes runs the grid): along
// wins by 2-8x for a few shifts, and is level with across from about 3
// registers' worth of shifts on; across keeps the edge on short circles,
// where along's per-shift horizontal sums dominate.
func alongFaster(n, m, lanes int) bool {
	switch {
	case m < lanes/2:
		return true
	case m <= lanes:
		return n >= 64
	case m <= 3*lanes:
		return n >= 128
	}
	return false
}

// Place and Below are compositions and a scan natively: the copy, AddRotated
// and ExcessSlack on their vector paths, and one compare a value.
func place(dst, base, tile []int32, t int, c int32) (excess, slack int64) {
	return placeGeneric(dst, base, tile, t, c)
}

func below(a []int64, x int64) int { return belowGeneric(a, x) }
