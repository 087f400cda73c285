package circle_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/orrery/orrery/engine/cassini/circle"
)

// bigLCM is the exact LCM, independent of the package's arithmetic.
func bigLCM(ts []int) *big.Int {
	l := big.NewInt(1)
	for _, t := range ts {
		b := big.NewInt(int64(t))
		g := new(big.Int).GCD(nil, nil, l, b)
		l.Mul(l, new(big.Int).Quo(b, g))
	}
	return l
}

func roundUp(t, g int) int { return (t + g - 1) / g * g }

func TestUnifyLCM(t *testing.T) {
	for _, tc := range []struct {
		periods   []int
		perimeter int
		repeats   []int
	}{
		{[]int{40, 60}, 120, []int{3, 2}}, // the paper's Fig. 5
		{[]int{72, 72}, 72, []int{1, 1}},
		{[]int{255}, 255, []int{1}},
		{[]int{255, 253}, 64515, []int{253, 255}}, // coprime: the product
		{[]int{4, 6, 10}, 60, []int{15, 10, 6}},
		{[]int{1, 1, 1}, 1, []int{1, 1, 1}},
	} {
		u, err := circle.Unify(nil, tc.periods, circle.Options{})
		if err != nil {
			t.Fatalf("%v: %v", tc.periods, err)
		}
		if u.Perimeter != tc.perimeter || u.Grid != 1 || u.Rounded() || !slices.Equal(u.Periods, tc.periods) {
			t.Errorf("%v: got %+v, want perimeter %d, grid 1, periods unchanged", tc.periods, u, tc.perimeter)
		}
		for j, r := range tc.repeats {
			if u.Repeats(j) != r {
				t.Errorf("%v: job %d repeats %d times, want %d", tc.periods, j, u.Repeats(j), r)
			}
		}
	}
}

func TestUnifyCap(t *testing.T) {
	// Exactly at the cap fits; one tick below it does not.
	if u, err := circle.Unify(nil, []int{40, 60}, circle.Options{MaxPerimeter: 120}); err != nil || u.Perimeter != 120 {
		t.Fatalf("at the cap: %+v, %v", u, err)
	}
	_, err := circle.Unify(nil, []int{40, 60}, circle.Options{MaxPerimeter: 119})
	if !errors.Is(err, circle.ErrPerimeterTooLarge) {
		t.Fatalf("past the cap: err = %v, want ErrPerimeterTooLarge", err)
	}
	// The zero Options cap at DefaultMaxPerimeter.
	if _, err := circle.Unify(nil, []int{circle.DefaultMaxPerimeter}, circle.Options{}); err != nil {
		t.Fatalf("a period of DefaultMaxPerimeter: %v", err)
	}
	if _, err := circle.Unify(nil, []int{1024, 1025}, circle.Options{}); !errors.Is(err, circle.ErrPerimeterTooLarge) {
		t.Fatalf("1024*1025 > DefaultMaxPerimeter: err = %v", err)
	}
	// A single period past the cap fails even with rounding.
	if _, err := circle.Unify(nil, []int{500}, circle.Options{MaxPerimeter: 499, Round: true}); !errors.Is(err, circle.ErrPerimeterTooLarge) {
		t.Fatalf("period past the cap with rounding: err = %v", err)
	}
}

func TestUnifyInvalid(t *testing.T) {
	for _, ps := range [][]int{nil, {}, {0}, {5, -1}, {3, 0, 4}} {
		if _, err := circle.Unify(nil, ps, circle.Options{Round: true}); !errors.Is(err, circle.ErrInvalidPeriod) {
			t.Errorf("%v: err = %v, want ErrInvalidPeriod", ps, err)
		}
	}
}

