package cassini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// Defaults of the zero [Args]: a two-tier (leaf-spine) fabric whose racks
// are named by [DefaultRackLabel], 100 Gbps NICs, non-blocking uplinks, the
// paper's ten candidates and a 100 ms budget per scheduling cycle.
const (
	DefaultRackLabel        = "network.orrery.io/rack"
	DefaultNICLabel         = "network.orrery.io/nic-gbps"
	DefaultJobLabel         = "orrery.io/job"
	DefaultSizeAnnotation   = "orrery.io/job-size"
	DefaultProfileAnno      = "orrery.io/profile"
	DefaultProfileConfigMap = "orrery.io/profile-configmap"
	DefaultProfileKey       = "profile.json"
	DefaultPlanAnnotation   = "orrery.io/plan"
	DefaultNodeGbps         = 100.0
	DefaultCandidates       = 10
	DefaultSearchBudget     = 1 << 22
)

// DefaultTimeBudget fits realistic periods with room: a new 400 ms job
// beside 255 and 300 ms jobs (a 20,400-tick unified circle) ranks in about
// 1 ms of CPU (BenchmarkPreScoreRealistic), and the slowest PreScore of the
// end-to-end test took 46 ms on a machine loaded 14 times over its two
// cores (bindings/k8s/README.md); 10 ms made the plugin abstain there even for
// one-pod jobs.
const DefaultTimeBudget = 100 * time.Millisecond

// DefaultReference is the instant every job's time shift counts from when
// Args.Reference is not set. Any fixed instant works, as long as every
// agent uses the same one and the nodes' clocks are synchronized.
var DefaultReference = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Limits on the arguments.
const (
	MaxCandidates = 1000
	MaxTiers      = 4
	maxGbps       = 1e6
)

// Tier is one level of switches above the nodes, bottom up: the leaf (ToR)
// switches first, then the spine or aggregation blocks above them. Nodes
// whose Label values are equal hang below the same switch of this tier; a
// node without the label is a domain of its own.
type Tier struct {
	Label string `json:"label"`
	// Oversubscription is the ratio of a domain's downlink capacity (the
	// sum of its members' uplinks) to its own uplink capacity toward the
	// next tier: 1 is non-blocking, 2 the paper's testbed. 0 means 1.
	Oversubscription float64 `json:"oversubscription,omitempty"`
	// UplinkGbps, instead, sets every domain's uplink capacity outright.
	// Where a ring's few large flows are pinned by ECMP to single member
	// links, one member's speed is what a flow sees: the paper's testbed
	// (2:1, two 50 Gbps uplinks per rack) is uplinkGbps 50.
	UplinkGbps float64 `json:"uplinkGbps,omitempty"`
}

