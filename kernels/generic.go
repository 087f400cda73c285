package kernels

// The generic kernels are the reference every other path is tested against,
// and the path of every build without assembly (purego, noasm, arm64,
// wasm). They use the same identity as the vector kernels,
//
//	max(b + r - c, 0) = max(r, c - b) + (b - c),
//
// so the inner loop is a max and an add per pair, and sum the terms, each in
// [0, 2^24), in uint32 partial sums widened every widenEvery terms. Eight
// shifts per pass with uint32 partial sums measured fastest under wazero
// (GOOS=wasip1; ahead of four shifts per pass, int64 sums and a branchy max)
// and within noise of the best on amd64, so one generic serves every
// architecture and there is no separate wasm variant.

// widenEvery is how many terms in [0, 2^24) a uint32 partial sum may add.
const widenEvery = 1 << 8

// excessGeneric is the reference for [Excess]; len(b) >= len(a). It sums
// max(a[i]+b[i], c), each below 2^25, in two uint32 partial sums of at most
// 64 terms per block of 128, then subtracts len(a)*c. Eight values per
// iteration halve the loop overhead that dominates under wasm (2-3x there,
// 1.2-1.5x on amd64, measured).
func excessGeneric(a, b []int32, c int32) int64 {
	b = b[:len(a)]
	sum := -int64(len(a)) * int64(c)
	i := 0
	for i+8 <= len(a) {
		end := min(len(a)&^7, i+widenEvery/2)
		var p0, p1 uint32
		for ; i < end; i += 8 {
			aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
			p0 += uint32(max(aa[0]+bb[0], c))
			p1 += uint32(max(aa[1]+bb[1], c))
			p0 += uint32(max(aa[2]+bb[2], c))
			p1 += uint32(max(aa[3]+bb[3], c))
			p0 += uint32(max(aa[4]+bb[4], c))
			p1 += uint32(max(aa[5]+bb[5], c))
			p0 += uint32(max(aa[6]+bb[6], c))
			p1 += uint32(max(aa[7]+bb[7], c))
		}
		sum += int64(p0) + int64(p1)
	}
	var p uint32
	for ; i < len(a); i++ {
		p += uint32(max(a[i]+b[i], c))
	}
	return sum + int64(p)
}

// rotationsGeneric is the reference for [Rotations] on a range that does not
// wrap: 0 <= s0 and s0+len(dst) <= n = len(base), len(rotor) >= 2n+7.
func rotationsGeneric(dst []int64, base, rotor []int32, c int32, s0 int) {
	n := len(base)
	k := -int64(n) * int64(c)
	for _, x := range base {
		k += int64(x)
	}
	j := 0
	for ; j+8 <= len(dst); j += 8 {
		rotations8(dst[j:j+8], base, rotor[s0+j+1:s0+j+n+8], c, k)
	}
	switch r := len(dst) - j; {
	case r >= 3:
		// A full pass of eight into scratch beats r single passes from
		// three on (measured; two under wasm); the rotor's padding holds
		// the extra windows.
		var tmp [8]int64
		rotations8(tmp[:], base, rotor[s0+j+1:s0+j+n+8], c, k)
		copy(dst[j:], tmp[:r])
	default:
		for ; j < len(dst); j++ {
			dst[j] = k + rotation1(base, rotor[s0+j+1:s0+j+n+1], c)
		}
	}
}

// rotations8 sets dst[q] = k + sum_i max(w[n-1-i+q], c-base[i]) for q < 8,
// where len(w) = n+7: eight consecutive shifts per pass over base, sharing
// each c-base[i] and the reads of w.
func rotations8(dst []int64, base, w []int32, c int32, k int64) {
	dst = dst[:8]
	n := len(base)
	w = w[:n+7]
	var s [8]int64
	for i0 := 0; i0 < n; i0 += widenEvery {
		var a0, a1, a2, a3, a4, a5, a6, a7 uint32
		for i, x := range base[i0:min(i0+widenEvery, n)] {
			nb := c - x
			j := n - 1 - i0 - i
			v := w[j : j+8 : j+8]
			a0 += uint32(max(v[0], nb))
			a1 += uint32(max(v[1], nb))
			a2 += uint32(max(v[2], nb))
			a3 += uint32(max(v[3], nb))
			a4 += uint32(max(v[4], nb))
			a5 += uint32(max(v[5], nb))
			a6 += uint32(max(v[6], nb))
			a7 += uint32(max(v[7], nb))
		}
		s[0] += int64(a0)
		s[1] += int64(a1)
		s[2] += int64(a2)
		s[3] += int64(a3)
		s[4] += int64(a4)
		s[5] += int64(a5)
		s[6] += int64(a6)
		s[7] += int64(a7)
	}
	for q := range dst {
		dst[q] = s[q] + k
	}
}

// rotation1 returns sum_i max(w[n-1-i], c-base[i]) for len(w) = n.
func rotation1(base, w []int32, c int32) int64 {
	n := len(base)
	w = w[:n]
	var s int64
	for i0 := 0; i0 < n; i0 += widenEvery {
		i1 := min(i0+widenEvery, n)
		var a uint32
		for i, x := range base[i0:i1] {
			a += uint32(max(w[n-1-i0-i], c-x))
		}
		s += int64(a)
	}
	return s
}

// excessSlackGeneric is the reference for [ExcessSlack]: as the vector
// paths do, it sums max(v, c) and v (int64 sums, one max a tick) and
// takes excess = M - n*c and slack = M - S; measured faster than both the
// definition and uint32 partial sums of each term.
func excessSlackGeneric(a []int32, c int32) (excess, slack int64) {
	var m, s int64
	for _, v := range a {
		m += int64(max(v, c))
		s += int64(v)
	}
	return m - int64(len(a))*int64(c), m - s
}

// reverseGeneric is the reference for reverse: dst is src reversed
// (len(src) = len(dst)).
func reverseGeneric(dst, src []int32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] = src[len(src)-1-i]
	}
}

// addRotatedGeneric is the reference for [AddRotated]: two straight runs,
// 0 <= t < n.
func addRotatedGeneric(dst, tile []int32, t int) {
	n := len(dst)
	hi := dst[t:]
	for i, v := range tile[:n-t] {
		hi[i] += v
	}
	lo := dst[:t]
	for i, v := range tile[n-t:] {
		lo[i] += v
	}
}

// foldDeltaGeneric is the reference for [FoldDelta], len(psi) >= 1:
// max(b+v-c, 0) - max(b-c, 0) = max(b+v, c) - max(b, c), one term in
// [0, v] per tick.
func foldDeltaGeneric(psi []int64, base []int32, v, c int32) {
	m := len(psi)
	for i0 := 0; i0 < len(base); i0 += m {
		for r, b := range base[i0:min(i0+m, len(base))] {
			psi[r] += int64(max(b+v, c) - max(b, c))
		}
	}
}

// placeGeneric is the reference for [Place]: the copy, the tile's two
// straight runs and the excess and slack of the sum, each by its own
// kernel on this path (so the vector paths' [AddRotated] and
// [ExcessSlack] serve it natively).
func placeGeneric(dst, base, tile []int32, t int, c int32) (excess, slack int64) {
	copy(dst, base)
	addRotated(dst, tile, t)
	return excessSlack(dst, c)
}

// belowGeneric is the reference for [Below].
func belowGeneric(a []int64, x int64) int {
	for i, v := range a {
		if v <= x {
			return i
		}
	}
	return len(a)
}
