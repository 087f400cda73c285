package link

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// structures are the shapes of period sets the search must handle: each
// draws k periods.
var structures = []struct {
	name  string
	draw  func(rng *rand.Rand, k int) []int
	maxK  int
	small bool // brute force affordable with 4 jobs
}{
	{"coprime", func(rng *rand.Rand, k int) []int {
		pool := []int{4, 5, 7, 9, 11, 13}
		if k == 4 {
			pool = []int{3, 4, 5, 7, 11}
		}
		rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		ps := slices.Clone(pool[:k])
		return ps
	}, 4, true},
	{"equal", func(rng *rand.Rand, k int) []int {
		t := 3 + rng.IntN(14)
		ps := make([]int, k)
		for i := range ps {
			ps[i] = t
		}
		return ps
	}, 4, true},
	{"nested", func(rng *rand.Rand, k int) []int {
		ps := []int{2 + rng.IntN(3)}
		for len(ps) < k {
			ps = append(ps, ps[len(ps)-1]*(1+rng.IntN(3)))
		}
		rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		return ps
	}, 4, true},
	{"shared", func(rng *rand.Rand, k int) []int {
		pool := []int{4, 6, 8, 9, 10, 12, 15, 18}
		ps := make([]int, k)
		for i := range ps {
			ps[i] = pool[rng.IntN(len(pool))]
		}
		return ps
	}, 4, false},
	{"mixed", func(rng *rand.Rand, k int) []int {
		// A group sharing a period plus jobs coprime to it.
		t := []int{6, 10, 12}[rng.IntN(3)]
		ps := append([]int{t, t}, []int{7, 11, 5}[:k-2]...)
		rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		return ps[:k]
	}, 4, true},
}

// drawJob draws a demand profile of period t: a pulse, phases, noise, or a
// pattern that repeats within the period (which the search folds).
func drawJob(rng *rand.Rand, t int) profile.Profile {
	d := make([]int32, t)
	switch rng.IntN(4) {
	case 0:
		start, n, bw := rng.IntN(t), 1+rng.IntN(t), int32(1+rng.IntN(40))
		for i := range n {
			d[(start+i)%t] = bw
		}
	case 1:
		for i := 0; i < t; {
			n := 1 + rng.IntN(t/2+1)
			bw := int32(rng.IntN(3) * 15)
			for ; n > 0 && i < t; n, i = n-1, i+1 {
				d[i] = bw
			}
		}
	case 2:
		for i := range d {
			d[i] = int32(rng.IntN(30))
		}
	default:
		divs := []int{}
		for p := 1; p < t; p++ {
			if t%p == 0 {
				divs = append(divs, p)
			}
		}
		p := 1
		if len(divs) > 0 {
			p = divs[rng.IntN(len(divs))]
		}
		for i := range p {
			d[i] = int32(rng.IntN(3) * 20)
		}
		for i := p; i < t; i++ {
			d[i] = d[i-p]
		}
	}
	return profile.Profile{Period: t, Demand: d}
}

// bruteTiles is bruteExact with every job materialized over the unified
// circle twice over, so that a shift is an offset: the same enumeration of
// every shift of every free job over its whole period, faster.
func bruteTiles(jobs []profile.Profile, c int32, fixed []int) (int64, []int) {
	p := 1
	for _, j := range jobs {
		p = p / circle.GCD(p, j.Period) * j.Period
	}
	k := len(jobs)
	tiles := make([][]int32, k)
	for j, jb := range jobs {
		tiles[j] = make([]int32, 2*p)
		for a := range tiles[j] {
			tiles[j][a] = jb.Demand[a%jb.Period]
		}
	}
	cur := make([]int, k)
	sum := make([]int64, p)
	var best []int
	bestE := int64(math.MaxInt64)
	var rec func(i int)
	rec = func(i int) {
		if i == k {
			var e int64
			for _, v := range sum {
				e += max(v-int64(c), 0)
			}
			if e < bestE {
				bestE, best = e, slices.Clone(cur)
			}
			return
		}
		lo, hi := 0, jobs[i].Period
		if fixed == nil && i == 0 {
			hi = 1
		} else if fixed != nil && fixed[i] >= 0 {
			lo, hi = fixed[i], fixed[i]+1
		}
		for s := lo; s < hi; s++ {
			cur[i] = s
			// Tick a shows (a - s) mod T: tile[a - s + p] of the doubled tile.
			tile := tiles[i][p-circle.Mod(s, p):]
			for a := range sum {
				sum[a] += int64(tile[a])
			}
			rec(i + 1)
			for a := range sum {
				sum[a] -= int64(tile[a])
			}
		}
	}
	rec(0)
	return bestE, best
}

// bruteEvaluate scores shifts on the materialized unified circle.
func bruteEvaluate(jobs []profile.Profile, c int32, shifts []int) (excess int64, points int) {
	p := 1
	for _, j := range jobs {
		p = p / circle.GCD(p, j.Period) * j.Period
	}
	for a := range p {
		var s int64
		for j, jb := range jobs {
			s += int64(jb.Demand[circle.Mod(a-shifts[j], jb.Period)])
		}
		excess += max(s-int64(c), 0)
	}
	return excess, p
}

