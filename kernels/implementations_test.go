package kernels

import (
	"math/rand/v2"
	"testing"
)

// misaligned returns a slice of length n whose first element sits off int32s
// past a 64-byte boundary, so the kernels see every alignment.
func misaligned(n, off int) []int32 {
	buf := make([]int32, n+off+16)
	return buf[off : off+n : off+n]
}

// TestImplementations checks every implementation against the generic one
// for circle lengths 0..1100, starts at every alignment, random and extreme
// values, thresholds from 0 to MaxValue, whole searches and sub-ranges of
// shifts (few and many).
func TestImplementations(t *testing.T) {
	maxN := 1100
	if testing.Short() || raceEnabled {
		maxN = 300
	}
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(11, 12))
		thr := thresholds(rng)
		for n := 0; n <= maxN; n++ {
			base, rot := misaligned(n, n%4), misaligned(n, (n/4)%4)
			fill(rng, base, n%5)
			fill(rng, rot, (n/5)%5)
			c := thr[n%len(thr)]

			if g, w := im.excess(base, rot, c), excessGeneric(base, rot, c); g != w {
				t.Fatalf("Excess n=%d c=%d: got %d want %d", n, c, g, w)
			}
			if n == 0 {
				continue
			}
			rotor := PrepareRotor(misaligned(RotorLen(n), (n/16)%4)[:0], rot)
			check := func(s0, m int) {
				t.Helper()
				got, want := make([]int64, m), make([]int64, m)
				im.rotations(got, base, rotor, c, s0)
				rotationsGeneric(want, base, rotor, c, s0)
				for k := range got {
					if got[k] != want[k] {
						t.Fatalf("Rotations n=%d s0=%d m=%d c=%d: dst[%d] = %d, want %d", n, s0, m, c, k, got[k], want[k])
					}
				}
			}
			if n <= 400 || n%17 == 0 {
				check(0, n) // a whole search
			}
			s0 := rng.IntN(n)
			check(s0, n-s0)                     // to the end of the circle
			check(s0, 1+rng.IntN(min(8, n-s0))) // a few shifts
			check(s0, 1+rng.IntN(n-s0))         // any count
		}
	})
}

// TestPaths runs the public API, wrapping shift ranges included, on every
// path the CPU supports, against the definition.
func TestPaths(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 72, 100, 257, 1001} {
			base, rot := make([]int32, n), make([]int32, n)
			fill(rng, base, 0)
			fill(rng, rot, 3)
			rotor := PrepareRotor(nil, rot)
			for _, c := range thresholds(rng) {
				if g, w := Excess(base, rot, c), naiveExcess(base, rot, c); g != w {
					t.Fatalf("Excess n=%d c=%d: got %d want %d", n, c, g, w)
				}
				for _, r := range [][2]int{{0, n}, {n - 1, 3}, {n / 2, n}, {rng.IntN(n), 2*n + 5}} {
					s0, m := r[0], r[1]
					got, want := make([]int64, m), make([]int64, m)
					Rotations(got, base, rotor, c, s0)
					naiveRotations(want, base, rot, c, s0)
					for k := range got {
						if got[k] != want[k] {
							t.Fatalf("Rotations n=%d s0=%d m=%d c=%d: dst[%d] = %d, want %d", n, s0, m, c, k, got[k], want[k])
						}
					}
				}
			}
		}
	})
}

// TestImplementationsExtremes checks every implementation on long circles
// filled with the worst case for overflow (every pair contributing the
// largest term), past every point where a kernel widens its partial sums.
func TestImplementationsExtremes(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(15, 16))
		for _, n := range []int{2039, 2040, 2041, 4079, 4080, 4081, 8193, 20011} {
			for _, tc := range []struct {
				base, rot int // fill modes
				c         int32
			}{
				{1, 2, MaxValue}, // every term max(MaxValue, MaxValue-0)
				{2, 2, 0},        // every excess 2*MaxValue
				{0, 3, MaxValue / 3},
			} {
				base, rot := make([]int32, n), make([]int32, n)
				fill(rng, base, tc.base)
				fill(rng, rot, tc.rot)
				rotor := PrepareRotor(nil, rot)
				if g, w := im.excess(base, rot, tc.c), naiveExcess(base, rot, tc.c); g != w {
					t.Fatalf("Excess n=%d c=%d: got %d want %d", n, tc.c, g, w)
				}
				for _, m := range []int{1, 5, 19, 300} {
					s0 := rng.IntN(n - m)
					got, want := make([]int64, m), make([]int64, m)
					im.rotations(got, base, rotor, tc.c, s0)
					rotationsGeneric(want, base, rotor, tc.c, s0)
					for k := range got {
						if got[k] != want[k] {
							t.Fatalf("Rotations n=%d s0=%d m=%d c=%d: dst[%d] = %d, want %d", n, s0, m, tc.c, k, got[k], want[k])
						}
					}
				}
			}
		}
	})
}