// TestUnifyRounding: 255 and 253 ms (LCM 64515) under a cap of 10000: grid 2
// gives 256 and 254, LCM 32512, still too large; grid 3 rounds both to 255.
func TestUnifyRounding(t *testing.T) {
	u, err := circle.Unify(nil, []int{255, 253}, circle.Options{MaxPerimeter: 10000, Round: true})
	if err != nil {
		t.Fatal(err)
	}
	if u.Grid != 3 || u.Perimeter != 255 || !slices.Equal(u.Periods, []int{255, 255}) || !u.Rounded() {
		t.Fatalf("got %+v, want grid 3, perimeter 255, periods [255 255]", u)
	}
	// Rounding is opt-in and only past the cap.
	u, err = circle.Unify(nil, []int{255, 253}, circle.Options{Round: true})
	if err != nil || u.Grid != 1 || u.Perimeter != 64515 {
		t.Fatalf("under the default cap: %+v, %v; want no rounding", u, err)
	}
}

// TestUnifyMatchesBruteForce compares Unify with an exhaustive search for the
// smallest grid on random periods and caps, with exact big-integer LCMs.
func TestUnifyMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var dst []int
	for it := range 3000 {
		periods := make([]int, 1+rng.IntN(4))
		for i := range periods {
			periods[i] = 1 + rng.IntN(400)
		}
		limit := 1 + rng.IntN(6000)
		round := rng.IntN(4) != 0

		wantGrid, wantPerim := 0, 0
		longest := slices.Max(periods)
		for g := 1; g <= longest; g++ {
			if g > 1 && !round {
				break
			}
			r := make([]int, len(periods))
			for i, t := range periods {
				r[i] = roundUp(t, g)
			}
			if l := bigLCM(r); l.Cmp(big.NewInt(int64(limit))) <= 0 {
				wantGrid, wantPerim = g, int(l.Int64())
				break
			}
		}

		u, err := circle.Unify(dst, periods, circle.Options{MaxPerimeter: limit, Round: round})
		if wantGrid == 0 {
			if !errors.Is(err, circle.ErrPerimeterTooLarge) {
				t.Fatalf("case %d %v cap %d round %v: got %+v, %v; want ErrPerimeterTooLarge", it, periods, limit, round, u, err)
			}
			continue
		}
		if err != nil || u.Grid != wantGrid || u.Perimeter != wantPerim {
			t.Fatalf("case %d %v cap %d round %v: got %+v, %v; want grid %d perimeter %d", it, periods, limit, round, u, err, wantGrid, wantPerim)
		}
		checkUnified(t, periods, u, limit)
		dst = u.Periods
	}
}

// checkUnified checks the invariants of a unified circle: every period is
// the original rounded up to the grid and divides the perimeter, which is
// their LCM and within the cap.
func checkUnified(t *testing.T, periods []int, u circle.Unified, limit int) {
	t.Helper()
	if len(u.Periods) != len(periods) || u.Perimeter > limit || u.Perimeter < 1 {
		t.Fatalf("%v: %+v (cap %d)", periods, u, limit)
	}
	for j, p := range u.Periods {
		if p != roundUp(periods[j], u.Grid) || u.Perimeter%p != 0 {
			t.Fatalf("%v: rounded period %d of job %d on %+v", periods, p, j, u)
		}
	}
	if l := bigLCM(u.Periods); !l.IsInt64() || l.Int64() != int64(u.Perimeter) {
		t.Fatalf("%v: perimeter %d, LCM of %v is %v", periods, u.Perimeter, u.Periods, l)
	}
}

// TestUnifyOverflow: with the cap at the largest int, LCMs past 2^63 must be
// reported, not wrapped around.
func TestUnifyOverflow(t *testing.T) {
	big1, big2 := 1<<40, 1<<40+1 // coprime: LCM about 2^80
	_, err := circle.Unify(nil, []int{big1, big2}, circle.Options{MaxPerimeter: math.MaxInt})
	if !errors.Is(err, circle.ErrPerimeterTooLarge) {
		t.Fatalf("LCM past 2^63: err = %v, want ErrPerimeterTooLarge", err)
	}
	p1, p2 := 2147483647, 2147483629 // primes: LCM just under 2^62
	u, err := circle.Unify(nil, []int{p1, p2}, circle.Options{MaxPerimeter: math.MaxInt})
	if err != nil || u.Perimeter != p1*p2 {
		t.Fatalf("two large primes: %+v, %v; want perimeter %d", u, err, p1*p2)
	}
	_, err = circle.Unify(nil, []int{p1, p2, 2147483587}, circle.Options{MaxPerimeter: math.MaxInt})
	if !errors.Is(err, circle.ErrPerimeterTooLarge) {
		t.Fatalf("three large primes: err = %v, want ErrPerimeterTooLarge", err)
	}
	u, err = circle.Unify(nil, []int{big1, big2}, circle.Options{MaxPerimeter: math.MaxInt, Round: true})
	if err != nil {
		t.Fatal(err)
	}
	checkUnified(t, []int{big1, big2}, u, math.MaxInt)
	if u.Grid < 2 {
		t.Fatalf("got %+v, want a rounded circle", u)
	}
}

