//go:build linux

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/orrery/orrery/bindings/k8s/plan"
)

// The labels and annotations of the test's cluster, as the plugin reads
// them by default, and the test's own.
const (
	rackLabel  = "network.orrery.io/rack"
	nicLabel   = "network.orrery.io/nic-gbps"
	poolLabel  = "e2e.orrery.io/pool"
	jobLabel   = "orrery.io/job"
	sizeAnno   = "orrery.io/job-size"
	profAnno   = "orrery.io/profile"
	profCMAnno = "orrery.io/profile-configmap"
	planAnno   = "orrery.io/plan"
	gpu        = v1.ResourceName("nvidia.com/gpu")

	orreryName  = "orrery-scheduler"
	defaultName = "default-scheduler"
)

// The fabric the test's Cassini args describe: 50 Gbps NICs (the nodes'
// NIC label says so too) and racks whose ring flows each see one 50 Gbps
// uplink, as on the paper's testbed, so two jobs sending at 40 Gbps over
// the same uplink contend.
const (
	nicGbps    = 50
	uplinkGbps = 50
)

// fabricArgs are the Cassini args of the test's fabric.
func fabricArgs(moveRunning bool) map[string]any {
	return map[string]any{
		"nodeGbps":    nicGbps,
		"tiers":       []any{map[string]any{"label": rackLabel, "uplinkGbps": uplinkGbps}},
		"moveRunning": moveRunning,
	}
}

// Traffic profiles with realistic periods (the VGG16 job of the paper's
// Fig. 3, and jobs of 300 and 400 ms): three on one link make a unified
// circle of 20,400 ticks.
const (
	p255 = `{"period_ms":255,"phases":[{"ms":141,"gbps":0},{"ms":114,"gbps":40}]}`
	p300 = `{"period_ms":300,"phases":[{"ms":180,"gbps":0},{"ms":120,"gbps":35}]}`
	p400 = `{"period_ms":400,"phases":[{"ms":250,"gbps":0},{"ms":150,"gbps":45}]}`
)

// env is the test's cluster: the control plane, the schedulers, the nodes
// and a monitor of every pod.
type env struct {
	t   *testing.T
	p   *plane
	ctx context.Context
	o   *orrerySched
	mon *monitor
}

// node is a Node object of the fake cluster: whole-node pods (8 GPUs),
// racks and NIC labels, Ready, no kubelet.
func node(name, pool string, rack int) *v1.Node {
	res := v1.ResourceList{v1.ResourceCPU: resource.MustParse("64"), v1.ResourceMemory: resource.MustParse("512Gi"),
		v1.ResourcePods: resource.MustParse("110"), gpu: resource.MustParse("8")}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, rackLabel: fmt.Sprintf("rack-%d", rack), nicLabel: fmt.Sprint(nicGbps), poolLabel: pool}},
		Status: v1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}},
	}
}

// createNodes creates racks × perRack nodes of pool, named
// <pool>-r<rack>-<i>, racks numbered from first. The TaintNodesByCondition
// admission plugin taints every new Node not-ready (NoSchedule), and
// without a controller manager nothing lifts it: the test removes it, as
// one does for a test cluster without kubelets.
func (e *env) createNodes(pool string, first, racks, perRack int) []string {
	e.t.Helper()
	var names []string
	for r := first; r < first+racks; r++ {
		for i := range perRack {
			n := node(fmt.Sprintf("%s-r%d-%d", pool, r, i), pool, r)
			got, err := e.p.cs.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
			if err != nil {
				e.t.Fatal(err)
			}
			if got.Status.Allocatable.Name(gpu, resource.DecimalSI).Value() != 8 {
				got.Status = n.Status
				if got, err = e.p.cs.CoreV1().Nodes().UpdateStatus(e.ctx, got, metav1.UpdateOptions{}); err != nil {
					e.t.Fatal(err)
				}
			}
			tainted := slices.ContainsFunc(got.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeNotReady })
			if !tainted {
				e.t.Fatalf("node %s is not tainted %s: the test's note on the admission plugin is wrong", n.Name, v1.TaintNodeNotReady)
			}
			got.Spec.Taints = slices.DeleteFunc(got.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeNotReady })
			if _, err := e.p.cs.CoreV1().Nodes().Update(e.ctx, got, metav1.UpdateOptions{}); err != nil {
				e.t.Fatal(err)
			}
			names = append(names, n.Name)
		}
	}
	return names
}

// jobSpec is a training job the test submits.
type jobSpec struct {
	ns, name  string
	size      int    // pods
	prof      string // the profile annotation ("" none)
	scheduler string // default orrery-scheduler
	pool      string // nodeSelector on the pool label
	nodes     []string
	noSize    bool              // no size annotation
	anno      map[string]string // annotations replacing the defaults
	gpus      int               // per pod; 0: the whole node (8)
}

