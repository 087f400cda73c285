package cassini

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

// harness is the framework runtime with only the Cassini plugin (and the
// queue sort and binder every framework needs) on a fixed snapshot.
type harness struct {
	fw     framework.Framework
	plugin *Plugin
	nodes  []fwk.NodeInfo
	client *fake.Clientset
}

func newHarness(t testing.TB, args *Args, nodes []*v1.Node, pods []*v1.Pod) *harness {
	t.Helper()
	metrics.Register()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	objs := make([]runtime.Object, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	h := &harness{client: fake.NewClientset(objs...)}
	factory := informers.NewSharedInformerFactory(h.client, 0)
	snap := cache.NewSnapshot(pods, nodes)
	newPlugin := func(ctx context.Context, _ runtime.Object, fh fwk.Handle) (fwk.Plugin, error) {
		pl, err := New(ctx, args, fh)
		if err == nil {
			h.plugin = pl.(*Plugin)
		}
		return pl, err
	}
	fw, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensionsWithWeight(Name, 1, newPlugin, "PreScore", "Score", "Reserve", "PostBind"),
	}, schedulerName, frameworkruntime.WithSnapshotSharedLister(snap), frameworkruntime.WithClientSet(h.client),
		frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	h.fw = fw
	h.nodes, err = snap.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// paperArgs is the paper's testbed, with a time budget no loaded machine
// runs past (the tests are about what is ranked, not how fast).
func paperArgs() *Args {
	return &Args{NodeGbps: 50, Tiers: []Tier{{Label: DefaultRackLabel, UplinkGbps: 50}, {Label: blockLabel, UplinkGbps: 50}},
		TimeBudget: metav1.Duration{Duration: testBudget}}
}

const testBudget = 10 * time.Second

func scenarioPods(s scenario) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for _, o := range s.objects {
		switch o := o.(type) {
		case *v1.Node:
			nodes = append(nodes, o)
		case *v1.Pod:
			pods = append(pods, o)
		}
	}
	return nodes, pods
}

// feasible returns the nodes with room for a pod: what Filter leaves.
func (h *harness) feasible() []fwk.NodeInfo {
	var out []fwk.NodeInfo
	for _, n := range h.nodes {
		if len(n.GetPods()) == 0 {
			out = append(out, n)
		}
	}
	return out
}

// cycle runs PreScore and Score for pod and returns the state and
// Cassini's normalized score per node.
func (h *harness) cycle(t *testing.T, pod *v1.Pod) (fwk.CycleState, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	st := h.fw.RunPreScorePlugins(ctx, state, pod, h.feasible())
	if !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	scores, st := h.fw.RunScorePlugins(ctx, state, pod, h.feasible())
	if !st.IsSuccess() {
		t.Fatalf("Score: %v", st)
	}
	out := map[string]int64{}
	for _, ns := range scores {
		for _, ps := range ns.Scores {
			if ps.Name == Name {
				out[ns.Name] = ps.Score
			}
		}
	}
	return state, out
}

// ledgerView is the ledger's content, for comparisons.
type ledgerView struct {
	Jobs map[string]jobView
	Pods map[types.UID]string
}

type jobView struct {
	Shift, Period, Comm int
	Has                 bool
	Planned             []string
}

func (l *ledger) view() ledgerView {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := ledgerView{Jobs: map[string]jobView{}, Pods: map[types.UID]string{}}
	for k, st := range l.jobs {
		if st.has || st.planned != nil {
			v.Jobs[k] = jobView{st.plan.shift, st.plan.period, st.plan.comm, st.has, st.planned}
		}
	}
	for uid, r := range l.pods {
		v.Pods[uid] = r.job + "@" + r.node
	}
	return v
}

