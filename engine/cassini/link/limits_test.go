package link

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// TestCheck: Check refuses from the periods and the peak alone what a
// search refuses (jobs past MaxJobs, a summed peak past the kernels, a
// shared circle past the cap or the cell limit), rounds where the options
// allow it, and leaves the periods as they were.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		periods []int
		peak    int64
		opt     Options
		want    error
	}{
		{"fits", []int{1000, 999, 1000}, 20, Options{MaxCells: 1 << 20}, nil},
		{"too many jobs", make([]int, MaxJobs+1), 1, Options{}, ErrTooLarge},
		{"summed peak", []int{10, 10}, 1 << 40, Options{}, ErrDemandTooLarge},
		{"cells", []int{1 << 19, 1 << 19, 1 << 19}, 20, Options{MaxCells: 1 << 20}, ErrTooLarge},
		{"paper mode has no cells", []int{1 << 19, 1 << 19, 1 << 19}, 20, Options{Mode: Paper, MaxCells: 1 << 20}, nil},
		{"shared circle past the cap", []int{600, 1000, 1500}, 20, Options{Circle: circle.Options{MaxPerimeter: 2000}}, circle.ErrPerimeterTooLarge},
		{"rounded under the cap", []int{600, 1000, 1500}, 20, Options{Circle: circle.Options{MaxPerimeter: 2000, Round: true}}, nil},
	} {
		for i := range c.periods {
			if c.periods[i] == 0 {
				c.periods[i] = 7
			}
		}
		before := slices.Clone(c.periods)
		err := c.opt.Check(c.periods, c.peak)
		if (c.want == nil) != (err == nil) || (c.want != nil && (!errors.Is(err, c.want) || !IsLimit(err))) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if !slices.Equal(before, c.periods) {
			t.Errorf("%s: periods changed to %v", c.name, c.periods)
		}
	}
}

// TestCheckAgreesWithSearch: where Check passes, a search of the same
// periods and peaks never fails with a limit; where it fails on jobs whose
// classes cannot fold (pulses), the search fails with the same limit.
func TestCheckAgreesWithSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var w Workspace
	for range 300 {
		k := 1 + rng.IntN(4)
		jobs := make([]profile.Profile, k)
		periods := make([]int, k)
		var peak int64
		for j := range jobs {
			periods[j] = 2 + rng.IntN(3000)
			jobs[j] = pulse(periods[j], 1+rng.IntN(periods[j]-1), int32(1+rng.IntN(30)))
			peak += int64(jobs[j].Peak())
		}
		opt := Options{MaxCells: 1 << (10 + rng.IntN(6)), Circle: circle.Options{MaxPerimeter: 1 << (8 + rng.IntN(6)), Round: rng.IntN(2) == 0}}
		cerr := opt.Check(periods, peak)
		_, serr := w.Search(context.Background(), Problem{Jobs: jobs, Capacity: 40}, opt, nil)
		if cerr == nil && serr != nil {
			t.Fatalf("periods %v, %+v: Check passed, the search failed: %v", periods, opt, serr)
		}
		if cerr != nil && (serr == nil || !IsLimit(serr)) {
			// A pulse's classes fold only when its period repeats, which
			// a single pulse never does.
			t.Fatalf("periods %v, %+v: Check %v, search %v", periods, opt, cerr, serr)
		}
	}
}

// noisy is a profile of n ticks of random demand.
func noisy(rng *rand.Rand, n int) profile.Profile {
	d := make([]int32, n)
	for i := range d {
		d[i] = int32(rng.IntN(100))
	}
	return profile.Profile{Period: n, Demand: d}
}

// TestSetupTimeLimit: a search large enough to watch its context
// (WatchedTicks) that runs out of time while it lays out its circle fails
// with ErrTimeLimit, soon; one that runs out afterwards answers its best
// with status TimeLimit; a small one always answers (it looks at the clock
// only every checkEvery evaluations, so it may even finish).
func TestSetupTimeLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	big := []profile.Profile{noisy(rng, 1<<20), noisy(rng, 1<<20), noisy(rng, 1<<20), noisy(rng, 1<<20)}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var w Workspace
	start := time.Now()
	if _, err := w.Search(done, Problem{Jobs: big, Capacity: 150}, Options{}, nil); !errors.Is(err, ErrTimeLimit) || IsLimit(err) {
		t.Fatalf("4 × 2^20 noisy ticks with an ended context: %v, want ErrTimeLimit (no size limit)", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the ended search took %v", d)
	}
	small := []profile.Profile{pulse(72, 30, 40), pulse(72, 30, 40), pulse(96, 20, 30)}
	res, err := w.Search(done, Problem{Jobs: small, Capacity: 50}, Options{}, nil)
	if err != nil || res.Points == 0 {
		t.Fatalf("a small search with an ended context: %+v, %v; want an answer", res, err)
	}
	// A limit that ends during the search: best so far, in bounded time.
	for _, limit := range []time.Duration{20 * time.Millisecond, 300 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		start := time.Now()
		res, err := w.Search(ctx, Problem{Jobs: big, Capacity: 150}, Options{Budget: -1}, nil)
		cancel()
		if d := time.Since(start); d > limit+3*time.Second {
			t.Errorf("a %v limit: the search took %v", limit, d)
		}
		if err != nil && !errors.Is(err, ErrTimeLimit) || err == nil && res.Status != TimeLimit {
			t.Errorf("a %v limit: %v, %v", limit, res.Status, err)
		}
	}
}

// TestClassesBuild: classes built by runs and by the radix sort hold the
// same histograms as a plain sort of each class's ticks, for demands of
// few runs (phases) and of noise, short and long.
func TestClassesBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var b buildScratch
	for iter := range 200 {
		mod := 1 + rng.IntN(8)
		size := 1 + rng.IntN(3)
		if iter%20 == 0 {
			size = 5000 + rng.IntN(3000) // past the radix sort's threshold
		}
		period := mod * size
		var jb profile.Profile
		if iter%2 == 0 {
			jb = noisy(rng, period-rng.IntN(min(period, 3))) // zero-padded past its demand
		} else {
			jb = pulse(period, 1+rng.IntN(max(period-1, 1)), int32(1+rng.IntN(50)))
		}
		var got, want classes
		got.build(jb, period, mod, &b)
		want.mod = mod
		want.off = []int32{0}
		for r := range mod {
			var vals []int32
			for z := range size {
				vals = append(vals, demandAt(jb, r+z*mod))
			}
			slices.Sort(vals)
			want.appendPairs(runsOf(nil, vals))
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(classes{})); diff != "" && !(size == 1 && sameSingle(want, got)) {
			t.Fatalf("#%d: mod %d size %d: (-sorted +built)\n%s", iter, mod, size, diff)
		}
	}
}

// sameSingle compares classes of one tick each, which build lays out
// without appendPairs.
func sameSingle(a, b classes) bool {
	return slices.Equal(a.off, b.off) && slices.Equal(a.val, b.val) && slices.Equal(a.cnt, b.cnt) && slices.Equal(a.sum, b.sum)
}
