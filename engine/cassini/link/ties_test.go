package link

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// TestCheckerAgreesWithEvaluate: on random problems in both modes, the
// Checker's excess of any shift vector is Workspace.Evaluate's, and Scan's
// m-th entry is the excess with the job at Shift(m); in Exact mode the
// excess repeats with period Candidates(j) in job j's shift.
func TestCheckerAgreesWithEvaluate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var w Workspace
	var c Checker
	var scan []int64
	for it := range 400 {
		k := 1 + rng.IntN(4)
		jobs := make([]profile.Profile, k)
		for j := range jobs {
			tp := []int{5, 6, 8, 9, 12, 20, 30, 45}[rng.IntN(8)]
			d := make([]int32, tp)
			for i := range d {
				if rng.IntN(2) == 0 {
					d[i] = int32(rng.IntN(40))
				}
			}
			jobs[j] = profile.Profile{Period: tp, Demand: d}
		}
		mode := Mode(rng.IntN(2))
		opt := Options{Mode: mode}
		if rng.IntN(4) == 0 {
			opt.Circle = circle.Options{MaxPerimeter: 40, Round: true}
		}
		pr := Problem{Jobs: jobs, Capacity: int32(1 + rng.IntN(80))}
		if err := c.Reset(pr, opt); err != nil {
			if _, _, werr := w.Evaluate(pr, opt, make([]int, k)); werr == nil {
				t.Fatalf("case %d: Reset failed (%v), Evaluate did not", it, err)
			}
			continue
		}
		shifts := make([]int, k)
		for range 5 {
			for j := range shifts {
				shifts[j] = rng.IntN(200) // Evaluate takes a negative shift for a free job
			}
			want, n, err := w.Evaluate(pr, opt, shifts)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Excess(shifts); got != want || c.Points() != n {
				t.Fatalf("case %d %v shifts %v: excess %d on %d points, Evaluate %d on %d", it, mode, shifts, got, c.Points(), want, n)
			}
			j := rng.IntN(k)
			scan = c.Scan(scan, shifts, j)
			if len(scan) != c.Candidates(j) {
				t.Fatalf("case %d: %d scanned, %d candidates", it, len(scan), c.Candidates(j))
			}
			s := shifts[j]
			for m, e := range scan {
				shifts[j] = c.Shift(m)
				if want := c.Excess(shifts); e != want {
					t.Fatalf("case %d %v job %d candidate %d: scan %d, excess %d", it, mode, j, m, e, want)
				}
				if mode == Exact {
					shifts[j] += c.Candidates(j) * (1 + rng.IntN(5))
					if want := c.Excess(shifts); e != want {
						t.Fatalf("case %d job %d: shift %d and %d apart by a multiple of %d differ", it, j, m, shifts[j], c.Candidates(j))
					}
				}
			}
			shifts[j] = s
		}
	}
}

func TestCheckerSteadyStateAllocs(t *testing.T) {
	jobs := []profile.Profile{pulse(255, 114, 25000), pulse(181, 60, 25000), pulse(85, 30, 10000)}
	pr := Problem{Jobs: jobs, Capacity: 50000}
	shifts := []int{0, 7, 11}
	for _, mode := range []Mode{Exact, Paper} {
		var c Checker
		var scan []int64
		run := func() {
			if err := c.Reset(pr, Options{Mode: mode}); err != nil {
				t.Fatal(err)
			}
			c.Excess(shifts)
			scan = c.Scan(scan, shifts, 2)
		}
		run()
		if n := testing.AllocsPerRun(10, run); n != 0 {
			t.Errorf("%v: %v allocations per Reset, Excess and Scan", mode, n)
		}
	}
}

// TestCheckerOwnsItsProblem: Reset copies the demand, so a caller that
// reuses its problem's slices for the next link (as package affinity does)
// does not change what an earlier Checker scores.
func TestCheckerOwnsItsProblem(t *testing.T) {
	jobs := []profile.Profile{pulse(15, 4, 20), pulse(12, 9, 26), pulse(15, 8, 33)}
	for _, mode := range []Mode{Exact, Paper} {
		var c Checker
		pr := Problem{Jobs: jobs, Capacity: 57}
		if err := c.Reset(pr, Options{Mode: mode}); err != nil {
			t.Fatal(err)
		}
		sh := []int{0, 1, 7}
		want := c.Excess(sh)
		scan := slices.Clone(c.Scan(nil, sh, 2))
		saved := slices.Clone(jobs[1].Demand)
		clear(jobs[1].Demand)
		if got := c.Excess(sh); got != want || !slices.Equal(c.Scan(nil, sh, 2), scan) {
			t.Errorf("%v: excess %d after the caller cleared a demand, %d before", mode, got, want)
		}
		copy(jobs[1].Demand, saved)
	}
}

// TestCheckerAnyPeriods: the Checker lays a problem out as the search does,
// so it scores periods whose unified circle passes the cap (5000 and 4999
// ticks: 24,995,000) as Evaluate does, and scans the candidate shifts of
// partly shared periods (1200 and 1800: gcd 600) on the shared circle.
func TestCheckerAnyPeriods(t *testing.T) {
	var c Checker
	var w Workspace
	for _, jobs := range [][]profile.Profile{
		{pulse(5000, 2000, 40), pulse(4999, 1800, 35)},
		{pulse(1200, 500, 40), pulse(1800, 700, 35), pulse(7, 3, 5)},
	} {
		pr := Problem{Jobs: jobs, Capacity: 50}
		if err := c.Reset(pr, Options{}); err != nil {
			t.Fatal(err)
		}
		sh := make([]int, len(jobs))
		for s := range 3 {
			sh[1] = 123 * s
			want, n, err := w.Evaluate(pr, Options{}, sh)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Excess(sh); got != want || c.Points() != n {
				t.Fatalf("%d jobs, shifts %v: excess %d on %d points, Evaluate %d on %d", len(jobs), sh, got, c.Points(), want, n)
			}
		}
		scan := c.Scan(nil, sh, 1)
		if len(scan) != c.Candidates(1) {
			t.Fatalf("%d scanned, %d candidates", len(scan), c.Candidates(1))
		}
		for _, m := range []int{0, 1, len(scan) / 3, len(scan) - 1} {
			m = min(m, len(scan)-1)
			sh[1] = m
			if want, _, _ := w.Evaluate(pr, Options{}, sh); scan[m] != want {
				t.Fatalf("%d jobs: scan[%d] = %d, Evaluate %d", len(jobs), m, scan[m], want)
			}
		}
	}
}
