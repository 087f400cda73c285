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
// ranking-at-scale table: 8-GPU servers, 400 Gbps links, where almost
// every shared link fits) and on the 1000-server single-GPU Clos instance
// (100 Gbps links, where none do: a job's peak is near 90 Gbps), the ranking that answers fitting
// links without a search is the one that searches them.
func TestScaleAsSearched(t *testing.T) {
	sizes := []int{100, 1000, 2500}
	if !testing.Short() {
		sizes = append(sizes, 12500)
	}
	type inst struct {
		name string
		in   *cassini.Instance
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
		insts = append(insts, inst{fmt.Sprintf("%d 8-GPU servers", servers), in})
	}
	clos, err := cassini.ClosInstance(rand.New(rand.NewPCG(1, 2)), cassini.ClosSpec(), 300, 10)
	if err != nil {
		t.Fatal(err)
	}
	insts = append(insts, inst{"1000 single-GPU servers", clos})
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
		if got.Fit == 0 && it.in.Topology.Links[0].Gbps == 400 || want.Fit != 0 {
			t.Fatalf("%s: %d and %d problems answered without a search", it.name, got.Fit, want.Fit)
		}
		t.Logf("%s: %d of %d link problems fit", it.name, got.Fit, got.Searches)
		got.Fit = 0
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: ranking differs (-searched +answered):\n%s", it.name, diff)
		}
	}
}
