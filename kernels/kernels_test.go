package kernels

import (
	"math/rand/v2"
	"testing"
)

// naiveRotations is the definition of Rotations, written as plainly as
// possible, in int64 arithmetic.
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

// naiveExcess is the definition of Excess in int64 arithmetic.
func naiveExcess(a, b []int32, c int32) int64 {
	var sum int64
	for i := range a {
		sum += max(int64(a[i])+int64(b[i])-int64(c), 0)
	}
	return sum
}

// fill sets v to values drawn by mode: 0 random over [0, MaxValue], 1 all
// zero, 2 all MaxValue, 3 a mix of the two extremes, 4 small values (so many
// pairs sit near a small threshold). Modes 1 and 2 need no rng.
func fill(rng *rand.Rand, v []int32, mode int) {
	for i := range v {
		switch mode {
		case 0:
			v[i] = rng.Int32N(MaxValue + 1)
		case 1:
			v[i] = 0
		case 2:
			v[i] = MaxValue
		case 3:
			v[i] = MaxValue * rng.Int32N(2)
		default:
			v[i] = rng.Int32N(8)
		}
	}
}

// thresholds are the values of c every test tries.
func thresholds(rng *rand.Rand) []int32 {
	return []int32{0, 1, 5, MaxValue / 2, MaxValue, rng.Int32N(MaxValue + 1)}
}

func TestGenericMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 80; n++ {
		base, rot := make([]int32, n), make([]int32, n)
		fill(rng, base, n%5)
		fill(rng, rot, (n/5)%5)
		rotor := PrepareRotor(nil, rot)
		for _, c := range thresholds(rng) {
			if g, w := excessGeneric(base, rot, c), naiveExcess(base, rot, c); g != w {
				t.Fatalf("excess n=%d c=%d: got %d want %d", n, c, g, w)
			}
			for _, s0 := range []int{0, n / 2, n - 1} {
				m := n - s0
				got, want := make([]int64, m), make([]int64, m)
				rotationsGeneric(got, base, rotor, c, s0)
				naiveRotations(want, base, rot, c, s0)
				for k := range got {
					if got[k] != want[k] {
						t.Fatalf("n=%d s0=%d k=%d c=%d: got %d want %d", n, s0, k, c, got[k], want[k])
					}
				}
			}
		}
	}
}

// TestGenericLong checks the generic kernels at the extremes on circles long
// enough to widen their partial sums many times.
func TestGenericLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{255, 256, 257, 1000, 5000} {
		for mode := range 5 {
			base, rot := make([]int32, n), make([]int32, n)
			fill(rng, base, mode)
			fill(rng, rot, (mode+2)%5)
			rotor := PrepareRotor(nil, rot)
			for _, c := range []int32{0, MaxValue} {
				if g, w := excessGeneric(base, rot, c), naiveExcess(base, rot, c); g != w {
					t.Fatalf("excess n=%d c=%d: got %d want %d", n, c, g, w)
				}
				s0, m := rng.IntN(n), 11
				m = min(m, n-s0)
				got, want := make([]int64, m), make([]int64, m)
				rotationsGeneric(got, base, rotor, c, s0)
				naiveRotations(want, base, rot, c, s0)
				for k := range got {
					if got[k] != want[k] {
						t.Fatalf("n=%d mode=%d s0=%d k=%d c=%d: got %d want %d", n, mode, s0, k, c, got[k], want[k])
					}
				}
			}
		}
	}
}

// TestRotationsWrap checks the public API's splitting of wrapping shift
// ranges against the definition, on the active path.
func TestRotationsWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 1; n <= 70; n++ {
		base, rot := make([]int32, n), make([]int32, n)
		fill(rng, base, 0)
		fill(rng, rot, 0)
		rotor := PrepareRotor(nil, rot)
		c := rng.Int32N(MaxValue + 1)
		for _, s0 := range []int{0, n / 2, n - 1} {
			m := 2*n + 3
			got, want := make([]int64, m), make([]int64, m)
			Rotations(got, base, rotor, c, s0)
			naiveRotations(want, base, rot, c, s0)
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("n=%d s0=%d k=%d: got %d want %d", n, s0, k, got[k], want[k])
				}
			}
		}
	}
}

func TestPrepareRotor(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 1; n <= 150; n++ {
		rot := make([]int32, n)
		fill(rng, rot, 0)
		rotor := PrepareRotor(make([]int32, 3, 500), rot)
		if len(rotor) != RotorLen(n) {
			t.Fatalf("n=%d: len %d, want %d", n, len(rotor), RotorLen(n))
		}
		for j, v := range rotor {
			if want := rot[(n-j%n)%n]; v != want {
				t.Fatalf("n=%d: rotor[%d] = %d, want rot[(-%d) mod n] = %d", n, j, v, j, want)
			}
		}
	}
	if got := PrepareRotor(nil, nil); len(got) != RotorLen(0) {
		t.Fatalf("empty rotor has length %d", len(got))
	}
}

func TestRotationsPanics(t *testing.T) {
	base := []int32{1, 2, 3}
	rotor := PrepareRotor(nil, base)
	for name, f := range map[string]func(){
		"short rotor": func() { Rotations(make([]int64, 1), base, rotor[:5], 0, 0) },
		"negative s0": func() { Rotations(make([]int64, 1), base, rotor, 0, -1) },
		"s0 past n":   func() { Rotations(make([]int64, 1), base, rotor, 0, 3) },
		"short b":     func() { Excess(base, base[:2], 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	// An empty range needs no valid shift.
	Rotations(nil, base, rotor, 0, 99)
}
