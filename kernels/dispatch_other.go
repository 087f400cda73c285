//go:build (!amd64 && !wasip1) || purego || noasm

package kernels

func excess(a, b []int32, c int32) int64 { return excessGeneric(a, b, c) }

func rotations(dst []int64, base, rotor []int32, c int32, s0 int) {
	rotationsGeneric(dst, base, rotor, c, s0)
}

// The link search's loops with no vector path of their own natively.
func excessSlack(a []int32, c int32) (excess, slack int64) { return excessSlackGeneric(a, c) }
func addRotated(dst, tile []int32, t int)                  { addRotatedGeneric(dst, tile, t) }
func foldDelta(psi []int64, base []int32, v, c int32)      { foldDeltaGeneric(psi, base, v, c) }
func reverse(dst, src []int32)                             { reverseGeneric(dst, src) }
func residues(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (excess, evals int64) {
	return residuesGeneric(dst, cls, base, v, c, scratch)
}
func place(dst, base, tile []int32, t int, c int32) (excess, slack int64) {
	return placeGeneric(dst, base, tile, t, c)
}
func below(a []int64, x int64) int { return belowGeneric(a, x) }
func windows(out []int64, x0 int64, psi []int64, runs []Run, from0 int, pre []int64) {
	windowsGeneric(out, x0, psi, runs, from0, pre)
}

// Implementation names the kernel path in use: "avx512", "avx2" or "generic".
func Implementation() string { return "generic" }
