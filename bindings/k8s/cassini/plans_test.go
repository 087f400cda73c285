package cassini

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/orrery/orrery/bindings/k8s/plan"
)

// holdBinding is a test plugin that holds one pod's binding in PreBind
// until another pod is bound (its PostBind), or 30 s pass.
type holdBinding struct {
	pod, until string
	release    chan struct{}
	once       sync.Once
	held       chan struct{} // closed when the hold begins
	heldOnce   sync.Once
}

func (h *holdBinding) Name() string { return "Hold" }

func (h *holdBinding) PreBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return &fwk.PreBindPreFlightResult{}, nil
}

func (h *holdBinding) PreBind(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) *fwk.Status {
	if pod.Name != h.pod {
		return nil
	}
	h.heldOnce.Do(func() { close(h.held) })
	select {
	case <-h.release:
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
	}
	return nil
}

func (h *holdBinding) PostBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	if pod.Name == h.until {
		h.once.Do(func() { close(h.release) })
	}
}

// planOf parses pod's plan annotation; ok false without one.
func planOf(t *testing.T, pod *v1.Pod) (plan.Plan, bool) {
	t.Helper()
	text, ok := pod.Annotations[DefaultPlanAnnotation]
	if !ok {
		return plan.Plan{}, false
	}
	q, err := plan.Parse([]byte(text))
	if err != nil {
		t.Fatalf("pod %s: %v", pod.Name, err)
	}
	return q, true
}

// annotated returns the pod with a plan annotation.
func annotated(t *testing.T, p *v1.Pod, q plan.Plan) *v1.Pod {
	t.Helper()
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	p.Annotations[DefaultPlanAnnotation] = string(b)
	return p
}

// withA is the paper fabric with only the free nodes free, and job a
// (up30) on nodes 12 and 16 (racks 3 and 4) carrying plan pa (nil: none):
// a job placed on 13 and 17 shares both racks' uplinks with a.
func withA(t *testing.T, pa *plan.Plan, free ...int) []runtime.Object {
	var objs []runtime.Object
	for _, n := range paperNodes() {
		objs = append(objs, n)
	}
	for i := range 24 {
		switch {
		case slices.Contains(free, i):
		case i == 12 || i == 16:
			p := trainingPod("a", (i-12)/4, 2, up30, nodeName(i))
			if pa != nil {
				p = annotated(t, p, *pa)
			}
			objs = append(objs, p)
		default:
			objs = append(objs, filler(i))
		}
	}
	return objs
}

// TestSchedulerPlanInFlight: a job of two pods without a size annotation is
// placed pod by pod; its first pod is alone (shift 0), its second shares
// uplinks with job a, whose plan holds it at shift 0, so the job's plan
// changes while the first pod's binding is still in flight (held in
// PreBind until the second pod is bound). Both pods must end with the
// job's last plan, whether the second pod was ranked among two nodes or
// had a single node left (then the framework runs no PreScore).
func TestSchedulerPlanInFlight(t *testing.T) {
	for _, tc := range []struct {
		name string
		free []int
	}{{"ranked", []int{1, 13, 17}}, {"one node left", []int{13, 17}}} {
		t.Run(tc.name, func(t *testing.T) { testPlanInFlight(t, tc.free) })
	}
}

func testPlanInFlight(t *testing.T, free []int) {
	pa := plan.Plan{Job: "default/a", Reference: DefaultReference, Period: 72 * time.Millisecond, Score: 1, Generation: 1}
	hold := &holdBinding{pod: "b-0", until: "b-1", release: make(chan struct{}), held: make(chan struct{})}
	// Hold after Cassini: a PreBind of Cassini's would run before the hold.
	yaml := strings.Replace(paperYAML(""), "        weight: 10\n", "        weight: 10\n      - name: Hold\n", 1)
	c := startCluster(t, yaml, frameworkruntime.Registry{"Hold": func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return hold, nil
	}}, withA(t, &pa, free...)...)
	b0, b1 := trainingPod("b", 0, 2, up30, ""), trainingPod("b", 1, 2, up30, "")
	delete(b0.Annotations, DefaultSizeAnnotation)
	delete(b1.Annotations, DefaultSizeAnnotation)
	if _, err := c.client.CoreV1().Pods(ns).Create(c.ctx, b0, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.held:
	case <-time.After(30 * time.Second):
		t.Fatal("b-0 never reached PreBind")
	}
	c.create(b1)
	c.waitBound("b-0")
	c.settle()
	var plans []plan.Plan
	for _, name := range []string{"b-0", "b-1"} {
		q, ok := planOf(t, c.pod(name))
		if !ok {
			t.Fatalf("pod %s has no plan", name)
		}
		plans = append(plans, q)
	}
	if plans[0] != plans[1] {
		t.Fatalf("the job's pods carry different plans:\n b-0 %+v\n b-1 %+v", plans[0], plans[1])
	}
	if plans[1].Shift == 0 {
		t.Fatalf("plan %+v: the job shares its uplinks with a held at shift 0, so its shift must change: the test tests nothing", plans[1])
	}
}

