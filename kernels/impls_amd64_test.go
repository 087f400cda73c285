//go:build !purego && !noasm

package kernels

import "github.com/klauspost/cpuid/v2"

// cpuAVX2 and cpuAVX512 say what the CPU (not ORRERY_KERNELS) supports.
var (
	cpuAVX2   = cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.CMOV)
	cpuAVX512 = cpuAVX2 && cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512VL, cpuid.BMI2)
)

func across2(dst []int64, base, rotor []int32, c int32, s0 int) {
	acrossAVX2(dst, base, rotor, c, s0, sumAVX2(base)-int64(len(base))*int64(c))
}

func along2(dst []int64, base, rotor []int32, c int32, s0 int) {
	if len(base) < 8 {
		across2(dst, base, rotor, c, s0)
		return
	}
	alongAVX2(dst, base, rotor, c, s0, sumAVX2(base)-int64(len(base))*int64(c))
}

func across512(dst []int64, base, rotor []int32, c int32, s0 int) {
	acrossAVX512(dst, base, rotor, c, s0, sumAVX512(base)-int64(len(base))*int64(c))
}

func along512(dst []int64, base, rotor []int32, c int32, s0 int) {
	alongAVX512(dst, base, rotor, c, s0, sumAVX512(base)-int64(len(base))*int64(c))
}

// archImpls lists the vector implementations, each with whether this CPU can
// run it.
func archImpls() []impl {
	return []impl{
		{name: "avx2", ok: cpuAVX2, excess: excessAVX2, rotations: rotations2, path: true,
			excessSlack: excessSlackAVX2, addRotated: addRotated2, foldDelta: foldDeltaAVX2, reverse: reverseAVX2},
		{name: "avx2-across", ok: cpuAVX2, excess: excessAVX2, rotations: across2},
		{name: "avx2-along", ok: cpuAVX2, excess: excessAVX2, rotations: along2},
		{name: "avx512", ok: cpuAVX512, excess: excessAVX512, rotations: rotations512, path: true,
			excessSlack: excessSlackAVX512, addRotated: addRotated2, foldDelta: foldDeltaAVX2, reverse: reverseAVX2},
		{name: "avx512-across", ok: cpuAVX512, excess: excessAVX512, rotations: across512},
		{name: "avx512-along", ok: cpuAVX512, excess: excessAVX512, rotations: along512},
	}
}

// forcePath sets the feature flags so that the public API takes the named
// path, and returns a function that restores them.
func forcePath(name string) (restore func()) {
	old2, old512 := useAVX2, useAVX512
	useAVX2, useAVX512 = name == "avx2" || name == "avx512", name == "avx512"
	return func() { useAVX2, useAVX512 = old2, old512 }
}
