//go:build linux

package kernels

import (
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// guardedInt32s returns a slice of n int32s that ends exactly where a
// PROT_NONE page begins (atEnd) or begins exactly where one ends, so a
// kernel reading even one element past the slice (or before it) faults and
// crashes the test binary.
func guardedInt32s(t *testing.T, n int, atEnd bool) []int32 {
	b := guardedBytes(t, 4*n, atEnd)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), n)
}

// guardedInt64s is guardedInt32s for int64s.
func guardedInt64s(t *testing.T, n int, atEnd bool) []int64 {
	b := guardedBytes(t, 8*n, atEnd)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), n)
}

func guardedBytes(t *testing.T, size int, atEnd bool) []byte {
	t.Helper()
	page := os.Getpagesize()
	data := (size + page - 1) / page
	mem, err := syscall.Mmap(-1, 0, (data+2)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	if err := syscall.Mprotect(mem[(data+1)*page:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	region := mem[page : (data+1)*page]
	if atEnd {
		return region[len(region)-size:]
	}
	return region[:size:size]
}

// TestGuardPages runs every implementation with its inputs and output placed
// against PROT_NONE pages, on both sides, proving that no kernel reads or
// writes outside its slices (rotor padding included: it is part of the slice).
func TestGuardPages(t *testing.T) {
	var sizes []int
	for n := 0; n <= 48; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 2047, 2049, 4100)
	forEachImpl(t, func(t *testing.T, im impl) {
		for _, n := range sizes {
			for _, atEnd := range []bool{true, false} {
				a, b := guardedInt32s(t, n, atEnd), guardedInt32s(t, n, atEnd)
				fill(nil, a, 2)
				fill(nil, b, 2)
				want := excessGeneric(a, b, 1)
				if got := im.excess(a, b, 1); got != want {
					t.Fatalf("Excess n=%d: got %d want %d", n, got, want)
				}
				if n == 0 {
					continue
				}
				if im.excessSlack != nil {
					guardLoops(t, im, a, b, atEnd)
				}
				rotor := guardedInt32s(t, RotorLen(n), atEnd)
				PrepareRotor(rotor[:0], b)
				for _, r := range [][2]int{{0, n}, {0, 1}, {n - 1, 1}, {n / 2, n - n/2}, {0, min(n, 3)}, {n - min(n, 7), min(n, 7)}} {
					s0, m := r[0], r[1]
					dst := guardedInt64s(t, m, atEnd)
					im.rotations(dst, a, rotor, 1, s0)
					ref := make([]int64, m)
					rotationsGeneric(ref, a, rotor, 1, s0)
					for k := range dst {
						if dst[k] != ref[k] {
							t.Fatalf("Rotations n=%d s0=%d m=%d: dst[%d] = %d, want %d", n, s0, m, k, dst[k], ref[k])
						}
					}
				}
			}
		}
	})
}

// guardLoops runs im's loop kernels on a and b (guarded, n >= 1) and on a
// guarded psi of a few moduli.
func guardLoops(t *testing.T, im impl, a, b []int32, atEnd bool) {
	n := len(a)
	e, s := im.excessSlack(a, 1)
	if we, ws := excessSlackGeneric(a, 1); e != we || s != ws {
		t.Fatalf("ExcessSlack n=%d: got (%d, %d) want (%d, %d)", n, e, s, we, ws)
	}
	for _, m := range []int{1, min(n, 7), min(n, 8), min(n, 9), n} {
		psi := guardedInt64s(t, m, atEnd)
		clear(psi)
		im.foldDelta(psi, a, 2, 1)
		ref := make([]int64, m)
		foldDeltaGeneric(ref, a, 2, 1)
		for r := range psi {
			if psi[r] != ref[r] {
				t.Fatalf("FoldDelta n=%d m=%d: psi[%d] = %d, want %d", n, m, r, psi[r], ref[r])
			}
		}
	}
	for _, sh := range []int{0, n / 2, n - 1} {
		ref := append([]int32(nil), a...)
		addRotatedGeneric(ref, b, sh)
		im.addRotated(a, b, sh)
		for i := range a {
			if a[i] != ref[i] {
				t.Fatalf("AddRotated n=%d t=%d: dst[%d] = %d, want %d", n, sh, i, a[i], ref[i])
			}
		}
	}
	fill(nil, a, 2) // as the caller left it
	if im.reverse != nil {
		im.reverse(a, b)
		for i := range a {
			if a[i] != b[n-1-i] {
				t.Fatalf("reverse n=%d: dst[%d] = %d, want %d", n, i, a[i], b[n-1-i])
			}
		}
		fill(nil, a, 2)
	}
}
