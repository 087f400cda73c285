package cassini

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// TestDeployConfigMap: the ConfigMap the deployment manifests apply holds
// the example configuration as it is.
func TestDeployConfigMap(t *testing.T) {
	example, err := os.ReadFile("../examples/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../deploy/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm v1.ConfigMap
	if err := yaml.UnmarshalStrict(data, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != "orrery-scheduler-config" || cm.Namespace != "kube-system" {
		t.Errorf("ConfigMap %s/%s, want kube-system/orrery-scheduler-config (deployment.yaml mounts it)", cm.Namespace, cm.Name)
	}
	if diff := cmp.Diff(string(example), cm.Data["config.yaml"]); diff != "" {
		t.Errorf("deploy/configmap.yaml's config.yaml is not examples/scheduler-config.yaml (-example +configmap):\n%s", diff)
	}
}

// TestExampleConfig: the example KubeSchedulerConfiguration is valid for
// kube-scheduler, its Cassini args decode strictly, and they are the
// defaults.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile("../examples/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := decodeConfig(t, string(data))
	var args runtime.Object
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == Name {
			args = pc.Args
		}
	}
	if args == nil {
		t.Fatal("no Cassini args in the example")
	}
	a, err := decodeArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.resolve(field.NewPath("args"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Args{}.resolve(field.NewPath("args"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{}), cmpopts.IgnoreUnexported()); diff != "" {
		t.Errorf("example args differ from the defaults (-default +example):\n%s", diff)
	}
}

// TestArgsErrors: every bad argument is named by its path, all at once.
func TestArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want []string
	}{
		{"unknown field", `{"nodeGpbs": 50}`, []string{`unknown field "nodeGpbs"`}},
		{"wrong type", `{"candidates": "ten"}`, []string{"candidates"}},
		{"ranges", `{"nodeGbps": -1, "candidates": 1001, "timeBudget": "-1s", "tickMs": -2, "cacheSize": -5, "searchBudget": -7}`,
			[]string{"args.nodeGbps", "args.candidates", "args.timeBudget", "args.tickMs", "args.cacheSize", "args.searchBudget"}},
		{"enums", `{"mode": "fast", "aggregate": "max", "loops": "ignore"}`,
			[]string{`args.mode: Unsupported value: "fast"`, `args.aggregate: Unsupported value: "max"`, `args.loops: Unsupported value: "ignore"`}},
		{"tiers", `{"tiers": [{"label": "rack"}, {"label": "rack"}, {"label": "bad label!", "oversubscription": 0.5}, {"label": "x", "oversubscription": 2, "uplinkGbps": 10}, {"label": "y"}]}`,
			[]string{"args.tiers: Too many: 5", "args.tiers[1].label: Duplicate value", "args.tiers[2].label: Invalid value", "args.tiers[2].oversubscription", "args.tiers[3].uplinkGbps: Forbidden"}},
		{"labels", `{"jobLabel": "a b", "planAnnotation": "-x"}`, []string{"args.jobLabel", "args.planAnnotation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(t.Context(), &runtime.Unknown{Raw: []byte(tc.raw), ContentType: runtime.ContentTypeJSON}, nil)
			if !errors.Is(err, ErrArgs) {
				t.Fatalf("New = %v, want an ErrArgs", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// TestArgsYAML: args given as YAML decode like JSON.
func TestArgsYAML(t *testing.T) {
	a, err := decodeArgs(&runtime.Unknown{Raw: []byte("nodeGbps: 50\ntiers:\n- label: r\n  uplinkGbps: 50\n"), ContentType: runtime.ContentTypeYAML})
	if err != nil {
		t.Fatal(err)
	}
	if a.NodeGbps != 50 || len(a.Tiers) != 1 || a.Tiers[0].UplinkGbps != 50 {
		t.Errorf("decoded %+v", a)
	}
}
