package kernels

import "testing"

// TestZeroAllocs proves the kernels allocate nothing, on every path.
func TestZeroAllocs(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{3, 72, 1000} {
			base, rot, rotor, c := benchInput(n)
			dst := make([]int64, n+5)
			buf := make([]int32, 0, RotorLen(n))
			var sink int64
			if a := testing.AllocsPerRun(20, func() { sink += Excess(base, rot, c) }); a != 0 {
				t.Errorf("Excess n=%d: %v allocs", n, a)
			}
			if a := testing.AllocsPerRun(20, func() { Rotations(dst, base, rotor, c, n/2) }); a != 0 {
				t.Errorf("Rotations n=%d: %v allocs", n, a)
			}
			if a := testing.AllocsPerRun(20, func() { Rotations(dst[:2], base, rotor, c, 0) }); a != 0 {
				t.Errorf("Rotations (2 shifts) n=%d: %v allocs", n, a)
			}
			psi := make([]int64, 7)
			if a := testing.AllocsPerRun(20, func() { e, s := ExcessSlack(base, c); sink += e + s }); a != 0 {
				t.Errorf("ExcessSlack n=%d: %v allocs", n, a)
			}
			if a := testing.AllocsPerRun(20, func() { AddRotated(base, rot, n/2) }); a != 0 {
				t.Errorf("AddRotated n=%d: %v allocs", n, a)
			}
			if a := testing.AllocsPerRun(20, func() { FoldDelta(psi, base, 3, c) }); a != 0 {
				t.Errorf("FoldDelta n=%d: %v allocs", n, a)
			}
			spec := classSpec{vals: [][]int32{{0, c / 2}, {c}}, cnts: [][]int64{{1, 2}, {3}}, at: 1}
			cls := []Classes{spec.classes(), spec.classes()}
			scratch := make([]int64, ResiduesScratch(2))
			if a := testing.AllocsPerRun(20, func() { e, ev := Residues(dst[:n], cls, base, 1, c, scratch); sink += e + ev }); a != 0 {
				t.Errorf("Residues n=%d: %v allocs", n, a)
			}
			if a := testing.AllocsPerRun(20, func() { PrepareRotor(buf, rot) }); a != 0 {
				t.Errorf("PrepareRotor n=%d: %v allocs", n, a)
			}
			_ = sink
		}
	})
}

// TestStackBuffers checks that caller buffers on the stack stay there: the
// dispatch makes direct calls to //go:noescape kernels, never through
// function values, which would move them to the heap.
func TestStackBuffers(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		a := testing.AllocsPerRun(20, func() {
			var base, rot [64]int32
			var rotor [2*64 + RotorPad]int32
			var dst [64]int64
			for i := range base {
				base[i], rot[i] = int32(i), int32(3*i%64)
			}
			r := PrepareRotor(rotor[:0], rot[:])
			Rotations(dst[:], base[:], r, 50, 0)
			_ = Excess(base[:], rot[:], 50)
		})
		if a != 0 {
			t.Errorf("%v allocs with stack buffers", a)
		}
	})
}
