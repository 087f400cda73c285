package candidate

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// sharedOf lists a candidate's links carrying two or more jobs, by link
// index, each with its jobs (increasing).
func sharedOf(njobs, nlinks int, c Candidate) (links []int, on [][]int) {
	per := make([][]int, nlinks)
	for j := range njobs {
		if j < len(c.Paths) {
			for _, l := range c.Paths[j] {
				per[l] = append(per[l], j)
			}
		}
	}
	for l, js := range per {
		if len(js) >= 2 {
			links, on = append(links, l), append(on, js)
		}
	}
	return links, on
}

// bruteIncremental returns, by brute force over every shift of every free
// job on a link its jobs' peaks can overflow, the lexicographically
// smallest shift vector (fixed jobs at theirs, every other free job at 0)
// that maximizes the candidate's score (agg: the mean link score, or the
// worst and then the mean, compared as exact fractions), and that score as
// Outcome.Score computes it.
func bruteIncremental(in instance, c Candidate, fixed []int, agg Aggregate) ([]int, float64) {
	links, on := sharedOf(len(in.jobs), len(in.links), c)
	s := make([]int, len(in.jobs))
	var free, mods []int
	matters := make([]bool, len(in.jobs))
	for k, js := range on {
		var peaks int64
		for _, j := range js {
			peaks += int64(in.jobs[j].Peak())
		}
		if peaks > int64(in.links[links[k]].Capacity) {
			for _, j := range js {
				matters[j] = true
			}
		}
	}
	for j, f := range fixed {
		if f >= 0 {
			s[j] = circle.Mod(f, in.jobs[j].Period)
		} else if matters[j] {
			free, mods = append(free, j), append(mods, in.jobs[j].Period)
		}
	}
	type value struct{ worst, sum *big.Rat }
	eval := func() (value, float64) {
		v := value{new(big.Rat), new(big.Rat)}
		var sum float64
		worst := 1.0
		for k, l := range links {
			capa := in.links[l].Capacity
			e := excessAt(in.jobs, on[k], s, capa)
			p := lcmPeriods(in.jobs, on[k])
			x := big.NewRat(e, int64(p)*int64(capa))
			v.sum.Add(v.sum, x)
			if x.Cmp(v.worst) > 0 {
				v.worst = x
			}
			score := 1 - float64(e)/(float64(p)*float64(capa))
			sum += score
			worst = min(worst, score)
		}
		if len(links) == 0 {
			return v, 1
		}
		if agg == Min {
			return v, worst
		}
		return v, sum / float64(len(links))
	}
	better := func(a, b value) bool {
		if agg == Min {
			if c := a.worst.Cmp(b.worst); c != 0 {
				return c < 0
			}
		}
		return a.sum.Cmp(b.sum) < 0
	}
	var best []int
	var bestV value
	var bestScore float64
	v := make([]int, len(free))
	for {
		for i, j := range free {
			s[j] = v[i]
		}
		if val, score := eval(); best == nil || better(val, bestV) {
			best, bestV, bestScore = slices.Clone(s), val, score
		}
		i := len(v) - 1
		for ; i >= 0; i-- {
			if v[i]++; v[i] < mods[i] {
				break
			}
			v[i] = 0
		}
		if i < 0 {
			return best, bestScore
		}
	}
}

func lcmPeriods(jobs []profile.Profile, on []int) int {
	p := 1
	for _, j := range on {
		p = p / circle.GCD(p, jobs[j].Period) * jobs[j].Period
	}
	return p
}

// randomFixed fixes each job with probability 1/2 at a random shift (up to
// twice its period: it is taken modulo it), keeping the brute force's
// vectors to at most limit per candidate; ok is false if it cannot.
func randomFixed(rng *rand.Rand, in instance, limit int) ([]int, bool) {
	fixed := make([]int, len(in.jobs))
	size := 1
	for j := range fixed {
		fixed[j] = -1
		if rng.IntN(2) == 0 {
			fixed[j] = rng.IntN(2 * in.jobs[j].Period)
		} else {
			size *= in.jobs[j].Period
		}
	}
	return fixed, size <= limit
}

