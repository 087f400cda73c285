//go:build linux

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orrery/orrery/bindings/k8s/plan"
)

// badLabel marks the pods of the bad-annotations scenario: their profiles
// are not the plugin's to use, nor the score check's.
const badLabel = "e2e.orrery.io/bad"

// TestKubernetes is the end-to-end test: one control plane, the
// manifests applied, orrery-scheduler under its ServiceAccount, a cluster
// of 16 orrery nodes in 4 racks (and 16 more in 4 racks for the default
// scheduler's half of the latency comparison), and the scenarios in turn,
// each on an idle cluster.
func TestKubernetes(t *testing.T) {
	t0 := time.Now()
	p := startPlane(t)
	t.Logf("etcd and kube-apiserver ready after %.1f s", time.Since(t0).Seconds())
	e := &env{t: t, p: p, ctx: context.Background()}
	applied := p.applyManifests()
	var kinds []string
	for _, o := range applied {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	t.Logf("applied %s (server-side, strict field validation, dry run first)", strings.Join(kinds, ", "))
	e.mon = newMonitor(e)
	e.createNodes("orrery", 0, 4, 4)
	e.createNodes("default", 4, 4, 4)
	e.o = newOrrery(p)
	e.o.start(fabricArgs(false))
	t.Cleanup(func() { e.o.stop(syscall.SIGTERM) })

	steps := []struct {
		name string
		run  func(*env)
	}{
		{"idle cluster, one by one", (*env).oneByOne},
		{"idle cluster, at once", (*env).atOnce},
		{"shared uplinks, running jobs held", func(e *env) { e.sharedUplinks("held", false) }},
		{"shared uplinks, moveRunning", func(e *env) { e.sharedUplinks("move", true) }},
		{"bad annotations", (*env).badAnnotations},
		{"scheduler killed mid-job", (*env).killed},
		{"latency beside the default scheduler", (*env).latency},
	}
	// The steps share the control plane, so they run in turn in this test
	// (a failed check is an error, and the steps go on).
	for _, s := range steps {
		start := time.Now()
		t.Logf("=== step %q", s.name)
		failed := t.Failed()
		s.run(e)
		e.mon.check(t)
		verdict := "ok"
		if t.Failed() && !failed {
			verdict = "FAILED"
		}
		t.Logf("=== step %q: %s, %.1f s", s.name, verdict, time.Since(start).Seconds())
	}
	t.Logf("the end-to-end test took %.1f s", time.Since(t0).Seconds())
}

// job returns a job of the orrery pool.
func job(ns, name, prof string, size int, nodes ...string) jobSpec {
	return jobSpec{ns: ns, name: name, size: size, prof: prof, pool: "orrery", nodes: nodes}
}

// nodes of the orrery pool: rack r, indices is.
func nodesOf(r int, is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, fmt.Sprintf("orrery-r%d-%d", r, i))
	}
	return out
}

