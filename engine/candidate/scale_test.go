package candidate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/engine/candidate"
	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/internal/bench/cassini"
)

// TestScaleAsSearched: on the growth benchmark's instances (the README's
// ranking-at-scale table: 8-GPU servers, 400 Gbps links, where every shared
// link fits), on one with jobs at 150-350 Gbps and on the 1000-server
// single-GPU Clos instance (where none does: a job's peak is near the top
// of its range), the ranking that answers fitting links without a search
// is the one that searches them.
func TestScaleAsSearched(t *testing.T) {
	sizes := []int{100, 1000, 2500}
	if !testing.Short() {
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
		t.Logf("%s: %d of %d link problems fit", it.name, got.Fit, got.Searches)
		got.Fit = 0
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: ranking differs (-searched +answered):\n%s", it.name, diff)
		}
	}
}
