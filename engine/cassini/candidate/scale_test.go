package candidate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/bench/cassini"
)

// TestScaleAsSearched: on the growth benchmark's instances (docs/performance.md's
// ranking-at-scale table: 8-GPU servers, 400 Gbps links, where every shared
// link fits), on one with jobs at 150-350 Gbps and on the 1000-server
// single-GPU Clos instance (where none does: a job's peak is near the top
// of its range), the ranking that answers fitting links without a search
// is the one that searches them.
func TestScaleAsSearched(t *testing.T) {
	sizes := []int{100, 1000, 2500}
	if !testing.Short() && !underRace {
		sizes = append(sizes, 12500)
	}
	type inst struct {
		name string
		in   *cassini.Instance
		fit  bool // some link problem fits
	}
	var insts []inst
	for _, servers := range sizes {
		spec, err := cassini.ScaleSpec(servers)
		if err != nil {
			t.Fatal(err)
		}
		in, err := cassini.Clos(rand.New(rand.NewPCG(1, 2)), cassini.ClosConfig{Spec: spec, GPUsPerServer: 8,
			Jobs: servers * 3000 / 12500, Candidates: 10})
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, inst{fmt.Sprintf("%d 8-GPU servers", servers), in, true})
	}
	// Jobs at 150-350 Gbps: a link carries at most two jobs here, and two
	// such jobs mostly pass its 400 Gbps.
	spec, err := cassini.ScaleSpec(1000)
	if err != nil {
		t.Fatal(err)
	}
	hot, err := cassini.Clos(rand.New(rand.NewPCG(1, 2)), cassini.ClosConfig{Spec: spec, GPUsPerServer: 8,
		Jobs: 240, Candidates: 10, LoGbps: 150, HiGbps: 350})
	if err != nil {
		t.Fatal(err)
	}
	insts = append(insts, inst{"1000 8-GPU servers, 150-350 Gbps", hot, false})
	clos, err := cassini.ClosInstance(rand.New(rand.NewPCG(1, 2)), cassini.ClosSpec(), 300, 10)
	if err != nil {
		t.Fatal(err)
	}
	insts = append(insts, inst{"1000 single-GPU servers", clos, false})
	opt := candidate.Options{Link: link.Options{Circle: circle.Options{Round: true}}, Workers: 1}
	for _, it := range insts {
		t0 := time.Now()
		var fast, slow candidate.Workspace
		candidate.SearchFits(&slow)
		got, err := fast.Rank(context.Background(), it.in.Jobs, it.in.Links, it.in.Candidates, opt)
		if err != nil {
			t.Fatal(err)
		}
		want, err := slow.Rank(context.Background(), it.in.Jobs, it.in.Links, it.in.Candidates, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got.Fit == 0 && it.fit || want.Fit != 0 {
			t.Fatalf("%s: %d and %d problems answered without a search", it.name, got.Fit, want.Fit)
		}
		t.Logf("%s: %d of %d link problems fit (%v)", it.name, got.Fit, got.Searches, time.Since(t0))
		got.Fit = 0
		// cmp.Diff on a whole ranking of 39,000 links takes seconds: it
		// shows the first outcome that differs, after a direct comparison.
		if !sameRanking(want, got) {
			diff := cmp.Diff(want.Order, got.Order) + cmp.Diff([]int{want.Best, want.Searches, want.Cached}, []int{got.Best, got.Searches, got.Cached})
			for c := range want.Outcomes {
				if c < len(got.Outcomes) && !sameOutcome(want.Outcomes[c], got.Outcomes[c]) {
					diff += fmt.Sprintf("candidate %d:\n%s", c, cmp.Diff(want.Outcomes[c], got.Outcomes[c]))
					break
				}
			}
			t.Fatalf("%s: ranking differs (-searched +answered):\n%s", it.name, diff)
		}
	}
}

// sameRanking reports whether a and b are the same ranking, field for field.
func sameRanking(a, b candidate.Ranking) bool {
	return slices.Equal(a.Order, b.Order) && a.Best == b.Best && a.Searches == b.Searches && a.Cached == b.Cached && a.Fit == b.Fit &&
		slices.EqualFunc(a.Outcomes, b.Outcomes, sameOutcome)
}

func sameOutcome(a, b candidate.Outcome) bool {
	sameErr := a.Err == nil && b.Err == nil || a.Err != nil && b.Err != nil && a.Err.Error() == b.Err.Error()
	return a.Score == b.Score && a.Grid == b.Grid && a.Status == b.Status && sameErr && slices.Equal(a.Shifts, b.Shifts) &&
		(a.Links == nil) == (b.Links == nil) && (a.Shifts == nil) == (b.Shifts == nil) &&
		slices.EqualFunc(a.Links, b.Links, func(x, y candidate.LinkScore) bool {
			return x.Link == y.Link && slices.Equal(x.Jobs, y.Jobs) && x.Score == y.Score && x.Excess == y.Excess && x.Points == y.Points &&
				x.Status == y.Status && x.Target == y.Target && x.Optimum == y.Optimum && x.Held == y.Held
		})
}
