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

//go:wasmimport orrery_kernels excess_slack
//go:noescape
func importExcessSlack(a *int32, n, c int32, out *[2]int64)

//go:wasmimport orrery_kernels add_rotated
//go:noescape
func importAddRotated(dst, tile *int32, n, t int32)

//go:wasmimport orrery_kernels fold_delta
//go:noescape
func importFoldDelta(psi *int64, m int32, base *int32, n, v, c int32)

//go:wasmimport orrery_kernels residues
//go:noescape
func importResidues(tab *int32, m int32, base *int32, n, v, c int32, lv, dst *int64, out *[2]int64)

//go:wasmimport orrery_kernels windows
//go:noescape
func importWindows(out *int64, k int32, x0lo, x0hi uint32, psi *int64, m int32, runs *int32, r, from0 int32, pre *int64)

//go:wasmimport orrery_kernels place
//go:noescape
func importPlace(dst, base, tile *int32, n, t, c int32, out *[2]int64)

//go:wasmimport orrery_kernels below
//go:noescape
func importBelow(a *int64, n int32, xlo, xhi uint32) int32

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

func excessSlack(a []int32, c int32) (excess, slack int64) {
	if useImports {
		return hostExcessSlack(a, c)
	}
	return excessSlackGeneric(a, c)
}

func addRotated(dst, tile []int32, t int) {
	if useImports {
		hostAddRotated(dst, tile, t)
		return
	}
	addRotatedGeneric(dst, tile, t)
}

func foldDelta(psi []int64, base []int32, v, c int32) {
	if useImports {
		hostFoldDelta(psi, base, v, c)
		return
	}
	foldDeltaGeneric(psi, base, v, c)
}

// reverse has no import (none was added for it, unmeasured under a host):
// the module runs the generic loop.
func reverse(dst, src []int32) { reverseGeneric(dst, src) }

func residues(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (excess, evals int64) {
	if useImports {
		return hostResidues(dst, cls, base, v, c, scratch)
	}
	return residuesGeneric(dst, cls, base, v, c, scratch)
}

func windows(out []int64, x0 int64, psi []int64, runs []Run, from0 int, pre []int64) {
	if useImports {
		hostWindows(out, x0, psi, runs, from0, pre)
		return
	}
	windowsGeneric(out, x0, psi, runs, from0, pre)
}

func place(dst, base, tile []int32, t int, c int32) (excess, slack int64) {
	if useImports {
		var out [2]int64
		importPlace(unsafe.SliceData(dst), unsafe.SliceData(base), unsafe.SliceData(tile), int32(len(dst)), int32(t), c, &out)
		return out[0], out[1]
	}
	return placeGeneric(dst, base, tile, t, c)
}

func below(a []int64, x int64) int {
	if useImports {
		if len(a) == 0 {
			return 0
		}
		return int(importBelow(unsafe.SliceData(a), int32(len(a)), uint32(x), uint32(uint64(x)>>32)))
	}
	return belowGeneric(a, x)
}

// hostWindows is windows through the import: runs is read in place, 16
// bytes a run (see [Run]), and x0 goes as two 32-bit halves.
func hostWindows(out []int64, x0 int64, psi []int64, runs []Run, from0 int, pre []int64) {
	importWindows(unsafe.SliceData(out), int32(len(out)), uint32(x0), uint32(uint64(x0)>>32), unsafe.SliceData(psi), int32(len(psi)),
		(*int32)(unsafe.Pointer(unsafe.SliceData(runs))), int32(len(runs)), int32(from0), unsafe.SliceData(pre))
}

// hostResidues is residues through the import (len(cls), len(base) >= 1):
// scratch holds the walk's levels (4 int64s per structure and one more)
// and then the table of the structures, ResidueRow int32s each (see the
// package documentation).
func hostResidues(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (excess, evals int64) {
	m := len(cls)
	lv := scratch[:4*(m+1)]
	tab := unsafe.Slice((*int32)(unsafe.Pointer(&scratch[4*(m+1)])), ResidueRow*m)
	for l := range cls {
		k := &cls[l]
		row := tab[ResidueRow*l : ResidueRow*l+ResidueRow : ResidueRow*l+ResidueRow]
		row[0], row[1] = int32(len(k.Off)-1), int32(k.At)
		row[2], row[3] = addr(unsafe.Pointer(unsafe.SliceData(k.Off))), addr(unsafe.Pointer(unsafe.SliceData(k.Val)))
		row[4], row[5] = addr(unsafe.Pointer(unsafe.SliceData(k.Cnt))), addr(unsafe.Pointer(unsafe.SliceData(k.Sum)))
		row[6], row[7] = 0, 0
	}
	var d *int64
	if dst != nil {
		d = unsafe.SliceData(dst)
	}
	var out [2]int64
	importResidues(unsafe.SliceData(tab), int32(m), unsafe.SliceData(base), int32(len(base)), v, c, unsafe.SliceData(lv), d, &out)
	return out[0], out[1]
}

// addr is p as an offset into the module's linear memory, where the
// kernels' hosts read it.
func addr(p unsafe.Pointer) int32 { return int32(uintptr(p)) }

// hostExcessSlack is excessSlack through the import.
func hostExcessSlack(a []int32, c int32) (excess, slack int64) {
	if len(a) == 0 {
		return 0, 0
	}
	var out [2]int64
	importExcessSlack(unsafe.SliceData(a), int32(len(a)), c, &out)
	return out[0], out[1]
}

// hostAddRotated is addRotated through the import (0 <= t < n).
func hostAddRotated(dst, tile []int32, t int) {
	importAddRotated(unsafe.SliceData(dst), unsafe.SliceData(tile), int32(len(dst)), int32(t))
}

// hostFoldDelta is foldDelta through the import (len(base), len(psi) >= 1).
func hostFoldDelta(psi []int64, base []int32, v, c int32) {
	importFoldDelta(unsafe.SliceData(psi), int32(len(psi)), unsafe.SliceData(base), int32(len(base)), v, c)
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