// Args are the plugin's arguments (pluginConfig[].args in a
// KubeSchedulerConfiguration). Every zero value means the default named in
// its comment.
type Args struct {
	metav1.TypeMeta `json:",inline"`

	// Tiers describe the fabric above the nodes, bottom up; nil means one
	// tier, the racks ([DefaultRackLabel]) under a non-blocking spine.
	Tiers []Tier `json:"tiers,omitempty"`
	// NodeGbps is every node's NIC speed; 0 means DefaultNodeGbps. A node
	// labelled NICLabel (default [DefaultNICLabel]) with a number uses that.
	NodeGbps float64 `json:"nodeGbps,omitempty"`
	NICLabel string  `json:"nicLabel,omitempty"`

	// JobLabel names the training job a pod belongs to (its pods share the
	// value, within a namespace); default [DefaultJobLabel]. A pod without
	// it that belongs to a PodGroup is keyed by the group's name.
	JobLabel string `json:"jobLabel,omitempty"`
	// SizeAnnotation on a pod gives its job's number of pods; default
	// [DefaultSizeAnnotation]. Without it a job is placed one pod at a time.
	SizeAnnotation string `json:"sizeAnnotation,omitempty"`
	// ProfileAnnotation holds the job's traffic profile inline, in the JSON
	// of a cassini.rank job (period_ms, phases of {ms, gbps}, or samples);
	// default [DefaultProfileAnno].
	ProfileAnnotation string `json:"profileAnnotation,omitempty"`
	// ProfileConfigMapAnnotation names a ConfigMap in the pod's namespace
	// holding the profile instead, as "name" or "name/key" (key default
	// [DefaultProfileKey]); default [DefaultProfileConfigMap].
	ProfileConfigMapAnnotation string `json:"profileConfigMapAnnotation,omitempty"`
	// DisableConfigMapProfiles turns ConfigMap profiles off, and with them
	// the scheduler's watch on every ConfigMap of the cluster.
	DisableConfigMapProfiles bool `json:"disableConfigMapProfiles,omitempty"`
	// PlanAnnotation is where the plugin writes a pod's time-shift plan for the
	// agent; default [DefaultPlanAnnotation].
	PlanAnnotation string `json:"planAnnotation,omitempty"`
	// Reference is the instant shifts count from (RFC 3339); zero means
	// [DefaultReference].
	Reference metav1.Time `json:"reference,omitempty"`

	// Candidates is how many placements are pre-selected by topology and
	// ranked each cycle; 0 means DefaultCandidates (the paper's N = 10).
	Candidates int `json:"candidates,omitempty"`
	// TimeBudget bounds the ranking in one scheduling cycle; past it the
	// plugin abstains for that pod (neutral scores). 0 means
	// DefaultTimeBudget.
	TimeBudget metav1.Duration `json:"timeBudget,omitempty"`

	// TickMs and UnitMbps are the quantization grid (default 1 ms, 1 Mbps).
	TickMs   float64 `json:"tickMs,omitempty"`
	UnitMbps float64 `json:"unitMbps,omitempty"`
	// Mode is the link search: "exact" (default) or "paper".
	Mode string `json:"mode,omitempty"`
	// SearchBudget is pair evaluations per link search; 0 means
	// DefaultSearchBudget, -1 unlimited (the time budget still applies).
	SearchBudget int64 `json:"searchBudget,omitempty"`
	// ExactPeriods keeps iteration times unrounded: a link whose unified
	// circle passes the perimeter cap then discards the candidate. The
	// default (false) rounds periods up to a common grid instead, so jobs
	// with incommensurate iteration times still get shifts.
	ExactPeriods bool `json:"exactPeriods,omitempty"`
	// Aggregate is "mean" (default, the paper) or "min"; Loops is the
	// affinity-graph loop policy, "resolve" (default), "paper" or
	// "reoptimize".
	Aggregate string `json:"aggregate,omitempty"`
	Loops     string `json:"loops,omitempty"`
	// CacheSize is how many link searches are remembered across cycles
	// (default 4096; -1 none).
	CacheSize int `json:"cacheSize,omitempty"`
	// MoveRunning lets each ranking re-plan the shifts of running jobs
	// that already have plans, as the paper's Algorithm 2 does: every job
	// free, each link at its own optimum, placements whose loops cannot be
	// kept there discarded. The default (false) holds running jobs at the
	// shifts their plans carry and places only the new job, and running
	// jobs without a usable plan (engine/cassini/candidate's incremental ranking):
	// no running job's agent has to re-align, and a cycle stays fast when
	// every running job shares links. Mode "paper" or loops "paper" rank
	// as the paper whatever this says.
	MoveRunning bool `json:"moveRunning,omitempty"`
}

// config is Args validated and resolved.
type config struct {
	tiers            []Tier
	nodeGbps         float64
	nicLabel         string
	jobLabel         string
	sizeAnno         string
	profileAnno      string
	profileCMAnno    string
	planAnno         string
	reference        time.Time
	candidates       int
	budget           time.Duration
	quantum          profile.Quantum
	rank             candidate.Options
	incremental      bool // hold running jobs at their plans (Args.MoveRunning unset)
	cache            int
	tickMs, unitMbps float64
}

// ErrArgs is wrapped by every argument error.
var ErrArgs = errors.New("cassini: invalid plugin args")

