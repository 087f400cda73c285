package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLoopKernels checks ExcessSlack, AddRotated and FoldDelta, on every
// implementation that has its own and through the public API on every
// path, against their definitions: every length to 300 and a few past the
// widening points, every shift of short circles, folds of every modulus
// of short circles, random and extreme values.
func TestLoopKernels(t *testing.T) {
	lengths := []int{511, 512, 513, 1031, 4097}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	check := func(t *testing.T, name string, es func([]int32, int32) (int64, int64), ar func(dst, tile []int32, t int), fd func([]int64, []int32, int32, int32)) {
		rng := rand.New(rand.NewPCG(31, 32))
		// Past every kernel's widening point (256 terms a uint32 lane, up to
		// 32 lanes a step) with every term at its largest.
		for _, n := range []int{256*32 + 5, 2*256*32 + 37} {
			a := misaligned(n, 1)
			fill(rng, a, 2)
			for _, c := range []int32{0, 1, MaxValue} {
				e, s := es(a, c)
				if we, ws := naiveExcessSlack(a, c); e != we || s != ws {
					t.Fatalf("%s ExcessSlack n=%d of MaxValue, c=%d: got (%d, %d) want (%d, %d)", name, n, c, e, s, we, ws)
				}
			}
			clear(a)
			if e, s := es(a, MaxValue); e != 0 || s != int64(n)*MaxValue {
				t.Fatalf("%s ExcessSlack n=%d of zeros, c=MaxValue: got (%d, %d) want (0, %d)", name, n, e, s, int64(n)*MaxValue)
			}
		}
		for _, n := range lengths {
			a, tile := misaligned(n, n%4), misaligned(n, (n/4)%4)
			fill(rng, a, n%5)
			fill(rng, tile, (n/5)%5)
			for _, c := range thresholds(rng) {
				e, s := es(a, c)
				we, ws := naiveExcessSlack(a, c)
				if e != we || s != ws {
					t.Fatalf("%s ExcessSlack n=%d c=%d: got (%d, %d) want (%d, %d)", name, n, c, e, s, we, ws)
				}
				if n == 0 {
					continue
				}
				for _, m := range foldModuli(rng, n) {
					v := thresholds(rng)[rng.IntN(6)]
					got := make([]int64, m)
					for r := range got {
						got[r] = int64(r) << 40 // FoldDelta adds to psi
					}
					want := slices.Clone(got)
					fd(got, a, v, c)
					naiveFoldDelta(want, a, v, c)
					if !slices.Equal(got, want) {
						t.Fatalf("%s FoldDelta n=%d m=%d v=%d c=%d: got %v want %v", name, n, m, v, c, got, want)
					}
				}
			}
			if n == 0 {
				continue
			}
			shifts := []int{0, n - 1, rng.IntN(n)}
			if n <= 40 {
				shifts = shifts[:0]
				for s := range n {
					shifts = append(shifts, s)
				}
			}
			for _, s := range shifts {
				got, want := slices.Clone(a), slices.Clone(a)
				ar(got, tile, s)
				for i := range want {
					want[i] += tile[(i-s+n)%n]
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s AddRotated n=%d t=%d: got %v want %v", name, n, s, got, want)
				}
			}
		}
	}
	forEachImpl(t, func(t *testing.T, im impl) {
		if im.excessSlack == nil {
			t.Skipf("%s: no loop kernels of its own", im.name)
		}
		check(t, im.name, im.excessSlack, im.addRotated, im.foldDelta)
	})
	forEachPath(t, func(t *testing.T) {
		check(t, "public API", ExcessSlack, AddRotated, FoldDelta)
	})
}

// TestReverse checks each path's reversal against its definition on every
// length to 300 and a few long ones, and PrepareRotor on every path against
// rotor[j] = rot[(-j) mod n].
func TestReverse(t *testing.T) {
	lengths := []int{1023, 1024, 1025, 4099}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	rng := rand.New(rand.NewPCG(33, 34))
	forEachImpl(t, func(t *testing.T, im impl) {
		if im.reverse == nil {
			t.Skipf("%s: no reversal of its own", im.name)
		}
		for _, n := range lengths {
			src := misaligned(n, n%4)
			fill(rng, src, 0)
			dst := misaligned(n, (n/4)%4)
			im.reverse(dst, src)
			for i := range dst {
				if dst[i] != src[n-1-i] {
					t.Fatalf("%s reverse n=%d: dst[%d] = %d, want %d", im.name, n, i, dst[i], src[n-1-i])
				}
			}
		}
	})
	forEachPath(t, func(t *testing.T) {
		for _, n := range lengths {
			rot := make([]int32, n)
			fill(rng, rot, 0)
			rotor := PrepareRotor(nil, rot)
			for j := range rotor {
				want := int32(0)
				if n > 0 {
					want = rot[((-j)%n+n)%n]
				}
				if rotor[j] != want {
					t.Fatalf("PrepareRotor n=%d: rotor[%d] = %d, want %d", n, j, rotor[j], want)
				}
			}
		}
	})
}

