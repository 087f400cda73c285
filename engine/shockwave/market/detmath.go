package market

import "math"

// The planner's answer must be the same on every host. The standard
// library's Log and Exp run assembly on some architectures (amd64, s390x)
// and Go elsewhere (wasm), which may differ in the last bit, and the
// compiler may fuse x*y+z into one FMA on arm64. So the few transcendental
// values the program needs come from the pure-Go functions below (only
// exact bit operations and IEEE +, −, ×, ÷), and every product that is
// added to something is wrapped in float64(), which forbids fusion. They are
// accurate to a few ulps (TestDetMath).

const (
	ln2Hi = 6.93147180369123816490e-01 // ln 2, upper bits: k·ln2Hi is exact for |k| < 2^11
	ln2Lo = 1.90821492927058770002e-10 // ln 2 − ln2Hi
)

// detLog is ln x for finite x > 0.
func detLog(x float64) float64 {
	f, e := math.Frexp(x) // x = f·2^e, f in [0.5, 1)
	if f < math.Sqrt2/2 {
		f *= 2
		e--
	}
	// ln f = 2·atanh(s), s = (f−1)/(f+1), |s| ≤ 0.1716: the odd series
	// 2s·Σ s^{2i}/(2i+1) to 13 terms is below an ulp.
	s := (f - 1) / (f + 1)
	z := float64(s * s)
	p := 1.0 / 25
	for i := 11; i >= 0; i-- {
		p = float64(p*z) + 1/float64(2*i+1)
	}
	k := float64(e)
	return float64(k*ln2Hi) + (float64(k*ln2Lo) + float64(2*s*p))
}

// detExp is e^x; it returns +Inf past the largest float64 and 0 below the
// smallest.
func detExp(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 709.782712893384:
		return math.Inf(1)
	case x < -745.1332191019412:
		return 0
	}
	// x = k·ln 2 + r, |r| ≤ ln2/2; e^r by its Taylor series (degree 16).
	k := math.Round(x / math.Ln2)
	r := (x - float64(k*ln2Hi)) - float64(k*ln2Lo)
	p := 1.0
	for i := 16; i >= 1; i-- {
		p = float64(p*r)/float64(i) + 1
	}
	return math.Ldexp(p, int(k))
}

// detPow is x^y for finite x > 0 and y ≥ 0: the integer part of y by
// repeated squaring (so λ = 12 or 100 costs a few roundings), the fraction
// through exp and log.
func detPow(x, y float64) float64 {
	yi, yf := math.Modf(y)
	r := 1.0
	if yf != 0 {
		r = detExp(float64(yf * detLog(x)))
	}
	if yi > 1<<30 {
		return math.Inf(1)
	}
	for n, b := int(yi), x; n > 0; n >>= 1 {
		if n&1 == 1 {
			r *= b
		}
		b *= b
	}
	return r
}
