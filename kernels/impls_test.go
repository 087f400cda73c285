package kernels

import "testing"

// impl is one implementation of the kernels, for tests and benchmarks.
type impl struct {
	name      string
	ok        bool // the CPU can run it
	excess    func(a, b []int32, c int32) int64
	rotations func(dst []int64, base, rotor []int32, c int32, s0 int) // s0+len(dst) <= len(base)
	path      bool                                                    // Implementation() can name it: forcePath selects it

	// The link search's other loops; nil where the path has none of its
	// own (the generic ones run).
	excessSlack func(a []int32, c int32) (excess, slack int64)
	addRotated  func(dst, tile []int32, t int) // 0 <= t < n
	foldDelta   func(psi []int64, base []int32, v, c int32)
	reverse     func(dst, src []int32)                                                                            // PrepareRotor's; nil: the generic one
	residues    func(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (excess, evals int64) // len(cls), len(base) >= 1
}

// impls lists the generic implementation and every vector one.
func impls() []impl {
	generic := impl{name: "generic", ok: true, excess: excessGeneric, rotations: rotationsGeneric, path: true,
		excessSlack: excessSlackGeneric, addRotated: addRotatedGeneric, foldDelta: foldDeltaGeneric,
		reverse: reverseGeneric, residues: residuesGeneric}
	return append([]impl{generic}, archImpls()...)
}

// forEachImpl runs f as a subtest for every implementation, skipping those the
// CPU cannot run.
func forEachImpl(t *testing.T, f func(t *testing.T, im impl)) {
	t.Helper()
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			if !im.ok {
				t.Skipf("%s: not supported by this CPU", im.name)
			}
			f(t, im)
		})
	}
}

// forEachPath runs f as a subtest with each path the CPU supports selected
// through the feature flags, so f exercises the public API on that path.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, im := range impls() {
		if !im.path {
			continue
		}
		t.Run(im.name, func(t *testing.T) {
			if !im.ok {
				t.Skipf("%s: not supported by this CPU", im.name)
			}
			defer forcePath(im.name)()
			if got := Implementation(); got != im.name {
				t.Fatalf("Implementation() = %q with the %s path forced", got, im.name)
			}
			f(t)
		})
	}
}
