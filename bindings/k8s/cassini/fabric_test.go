package cassini

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestFabric: the paper's 24 nodes under 2:1 ToRs (oversubscription 2) and
// non-blocking blocks give 50 Gbps NICs, 100 Gbps rack uplinks and 300 Gbps
// block uplinks (node 5's 100 Gbps NIC adds 25 to its rack's and 25 to its
// block's); a ring crosses each NIC once each way and each domain it
// leaves once each way.
func TestFabric(t *testing.T) {
	c, err := Args{NodeGbps: 50, Tiers: []Tier{{Label: DefaultRackLabel, Oversubscription: 2}, {Label: blockLabel}}}.resolve(field.NewPath("args"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := paperNodes()
	nodes[5].Labels[DefaultNICLabel] = "100"
	f := newFabric(nodes, &c)
	if got, want := len(f.links), 2*24+2*6+2*2; got != want {
		t.Fatalf("%d links, want %d", got, want)
	}
	gbps := func(l int) float64 { return float64(f.links[l].Capacity) / 1000 }
	for _, tc := range []struct {
		link int
		want float64
	}{{0, 50}, {2 * 5, 100}, {f.base[0], 100}, {f.base[0] + 2, 125}, {f.base[1], 325}} {
		if got := gbps(tc.link); got != tc.want {
			t.Errorf("link %s: %v Gbps, want %v", f.linkName(tc.link), got, tc.want)
		}
	}
	names := func(links []int) []string {
		var out []string
		for _, l := range links {
			out = append(out, f.linkName(l))
		}
		return out
	}
	// Nodes 0 and 1 share rack 0; node 13 is in rack 3 of block 1.
	if diff := cmp.Diff([]string{"node-00>", ">node-00", "node-01>", ">node-01", "node-13>", ">node-13",
		"tier0/0>", ">tier0/0", "tier0/3>", ">tier0/3", "tier1/0>", ">tier1/0", "tier1/1>", ">tier1/1"}, names(f.ring([]int{13, 1, 0, 1}, nil))); diff != "" {
		t.Errorf("ring links (-want +got):\n%s", diff)
	}
	if got := f.ring([]int{7, 7}, nil); len(got) != 0 {
		t.Errorf("two pods on one node cross %v", names(got))
	}
	if diff := cmp.Diff([]int{2, 1}, f.span([]int{0, 5, 6})); diff != "" {
		t.Errorf("span (-want +got):\n%s", diff)
	}
}

// TestFabricUnlabelled: a node without the rack label is a rack of its own;
// rack names count within their block.
func TestFabricUnlabelled(t *testing.T) {
	c, _ := Args{Tiers: []Tier{{Label: DefaultRackLabel}, {Label: blockLabel}}}.resolve(field.NewPath("args"))
	node := func(name string, labels map[string]string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	f := newFabric([]*v1.Node{
		node("a", map[string]string{DefaultRackLabel: "r1", blockLabel: "x"}),
		node("b", map[string]string{DefaultRackLabel: "r1", blockLabel: "y"}),
		node("c", nil),
		node("d", map[string]string{DefaultRackLabel: "r1", blockLabel: "x"}),
	}, &c)
	if diff := cmp.Diff([]int32{1, 2, 0, 1}, f.dom[0]); diff != "" {
		t.Errorf("racks (-want +got):\n%s", diff)
	}
}