// racksOf returns the distinct racks of a job's pods (name -> node).
func racksOf(got map[string]string) []string {
	var out []string
	for _, n := range got {
		out = append(out, rackOfNode(n))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rackOfNode is the rack label of a test node: <pool>-r<rack>-<i>.
func rackOfNode(n string) string {
	parts := strings.Split(n, "-")
	return "rack-" + strings.TrimPrefix(parts[len(parts)-2], "r")
}

// oneByOne: four jobs of four pods with periods of 255, 300, 400 and 255
// ms arrive one after another on the idle cluster; each lands in one rack.
func (e *env) oneByOne() {
	e.namespace("seq")
	seen := map[string]int64{}
	for i, prof := range []string{p255, p300, p400, p255} {
		got := e.submit(job("seq", fmt.Sprintf("j%d", i), prof, 4))
		if r := racksOf(got); len(r) != 1 {
			e.t.Errorf("job j%d spans racks %v on an idle cluster: %v", i, r, got)
		}
		e.checkJobs(seen)
	}
	e.deleteAll("seq", "")
}

// atOnce: four jobs of four pods arrive at once, their pods created by four
// goroutines; each lands in one rack.
func (e *env) atOnce() {
	e.namespace("conc")
	var pods []*v1.Pod
	var wg sync.WaitGroup
	for i, prof := range []string{p255, p300, p400, p255} {
		js := job("conc", fmt.Sprintf("j%d", i), prof, 4).pods()
		pods = append(pods, js...)
		wg.Go(func() {
			for _, pod := range js {
				e.createOne(pod)
			}
		})
	}
	wg.Wait()
	got := e.waitBound(pods...)
	for i := range 4 {
		mine := map[string]string{}
		for k := range 4 {
			name := fmt.Sprintf("j%d-%d", i, k)
			mine[name] = got[name]
		}
		if r := racksOf(mine); len(r) != 1 {
			e.t.Errorf("job j%d spans racks %v though each rack had room: %v", i, r, mine)
		}
	}
	e.checkJobs(map[string]int64{})
	e.deleteAll("conc", "")
}

// sharedUplinks: three jobs of two pods, each pinned to its two nodes by
// node affinity (a user's constraint), share rack uplinks in a triangle:
// a (255 ms) crosses racks 0 and 1, b (300 ms) racks 1 and 2, c (400 ms)
// racks 0 and 2, arriving in that order; then a completes and d (255 ms)
// takes its nodes. Every plan written is checked against the score
// recomputed from the annotations. With moveRunning off a running job's
// plan is never rewritten; with it on, the ranking may move running jobs
// (each rewritten plan has a higher generation: the monitor checks every
// pod's).
func (e *env) sharedUplinks(ns string, moveRunning bool) {
	if moveRunning {
		e.restart(moveRunning)
		defer e.restart(false)
	}
	e.namespace(ns)
	seen := map[string]int64{}
	pinned := map[string][]string{
		"a": {"orrery-r0-0", "orrery-r1-0"}, "b": {"orrery-r1-1", "orrery-r2-0"},
		"c": {"orrery-r0-1", "orrery-r2-1"}, "d": {"orrery-r0-0", "orrery-r1-0"},
	}
	profs := map[string]string{"a": p255, "b": p300, "c": p400, "d": p255}
	prev := map[string]string{}
	rewritten := 0
	for _, name := range []string{"a", "b", "c", "d"} {
		if name == "d" {
			e.deleteAll(ns, jobLabel+"=a")
			delete(prev, ns+"/a")
		}
		e.submit(job(ns, name, profs[name], 2, pinned[name]...))
		e.checkJobs(seen)
		now := e.plans(ns)
		for _, k := range sortedKeys(prev) {
			if now[k] != prev[k] {
				rewritten++
				e.t.Logf("%s arriving re-planned %s: %s -> %s", name, k, brief(prev[k]), brief(now[k]))
				if !moveRunning {
					e.t.Errorf("%s is held (moveRunning off), yet %s arriving changed its plan: %s -> %s", k, name, prev[k], now[k])
				}
			}
		}
		e.t.Logf("%s placed: %s", name, brief(now[ns+"/"+name]))
		prev = now
	}
	e.t.Logf("running jobs re-planned: %d (moveRunning %v)", rewritten, moveRunning)
	e.deleteAll(ns, "")
}

// restart stops orrery-scheduler (SIGTERM) and starts it again with
// moveRunning as given.
func (e *env) restart(moveRunning bool) {
	e.o.stop(syscall.SIGTERM)
	e.o.start(fabricArgs(moveRunning))
}

// badAnnotations: pods whose job size or profile cannot be used, each a
// job of its own, are all scheduled, and each gets a Warning event naming
// the annotation and the field; a node with a bad NIC label gets one too.
// A profile in a ConfigMap works.
func (e *env) badAnnotations() {
	ns := "bad"
	e.namespace(ns)
	ctx := e.ctx
	cms := e.p.cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "profiles"},
		Data: map[string]string{"profile.json": p300, "vgg": p255, "broken": `{"period_ms":10,"phases":[{"ms":20,"gbps":1}]}`}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	// A bad NIC label on one node: an event on the node; it is still used.
	nodeName := "orrery-r3-3"
	e.label(nodeName, nicLabel, "fast")
	defer e.label(nodeName, nicLabel, fmt.Sprint(nicGbps))

	type bad struct {
		anno  map[string]string
		words []string // the event's note names these
	}
	cases := map[string]bad{
		"size-word":     {map[string]string{sizeAnno: "four", profAnno: p255}, []string{sizeAnno, `"four"`}},
		"size-zero":     {map[string]string{sizeAnno: "0", profAnno: p255}, []string{sizeAnno, `"0"`}},
		"syntax":        {map[string]string{profAnno: `{"period_ms":255,`}, []string{profAnno}},
		"unknown":       {map[string]string{profAnno: `{"period_ms":255,"phases":[{"ms":255,"gbps":1}],"burst":1}`}, []string{profAnno, "burst"}},
		"negative":      {map[string]string{profAnno: `{"phases":[{"ms":255,"gbps":-1}]}`}, []string{profAnno, "phases[0].gbps"}},
		"mismatch":      {map[string]string{profAnno: `{"period_ms":250,"phases":[{"ms":255,"gbps":1}]}`}, []string{profAnno, "period_ms"}},
		"duplicate":     {map[string]string{profAnno: `{"phases":[{"ms":255,"gbps":1}],"phases":[]}`}, []string{profAnno, "phases", "duplicate"}},
		"case":          {map[string]string{profAnno: `{"Phases":[{"ms":255,"gbps":1}]}`}, []string{profAnno, "Phases"}},
		"null":          {map[string]string{profAnno: `{"period_ms":null,"phases":[{"ms":255,"gbps":1}]}`}, []string{profAnno, "period_ms", "null"}},
		"surrogate":     {map[string]string{profAnno: `{"id":"\ud800","phases":[{"ms":255,"gbps":1}]}`}, []string{profAnno, "id"}},
		"trailing":      {map[string]string{profAnno: `{"phases":[{"ms":255,"gbps":1}]} {}`}, []string{profAnno, "trailing"}},
		"utf8":          {map[string]string{profAnno: "{\"id\":\"a\xffb\",\"phases\":[{\"ms\":255,\"gbps\":1}]}"}, []string{profAnno, "id", "UTF-8"}},
		"cm-missing":    {map[string]string{profCMAnno: "nope"}, []string{profCMAnno, "nope"}},
		"cm-key":        {map[string]string{profCMAnno: "profiles/none"}, []string{profCMAnno, `"none"`}},
		"cm-bad":        {map[string]string{profCMAnno: "profiles/broken"}, []string{profCMAnno, "broken"}},
		"good-cm":       {map[string]string{profCMAnno: "profiles/vgg"}, nil},
		"good-cm-deflt": {map[string]string{profCMAnno: "profiles"}, nil},
	}
	// Invalid UTF-8 survives only in protobuf (a JSON client replaces it
	// with U+FFFD): the scheduler reads pods in protobuf too.
	pb := rest.CopyConfig(e.p.admin)
	pb.ContentType = "application/vnd.kubernetes.protobuf"
	pbc := kubernetes.NewForConfigOrDie(pb)
	var pods []*v1.Pod
	for _, name := range sortedKeys(cases) {
		j := job(ns, name, "", 1)
		j.anno = cases[name].anno
		j.gpus = 1 // more pods than nodes
		pod := j.pods()[0]
		pod.Labels[badLabel] = "1"
		if strings.HasPrefix(name, "good") {
			delete(pod.Labels, badLabel)
		}
		pods = append(pods, pod)
		e.mon.created(ns + "/" + pod.Name)
		if _, err := pbc.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("creating %s: %v", pod.Name, err)
		}
	}
	e.waitBound(pods...)
	got, err := e.p.cs.CoreV1().Pods(ns).Get(ctx, "utf8-0", metav1.GetOptions{})
	if err != nil || !strings.Contains(got.Annotations[profAnno], "a\xffb") {
		e.t.Errorf("the API server did not keep the invalid UTF-8 of pod utf8-0: %q (%v)", got.Annotations[profAnno], err)
	}
	e.p.waitFor("the bad annotations' events", 60*time.Second, func() bool {
		evs, err := e.p.cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		missing := 0
		for name, c := range cases {
			if c.words == nil {
				continue
			}
			if !slices.ContainsFunc(evs.Items, func(ev eventsv1Event) bool {
				return ev.Regarding.Name == name+"-0" && ev.Reason == "OrreryBadAnnotation" && containsAll(ev.Note, c.words)
			}) {
				missing++
			}
		}
		return missing == 0
	})
	e.p.waitFor("the bad NIC label's event", 60*time.Second, func() bool {
		evs, err := e.p.cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		return err == nil && slices.ContainsFunc(evs.Items, func(ev eventsv1Event) bool {
			return ev.Regarding.Kind == "Node" && ev.Regarding.Name == nodeName && ev.Reason == "OrreryBadLabel" && containsAll(ev.Note, []string{nicLabel, `"fast"`})
		})
	})
	evs, err := e.p.cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == "OrreryBadAnnotation" {
			e.t.Logf("event on %s: %s", ev.Regarding.Name, ev.Note)
			if strings.HasPrefix(ev.Regarding.Name, "good") {
				e.t.Errorf("a good profile got a warning: %s", ev.Note)
			}
		}
	}
	e.checkScheduled(ns)
	for _, name := range []string{"good-cm-0", "good-cm-deflt-0"} {
		e.p.waitFor("the ConfigMap profile's plan on "+name, 30*time.Second, func() bool {
			pod, err := e.p.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err == nil && pod.Annotations[planAnno] != ""
		})
	}
	e.deleteAll(ns, "")
}