// TestIncrementalMatchesBruteForce is incremental ranking's property test:
// on random placements with random jobs fixed at random shifts, every
// candidate's score and shifts are the best over every vector of free
// shifts with the fixed ones held (the lexicographically smallest among
// ties), for both aggregates; the fixed jobs keep their shifts; every
// link's reported excess is the one the shifts give, and Held says it is
// above its own optimum; the order is by score. The cache and the number
// of workers change nothing.
func TestIncrementalMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	var ws Workspace
	ws.Cache = 64
	cases, held := 0, 0
	for cases < 250 {
		in := randomInstance(rng)
		fixed, ok := randomFixed(rng, in, 2000)
		if !ok {
			continue
		}
		cases++
		agg := Aggregate(rng.IntN(2))
		opt := Options{Fixed: fixed, Aggregate: agg, Optima: true}
		r, err := Rank(context.Background(), in.jobs, in.links, in.cands, opt)
		if err != nil {
			t.Fatal(err)
		}
		for c, o := range r.Outcomes {
			if o.Err != nil || o.Status != Optimal {
				t.Fatalf("case %d candidate %d: %v %v", cases, c, o.Status, o.Err)
			}
			want, score := bruteIncremental(in, in.cands[c], fixed, agg)
			if !slices.Equal(o.Shifts, want) || o.Score != score {
				t.Fatalf("case %d candidate %d (%v, fixed %v): shifts %v score %v, brute force %v score %v", cases, c, agg, fixed, o.Shifts, o.Score, want, score)
			}
			for _, ls := range o.Links {
				capa := in.links[ls.Link].Capacity
				if e := excessAt(in.jobs, ls.Jobs, o.Shifts, capa); e != ls.Excess {
					t.Fatalf("case %d candidate %d link %d: excess %d, shifts give %d", cases, c, ls.Link, ls.Excess, e)
				}
				if ls.Optimum < 0 || ls.Target < ls.Optimum || ls.Excess < ls.Target || ls.Held != (ls.Excess > ls.Optimum) {
					t.Fatalf("case %d candidate %d link %+v", cases, c, ls)
				}
				if ls.Held {
					held++
				}
			}
		}
		for k := 1; k < len(r.Order); k++ {
			if r.Outcomes[r.Order[k-1]].Score < r.Outcomes[r.Order[k]].Score {
				t.Fatalf("case %d: order %v", cases, r.Order)
			}
		}
		for _, o := range []Options{{Fixed: fixed, Aggregate: agg, Optima: true, Workers: 1}, {Fixed: fixed, Aggregate: agg, Optima: true, Workers: 3}} {
			again, err := ws.Rank(context.Background(), in.jobs, in.links, in.cands, o)
			if err != nil {
				t.Fatal(err)
			}
			again.Cached = r.Cached
			if diff := cmp.Diff(r, again); diff != "" {
				t.Fatalf("case %d: cache or workers change the ranking (-plain +cached):\n%s", cases, diff)
			}
		}
	}
	if held == 0 {
		t.Fatal("no link was held off its optimum: the test checks little")
	}
}

// TestIncrementalKeepsRunningJobs: a new job joins two running jobs that
// interleave on their link at the shifts they hold. With the running jobs
// fixed, the ranking keeps them and places the new job in the gap left; a
// full ranking of the same candidate is free to move them.
func TestIncrementalKeepsRunningJobs(t *testing.T) {
	pulse := func(start, up int) profile.Profile {
		d := make([]int32, 12)
		for i := range up {
			d[(start+i)%12] = 30
		}
		return profile.Profile{Period: 12, Demand: d}
	}
	// Jobs 0 and 1 run at shifts 0 and 4; job 2 is new.
	jobs := []profile.Profile{pulse(0, 4), pulse(0, 4), pulse(0, 4)}
	links := []Link{{Capacity: 40}}
	cands := []Candidate{{Paths: [][]int{{0}, {0}, {0}}}}
	r, err := Rank(context.Background(), jobs, links, cands, Options{Fixed: []int{0, 4, -1}})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Outcomes[0]
	if !slices.Equal(o.Shifts, []int{0, 4, 8}) || o.Score != 1 || o.Links[0].Held || o.Links[0].Target != 0 {
		t.Fatalf("%+v", o)
	}
	// Held at 0 and 2, the running jobs overlap: the new job cannot help it.
	r, err = Rank(context.Background(), jobs, links, cands, Options{Fixed: []int{0, 2, -1}, Optima: true})
	if err != nil {
		t.Fatal(err)
	}
	o = r.Outcomes[0]
	if o.Shifts[0] != 0 || o.Shifts[1] != 2 || !o.Links[0].Held || o.Links[0].Optimum != 0 || o.Links[0].Target == 0 {
		t.Fatalf("%+v", o)
	}
}

func TestIncrementalBadInput(t *testing.T) {
	ok := []profile.Profile{{Period: 2, Demand: []int32{1, 0}}, {Period: 2, Demand: []int32{1, 0}}}
	links := []Link{{Capacity: 1}}
	cands := []Candidate{{Paths: [][]int{{0}, {0}}}}
	for _, opt := range []Options{
		{Fixed: []int{0}},
		{Fixed: []int{0, -2}},
		{Fixed: []int{0, -1}, Loops: affinity.Paper},
		{Fixed: []int{0, -1}, Link: link.Options{Mode: link.Paper}},
	} {
		if _, err := Rank(context.Background(), ok, links, cands, opt); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err %v, want ErrInvalid", opt, err)
		}
	}
}
