package kernels

import (
	"math/rand/v2"
	"testing"
)

// naiveRotations is the definition of Rotations, written as plainly as possible.
func naiveRotations(dst []int64, base, rot []int32, c int32, s0 int) {
	n := len(base)
	for k := range dst {
		s := (s0 + k) % n
		var sum int64
		for i := 0; i < n; i++ {
			sum += max(int64(base[i])+int64(rot[(i-s+n)%n])-int64(c), 0)
		}
		dst[k] = sum
	}
}

func TestRotationsMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 80; n++ {
		base := make([]int32, n)
		rot := make([]int32, n)
		for i := range base {
			base[i] = rng.Int32N(100)
			rot[i] = rng.Int32N(100)
		}
		rotor := PrepareRotor(nil, rot)
		for _, s0 := range []int{0, n / 2, n - 1} {
			m := 2*n + 3
			got, want := make([]int64, m), make([]int64, m)
			Rotations(got, base, rotor, 90, s0)
			naiveRotations(want, base, rot, 90, s0)
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("n=%d s0=%d k=%d: got %d want %d", n, s0, k, got[k], want[k])
				}
			}
		}
	}
}