// decodeArgs reads the plugin's args as the framework hands them over: nil
// (no pluginConfig entry), *runtime.Unknown (JSON or YAML, strictly: an
// unknown field is an error), or *Args.
func decodeArgs(obj runtime.Object) (Args, error) {
	var a Args
	switch o := obj.(type) {
	case nil:
		return a, nil
	case *Args:
		return *o, nil
	case *runtime.Unknown:
		raw := o.Raw
		if len(bytes.TrimSpace(raw)) == 0 {
			return a, nil
		}
		if o.ContentType == runtime.ContentTypeYAML {
			j, err := yaml.YAMLToJSON(raw)
			if err != nil {
				return a, fmt.Errorf("%w: %w", ErrArgs, err)
			}
			raw = j
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&a); err != nil {
			return a, fmt.Errorf("%w: %w", ErrArgs, err)
		}
		return a, nil
	}
	return a, fmt.Errorf("%w: want args of type runtime.Unknown or *cassini.Args, got %T", ErrArgs, obj)
}

// DeepCopyObject returns a deep copy of a: with the embedded TypeMeta it
// makes *Args a runtime.Object, so it can be handed to [New] directly.
func (a *Args) DeepCopyObject() runtime.Object {
	c := *a
	c.Tiers = append([]Tier(nil), a.Tiers...)
	return &c
}

// resolve checks a and returns it resolved; the error wraps ErrArgs and an
// aggregate of every bad field, each named by its path under path.
func (a Args) resolve(path *field.Path) (config, error) {
	var errs field.ErrorList
	c := config{
		nodeGbps: or(a.NodeGbps, DefaultNodeGbps), nicLabel: orS(a.NICLabel, DefaultNICLabel),
		jobLabel: orS(a.JobLabel, DefaultJobLabel), sizeAnno: orS(a.SizeAnnotation, DefaultSizeAnnotation),
		profileAnno: orS(a.ProfileAnnotation, DefaultProfileAnno), profileCMAnno: orS(a.ProfileConfigMapAnnotation, DefaultProfileConfigMap),
		planAnno: orS(a.PlanAnnotation, DefaultPlanAnnotation), reference: a.Reference.Time,
		candidates: a.Candidates, budget: a.TimeBudget.Duration, cache: a.CacheSize,
		tickMs: or(a.TickMs, 1), unitMbps: or(a.UnitMbps, 1),
	}
	if c.reference.IsZero() {
		c.reference = DefaultReference
	}
	c.tiers = a.Tiers
	if c.tiers == nil {
		c.tiers = []Tier{{Label: DefaultRackLabel, Oversubscription: 1}}
	}
	tp := path.Child("tiers")
	if len(c.tiers) > MaxTiers {
		errs = append(errs, field.TooMany(tp, len(c.tiers), MaxTiers))
	}
	seen := map[string]int{}
	tiers := make([]Tier, len(c.tiers))
	for i, t := range c.tiers {
		p := tp.Index(i)
		errs = append(errs, labelKey(p.Child("label"), t.Label)...)
		if j, dup := seen[t.Label]; dup && t.Label != "" {
			errs = append(errs, field.Duplicate(p.Child("label"), fmt.Sprintf("%s (also tiers[%d])", t.Label, j)))
		}
		seen[t.Label] = i
		if t.UplinkGbps != 0 {
			if t.Oversubscription != 0 {
				errs = append(errs, field.Forbidden(p.Child("uplinkGbps"), "set oversubscription or uplinkGbps, not both"))
			}
			if !(t.UplinkGbps > 0 && t.UplinkGbps <= maxGbps) {
				errs = append(errs, field.Invalid(p.Child("uplinkGbps"), t.UplinkGbps, fmt.Sprintf("must be in (0, %g]", float64(maxGbps))))
			}
		}
		if t.Oversubscription == 0 {
			t.Oversubscription = 1
		}
		if !(t.Oversubscription >= 1 && t.Oversubscription <= 1000) {
			errs = append(errs, field.Invalid(p.Child("oversubscription"), t.Oversubscription, "must be in [1, 1000]: downlink over uplink capacity"))
		}
		tiers[i] = t
	}
	c.tiers = tiers
	if !(c.nodeGbps > 0 && c.nodeGbps <= maxGbps) {
		errs = append(errs, field.Invalid(path.Child("nodeGbps"), a.NodeGbps, fmt.Sprintf("must be in (0, %g]", float64(maxGbps))))
	}
	errs = append(errs, labelKey(path.Child("nicLabel"), c.nicLabel)...)
	errs = append(errs, labelKey(path.Child("jobLabel"), c.jobLabel)...)
	for _, f := range []struct{ name, v string }{{"sizeAnnotation", c.sizeAnno}, {"profileAnnotation", c.profileAnno}, {"profileConfigMapAnnotation", c.profileCMAnno}, {"planAnnotation", c.planAnno}} {
		errs = append(errs, labelKey(path.Child(f.name), f.v)...)
	}
	switch {
	case c.candidates == 0:
		c.candidates = DefaultCandidates
	case c.candidates < 1 || c.candidates > MaxCandidates:
		errs = append(errs, field.Invalid(path.Child("candidates"), a.Candidates, fmt.Sprintf("must be in [1, %d]", MaxCandidates)))
	}
	switch {
	case c.budget == 0:
		c.budget = DefaultTimeBudget
	case c.budget < 0 || c.budget > time.Minute:
		errs = append(errs, field.Invalid(path.Child("timeBudget"), a.TimeBudget.Duration.String(), "must be in (0, 1m]: each cycle holds up the scheduling queue"))
	}
	switch {
	case c.cache == 0:
		c.cache = 4096
	case c.cache == -1:
		c.cache = 0
	case c.cache < 0 || c.cache > 1<<20:
		errs = append(errs, field.Invalid(path.Child("cacheSize"), a.CacheSize, "must be -1 (none) or in [1, 1048576]"))
	}
	errs = append(errs, c.resolveSearch(a, path)...)
	if len(errs) > 0 {
		return c, fmt.Errorf("%w: %w", ErrArgs, errs.ToAggregate())
	}
	return c, nil
}