// foldModuli are the moduli FoldDelta is tried with over n ticks.
func foldModuli(rng *rand.Rand, n int) []int {
	if n <= 12 {
		ms := make([]int, 0, n+1)
		for m := 1; m <= n+1; m++ {
			ms = append(ms, m)
		}
		return ms
	}
	return []int{1, 2, 3, 4, 5, 8, n / 3, n, 1 + rng.IntN(n)}
}

func naiveExcessSlack(a []int32, c int32) (excess, slack int64) {
	for _, v := range a {
		excess += max(int64(v)-int64(c), 0)
		slack += max(int64(c)-int64(v), 0)
	}
	return excess, slack
}

func naiveFoldDelta(psi []int64, base []int32, v, c int32) {
	for i, b := range base {
		psi[i%len(psi)] += max(int64(b)+int64(v)-int64(c), 0) - max(int64(b)-int64(c), 0)
	}
}

// TestLoopKernelsPanics checks the documented panics.
func TestLoopKernelsPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"AddRotated length": func() { AddRotated(make([]int32, 3), make([]int32, 2), 0) },
		"AddRotated shift":  func() { AddRotated(make([]int32, 3), make([]int32, 3), 3) },
		"AddRotated minus":  func() { AddRotated(make([]int32, 3), make([]int32, 3), -1) },
		"FoldDelta empty":   func() { FoldDelta(nil, make([]int32, 3), 1, 1) },
		"Place length":      func() { Place(make([]int32, 3), make([]int32, 3), make([]int32, 2), 0, 1) },
		"Place base":        func() { Place(make([]int32, 3), make([]int32, 2), make([]int32, 3), 0, 1) },
		"Place shift":       func() { Place(make([]int32, 3), make([]int32, 3), make([]int32, 3), 3, 1) },
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
	AddRotated(nil, nil, 0) // an empty circle at shift 0 is no work
	FoldDelta(nil, nil, 1, 1)
	if e, s := Place(nil, nil, nil, 0, 1); e != 0 || s != 0 {
		t.Errorf("Place of an empty circle: (%d, %d)", e, s)
	}
}

// TestPlace checks Place on every path against its definition: every
// length to 300 and a few past the widening points, every shift of short
// circles, random and extreme values; dst's old contents never leak in.
func TestPlace(t *testing.T) {
	lengths := []int{511, 512, 513, 1031, 4097}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	rng := rand.New(rand.NewPCG(35, 36))
	forEachPath(t, func(t *testing.T) {
		for _, n := range lengths {
			base, tile, dst := misaligned(n, n%4), misaligned(n, (n/4)%4), misaligned(n, (n/16)%4)
			// Halves keep every sum within MaxValue, the contract.
			fill(rng, base, n%5)
			fill(rng, tile, (n/5)%5)
			for i := range base {
				base[i] /= 2
				tile[i] /= 2
			}
			shifts := []int{0}
			if n > 0 {
				shifts = []int{0, n - 1, rng.IntN(n)}
			}
			if n <= 40 {
				shifts = shifts[:0]
				for s := range max(n, 1) {
					shifts = append(shifts, s)
				}
			}
			for _, s := range shifts {
				for _, c := range thresholds(rng) {
					fill(rng, dst, 0)
					e, sl := Place(dst, base, tile, s, c)
					want := slices.Clone(base)
					for i := range want {
						want[i] += tile[(i-s+n)%n]
					}
					if !slices.Equal(dst, want) {
						t.Fatalf("Place n=%d t=%d: dst %v want %v", n, s, dst, want)
					}
					if we, ws := naiveExcessSlack(want, c); e != we || sl != ws {
						t.Fatalf("Place n=%d t=%d c=%d: got (%d, %d) want (%d, %d)", n, s, c, e, sl, we, ws)
					}
				}
			}
		}
	})
}

// TestBelow checks Below on every path against its definition: every
// position of the first value at most x (and none) in slices to 70 long,
// at the extremes of int64.
func TestBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	forEachPath(t, func(t *testing.T) {
		for n := range 71 {
			a := make([]int64, n)
			for _, x := range []int64{math.MinInt64, -1, 0, 1 << 40, math.MaxInt64 - 1} {
				for first := 0; first <= n; first++ {
					for i := range a {
						switch {
						case i < first:
							a[i] = x + 1 + rng.Int64N(1<<20) // above x
							if x >= math.MaxInt64-(1<<20) {
								a[i] = math.MaxInt64
							}
						case i == first:
							a[i] = x - rng.Int64N(2)
							if x == math.MinInt64 {
								a[i] = x
							}
						default:
							a[i] = rng.Int64() // anything after
						}
					}
					if got := Below(a, x); got != first {
						t.Fatalf("Below n=%d x=%d, first at %d: got %d (%v)", n, x, first, got, a)
					}
				}
			}
		}
	})
}