// label sets a node's label.
func (e *env) label(node, key, value string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := e.p.cs.CoreV1().Nodes().Patch(e.ctx, node, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// killed: a job of four pods sharing uplinks with a running job has two
// pods placed; orrery-scheduler is killed (SIGKILL) and started again (it
// waits for the dead leader's lease to expire); the other two pods are
// placed. The job's four pods carry one plan, no generation goes down, a
// plan the restart does not change is not rewritten, and one it changes
// gets a generation above every one before.
func (e *env) killed() {
	ns := "crash"
	e.namespace(ns)
	seen := map[string]int64{}
	aNodes := append(nodesOf(0, 2, 3), nodesOf(1, 2, 3)...)
	rNodes := append(nodesOf(0, 0, 1), nodesOf(1, 0, 1)...)
	e.submit(job(ns, "a", p255, 4, aNodes...))
	e.checkJobs(seen)
	r := job(ns, "r", p300, 4, rNodes...).pods()
	e.create(r[:2]...)
	e.waitBound(r[:2]...)
	e.settle(ns)
	before := e.plans(ns)
	aBefore := e.versions(ns, "a")
	highest := int64(0)
	for _, text := range before {
		highest = max(highest, planOfText(e.t, text).Generation)
	}
	t0 := time.Now()
	e.o.stop(syscall.SIGKILL)
	e.o.start(fabricArgs(false))
	e.t.Logf("after SIGKILL the new orrery-scheduler waited %.1f s for the lease", time.Since(t0).Seconds())
	e.create(r[2:]...)
	e.waitBound(r[2:]...)
	e.checkJobs(seen)
	after := e.plans(ns)
	e.t.Logf("r before the kill %s, after %s; a %s -> %s", brief(before[ns+"/r"]), brief(after[ns+"/r"]), brief(before[ns+"/a"]), brief(after[ns+"/a"]))
	for k, text := range after {
		switch {
		case text == before[k]:
		case planOfText(e.t, text).Generation <= highest:
			e.t.Errorf("job %s re-planned after the restart with generation %d, not above the highest before, %d", k, planOfText(e.t, text).Generation, highest)
		}
	}
	if after[ns+"/a"] == before[ns+"/a"] && !maps.Equal(aBefore, e.versions(ns, "a")) {
		e.t.Errorf("a's plan is unchanged, yet its pods were rewritten after the restart")
	}
	e.deleteAll(ns, "")
}

// versions returns the resource versions of a job's pods.
func (e *env) versions(ns, job string) map[string]string {
	e.t.Helper()
	l, err := e.p.cs.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: jobLabel + "=" + job})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, pod := range l.Items {
		out[pod.Name] = pod.ResourceVersion
	}
	return out
}

// brief is a plan annotation in short: shift/period, score, generation.
func brief(text string) string {
	if text == "" {
		return "(no plan)"
	}
	var q plan.Plan
	if err := q.UnmarshalJSON([]byte(text)); err != nil {
		return "(bad plan: " + err.Error() + ")"
	}
	return fmt.Sprintf("{shift %v of %v, score %.4f, gen %d}", q.Shift, q.Period, q.Score, q.Generation)
}

func planOfText(t testing.TB, text string) plan.Plan {
	t.Helper()
	q, err := plan.Parse([]byte(text))
	if err != nil {
		t.Fatalf("plan %q: %v", text, err)
	}
	return q
}