// TestUnifyReusesDst: dst's storage holds the periods, and dst may alias
// periods (the link search does this).
func TestUnifyReusesDst(t *testing.T) {
	dst := make([]int, 0, 8)
	u, err := circle.Unify(dst, []int{255, 253}, circle.Options{MaxPerimeter: 10000, Round: true})
	if err != nil || &u.Periods[0] != &dst[:1][0] {
		t.Fatalf("dst not reused: %+v, %v", u, err)
	}
	ps := []int{255, 253}
	u, err = circle.Unify(ps, ps, circle.Options{MaxPerimeter: 10000, Round: true})
	if err != nil || !slices.Equal(u.Periods, []int{255, 255}) || !slices.Equal(ps, []int{255, 255}) {
		t.Fatalf("aliased: %+v %v, %v", u, ps, err)
	}
	in := []int{40, 60}
	if _, err := circle.Unify(nil, in, circle.Options{}); err != nil || !slices.Equal(in, []int{40, 60}) {
		t.Fatalf("input modified: %v, %v", in, err)
	}
}

func TestMod(t *testing.T) {
	for _, tc := range []struct{ a, m, want int }{
		{7, 5, 2}, {5, 5, 0}, {0, 5, 0}, {-1, 5, 4}, {-5, 5, 0}, {-6, 5, 4},
		{-10, 60, 50}, // the BFS vector: t_j2 = -10 becomes 50
		{math.MinInt, 7, 6}, {math.MaxInt, 7, 0}, {-3, 1, 0},
	} {
		if got := circle.Mod(tc.a, tc.m); got != tc.want {
			t.Errorf("Mod(%d, %d) = %d, want %d", tc.a, tc.m, got, tc.want)
		}
	}
}

