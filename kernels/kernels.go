package kernels

// MaxValue bounds every demand value and threshold passed to a kernel:
// 0 <= a[i], b[i], c <= MaxValue. Then a single excess is below 1<<25, so a
// vector lane can add 64 of them in int32 before widening, and a sum over any
// slice Go can index fits an int64. (At the default 1 Mbps unit MaxValue is
// 16.7 Tbps: the engine checks that a link's summed peak demand fits.)
const MaxValue = 1<<24 - 1

// ImportModule is the module name under which a GOOS=wasip1 build imports
// its kernels from the host (see the package documentation, WebAssembly).
const ImportModule = "orrery_kernels"

// RotorPad is the number of extra entries a rotor carries past 2n so that
// vector implementations can load whole registers at the end of a shift block
// (the AVX2 kernel reads up to 7 past 2n; the AVX-512 one masks its loads).
const RotorPad = 64

// RotorLen returns the length of the rotor that [PrepareRotor] builds for a
// rotating array of length n.
func RotorLen(n int) int { return 2*n + RotorPad }

// PrepareRotor writes the rotor of rot into dst and returns it; dst must have
// capacity for RotorLen(len(rot)) entries (it is grown otherwise, the only
// case in which this package allocates).
//
// The rotor is rot reversed and repeated: rotor[j] = rot[(-j) mod n]. It lets
// [Rotations] read the rotating array for consecutive shifts from
// consecutive addresses: rot[(i-s) mod n] = rotor[s-i+n] for 0 <= s <= n.
func PrepareRotor(dst, rot []int32) []int32 {
	n := len(rot)
	m := RotorLen(n)
	if cap(dst) < m {
		dst = make([]int32, m)
	}
	dst = dst[:m]
	if n == 0 {
		clear(dst)
		return dst
	}
	// One reversed period, then copies of it: no division per entry.
	dst[0] = rot[0]
	reverse(dst[1:n], rot[1:])
	for j := n; j < m; j += n {
		copy(dst[j:], dst[:n])
	}
	return dst
}

// Excess returns the excess of a+b over the threshold c:
//
//	for i := range a {
//		sum += max(int64(a[i])+int64(b[i])-int64(c), 0)
//	}
//
// It panics if len(b) < len(a).
func Excess(a, b []int32, c int32) int64 {
	if len(b) < len(a) {
		panic("kernels: Excess with len(b) < len(a)")
	}
	return excess(a, b[:len(a)], c)
}

// Rotations writes, for every k < len(dst), the excess of base plus the
// rotating array delayed by s = (s0+k) mod n ticks:
//
//	for k := range dst {
//		s := (s0 + k) % n
//		for i := 0; i < n; i++ {
//			dst[k] += max(int64(base[i])+int64(rot[(i-s+n)%n])-int64(c), 0)
//		}
//	}
//
// where n = len(base) and rotor = PrepareRotor(_, rot). Shift ranges may wrap
// past n. It panics if len(rotor) != RotorLen(n) or s0 is outside [0, n).
func Rotations(dst []int64, base, rotor []int32, c int32, s0 int) {
	n := len(base)
	if len(rotor) != RotorLen(n) {
		panic("kernels: rotor length does not match base")
	}
	if len(dst) == 0 {
		return
	}
	if s0 < 0 || s0 >= n {
		panic("kernels: shift outside [0, n)")
	}
	for len(dst) > 0 {
		m := min(len(dst), n-s0)
		rotations(dst[:m], base, rotor, c, s0)
		dst = dst[m:]
		s0 = 0
	}
}

// ExcessSlack returns the excess of a over the threshold c and the room
// left below it:
//
//	for _, v := range a {
//		excess += max(int64(v)-int64(c), 0)
//		slack += max(int64(c)-int64(v), 0)
//	}
func ExcessSlack(a []int32, c int32) (excess, slack int64) {
	return excessSlack(a, c)
}

// AddRotated adds tile delayed by t ticks to dst, on a circle of
// n = len(dst) ticks:
//
//	for i := range dst {
//		dst[i] += tile[(i-t+n)%n]
//	}
//
// It panics if len(tile) != n or t is outside [0, n) (t = 0 with n = 0 is
// allowed). Sums past MaxValue wrap: keeping them within it is the
// caller's contract.
func AddRotated(dst, tile []int32, t int) {
	n := len(dst)
	if len(tile) != n {
		panic("kernels: AddRotated with len(tile) != len(dst)")
	}
	if n == 0 && t == 0 {
		return
	}
	if t < 0 || t >= n {
		panic("kernels: AddRotated shift outside [0, n)")
	}
	addRotated(dst, tile, t)
}

// FoldDelta adds to psi, folded modulo m = len(psi), what a demand v adds
// to the excess of base over c at each tick:
//
//	for i, b := range base {
//		psi[i%m] += max(int64(b)+int64(v)-int64(c), 0) - max(int64(b)-int64(c), 0)
//	}
//
// It panics if len(psi) is 0 and base is not empty. v is in [0, MaxValue]
// like every value.
func FoldDelta(psi []int64, base []int32, v, c int32) {
	if len(base) == 0 {
		return
	}
	if len(psi) == 0 {
		panic("kernels: FoldDelta with an empty psi")
	}
	foldDelta(psi, base, v, c)
}

// Place writes base plus tile delayed by t ticks into dst, on a circle of
// n = len(dst) ticks, and returns the excess of the sum over the threshold
// c and the room left below it:
//
//	for i := range dst {
//		dst[i] = base[i] + tile[(i-t+n)%n]
//	}
//	excess, slack = ExcessSlack(dst, c)
//
// It is a branch-and-bound node of the link search: a job placed at a
// shift on top of the others, and its mass bound. It panics if base or
// tile is not n long or t is outside [0, n) (t = 0 with n = 0 is
// allowed); dst may not overlap base or tile. Sums past MaxValue wrap, as
// in [AddRotated].
func Place(dst, base, tile []int32, t int, c int32) (excess, slack int64) {
	n := len(dst)
	if len(base) != n || len(tile) != n {
		panic("kernels: Place with len(base) or len(tile) != len(dst)")
	}
	if n == 0 && t == 0 {
		return 0, 0
	}
	if t < 0 || t >= n {
		panic("kernels: Place shift outside [0, n)")
	}
	return place(dst, base, tile, t, c)
}

// Below returns the index of the first value of a at most x, or len(a)
// when there is none:
//
//	for i, v := range a {
//		if v <= x {
//			return i
//		}
//	}
//	return len(a)
//
// The link search offers a leaf's shifts to its incumbent in order, and
// only those at most the incumbent's cost can change it.
func Below(a []int64, x int64) int {
	return below(a, x)
}
