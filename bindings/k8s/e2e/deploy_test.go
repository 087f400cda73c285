//go:build linux

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// deployDir holds the manifests, relative to this package.
const deployDir = "../deploy"

// manifests are deployDir's files in the order kustomization.yaml lists
// them.
var manifests = []string{"rbac.yaml", "configmap.yaml", "deployment.yaml"}

// applyManifests applies the deployment manifests to the API server by
// server-side apply with strict field validation (an unknown or misspelt
// field is an error): each object first as a dry run, then for real. The
// Deployment stays without pods (no controller manager runs); the test
// runs its container's command itself.
func (p *plane) applyManifests() []*unstructured.Unstructured {
	p.t.Helper()
	ctx := context.Background()
	dc, err := discovery.NewDiscoveryClientForConfig(p.admin)
	if err != nil {
		p.t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(p.admin)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, file := range manifests {
		b, err := os.ReadFile(filepath.Join(deployDir, file))
		if err != nil {
			p.t.Fatal(err)
		}
		for i, doc := range strings.Split(string(b), "\n---\n") {
			var obj unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				p.t.Fatalf("%s document %d: %v", file, i, err)
			}
			gvk := obj.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				p.t.Fatalf("%s %s: %v", file, gvk, err)
			}
			data, err := obj.MarshalJSON()
			if err != nil {
				p.t.Fatal(err)
			}
			r := dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
			for _, dry := range [][]string{{metav1.DryRunAll}, nil} {
				got, err := r.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
					FieldManager: "orrery-e2e", Force: ptr.To(true), FieldValidation: "Strict", DryRun: dry})
				if err != nil {
					p.t.Fatalf("applying %s %s/%s (dry run %v): %v", file, gvk.Kind, obj.GetName(), dry != nil, err)
				}
				if dry == nil {
					out = append(out, got)
				}
			}
		}
	}
	return out
}

// orrerySched runs orrery-scheduler as the manifests deploy it: the
// configuration from the applied ConfigMap, the Deployment container's
// arguments, the ServiceAccount's token.
type orrerySched struct {
	p          *plane
	kubeconfig string         // the ServiceAccount's
	config     map[string]any // the ConfigMap's config.yaml
	args       []string       // the Deployment container's
	cur        *proc
	holder     string // lease holder of cur
	starts     int
}

// newOrrery reads the applied ConfigMap and Deployment and mints a token
// for the ServiceAccount.
func newOrrery(p *plane) *orrerySched {
	p.t.Helper()
	ctx := context.Background()
	cm, err := p.cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "orrery-scheduler-config", metav1.GetOptions{})
	if err != nil {
		p.t.Fatal(err)
	}
	o := &orrerySched{p: p}
	text, ok := cm.Data["config.yaml"]
	if !ok {
		p.t.Fatal("the ConfigMap has no config.yaml")
	}
	if err := yaml.Unmarshal([]byte(text), &o.config); err != nil {
		p.t.Fatal(err)
	}
	d, err := p.cs.AppsV1().Deployments("kube-system").Get(ctx, "orrery-scheduler", metav1.GetOptions{})
	if err != nil {
		p.t.Fatal(err)
	}
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		p.t.Fatalf("the Deployment has %d containers, want 1", n)
	}
	o.args = d.Spec.Template.Spec.Containers[0].Args
	tok, err := p.cs.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "orrery-scheduler",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(4 * 3600))}}, metav1.CreateOptions{})
	if err != nil {
		p.t.Fatal(err)
	}
	o.kubeconfig = p.kubeconfig("orrery-scheduler", "", "", tok.Status.Token)
	return o
}

// start starts orrery-scheduler with the Cassini args the test's fabric
// needs (args: merged over the ConfigMap's) and waits until it leads.
func (o *orrerySched) start(args map[string]any) {
	p := o.p
	p.t.Helper()
	cfg := deepCopy(o.config)
	cfg["clientConnection"] = map[string]any{"kubeconfig": o.kubeconfig}
	prof := cfg["profiles"].([]any)[0].(map[string]any)
	found := false
	for _, pc := range prof["pluginConfig"].([]any) {
		pc := pc.(map[string]any)
		if pc["name"] == "Cassini" {
			a := pc["args"].(map[string]any)
			for k, v := range args {
				a[k] = v
			}
			found = true
		}
	}
	if !found {
		p.t.Fatal("the ConfigMap's configuration has no Cassini pluginConfig")
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	o.starts++
	path := p.write(fmt.Sprintf("orrery-config-%d.yaml", o.starts), b)
	var argv []string
	for _, a := range o.args {
		if strings.HasPrefix(a, "--config=") {
			a = "--config=" + path
		}
		argv = append(argv, a)
	}
	if v := os.Getenv("ORRERY_E2E_SCHEDULER_V"); v != "" {
		argv = append(argv, "--v="+v) // after the Deployment's: it wins
	}
	argv = append(argv, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePort(p.t)),
		"--authentication-kubeconfig="+o.kubeconfig, "--authorization-kubeconfig="+o.kubeconfig)
	before := o.holder
	t0 := time.Now()
	o.cur = p.start("orrery-scheduler", "orrery-scheduler", argv...)
	o.holder = p.waitLeader("orrery-scheduler", before, 90*time.Second)
	p.t.Logf("orrery-scheduler #%d leads after %.1f s (lease holder %s)", o.starts, time.Since(t0).Seconds(), o.holder)
}

// stop ends orrery-scheduler with sig (SIGKILL: a crash).
func (o *orrerySched) stop(sig syscall.Signal) {
	if o.cur != nil {
		o.cur.kill(sig)
		o.cur = nil
	}
}

// waitLeader waits until the lease name in kube-system has a holder other
// than before, and returns it.
func (p *plane) waitLeader(name, before string, d time.Duration) string {
	p.t.Helper()
	var holder string
	p.waitFor("the lease "+name, d, func() bool {
		l, err := p.cs.CoordinationV1().Leases("kube-system").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		holder = *l.Spec.HolderIdentity
		return holder != "" && holder != before
	})
	return holder
}

// startDefault starts the default kube-scheduler (profile
// default-scheduler) as user system:kube-scheduler, and waits until it
// leads.
func (p *plane) startDefault() *proc {
	p.t.Helper()
	kc := p.kubeconfig("kube-scheduler", "kube-scheduler.crt", "kube-scheduler.key", "")
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
leaderElection:
  leaderElect: true
  resourceName: kube-scheduler
  resourceNamespace: kube-system
profiles:
- schedulerName: default-scheduler
`, kc)
	path := p.write("kube-scheduler.yaml", []byte(cfg))
	pr := p.start("kube-scheduler", "kube-scheduler", "--config="+path, "--v=2",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePort(p.t)),
		"--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc)
	p.waitLeader("kube-scheduler", "", 90*time.Second)
	return pr
}

// deepCopy copies a decoded YAML tree.
func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return deepCopy(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopyValue(x)
		}
		return out
	}
	return v
}
