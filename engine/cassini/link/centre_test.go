package link

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// upDown is a job of period t that sends at gbps for up ticks, then idles.
func upDown(t, up int, v int32) profile.Profile {
	d := make([]int32, t)
	for i := range up {
		d[i] = v
	}
	return profile.Profile{Period: t, Demand: d}
}

// TestCentreVectorD: the brief's test vector D (two jobs of 72 ticks, 30
// up at 40 of 50) is optimal for relative shifts 30 to 42; the search
// returns the edge (job 1 at 30), the centred shifts sit 36 apart with 6
// ticks of room on either side for both jobs.
func TestCentreVectorD(t *testing.T) {
	pr := Problem{Jobs: []profile.Profile{upDown(72, 30, 40), upDown(72, 30, 40)}, Capacity: 50}
	var w Workspace
	res, err := w.Search(context.Background(), pr, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Shifts[0] != 0 || res.Shifts[1] != 30 || res.Excess != 0 {
		t.Fatalf("search: shifts %v excess %d, want the edge [0 30] at 0", res.Shifts, res.Excess)
	}
	shifts := append([]int(nil), res.Shifts...)
	rooms, err := Centre(context.Background(), []Shared{{Jobs: []int{0, 1}, Problem: pr}}, []int{72, 72}, shifts, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := circle.Mod(shifts[1]-shifts[0], 72); d != 36 {
		t.Errorf("centred shifts %v are %d apart, want 36", shifts, d)
	}
	Anchor([]Shared{{Jobs: []int{0, 1}, Problem: pr}}, []int{72, 72}, res.Shifts, shifts, nil)
	if shifts[0] != 0 || shifts[1] != 36 {
		t.Errorf("anchored: shifts %v, want [0 36]", shifts)
	}
	for j, r := range rooms {
		if r != (Room{Early: 6, Late: 6, Bound: true}) {
			t.Errorf("job %d: room %+v, want 6 either side", j, r)
		}
	}
}

// TestCentreBruteForce: on random small links (and pairs of links sharing
// a job), the centred shifts score exactly what the search's do on every
// link (its optimum), and each job's room is exactly the run of shifts
// around its centred one that score that, the others held, as a brute force
// over every shift finds it (capped at half a period either side); a held
// job does not move.
func TestCentreBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	var w Workspace
	for it := range 300 {
		mode := Exact
		if it%5 == 4 {
			mode = Paper
		}
		opt := Options{Mode: mode}
		njobs := 2 + rng.IntN(2)
		periods := make([]int, njobs)
		base := []int{6, 8, 12, 24}[rng.IntN(4)]
		for j := range periods {
			periods[j] = base * (1 + rng.IntN(2)) // commensurate: a short unified circle
		}
		randProfile := func(j int) profile.Profile {
			d := make([]int32, periods[j])
			up := 1 + rng.IntN(periods[j]/2)
			at := rng.IntN(periods[j])
			v := int32(10 + rng.IntN(40))
			for i := range up {
				d[(at+i)%periods[j]] = v
			}
			return profile.Profile{Period: periods[j], Demand: d}
		}
		// One link of every job, and sometimes a second of jobs 0 and 1
		// with other demands (the affinity graph's 4-cycle is fine here:
		// the shifts come from the first link's search).
		var links []Shared
		all := make([]int, njobs)
		pr := Problem{Capacity: int32(40 + rng.IntN(40))}
		for j := range all {
			all[j] = j
			pr.Jobs = append(pr.Jobs, randProfile(j))
		}
		links = append(links, Shared{Jobs: all, Problem: pr})
		if rng.IntN(3) == 0 {
			links = append(links, Shared{Jobs: []int{0, 1}, Problem: Problem{Capacity: int32(30 + rng.IntN(40)), Jobs: []profile.Profile{randProfile(0), randProfile(1)}}})
		}
		res, err := w.Search(context.Background(), pr, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		edge := append([]int(nil), res.Shifts...)
		excessAt := func(l Shared, shifts []int) int64 {
			sub := make([]int, len(l.Jobs))
			for k, m := range l.Jobs {
				sub[k] = shifts[m]
			}
			e, _, err := w.Evaluate(l.Problem, opt, sub)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		var hold []bool
		if rng.IntN(4) == 0 {
			hold = make([]bool, njobs)
			hold[rng.IntN(njobs)] = true
		}
		shifts := append([]int(nil), edge...)
		rooms, err := Centre(context.Background(), links, periods, shifts, hold, opt)
		if err != nil {
			t.Fatal(err)
		}
		if it%2 == 1 {
			Anchor(links, periods, edge, shifts, hold)
			if hold == nil && shifts[0] != edge[0] {
				t.Fatalf("case %d: anchored %v, job 0 not at its edge shift %v", it, shifts, edge)
			}
		}
		for i, l := range links {
			if got, want := excessAt(l, shifts), excessAt(l, edge); got > want {
				t.Fatalf("case %d link %d: centred shifts %v excess %d, the search's %v %d", it, i, shifts, got, edge, want)
			} else if i == 0 && got != want {
				t.Fatalf("case %d: centred shifts %v beat the optimum %v: %d < %d", it, shifts, edge, got, want)
			}
		}
		for j := range njobs {
			if hold != nil && hold[j] && shifts[j] != edge[j] {
				t.Fatalf("case %d: held job %d moved from %d to %d", it, j, edge[j], shifts[j])
			}
			// Brute force: walk every shift of job j, the others held.
			half := (periods[j] - 1) / 2
			ok := func(t int) bool {
				sh := append([]int(nil), shifts...)
				sh[j] = circle.Mod(t, periods[j])
				for _, l := range links {
					for _, m := range l.Jobs {
						if m == j && excessAt(l, sh) > excessAt(l, shifts) {
							return false
						}
					}
				}
				return true
			}
			late, early := 0, 0
			for late < half && ok(shifts[j]+late+1) {
				late++
			}
			for early < half && ok(shifts[j]-early-1) {
				early++
			}
			if want := (Room{Early: early, Late: late, Bound: true}); rooms[j] != want {
				t.Fatalf("case %d %v job %d (periods %v, shifts %v): room %+v, brute force %+v", it, mode, j, periods, shifts, rooms[j], want)
			}
		}
	}
}

// TestCentrePinnedAndErrors: a pinned link gives its jobs no room and
// keeps their shifts; a job on no link is unbound; bad input is ErrFixed.
func TestCentrePinnedAndErrors(t *testing.T) {
	pr := Problem{Jobs: []profile.Profile{upDown(72, 30, 40), upDown(72, 30, 40)}, Capacity: 50}
	shifts := []int{0, 30, 5}
	rooms, err := Centre(context.Background(), []Shared{{Jobs: []int{0, 1}, Problem: pr, Pinned: true}}, []int{72, 72, 10}, shifts, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if shifts[0] != 0 || shifts[1] != 30 || rooms[0] != (Room{Bound: true}) || rooms[1] != (Room{Bound: true}) || rooms[2] != (Room{}) {
		t.Errorf("pinned: shifts %v rooms %+v", shifts, rooms)
	}
	for _, c := range []struct {
		links   []Shared
		periods []int
	}{
		{[]Shared{{Jobs: []int{0, 1}, Problem: pr}}, []int{72}},     // a job past the periods
		{[]Shared{{Jobs: []int{0}, Problem: pr}}, []int{72, 72}},    // jobs and demands disagree
		{[]Shared{{Jobs: []int{0, 1}, Problem: pr}}, []int{72, 71}}, // the period is not the problem's
		{[]Shared{{Jobs: []int{1, 1}, Problem: pr}}, []int{72, 72}}, // a job twice
		{nil, []int{0}}, // no period
	} {
		if _, err := Centre(context.Background(), c.links, c.periods, make([]int, len(c.periods)), nil, Options{}); !errors.Is(err, ErrFixed) {
			t.Errorf("%+v: %v, want ErrFixed", c, err)
		}
	}
}

// TestCentreBudget: two jobs of 60,000 ticks of ragged demand (no few runs
// to scan by) whose scan would cost 3.6e9 pair evaluations: under a budget
// the walk goes a step at a time, stops at the budget and says so
// (Partial); so does a cancelled context.
func TestCentreBudget(t *testing.T) {
	const T = 60000
	ragged := func() profile.Profile {
		p := upDown(T, T/3, 0)
		for i := range T / 3 {
			p.Demand[i] = int32(30 + i%7)
		}
		return p
	}
	pr := Problem{Jobs: []profile.Profile{ragged(), ragged()}, Capacity: 50}
	links := []Shared{{Jobs: []int{0, 1}, Problem: pr}}
	shifts := []int{0, T / 3}
	rooms, err := Centre(context.Background(), links, []int{T, T}, shifts, nil, Options{Budget: 1 << 22})
	if err != nil {
		t.Fatal(err)
	}
	if !rooms[0].Partial || rooms[0].Early >= T/3 {
		t.Errorf("budgeted: rooms %+v, want a partial one", rooms)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	shifts = []int{0, T / 3}
	if rooms, err := Centre(ctx, links, []int{T, T}, shifts, nil, Options{Budget: -1, Mode: Paper}); err != nil || !rooms[0].Partial {
		t.Errorf("cancelled: rooms %+v, %v: want partial", rooms, err)
	}
}