// TestReserveUnreserve: Reserve records the placement and the shifts of
// the candidate the pod followed; Unreserve, in any order, releases them.
func TestReserveUnreserve(t *testing.T) {
	nodes, pods := scenarioPods(newScenario())
	h := newHarness(t, paperArgs(), nodes, pods)
	ctx := context.Background()
	b0, b1 := trainingPod("b", 0, 2, up30, ""), trainingPod("b", 1, 2, up30, "")
	before := h.plugin.led.view()

	s0, scores := h.cycle(t, b0)
	if scores[nodeName(13)] != fwk.MaxScore || scores[nodeName(17)] != fwk.MaxScore || scores[nodeName(1)] >= fwk.MaxScore {
		t.Fatalf("scores %v: want the ranked placement (nodes 13, 17) at %d, others below", scores, fwk.MaxScore)
	}
	if st := h.fw.RunReservePluginsReserve(ctx, s0, b0, nodeName(13)); !st.IsSuccess() {
		t.Fatal(st)
	}
	one := h.plugin.led.view()
	if one.Pods[b0.UID] != "default/b@"+nodeName(13) || !one.Jobs["default/a"].Has || !one.Jobs["default/b"].Has {
		t.Fatalf("after Reserve: %+v", one)
	}
	if got := one.Jobs["default/b"].Planned; !cmp.Equal(got, []string{nodeName(13), nodeName(17)}) {
		t.Errorf("planned %v", got)
	}

	// The second pod sees the first (reserved, not yet in the snapshot).
	s1, scores := h.cycle(t, b1)
	if scores[nodeName(17)] != fwk.MaxScore {
		t.Fatalf("second pod's scores %v: want node 17 best", scores)
	}
	if st := h.fw.RunReservePluginsReserve(ctx, s1, b1, nodeName(17)); !st.IsSuccess() {
		t.Fatal(st)
	}
	two := h.plugin.led.view()

	// LIFO, as a pod-group cycle reverts.
	h.fw.RunReservePluginsUnreserve(ctx, s1, b1, nodeName(17))
	if diff := cmp.Diff(one, h.plugin.led.view()); diff != "" {
		t.Errorf("after unreserving b-1 (-after b-0 +got):\n%s", diff)
	}
	h.fw.RunReservePluginsUnreserve(ctx, s0, b0, nodeName(13))
	if diff := cmp.Diff(before, h.plugin.led.view()); diff != "" {
		t.Errorf("after unreserving both (-before +got):\n%s", diff)
	}

	// Out of order, as a failed binding of the first pod does: the second
	// pod's reservation keeps the plan it relies on.
	h.fw.RunReservePluginsReserve(ctx, s0, b0, nodeName(13))
	h.fw.RunReservePluginsReserve(ctx, s1, b1, nodeName(17))
	h.fw.RunReservePluginsUnreserve(ctx, s0, b0, nodeName(13))
	got := h.plugin.led.view()
	want := two
	want.Pods = maps.Clone(two.Pods)
	delete(want.Pods, b0.UID)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after unreserving b-0 only (-want +got):\n%s", diff)
	}
	h.fw.RunReservePluginsUnreserve(ctx, s1, b1, nodeName(17))
	if diff := cmp.Diff(before, h.plugin.led.view()); diff != "" {
		t.Errorf("after unreserving both (-before +got):\n%s", diff)
	}
}

// TestNeutral: a pod the plugin cannot rank gets Skip from PreScore (never
// an error), no Cassini score, and Reserve and PreBind pass.
func TestNeutral(t *testing.T) {
	nodes, pods := scenarioPods(newScenario())
	notJob := trainingPod("x", 0, 1, up30, "")
	delete(notJob.Labels, DefaultJobLabel)
	badProfile := trainingPod("y", 0, 1, `{"period_ms":72,"phases":[{"ms":30,"gbps":-1}]}`, "")
	unknownField := trainingPod("y", 1, 1, `{"period":72}`, "")
	for _, tc := range []struct {
		name string
		args *Args
		pod  *v1.Pod
		want error
	}{
		{"not a job", paperArgs(), notJob, ErrNoJob},
		{"no profile", paperArgs(), trainingPod("z", 0, 2, "", ""), ErrNoProfile},
		{"bad profile", paperArgs(), badProfile, ErrProfile},
		{"unknown profile field", paperArgs(), unknownField, ErrProfile},
		{"missing configmap", paperArgs(), withConfigMap(trainingPod("w", 0, 1, "", ""), "nope"), ErrProfile},
		{"budget", withBudget(paperArgs(), time.Nanosecond), trainingPod("b", 0, 2, up30, ""), ErrBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.args, nodes, pods)
			ctx := context.Background()
			state := framework.NewCycleState()
			if st := h.fw.RunPreScorePlugins(ctx, state, tc.pod, h.nodes); !st.IsSuccess() {
				t.Fatalf("PreScore failed the cycle: %v", st)
			}
			if st := h.plugin.PreScore(ctx, framework.NewCycleState(), tc.pod, h.nodes); !st.IsSkip() || !strings.Contains(st.Message(), tc.want.Error()) {
				t.Errorf("PreScore = %v, want Skip for %v", st, tc.want)
			}
			scores, st := h.fw.RunScorePlugins(ctx, state, tc.pod, h.nodes)
			if !st.IsSuccess() {
				t.Fatal(st)
			}
			for _, ns := range scores {
				for _, ps := range ns.Scores {
					if ps.Name == Name {
						t.Fatalf("node %s has a Cassini score %d, want none", ns.Name, ps.Score)
					}
				}
			}
			if st := h.fw.RunReservePluginsReserve(ctx, state, tc.pod, nodeName(1)); !st.IsSuccess() {
				t.Fatal(st)
			}
			if st := h.fw.RunPreBindPlugins(ctx, state, tc.pod, nodeName(1)); !st.IsSuccess() {
				t.Fatal(st)
			}
			if _, _, ok := h.plugin.led.plan(h.plugin.cfg.jobKey(tc.pod)); ok {
				t.Error("a plan was recorded for an unranked pod")
			}
		})
	}
}

func withBudget(a *Args, d time.Duration) *Args {
	a.TimeBudget = metav1.Duration{Duration: d}
	return a
}

func withConfigMap(p *v1.Pod, ref string) *v1.Pod {
	p.Annotations[DefaultProfileConfigMap] = ref
	return p
}