// resolveSearch resolves the quantization and ranking options.
func (c *config) resolveSearch(a Args, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !(c.tickMs > 0 && c.tickMs <= 1000) {
		errs = append(errs, field.Invalid(path.Child("tickMs"), a.TickMs, "must be in (0, 1000]"))
	} else {
		c.quantum.Tick = time.Duration(math.Round(c.tickMs * 1e6))
		if c.quantum.Tick <= 0 {
			errs = append(errs, field.Invalid(path.Child("tickMs"), a.TickMs, "is under a nanosecond"))
		}
	}
	if !(c.unitMbps > 0 && c.unitMbps <= 1e6) {
		errs = append(errs, field.Invalid(path.Child("unitMbps"), a.UnitMbps, "must be in (0, 1e6]"))
	}
	c.quantum.Unit = c.unitMbps * profile.Mbps
	mode, err := link.ParseMode(a.Mode)
	if err != nil {
		errs = append(errs, field.NotSupported(path.Child("mode"), a.Mode, []string{"exact", "paper"}))
	}
	agg, err := candidate.ParseAggregate(a.Aggregate)
	if err != nil {
		errs = append(errs, field.NotSupported(path.Child("aggregate"), a.Aggregate, []string{"mean", "min"}))
	}
	loops, err := affinity.ParsePolicy(a.Loops)
	if err != nil {
		errs = append(errs, field.NotSupported(path.Child("loops"), a.Loops, []string{"resolve", "paper", "reoptimize"}))
	}
	budget := a.SearchBudget
	switch {
	case budget == 0:
		budget = DefaultSearchBudget
	case budget < -1:
		errs = append(errs, field.Invalid(path.Child("searchBudget"), a.SearchBudget, "must be -1 (unlimited) or positive"))
	}
	c.rank = candidate.Options{Aggregate: agg, Loops: loops}
	c.rank.Link.Mode = mode
	c.rank.Link.Budget = budget
	c.rank.Link.Circle.Round = !a.ExactPeriods
	c.incremental = !a.MoveRunning && mode == link.Exact && loops != affinity.Paper
	return errs
}

// labelKey checks a label or annotation key.
func labelKey(p *field.Path, v string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func or(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func orS(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
