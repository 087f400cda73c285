package cassini

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/ptr"
)

// TestSchedulerPodGroup places a whole job through the pod-group cycle of
// Kubernetes 1.37 (GenericWorkload, TopologyAwareWorkloadScheduling): the
// PodGroup asks for one block, the placement generator proposes block 0
// (nodes 1 and 5, beside the incompatible job c) and block 1 (nodes 13 and
// 17, beside job a, which interleaves); the plugin ranks both assignments
// in one call and the group lands in block 1, with its plans.
func TestSchedulerPodGroup(t *testing.T) {
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
		features.GenericWorkload: true, features.TopologyAwareWorkloadScheduling: true})
	s := newScenario()
	running := map[string]placement{"a": {s.jobs["a"], up30}, "c": {s.jobs["c"], up60}}
	pairs, r := rankAll(t, running, up30, s.free, 2, nil)
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy:      schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}},
			SchedulingConstraints: &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: blockLabel}}},
		},
	}
	c := newCluster(t, "", append([]runtime.Object{pg}, s.objects...)...)
	var pods []*v1.Pod
	for i := range 2 {
		p := trainingPod("b", i, 2, up30, "")
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("b")}
		pods = append(pods, p)
	}
	got := c.create(pods...)
	nodes := []int{nodeIndex(t, got["b-0"]), nodeIndex(t, got["b-1"])}
	slices.Sort(nodes)
	if best := pairs[r.Best]; !slices.Equal(nodes, best) {
		t.Fatalf("pod group placed on %v, the ranker prefers %v", nodes, best)
	}
	if c.plugin.groupRanks.Load() == 0 {
		t.Fatal("no pod-group cycle was ranked: the placement came from elsewhere")
	}
	if pl := c.plan(t, "b"); pl.Score != 1 {
		t.Errorf("plan %+v: want the placement's score 1", pl)
	}
	c.plan(t, "a") // re-planned beside b
}
