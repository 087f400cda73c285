package candidate

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/circle"
)

// TestCentreKeepsEveryLinkScore: on random rankings, the best candidate's
// centred shifts give every shared link at most the excess its outcome
// reports (the independent excessAt recomputes it; less where the
// affinity graph held a link off its own optimum and a move within the
// rooms happens to relieve it), each room is bounded for a job on a
// shared link and unbound otherwise, and a job that shares no link keeps
// its shift; with Options.Fixed the fixed jobs keep theirs too.
func TestCentreKeepsEveryLinkScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	moved := 0
	for it := range 200 {
		in := randomInstance(rng)
		opt := Options{Loops: affinity.Reoptimize, Workers: 1}
		if it%4 == 3 {
			opt.Fixed = make([]int, len(in.jobs))
			for j := range opt.Fixed {
				opt.Fixed[j] = -1
			}
			opt.Fixed[0] = rng.IntN(in.jobs[0].Period)
		}
		rk, err := Rank(context.Background(), in.jobs, in.links, in.cands, opt)
		if err != nil {
			t.Fatal(err)
		}
		if rk.Best < 0 {
			continue
		}
		o := rk.Outcomes[rk.Best]
		shifts, rooms, err := Centre(context.Background(), in.jobs, in.links, in.cands[rk.Best], o, opt)
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		if o.Grid > 1 {
			continue // excessAt takes the jobs' own periods
		}
		on := make([]bool, len(in.jobs))
		for _, ls := range o.Links {
			for _, j := range ls.Jobs {
				on[j] = true
			}
			if got := excessAt(in.jobs, ls.Jobs, shifts, in.links[ls.Link].Capacity); got > ls.Excess {
				t.Fatalf("case %d link %d: centred shifts %v excess %d, the outcome's %v %d", it, ls.Link, shifts, got, o.Shifts, ls.Excess)
			}
		}
		for j := range in.jobs {
			if rooms[j].Bound != on[j] {
				t.Fatalf("case %d job %d: room %+v, on a shared link %v", it, j, rooms[j], on[j])
			}
			fixed := opt.Fixed != nil && opt.Fixed[j] >= 0
			if (!on[j] || fixed) && shifts[j] != circle.Mod(o.Shifts[j], in.jobs[j].Period) {
				t.Fatalf("case %d job %d (shared %v, fixed %v): moved from %d to %d", it, j, on[j], fixed, o.Shifts[j], shifts[j])
			}
			if shifts[j] != circle.Mod(o.Shifts[j], in.jobs[j].Period) {
				moved++
			}
		}
	}
	if moved == 0 {
		t.Error("no shift was centred: the test checks nothing")
	}
	if _, _, err := Centre(context.Background(), nil, nil, Candidate{}, Outcome{Status: Discarded}, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a discarded outcome: %v", err)
	}
}
