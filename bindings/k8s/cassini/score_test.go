package cassini

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/orrery/orrery/engine/cassini/candidate"
)

// TestLevels: equal compatibility scores keep the ranking's order, one
// point apart; unequal ones keep their distance on the line from the best
// (MaxScore) to just below the worst; discarded candidates get -1.
func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []float64 // by candidate; NaN: discarded
		order  []int
		want   []int64
	}{
		{"ties", []float64{1, 1, 1, 1}, []int{0, 1, 2, 3}, []int64{100, 99, 98, 97}},
		{"ties in input order", []float64{1, 1, 1}, []int{2, 0, 1}, []int64{99, 98, 100}},
		{"magnitudes", []float64{1, 0.5, 0.75}, []int{0, 2, 1}, []int64{100, 1, 50}},
		{"magnitudes and ties", []float64{0.9, 0.8, 0.8, 0.6}, []int{0, 1, 2, 3}, []int64{100, 67, 66, 1}},
		{"discarded", []float64{1, 0, 1}, []int{0, 2}, []int64{100, -1, 99}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := candidate.Ranking{Order: tc.order, Best: tc.order[0]}
			for _, s := range tc.scores {
				r.Outcomes = append(r.Outcomes, candidate.Outcome{Score: s})
			}
			if got := levels(r); !slices.Equal(got, tc.want) {
				t.Errorf("levels %v, want %v", got, tc.want)
			}
		})
	}
	// More candidates than levels: strictly lower down to MinScore+1, then
	// equal there, never MinScore (the nodes in no candidate).
	r := candidate.Ranking{Best: 0}
	for i := range 150 {
		r.Outcomes = append(r.Outcomes, candidate.Outcome{Score: 1})
		r.Order = append(r.Order, i)
	}
	lv := levels(r)
	for i := 1; i < len(lv); i++ {
		if lv[i] > lv[i-1] || lv[i] == lv[i-1] && lv[i] != fwk.MinScore+1 || lv[i] <= fwk.MinScore {
			t.Fatalf("levels[%d..%d] = %d, %d", i-1, i, lv[i-1], lv[i])
		}
	}
}

// rackOf is the paper fabric's rack of a node name.
func rackOf(t *testing.T, node string) int { return nodeIndex(t, node) / 4 }

// TestSchedulerIdleClusterKeepsRacks: on an idle cluster every candidate
// scores 1 (no link is shared), so only the pre-selection's order tells
// them apart. A four-pod job lands in one rack, and so do the next ones; six
// jobs of three pods arriving at once, their pods interleaved in the queue,
// land in one rack each (each rack has room for one): equal scores must
// keep their order through the normalization, and a job must not take the
// nodes another's plan counts on.
func TestSchedulerIdleClusterKeepsRacks(t *testing.T) {
	var nodes []runtime.Object
	for _, n := range paperNodes() {
		nodes = append(nodes, n)
	}
	t.Run("one by one, two tiers", func(t *testing.T) {
		// The cluster: 16 nodes in 4 racks under one spine.
		yaml := strings.Replace(paperYAML(""), "      - label: network.orrery.io/block\n        uplinkGbps: 50\n", "", 1)
		c := startCluster(t, yaml, nil, nodes[:16]...)
		createOneRackEach(t, c, "a", "b", "c")
	})
	t.Run("one by one", func(t *testing.T) {
		c := newCluster(t, "", nodes...)
		createOneRackEach(t, c, "a", "b")
	})
	t.Run("at once", func(t *testing.T) {
		c := newCluster(t, "", nodes...)
		var pods []*v1.Pod
		for i := range 3 {
			for j := range 6 {
				pods = append(pods, trainingPod(fmt.Sprintf("j%d", j), i, 3, up30, ""))
			}
		}
		got := c.create(pods...)
		for j := range 6 {
			job := map[string]string{}
			for i := range 3 {
				name := fmt.Sprintf("j%d-%d", j, i)
				job[name] = got[name]
			}
			if racks := racksOf(t, job); len(racks) != 1 {
				t.Errorf("job j%d spans racks %v: %v", j, racks, job)
			}
		}
	})
}

// racksOf returns the racks of the nodes of pods (pod -> node), sorted.
func racksOf(t *testing.T, pods map[string]string) []int {
	var racks []int
	for _, n := range pods {
		racks = append(racks, rackOf(t, n))
	}
	slices.Sort(racks)
	return slices.Compact(racks)
}

// createOneRackEach creates 4-pod jobs one after another and checks that
// each lands in one rack.
func createOneRackEach(t *testing.T, c *cluster, jobs ...string) {
	t.Helper()
	for _, job := range jobs {
		var pods []*v1.Pod
		for i := range 4 {
			pods = append(pods, trainingPod(job, i, 4, up30, ""))
		}
		got := c.create(pods...)
		if racks := racksOf(t, got); len(racks) != 1 {
			t.Errorf("job %s spans racks %v: %v", job, racks, got)
		}
	}
}