// pods returns the job's pods: whole-node (8 GPUs), its label and
// annotations, pinned to its pool (and to nodes, when given, by node
// affinity: a user's constraint).
func (j jobSpec) pods() []*v1.Pod {
	sched := j.scheduler
	if sched == "" {
		sched = orreryName
	}
	var out []*v1.Pod
	for i := range j.size {
		anno := map[string]string{}
		if !j.noSize {
			anno[sizeAnno] = fmt.Sprint(j.size)
		}
		if j.prof != "" {
			anno[profAnno] = j.prof
		}
		for k, v := range j.anno {
			anno[k] = v
		}
		gpus := j.gpus
		if gpus == 0 {
			gpus = 8
		}
		req := v1.ResourceList{gpu: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", j.name, i), Namespace: j.ns,
				Labels: map[string]string{jobLabel: j.name}, Annotations: anno},
			Spec: v1.PodSpec{SchedulerName: sched, NodeSelector: map[string]string{poolLabel: j.pool},
				TerminationGracePeriodSeconds: ptr.To(int64(0)),
				Containers:                    []v1.Container{{Name: "train", Image: "train:e2e", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}},
		}
		if len(j.nodes) > 0 {
			pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: j.nodes}}}}}}}
		}
		out = append(out, pod)
	}
	return out
}

// create creates pods, noting the time just before each Create.
func (e *env) create(pods ...*v1.Pod) {
	e.t.Helper()
	for _, pod := range pods {
		e.createOne(pod)
	}
}

func (e *env) createOne(pod *v1.Pod) {
	e.mon.created(pod.Namespace + "/" + pod.Name)
	if _, err := e.p.cs.CoreV1().Pods(pod.Namespace).Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// submit creates the job's pods and waits until they are bound; it returns
// pod name -> node.
func (e *env) submit(j jobSpec) map[string]string {
	e.t.Helper()
	pods := j.pods()
	e.create(pods...)
	return e.waitBound(pods...)
}

// waitBound waits until every pod is bound and returns pod name -> node.
func (e *env) waitBound(pods ...*v1.Pod) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	e.p.waitFor("pods bound", 60*time.Second, func() bool {
		for _, pod := range pods {
			n := e.mon.node(pod.Namespace + "/" + pod.Name)
			if n == "" {
				return false
			}
			out[pod.Name] = n
		}
		return true
	})
	return out
}

// deleteAll deletes every pod of namespace ns at once (grace 0: no kubelet
// confirms) and waits until they are gone: their jobs complete.
func (e *env) deleteAll(ns string, selector string) {
	e.t.Helper()
	opts := metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}
	if err := e.p.cs.CoreV1().Pods(ns).DeleteCollection(e.ctx, opts, metav1.ListOptions{LabelSelector: selector}); err != nil {
		e.t.Fatal(err)
	}
	e.p.waitFor("pods deleted", 60*time.Second, func() bool {
		l, err := e.p.cs.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(l.Items) == 0
	})
}

// namespace creates a namespace.
func (e *env) namespace(name string) {
	e.t.Helper()
	if _, err := e.p.cs.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
}

// monitor watches every pod: when it was created and bound (the test's
// clock), every plan generation it carried, in order.
type monitor struct {
	mu      sync.Mutex
	made    map[string]time.Time // ns/name -> just before Create
	bound   map[string]time.Time // ns/name -> when the informer saw spec.nodeName set
	nodeOf  map[string]string
	gens    map[types.UID][]int64
	names   map[types.UID]string
	down    []string // generations that went down
	badPlan []string // plans that do not parse
}

func newMonitor(e *env) *monitor {
	m := &monitor{made: map[string]time.Time{}, bound: map[string]time.Time{}, nodeOf: map[string]string{},
		gens: map[types.UID][]int64{}, names: map[types.UID]string{}}
	f := informers.NewSharedInformerFactory(e.p.cs, 0)
	inf := f.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.see(obj.(*v1.Pod)) },
		UpdateFunc: func(_, obj any) { m.see(obj.(*v1.Pod)) },
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return m
}

func (m *monitor) created(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.made[key] = time.Now()
	delete(m.bound, key)
	delete(m.nodeOf, key)
}

func (m *monitor) see(pod *v1.Pod) {
	now := time.Now()
	key := pod.Namespace + "/" + pod.Name
	m.mu.Lock()
	defer m.mu.Unlock()
	if pod.Spec.NodeName != "" {
		if _, ok := m.bound[key]; !ok {
			m.bound[key], m.nodeOf[key] = now, pod.Spec.NodeName
		}
	}
	text, ok := pod.Annotations[planAnno]
	if !ok {
		return
	}
	q, err := plan.Parse([]byte(text))
	if err != nil {
		m.badPlan = append(m.badPlan, key+": "+err.Error())
		return
	}
	g := m.gens[pod.UID]
	if len(g) > 0 && q.Generation < g[len(g)-1] {
		m.down = append(m.down, fmt.Sprintf("%s: generation %d after %d", key, q.Generation, g[len(g)-1]))
	}
	if len(g) == 0 || g[len(g)-1] != q.Generation {
		m.gens[pod.UID] = append(g, q.Generation)
	}
	m.names[pod.UID] = key
}

func (m *monitor) node(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nodeOf[key]
}

// latencies returns creation-to-binding times of the pods with keys of
// prefix (ns/).
func (m *monitor) latencies(prefix string) []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	for k, t0 := range m.made {
		if t1, ok := m.bound[k]; ok && strings.HasPrefix(k, prefix) {
			out = append(out, t1.Sub(t0))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// check fails the test on a generation that went down or a plan that did
// not parse, seen so far.
func (m *monitor) check(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.down {
		t.Errorf("plan generation went down: %s", s)
	}
	for _, s := range m.badPlan {
		t.Errorf("bad plan annotation: %s", s)
	}
	m.down, m.badPlan = nil, nil
}

// quantile of sorted durations (nearest rank).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(q*float64(len(d))+0.999999) - 1
	return d[min(max(i, 0), len(d)-1)]
}