// TestSchedulerRestartKeepsGenerations: a scheduler (re)started on pods
// that carry plans of generations up to 23 gives every plan it writes a
// higher generation, and does not rewrite a plan that stays as it is.
func TestSchedulerRestartKeepsGenerations(t *testing.T) {
	pa := plan.Plan{Job: "default/a", Reference: DefaultReference, Period: 72 * time.Millisecond, Score: 1, Generation: 13}
	pc := plan.Plan{Job: "default/c", Reference: DefaultReference, Period: 72 * time.Millisecond, Score: 1, Generation: 23}
	for _, tc := range []struct {
		name  string
		extra string
		pa    plan.Plan
		held  bool // a keeps its plan as it is
	}{
		{"held", "", pa, true},
		{"moveRunning", "      moveRunning: true", pa, false},
		// a's plan is on another reference: unusable, so a is placed
		// again with the new job and gets a new plan.
		{"unusable plan", "", func() plan.Plan { q := pa; q.Reference = q.Reference.Add(-time.Hour); return q }(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := withA(t, &tc.pa, 13, 17)
			objs = append(objs[:len(objs):len(objs)], annotated(t, trainingPod("c", 0, 1, up60, ""), pc))
			objs[len(objs)-1].(*v1.Pod).Spec.NodeName = nodeName(0) // replaces filler-00 as the pod on node 0
			objs = removePod(objs, "filler-00")
			c := newCluster(t, tc.extra, objs...)
			c.client.ClearActions()
			c.create(trainingPod("b", 0, 2, up30, ""), trainingPod("b", 1, 2, up30, ""))
			c.settle()
			pb, ok := planOf(t, c.pod("b-0"))
			if !ok || pb.Generation <= pc.Generation {
				t.Errorf("new job's plan %+v (ok %v): want a generation above the highest annotated, %d", pb, ok, pc.Generation)
			}
			var got []plan.Plan
			for _, name := range []string{"a-0", "a-1"} {
				q, _ := planOf(t, c.pod(name))
				got = append(got, q)
			}
			if got[0] != got[1] {
				t.Fatalf("a's pods carry different plans: %+v, %+v", got[0], got[1])
			}
			patched := 0
			for _, a := range c.client.Actions() {
				if p, ok := a.(clienttesting.PatchAction); ok && strings.HasPrefix(p.GetName(), "a-") {
					patched++
				}
			}
			switch {
			case got[0] == tc.pa:
				if patched > 0 {
					t.Errorf("a's plan is unchanged, yet its pods were patched %d times", patched)
				}
				if !tc.held && tc.name == "unusable plan" {
					t.Errorf("a's unusable plan was kept: %+v", got[0])
				}
			case tc.held:
				t.Errorf("a held, yet its plan changed: %+v -> %+v", tc.pa, got[0])
			case got[0].Generation <= tc.pa.Generation:
				t.Errorf("a re-planned %+v -> %+v: the generation went down or stayed", tc.pa, got[0])
			}
		})
	}
}

func removePod(objs []runtime.Object, name string) []runtime.Object {
	out := objs[:0:0]
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok && p.Name == name {
			continue
		}
		out = append(out, o)
	}
	return out
}

