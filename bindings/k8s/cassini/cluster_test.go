package cassini

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

const (
	schedulerName = "orrery-scheduler"
	blockLabel    = "network.orrery.io/block"
	ns            = "default"
)

// paperConfig is the plugin on the paper's testbed: 50 Gbps NICs, racks of
// four under 2:1 ToRs whose flows each see one 50 Gbps uplink, two blocks
// of three racks.
const paperConfig = `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: orrery-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Cassini
        weight: 10
  pluginConfig:
  - name: Cassini
    args:
      nodeGbps: 50
      tiers:
      - label: network.orrery.io/rack
        uplinkGbps: 50
      - label: network.orrery.io/block
        uplinkGbps: 50
%s
`

// Traffic profiles (the ids of the brief's test vectors): on a 50 Gbps
// link two "up30" jobs interleave perfectly (vector D: score 1 at a shift
// of 30..42 ms); "up30" beside "up60" overlaps 18 ms at least.
const (
	up30 = `{"period_ms":72,"phases":[{"ms":30,"gbps":40},{"ms":42,"gbps":0}]}`
	up60 = `{"period_ms":72,"phases":[{"ms":60,"gbps":40},{"ms":12,"gbps":0}]}`
)

// paperNodes is the paper's 24 servers, labelled: node-i in rack i/4 of
// block i/12, each with room for one pod.
func paperNodes() []*v1.Node {
	var out []*v1.Node
	for i := range 24 {
		out = append(out, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: nodeName(i), Labels: map[string]string{
				DefaultRackLabel: fmt.Sprintf("rack-%d", i/4), blockLabel: fmt.Sprintf("block-%d", i/12)}},
			Status: v1.NodeStatus{
				Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("1")},
				Capacity:    v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("1")},
				Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
			},
		})
	}
	return out
}

func nodeName(i int) string { return fmt.Sprintf("node-%02d", i) }

// trainingPod is pod i of a job of size pods with the given profile ("" for
// none), on node ("" for pending).
func trainingPod(job string, i, size int, prof, node string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", job, i), Namespace: ns, UID: typesUID(job, i),
			Labels: map[string]string{DefaultJobLabel: job}, Annotations: map[string]string{DefaultSizeAnnotation: fmt.Sprint(size)}},
		Spec: v1.PodSpec{SchedulerName: schedulerName, NodeName: node, Containers: []v1.Container{{Name: "train", Image: "train"}}},
	}
	if prof != "" {
		p.Annotations[DefaultProfileAnno] = prof
	}
	return p
}

// filler occupies a node with a pod that is no training job.
func filler(node int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("filler-%02d", node), Namespace: ns, UID: typesUID("filler", node)},
		Spec:       v1.PodSpec{SchedulerName: schedulerName, NodeName: nodeName(node), Containers: []v1.Container{{Name: "c", Image: "c"}}},
	}
}

// cluster is a real kube-scheduler (pkg/scheduler) on a fake clientset and
// its informers, with the Cassini plugin.
type cluster struct {
	t      *testing.T
	ctx    context.Context
	client *fake.Clientset
	plugin *Plugin

	mu       sync.Mutex
	failBind map[string]int // pod name -> bindings still to fail
}

// newCluster starts the scheduler with paperConfig (extra is appended to
// the plugin's args, indented; without a timeBudget, testBudget) on objs.
func newCluster(t *testing.T, extra string, objs ...runtime.Object) *cluster {
	t.Helper()
	return startCluster(t, paperYAML(extra), nil, objs...)
}

// paperYAML is paperConfig with extra appended to the plugin's args.
func paperYAML(extra string) string {
	if !strings.Contains(extra, "timeBudget:") {
		extra += "\n      timeBudget: " + testBudget.String()
	}
	return fmt.Sprintf(paperConfig, extra)
}

// startCluster starts the scheduler with the configuration yaml, the
// Cassini plugin and the plugins of more, on objs.
func startCluster(t *testing.T, yaml string, more frameworkruntime.Registry, objs ...runtime.Object) *cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &cluster{t: t, ctx: ctx, client: fake.NewClientset(objs...), failBind: map[string]int{}}
	c.client.PrependReactor("create", "pods", c.bind)

	cfg := decodeConfig(t, yaml)
	registry := frameworkruntime.Registry{Name: func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl, err := New(ctx, obj, h)
		if err == nil {
			c.plugin = pl.(*Plugin)
		}
		return pl, err
	}}
	for name, f := range more {
		registry[name] = f
	}
	factory := informers.NewSharedInformerFactory(c.client, 0)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.client.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.New(ctx, c.client, factory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodInitialBackoffSeconds(0), scheduler.WithPodMaxBackoffSeconds(1))
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go sched.Run(ctx)
	return c
}

// decodeConfig reads a KubeSchedulerConfiguration as kube-scheduler does
// (defaults applied) and validates it.
func decodeConfig(t *testing.T, yaml string) *schedconfig.KubeSchedulerConfiguration {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode([]byte(yaml), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("decoded %T", obj)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// bind is the apiserver's pods/binding: it sets the pod's node, unless the
// test asked this pod's binding to fail.
func (c *cluster) bind(action clienttesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
	c.mu.Lock()
	if c.failBind[b.Name] > 0 {
		c.failBind[b.Name]--
		c.mu.Unlock()
		return true, nil, fmt.Errorf("binding %s refused by the test", b.Name)
	}
	c.mu.Unlock()
	gvr := v1.SchemeGroupVersion.WithResource("pods")
	obj, err := c.client.Tracker().Get(gvr, b.Namespace, b.Name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*v1.Pod).DeepCopy()
	pod.Spec.NodeName = b.Target.Name
	return true, nil, c.client.Tracker().Update(gvr, pod, b.Namespace)
}

// create submits pods and waits until each is bound; it returns their nodes.
func (c *cluster) create(pods ...*v1.Pod) map[string]string {
	c.t.Helper()
	for _, p := range pods {
		if _, err := c.client.CoreV1().Pods(p.Namespace).Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
	}
	out := map[string]string{}
	for _, p := range pods {
		out[p.Name] = c.waitBound(p.Name)
	}
	return out
}

func (c *cluster) waitBound(name string) string {
	c.t.Helper()
	var node string
	err := wait.PollUntilContextTimeout(c.ctx, 10*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		c.t.Fatalf("pod %s not bound: %v", name, err)
	}
	return node
}

func (c *cluster) pod(name string) *v1.Pod {
	c.t.Helper()
	p, err := c.client.CoreV1().Pods(ns).Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// settle waits until every pod the plugin reserved is bound and its plan
// writer has nothing left to write.
func (c *cluster) settle() {
	c.t.Helper()
	err := wait.PollUntilContextTimeout(c.ctx, 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return len(c.plugin.led.reservations()) == 0 && c.plugin.settled(), nil
	})
	if err != nil {
		c.t.Fatalf("the plan writer did not settle: %v", err)
	}
}
