package market

import (
	"math"
	"math/rand/v2"
	"testing"
)

func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Abs(math.Nextafter(b, math.Inf(1))-b)
}

// TestDetMath checks the deterministic log, exp and pow against the
// standard library to a few ulps, over the ranges the planner uses and
// beyond.
func TestDetMath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	worst := [3]float64{}
	for i := 0; i < 200000; i++ {
		x := math.Exp(rng.Float64()*1400 - 700) // 1e-304 .. 1e304
		if i%4 == 0 {
			x = rng.Float64() * 2 // near 1 and in the breakpoints' range
		}
		if x == 0 {
			continue
		}
		worst[0] = max(worst[0], ulps(detLog(x), math.Log(x)))
		y := rng.Float64()*1400 - 700
		worst[1] = max(worst[1], ulps(detExp(y), math.Exp(y)))
		rho, lam := 1+rng.Float64()*20, float64(rng.IntN(101))
		if i%2 == 0 {
			lam += rng.Float64()
		}
		worst[2] = max(worst[2], ulps(detPow(rho, lam), math.Pow(rho, lam)))
	}
	if worst[0] > 4 || worst[1] > 4 || worst[2] > 32 {
		t.Fatalf("worst ulps: log %v, exp %v, pow %v", worst[0], worst[1], worst[2])
	}
	t.Logf("worst ulps: log %v, exp %v, pow %v", worst[0], worst[1], worst[2])
	if detExp(710) != math.Inf(1) || detExp(-800) != 0 || detLog(1) != 0 {
		t.Fatal("special values")
	}
	for _, b := range DefaultBreakpoints()[1:] {
		if ulps(detLog(b), math.Log(b)) > 1 {
			t.Fatalf("ln %v: %v vs %v", b, detLog(b), math.Log(b))
		}
	}
}
