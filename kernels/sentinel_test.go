package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sentinel fills the guard words around a kernel's output.
const sentinel = -0x5eed_5eed_5eed_5eed

// TestNoWritesOutside surrounds each output range with sentinel words (as
// gonum's kernel tests do) and checks that no implementation writes outside
// its dst or into its inputs.
func TestNoWritesOutside(t *testing.T) {
	const guard = 40
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(17, 18))
		for n := 1; n <= 300; n += 1 + n/16 {
			base, rot := make([]int32, n), make([]int32, n)
			fill(rng, base, 0)
			fill(rng, rot, 0)
			rotor := PrepareRotor(nil, rot)
			base0, rotor0 := slices.Clone(base), slices.Clone(rotor)
			for _, m := range []int{1, 2, 3, 5, 8, 9, 15, 16, 17, 33, 95, 96, 97, 255, 256, 257} {
				if m > n {
					break
				}
				s0 := rng.IntN(n - m + 1)
				buf := make([]int64, m+2*guard)
				for i := range buf {
					buf[i] = sentinel
				}
				im.rotations(buf[guard:guard+m:guard+m], base, rotor, 1<<20, s0)
				for i, v := range buf {
					if (i < guard || i >= guard+m) && v != sentinel {
						t.Fatalf("n=%d s0=%d m=%d: wrote %d at dst[%d]", n, s0, m, v, i-guard)
					}
				}
			}
			if !slices.Equal(base, base0) || !slices.Equal(rotor, rotor0) {
				t.Fatalf("n=%d: inputs modified", n)
			}
		}
	})
}