// TestLedgerUndoAfterWrite: a plan restored by Unreserve keeps its
// generation if the newer one was never handed to the writer, and gets a
// new, higher one if it was (it may be on the pods).
func TestLedgerUndoAfterWrite(t *testing.T) {
	x, y := shiftPlan{shift: 1, period: 72}, shiftPlan{shift: 30, period: 72}
	for _, sent := range []bool{false, true} {
		var l ledger
		l.reserve("p0", ns, "j-0", "j", "n0", map[string]shiftPlan{"j": x}, []string{"n0", "n1"})
		l.task("j")
		_, g1, _ := l.plan("j")
		l.reserve("p1", ns, "j-1", "j", "n1", map[string]shiftPlan{"j": y}, []string{"n0", "n1"})
		_, g2, _ := l.plan("j")
		if sent {
			l.task("j")
		}
		dirty := l.unreserve("p1")
		pl, g3, ok := l.plan("j")
		if !ok || pl != x || len(dirty) != 1 {
			t.Fatalf("sent %v: after undo plan %+v ok %v dirty %v", sent, pl, ok, dirty)
		}
		switch {
		case !sent && g3 != g1:
			t.Errorf("never sent: generation %d, want it back at %d", g3, g1)
		case sent && g3 <= g2:
			t.Errorf("sent: generation %d after %d was sent, want higher", g3, g2)
		}
		if _, ok := l.jobs["j"].members[types.UID("p1")]; ok {
			t.Error("the unreserved pod is still a member")
		}
	}
}

// TestSchedulerBadAnnotations: a pod whose job size or profile cannot be
// used, or that lands beside a node with a bad NIC label, is scheduled all
// the same, and a Warning event on it (on the node, for the label) names
// the annotation (label) and the field.
func TestSchedulerBadAnnotations(t *testing.T) {
	var objs []runtime.Object
	for _, n := range paperNodes() {
		if n.Name == nodeName(1) {
			n.Labels[DefaultNICLabel] = "fast"
		}
		objs = append(objs, n)
	}
	c := newCluster(t, "", objs...)
	size := trainingPod("size", 0, 2, up30, "")
	size.Annotations[DefaultSizeAnnotation] = "four"
	field := trainingPod("field", 0, 1, `{"period_ms":72,"phases":[{"ms":30,"gbps":-40},{"ms":42,"gbps":0}]}`, "")
	unknown := trainingPod("unknown", 0, 1, `{"period_ms":72,"phases":[{"ms":72,"gbps":1}],"burst":true}`, "")
	cm := withConfigMap(trainingPod("cm", 0, 1, "", ""), "nope")
	want := map[string][]string{
		"size-0":    {DefaultSizeAnnotation, `"four"`},
		"field-0":   {DefaultProfileAnno, "phases[0].gbps"},
		"unknown-0": {DefaultProfileAnno, "burst"},
		"cm-0":      {DefaultProfileConfigMap, "nope"},
	}
	pods := []*v1.Pod{size, field, unknown, cm}
	// What encoding/json lets through and the strict decoder does not.
	for name, tc := range map[string]struct{ prof, field string }{
		"dup":       {`{"period_ms":72,"period_ms":72,"phases":[{"ms":72,"gbps":1}]}`, "period_ms"},
		"fold":      {`{"period_ms":72,"Phases":[{"ms":72,"gbps":1}]}`, "Phases"},
		"null":      {`{"period_ms":null,"phases":[{"ms":72,"gbps":1}]}`, "period_ms"},
		"utf8":      {"{\"id\":\"a\xffb\",\"phases\":[{\"ms\":72,\"gbps\":1}]}", "id"},
		"surrogate": {`{"id":"\ud800","phases":[{"ms":72,"gbps":1}]}`, "id"},
		"trailing":  {`{"phases":[{"ms":72,"gbps":1}]}{}`, "trailing"},
	} {
		pods = append(pods, trainingPod(name, 0, 1, tc.prof, ""))
		want[name+"-0"] = []string{DefaultProfileAnno, tc.field}
	}
	c.create(pods...)
	c.waitFor("events", func() bool {
		evs, err := c.client.EventsV1().Events(ns).List(c.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		found := map[string]bool{}
		for _, e := range evs.Items {
			words, ok := want[e.Regarding.Name]
			if !ok || e.Reason != ReasonBadAnnotation || e.Type != v1.EventTypeWarning {
				continue
			}
			all := true
			for _, w := range words {
				all = all && strings.Contains(e.Note, w)
			}
			found[e.Regarding.Name] = found[e.Regarding.Name] || all
		}
		return len(found) == len(want) && !slices.Contains(mapValues(found), false)
	})
	c.waitFor("the NIC label's event", func() bool {
		evs, err := c.client.EventsV1().Events("").List(c.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Regarding.Kind == "Node" && e.Regarding.Name == nodeName(1) && e.Reason == ReasonBadLabel &&
				strings.Contains(e.Note, DefaultNICLabel) && strings.Contains(e.Note, `"fast"`) {
				return true
			}
		}
		return false
	})
}

func mapValues[K comparable, V any](m map[K]V) []V {
	var out []V
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// waitFor polls cond for up to 30 s.
func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	if err := wait.PollUntilContextTimeout(c.ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
}
