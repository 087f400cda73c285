package kernels

// excessGeneric is the reference for [Excess]; len(b) == len(a).
func excessGeneric(a, b []int32, c int32) int64 {
	b = b[:len(a)]
	var sum int64
	for i, x := range a {
		sum += int64(max(x+b[i]-c, 0))
	}
	return sum
}

// rotationsGeneric is the reference for [Rotations] on a range that does not
// wrap: 0 <= s0 and s0+len(dst) <= n.
func rotationsGeneric(dst []int64, base, rotor []int32, c int32, s0 int) {
	n := len(base)
	for k := range dst {
		// rot[(i-s) mod n] = rotor[s-i+n]; walk the rotor backwards.
		r := rotor[s0+k+1 : s0+k+n+1]
		var sum int64
		for i, x := range base {
			sum += int64(max(x+r[n-1-i]-c, 0))
		}
		dst[k] = sum
	}
}
