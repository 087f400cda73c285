package kernels

import (
	"encoding/binary"
	"testing"
)

// FuzzKernels compares every implementation the CPU supports with the
// generic one, and the public API (wrapping ranges included) with the
// definition, on inputs built from the fuzzer's bytes: 8 bytes per tick
// (base and rotating values, reduced into [0, MaxValue]).
func FuzzKernels(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint32(3), uint16(0), uint16(1))
	f.Add(make([]byte, 8*17), uint32(0), uint16(5), uint16(40))
	f.Fuzz(func(t *testing.T, data []byte, cRaw uint32, s0Raw, mRaw uint16) {
		n := min(len(data)/8, 2000)
		base, rot := make([]int32, n), make([]int32, n)
		for i := range n {
			base[i] = int32(binary.LittleEndian.Uint32(data[8*i:]) % (MaxValue + 1))
			rot[i] = int32(binary.LittleEndian.Uint32(data[8*i+4:]) % (MaxValue + 1))
		}
		c := int32(cRaw % (MaxValue + 1))
		want := naiveExcess(base, rot, c)
		for _, im := range impls() {
			if im.ok {
				if got := im.excess(base, rot, c); got != want {
					t.Fatalf("%s Excess n=%d c=%d: got %d want %d", im.name, n, c, got, want)
				}
			}
		}
		if n == 0 {
			return
		}
		rotor := PrepareRotor(nil, rot)
		s0 := int(s0Raw) % n
		m := int(mRaw)%(2*n) + 1
		wantR := make([]int64, m)
		naiveRotations(wantR, base, rot, c, s0)
		got := make([]int64, m)
		for _, im := range impls() {
			if !im.ok {
				continue
			}
			k := min(m, n-s0)
			clear(got)
			im.rotations(got[:k], base, rotor, c, s0)
			for j := range k {
				if got[j] != wantR[j] {
					t.Fatalf("%s Rotations n=%d s0=%d m=%d c=%d: dst[%d] = %d, want %d", im.name, n, s0, k, c, j, got[j], wantR[j])
				}
			}
		}
		Rotations(got, base, rotor, c, s0)
		for j := range m {
			if got[j] != wantR[j] {
				t.Fatalf("Rotations (%s) n=%d s0=%d m=%d c=%d: dst[%d] = %d, want %d", Implementation(), n, s0, m, c, j, got[j], wantR[j])
			}
		}
	})
}
