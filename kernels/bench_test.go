package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// runPairs benchmarks f, which evaluates pairs (shift, tick) pairs, and
// reports pair evaluations per second of wall-clock time (pairs/s) and, where
// the OS tells the thread's CPU time, per CPU-second (pairs/cpu-s: the rate
// unaffected by other processes taking the core on a shared machine).
func runPairs(b *testing.B, pairs float64, f func()) {
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	for b.Loop() {
		f()
	}
	if c := threadCPU() - c0; c > 0 {
		b.ReportMetric(pairs*float64(b.N)/c.Seconds(), "pairs/cpu-s")
	}
	b.ReportMetric(pairs*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// benchInput returns a random base and rotor of length n (values in [0, 1000)
// and a threshold near the mean of base+rot, so that about half the pairs
// exceed it).
func benchInput(n int) (base, rot, rotor []int32, c int32) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	base, rot = make([]int32, n), make([]int32, n)
	for i := range base {
		base[i] = rng.Int32N(1000)
		rot[i] = rng.Int32N(1000)
	}
	return base, rot, PrepareRotor(nil, rot), 1000
}

// BenchmarkRotations scores every shift of a circle of n ticks (a whole
// rotation search) on each path and reports pair evaluations per second.
func BenchmarkRotations(b *testing.B) {
	for _, n := range []int{72, 360, 1024, 4096, 46155} {
		base, _, rotor, c := benchInput(n)
		dst := make([]int64, n)
		for _, im := range impls() {
			b.Run(fmt.Sprintf("n=%d/%s", n, im.name), func(b *testing.B) {
				if !im.ok {
					b.Skipf("%s: not supported by this CPU", im.name)
				}
				runPairs(b, float64(n)*float64(n), func() { im.rotations(dst, base, rotor, c, 0) })
			})
		}
	}
}

// BenchmarkRotationsFew scores a few shifts over a long circle, the case of
// links whose jobs' periods share a small gcd.
func BenchmarkRotationsFew(b *testing.B) {
	for _, n := range []int{4096, 46155} {
		for _, m := range []int{1, 3, 7, 16, 40} {
			base, _, rotor, c := benchInput(n)
			dst := make([]int64, m)
			for _, im := range impls() {
				b.Run(fmt.Sprintf("n=%d/m=%d/%s", n, m, im.name), func(b *testing.B) {
					if !im.ok {
						b.Skipf("%s: not supported by this CPU", im.name)
					}
					runPairs(b, float64(n)*float64(m), func() { im.rotations(dst, base, rotor, c, n/2) })
				})
			}
		}
	}
}

// BenchmarkExcess sums the excess of two profiles of n ticks on each path.
func BenchmarkExcess(b *testing.B) {
	for _, n := range []int{72, 360, 1024, 4096, 46155} {
		base, rot, _, c := benchInput(n)
		for _, im := range impls() {
			b.Run(fmt.Sprintf("n=%d/%s", n, im.name), func(b *testing.B) {
				if !im.ok {
					b.Skipf("%s: not supported by this CPU", im.name)
				}
				var sink int64
				runPairs(b, float64(n), func() { sink += im.excess(base, rot, c) })
				_ = sink
			})
		}
	}
}

// BenchmarkLoops runs the link search's loop kernels on each path that has
// its own, at the sizes a 12-job ranking gives them (mean 1087 ticks for
// ExcessSlack and AddRotated, 1443 ticks folded modulo 143 for FoldDelta)
// and at a long circle; it reports ticks per second.
func BenchmarkLoops(b *testing.B) {
	for _, n := range []int{143, 1087, 1443, 46155} {
		base, rot, _, c := benchInput(n)
		psi := make([]int64, max(n/10, 1))
		for _, im := range impls() {
			if im.excessSlack == nil {
				continue
			}
			run := func(name string, f func()) {
				b.Run(fmt.Sprintf("%s/n=%d/%s", name, n, im.name), func(b *testing.B) {
					if !im.ok {
						b.Skipf("%s: not supported by this CPU", im.name)
					}
					runPairs(b, float64(n), f)
				})
			}
			var sink int64
			run("ExcessSlack", func() { e, s := im.excessSlack(base, c); sink += e + s })
			run("FoldDelta", func() { im.foldDelta(psi, base, 300, c) })
			run("AddRotated", func() { im.addRotated(base, rot, n/3); im.addRotated(base, rot, 0) })
			_ = sink
		}
	}
}

// BenchmarkPrepareRotor builds the rotor of a circle of n ticks (the
// reversal on the path in use, then the copies) and reports ticks per
// second.
func BenchmarkPrepareRotor(b *testing.B) {
	for _, n := range []int{72, 360, 1024, 46155} {
		_, rot, _, _ := benchInput(n)
		dst := make([]int32, RotorLen(n))
		b.Run(fmt.Sprintf("n=%d/%s", n, Implementation()), func(b *testing.B) {
			runPairs(b, float64(n), func() { PrepareRotor(dst, rot) })
		})
	}
}

// BenchmarkShapes compares the two loop shapes of each vector path (across
// shifts, along the circle) over a grid of circle lengths n and shift counts
// m; alongFaster encodes where each wins.
func BenchmarkShapes(b *testing.B) {
	for _, n := range []int{16, 40, 72, 150, 360, 1024, 4096} {
		base, _, rotor, c := benchInput(n)
		for _, m := range []int{1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128} {
			if m > n {
				continue
			}
			dst := make([]int64, m)
			for _, im := range impls() {
				if !strings.HasSuffix(im.name, "-across") && !strings.HasSuffix(im.name, "-along") {
					continue
				}
				b.Run(fmt.Sprintf("n=%d/m=%d/%s", n, m, im.name), func(b *testing.B) {
					if !im.ok {
						b.Skipf("%s: not supported by this CPU", im.name)
					}
					runPairs(b, float64(n)*float64(m), func() { im.rotations(dst, base, rotor, c, 0) })
				})
			}
		}
	}
}