func TestGCD(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{40, 60, 20}, {255, 253, 1}, {0, 7, 7}, {7, 0, 7}, {0, 0, 0}, {72, 72, 72},
	} {
		if got := circle.GCD(tc.a, tc.b); got != tc.want {
			t.Errorf("GCD(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestShift checks Eq. 5, t = (Δ/2π · p) mod T.
func TestShift(t *testing.T) {
	for _, tc := range []struct {
		rotation          float64
		perimeter, period int
		want              float64
	}{
		{math.Pi / 6, 120, 40, 10},     // the brief's Eq. 5 vector
		{2 * math.Pi / 3, 120, 40, 0},  // Δ = 2π/r_j: a whole period of j
		{5 * math.Pi / 6, 120, 40, 10}, // 50 ms is 10 ms into the next iteration
		{-math.Pi / 6, 120, 40, 30},    // a negative rotation wraps to a delay
		{math.Pi, 72, 72, 36},          // half the circle
		{141.0 / 255 * 2 * math.Pi, 255, 255, 141},
	} {
		got := circle.Shift(tc.rotation, tc.perimeter, tc.period)
		d := math.Abs(got - tc.want)
		if d > 1e-9 && math.Abs(d-float64(tc.period)) > 1e-9 { // tc.period - ε is tc.want = 0 too
			t.Errorf("Shift(%v, %d, %d) = %v, want %v", tc.rotation, tc.perimeter, tc.period, got, tc.want)
		}
		if got < 0 || got >= float64(tc.period) {
			t.Errorf("Shift(%v, %d, %d) = %v is outside [0, %d)", tc.rotation, tc.perimeter, tc.period, got, tc.period)
		}
	}
}

func TestRotation(t *testing.T) {
	if got := circle.Rotation(10, 120); math.Abs(got-math.Pi/6) > 1e-12 {
		t.Errorf("Rotation(10, 120) = %v, want π/6", got)
	}
	if got := circle.Rotation(0, 120); got != 0 {
		t.Errorf("Rotation(0, 120) = %v", got)
	}
	// Shift inverts Rotation within one period.
	for _, p := range []int{72, 120, 255} {
		for _, period := range []int{p, p / 3} {
			for s := range period {
				if got := circle.Shift(circle.Rotation(s, p), p, period); math.Abs(got-float64(s)) > 1e-9 {
					t.Fatalf("Shift(Rotation(%d, %d), %d, %d) = %v", s, p, p, period, got)
				}
			}
		}
	}
}

func TestTile(t *testing.T) {
	got := circle.Tile(nil, []int32{1, 2}, 3, 9)
	if want := []int32{1, 2, 0, 1, 2, 0, 1, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("Tile = %v, want %v", got, want)
	}
	// A large enough dst is reused and every stale value is overwritten.
	dst := []int32{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	got = circle.Tile(dst, []int32{4, 5, 6}, 4, 8)
	if want := []int32{4, 5, 6, 0, 4, 5, 6, 0}; !slices.Equal(got, want) || &got[0] != &dst[0] {
		t.Fatalf("Tile into dst = %v (same storage %v), want %v", got, &got[0] == &dst[0], want)
	}
	// A short dst grows.
	got = circle.Tile(make([]int32, 2), []int32{7}, 1, 5)
	if want := []int32{7, 7, 7, 7, 7}; !slices.Equal(got, want) {
		t.Fatalf("Tile = %v, want %v", got, want)
	}
	if n := testing.AllocsPerRun(10, func() { circle.Tile(dst, []int32{1, 2, 3}, 3, 12) }); n != 0 {
		t.Errorf("Tile into a large dst allocates %v times", n)
	}
}

// bigShared is the LCM of the pairwise gcds, in big integers.
func bigShared(ts []int) *big.Int {
	q := big.NewInt(1)
	for i, a := range ts {
		for _, b := range ts[i+1:] {
			g := new(big.Int).GCD(nil, nil, big.NewInt(int64(a)), big.NewInt(int64(b)))
			d := new(big.Int).GCD(nil, nil, q, g)
			q.Mul(q, new(big.Int).Quo(g, d))
		}
	}
	return q
}

// TestReduceBijection checks the theorem the shared circle rests on, by
// enumeration: for random periods and shifts, the ticks of the unified
// circle map one to one onto the tuples (x_j) with x_j ≡ σ - t_j (mod q_j)
// for some σ < Q, and every such tuple is reached.
func TestReduceBijection(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for range scaled(400) {
		k := 1 + rng.IntN(4)
		periods := make([]int, k)
		for i := range periods {
			periods[i] = []int{1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 18, 20}[rng.IntN(13)]
		}
		u, err := circle.Reduce(nil, periods, circle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := bigShared(periods); !want.IsInt64() || want.Int64() != int64(u.Shared) || u.Perimeter%u.Shared != 0 {
			t.Fatalf("%v: shared %d, want %v (perimeter %d)", periods, u.Shared, want, u.Perimeter)
		}
		shifts := make([]int, k)
		for i := range shifts {
			shifts[i] = rng.IntN(3 * periods[i])
		}
		seen := map[string]bool{}
		for a := range u.Perimeter {
			x := make([]int, k)
			for j, tj := range periods {
				x[j] = circle.Mod(a-shifts[j], tj)
			}
			key := fmt.Sprint(x)
			if seen[key] {
				t.Fatalf("%v shifts %v: tuple %v twice", periods, shifts, x)
			}
			seen[key] = true
			s := circle.Mod(x[0]+shifts[0], u.Residues(0))
			ok := false
			for sigma := s; sigma < u.Shared && !ok; sigma += u.Residues(0) {
				ok = true
				for j := range periods {
					if circle.Mod(x[j]-(sigma-shifts[j]), u.Residues(j)) != 0 {
						ok = false
					}
				}
			}
			if !ok {
				t.Fatalf("%v shifts %v: tick %d gives %v, in no residue's classes", periods, shifts, a, x)
			}
		}
		// Counting: Q times the product of the class sizes is P.
		n := int64(u.Shared)
		for j, tj := range periods {
			n *= int64(tj / u.Residues(j))
		}
		if n != int64(u.Perimeter) || len(seen) != u.Perimeter {
			t.Fatalf("%v: %d tuples over the residues' classes, %d ticks", periods, n, u.Perimeter)
		}
	}
}

// TestReduceLimits: Reduce caps the shared circle, not the perimeter, and
// bounds the perimeter by MaxLCM.
func TestReduceLimits(t *testing.T) {
	u, err := circle.Reduce(nil, []int{5000, 4999}, circle.Options{})
	if err != nil || u.Perimeter != 24995000 || u.Shared != 1 || u.Grid != 1 {
		t.Fatalf("5000, 4999: %+v, %v; want perimeter 24995000, shared 1", u, err)
	}
	if _, err := circle.Reduce(nil, []int{5000, 4999}, circle.Options{MaxLCM: 24994999}); !errors.Is(err, circle.ErrPerimeterTooLarge) {
		t.Fatalf("past MaxLCM: %v", err)
	}
	// 6000, 10000, 15000 share lcm(2000, 3000, 5000) = 30000 residues.
	if _, err := circle.Reduce(nil, []int{6000, 10000, 15000}, circle.Options{MaxPerimeter: 29999}); !errors.Is(err, circle.ErrPerimeterTooLarge) {
		t.Fatalf("shared circle past the cap: %v", err)
	}
	if _, err := circle.Reduce(nil, []int{6000, 10000, 15000}, circle.Options{MaxPerimeter: 30000}); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	if _, err := circle.Reduce(nil, nil, circle.Options{}); !errors.Is(err, circle.ErrInvalidPeriod) {
		t.Fatalf("no periods: %v", err)
	}
	if _, err := circle.Reduce(nil, []int{4, 0}, circle.Options{}); !errors.Is(err, circle.ErrInvalidPeriod) {
		t.Fatalf("zero period: %v", err)
	}
}

// TestReduceMatchesBruteForce compares Reduce's rounding with an exhaustive
// search for the smallest grid on which both the shared circle fits the cap
// and the perimeter MaxLCM, in big integers; dst may alias the periods.
func TestReduceMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for it := range scaled(3000) {
		periods := make([]int, 1+rng.IntN(4))
		for i := range periods {
			periods[i] = 1 + rng.IntN(300)
		}
		opt := circle.Options{MaxPerimeter: 1 + rng.IntN(400), MaxLCM: 1 + rng.IntN(1<<20), Round: rng.IntN(4) != 0}
		want := 0
		for g := 1; g <= slices.Max(periods); g++ {
			if g > 1 && !opt.Round {
				break
			}
			r := make([]int, len(periods))
			for i, p := range periods {
				r[i] = roundUp(p, g)
			}
			if bigLCM(r).Cmp(big.NewInt(int64(opt.MaxLCM))) <= 0 && bigShared(r).Cmp(big.NewInt(int64(opt.MaxPerimeter))) <= 0 {
				want = g
				break
			}
		}
		in := slices.Clone(periods)
		u, err := circle.Reduce(in, in, opt)
		if want == 0 {
			if !errors.Is(err, circle.ErrPerimeterTooLarge) {
				t.Fatalf("case %d %v %+v: got %+v, %v; want ErrPerimeterTooLarge", it, periods, opt, u, err)
			}
			continue
		}
		if err != nil || u.Grid != want {
			t.Fatalf("case %d %v %+v: got %+v, %v; want grid %d", it, periods, opt, u, err, want)
		}
		for j, p := range u.Periods {
			if p != roundUp(periods[j], want) {
				t.Fatalf("case %d: rounded periods %v of %v on grid %d", it, u.Periods, periods, want)
			}
		}
		if l := bigLCM(u.Periods); l.Int64() != int64(u.Perimeter) || bigShared(u.Periods).Int64() != int64(u.Shared) {
			t.Fatalf("case %d: %+v", it, u)
		}
	}
}