// layouts are the circles a test forces: the cost model's choice, the
// shared circle with classes, the whole materialized circle.
var layouts = []struct {
	name string
	v    int
}{{"auto", 0}, {"shared", layoutShared}, {"dense", layoutDense}}

// TestSearchMatchesBruteForceEveryStructure compares every layout of the
// search with brute force over the materialized unified circle: coprime,
// equal, nested, shared and mixed periods, 2 to 4 jobs, free and fixed
// jobs. Excess, score, unshifted score, points and the tie-broken shifts
// must all agree, and Evaluate must agree at random shifts.
func TestSearchMatchesBruteForceEveryStructure(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	cases := 0
	for _, st := range structures {
		for k := 2; k <= st.maxK; k++ {
			n := scaled(24)
			if k == 4 && !st.small {
				n = scaled(6)
			}
			for it := range n {
				periods := st.draw(rng, k)
				jobs := make([]profile.Profile, k)
				for j, p := range periods {
					jobs[j] = drawJob(rng, p)
				}
				if it%4 == 1 {
					// Identical jobs, which the search orders.
					a, b := rng.IntN(k), rng.IntN(k)
					jobs[b] = jobs[a]
					periods[b] = periods[a]
				}
				c := int32(10 + rng.IntN(50))
				var fixed []int
				if it%3 == 2 {
					fixed = make([]int, k)
					for j := range fixed {
						fixed[j] = -1
						if rng.IntN(2) == 0 {
							fixed[j] = rng.IntN(3*periods[j]) - periods[j]
						}
					}
				}
				checkAgainstBrute(t, fmt.Sprintf("%s k=%d #%d %v c=%d fixed=%v", st.name, k, it, periods, c, fixed), jobs, c, fixed, rng)
				cases++
			}
		}
	}
	t.Logf("%d problems, %d layouts each", cases, len(layouts))
}

func checkAgainstBrute(t *testing.T, name string, jobs []profile.Profile, c int32, fixed []int, rng *rand.Rand) {
	t.Helper()
	wantE, wantS := bruteTiles(jobs, c, fixed)
	for j, jb := range jobs {
		wantS[j] = circle.Mod(wantS[j], jb.Period) // a fixed shift comes back within its period
	}
	zero := make([]int, len(jobs))
	for j := range zero {
		if fixed != nil && fixed[j] >= 0 {
			zero[j] = fixed[j]
		}
	}
	unE, p := bruteEvaluate(jobs, c, zero)
	for _, l := range layouts {
		w := Workspace{layout: l.v}
		pr := Problem{Jobs: jobs, Capacity: c, Fixed: fixed}
		res, err := w.Search(context.Background(), pr, Options{}, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", name, l.name, err)
		}
		got := []any{res.Excess, res.Shifts, res.Status, res.Points, res.Score, res.Bound, res.Unshifted}
		want := []any{wantE, wantS, Optimal, p, score(wantE, p, c), score(wantE, p, c), score(unE, p, c)}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s %s (circle of %d ticks): (-brute +search)\n%s", name, l.name, w.n, d)
		}
		for range 3 {
			sh := make([]int, len(jobs))
			for j, jb := range jobs {
				sh[j] = rng.IntN(3*jb.Period) - jb.Period
			}
			e, pts, err := w.Evaluate(Problem{Jobs: jobs, Capacity: c}, Options{}, sh)
			if be, bp := bruteEvaluate(jobs, c, sh); err != nil || e != be || pts != bp {
				t.Fatalf("%s %s: Evaluate(%v) = %d over %d (%v), brute force %d over %d", name, l.name, sh, e, pts, err, be, bp)
			}
		}
	}
}

// TestRunScanMatchesDirect compares the run scan of a job's shifts with
// scoring each shift directly, on both layouts, with the other jobs at
// random shifts.
func TestRunScanMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for it := range scaled(1500) {
		st := structures[rng.IntN(len(structures))]
		k := 2 + rng.IntN(2)
		ps := st.draw(rng, k)
		jobs := make([]profile.Profile, k)
		for j, p := range ps {
			jobs[j] = drawJob(rng, p)
		}
		c := int32(10 + rng.IntN(50))
		for _, l := range []int{layoutShared, layoutDense} {
			w := Workspace{layout: l}
			pr := Problem{Jobs: jobs, Capacity: c}
			if err := w.setup(context.Background(), pr, Options{}); err != nil {
				t.Fatal(err)
			}
			if len(w.free) == 0 {
				continue
			}
			// Last free job, all others at random shifts.
			j := w.free[len(w.free)-1]
			for _, f := range w.free {
				if f != j {
					w.cur[f] = rng.IntN(w.ncand[f])
				}
			}
			sum := make([]int32, w.n)
			for i, tt := range w.cur {
				if i != j {
					w.addView(sum, i, tt)
				}
			}
			nc := w.ncand[j]
			a := make([]int64, nc)
			w.runLeaf(sum, j, 0, a)
			for m := range nc {
				want := w.shiftCost(sum, j, m)
				if a[m] != want {
					t.Fatalf("it %d layout %d %v kinds %v mods %v n=%d mu=%d j=%d shift %d: runs %d direct %d; pat %+v", it, l, ps, w.kind, w.mods, w.n, w.mu, j, m, a[m], want, w.pat[j])
				}
			}
		}
	}
}
