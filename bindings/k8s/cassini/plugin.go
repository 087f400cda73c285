package cassini

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/orrery/orrery/engine/cassini/candidate"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "Cassini"

// stateKey is where PreScore leaves its ranking for Score and Reserve, and
// NormalizePlacementScore its ranking for Reserve.
const stateKey fwk.StateKey = "orrery.io/cassini"

// Plugin is the CASSINI scheduler plugin. Create it with [New].
type Plugin struct {
	h      fwk.Handle
	cfg    config
	ws     candidate.Workspace
	prof   profiles
	parsed planCache // plan annotations
	led    ledger
	wr     *writer // nil without a client
	warned warnings
	cms    configMapGetter

	fabMu    sync.Mutex
	fabNodes []*v1.Node // the nodes fab was built from
	fab      *fabric

	batchMu    sync.Mutex    // creating a pod-group cycle's batch
	groupRanks atomic.Int64  // pod-group cycles ranked, for tests
	podIndex   cache.Indexer // the scheduler's pods, with jobIndex
}

var (
	_ fwk.PreScorePlugin       = (*Plugin)(nil)
	_ fwk.ScorePlugin          = (*Plugin)(nil)
	_ fwk.ReservePlugin        = (*Plugin)(nil)
	_ fwk.PostBindPlugin       = (*Plugin)(nil)
	_ fwk.PlacementScorePlugin = (*Plugin)(nil)
)

// New is the plugin's factory, for app.WithPlugin(cassini.Name, cassini.New)
// and the framework's registries. args is nil, the *runtime.Unknown the
// framework decodes a pluginConfig entry into, or an *Args.
// The plan writer runs until ctx ends.
func New(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	a, err := decodeArgs(args)
	if err != nil {
		return nil, err
	}
	c, err := a.resolve(field.NewPath("args"))
	if err != nil {
		return nil, err
	}
	p := &Plugin{h: h, cfg: c}
	p.ws.Cache = c.cache
	if h != nil {
		if f := h.SharedInformerFactory(); f != nil {
			inf := f.Core().V1().Pods().Informer()
			if _, ok := inf.GetIndexer().GetIndexers()[c.jobIndex()]; !ok {
				cfg := c
				err := inf.AddIndexers(cache.Indexers{c.jobIndex(): func(obj any) ([]string, error) {
					if q, ok := obj.(*v1.Pod); ok {
						if k := cfg.jobKey(q); k != "" {
							return []string{k}, nil
						}
					}
					return nil, nil
				}})
				if err != nil {
					return nil, fmt.Errorf("cassini: indexing pods by job: %w", err)
				}
			}
			p.podIndex = inf.GetIndexer()
			if !a.DisableConfigMapProfiles {
				l := f.Core().V1().ConfigMaps().Lister()
				p.cms = func(ns, name string) (*v1.ConfigMap, error) { return l.ConfigMaps(ns).Get(name) }
			}
		}
		if c := h.ClientSet(); c != nil {
			p.startWriter(ctx, c)
		}
	}
	return p, nil
}

// Name returns [Name].
func (p *Plugin) Name() string { return Name }

// cycle is what PreScore computed for one pod: the job's candidates, ranked,
// and every node's raw score. It is not changed after PreScore, so Clone
// shares it.
type cycle struct {
	job    string
	rk     ranked
	scores map[string]int64 // node -> score (its best candidate's level)
	cand   map[string]int   // node -> best kept candidate placing a pod on it
}

func (c *cycle) Clone() fwk.StateData { return c }

// abstained marks a cycle whose PreScore abstained, for Reserve.
type abstained struct{}

func (abstained) Clone() fwk.StateData { return abstained{} }

// skip is the neutral answer: the framework leaves the plugin out of the
// pod's scores.
func skip(ctx context.Context, state fwk.CycleState, pod klog.ObjectRef, err error) *fwk.Status {
	v := 4
	if errors.Is(err, ErrBudget) {
		v = 2 // the budget is too small for the cluster: worth an operator's notice
	}
	klog.FromContext(ctx).V(v).Info("Cassini abstains", "pod", pod, "reason", err)
	state.Write(stateKey, abstained{})
	return fwk.NewStatus(fwk.Skip, err.Error())
}

// PreScore builds the pod's job's candidate placements, pre-selected by
// topology from the feasible nodes, and ranks them once for the cycle,
// within the time budget. A pod that is not part of a training job, has no
// usable profile, or whose ranking does not finish in time gets Skip: the
// framework then scores it without this plugin.
func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.cfg.budget)
	defer cancel()
	size, err := p.cfg.jobSize(pod)
	if err != nil {
		p.warn(pod, pod.UID, ReasonBadAnnotation, err.Error())
	}
	w, err := p.world(pod)
	if err != nil {
		return skip(ctx, state, klog.KObj(pod), err)
	}
	feasible := make([]int, 0, len(nodes))
	for _, n := range nodes {
		if i, ok := w.fab.index[n.Node().Name]; ok {
			feasible = append(feasible, i)
		}
	}
	self := w.jobs[w.self]
	remaining := 1
	if size > len(self.nodes) {
		remaining = size - len(self.nodes)
	}
	placed := self.nodes
	cands := preselect(w.fab, placed, p.led.planned(w.selfKey(), w.fab), remaining, feasible, p.cfg.candidates, w.on, w.claimed)
	if len(cands) == 0 {
		return skip(ctx, state, klog.KObj(pod), fmt.Errorf("%w: no candidate placement", ErrNoJob))
	}
	rk, err := p.rank(ctx, w, cands)
	if err != nil {
		return skip(ctx, state, klog.KObj(pod), err)
	}
	state.Write(stateKey, p.score(w, rk, len(placed)))
	klog.FromContext(ctx).V(4).Info("Cassini ranked", "pod", klog.KObj(pod), "candidates", len(cands), "jobs", len(rk.jobs),
		"best", rk.r.Outcomes[rk.r.Best].Score, "took", time.Since(start))
	return nil
}

// score turns a ranking into per-node scores: a node scores as the best
// kept candidate that places one of the job's remaining pods on it (its
// level), a node in no candidate MinScore.
func (p *Plugin) score(w *world, rk ranked, placed int) *cycle {
	c := &cycle{job: w.selfKey(), rk: rk, scores: map[string]int64{}, cand: map[string]int{}}
	lv := levels(rk.r)
	for _, ci := range rk.r.Order {
		for _, n := range rk.nodes[ci][placed:] {
			name := w.fab.names[n]
			if _, ok := c.scores[name]; !ok {
				c.scores[name], c.cand[name] = lv[ci], ci
			}
		}
	}
	return c
}

// levelResolution is the compatibility difference levels still tell
// apart (the ranking compares scores exactly; a node score has 101
// values).
const levelResolution = 1e-4

// levels maps a ranking's kept candidates onto node scores, by candidate:
// the best MaxScore, each next one in Order strictly lower than the one
// before it, and no higher than its compatibility puts it on the line from
// the best's (MaxScore) down to just below the worst's (MinScore). Equal
// compatibilities thus keep the ranking's order (the pre-selection's
// topology preference: a job placed pod by pod keeps to its planned
// placement, and a job on an idle cluster stays in one rack) one point
// apart, and unequal ones keep their distance. Past MaxScore candidates the
// last ones share MinScore+1; MinScore is left to the nodes in no
// candidate, and to discarded candidates (-1 here).
func levels(r candidate.Ranking) []int64 {
	lv := make([]int64, len(r.Outcomes))
	for i := range lv {
		lv[i] = -1
	}
	if len(r.Order) == 0 {
		return lv
	}
	best := r.Outcomes[r.Order[0]].Score
	floor := r.Outcomes[r.Order[len(r.Order)-1]].Score - levelResolution
	prev := int64(fwk.MaxScore + 1)
	for _, ci := range r.Order {
		mag := float64(fwk.MaxScore-fwk.MinScore)*(r.Outcomes[ci].Score-floor)/(best-floor) + float64(fwk.MinScore)
		l := min(int64(math.Round(mag)), prev-1)
		l = max(l, fwk.MinScore+1)
		lv[ci], prev = l, l
	}
	return lv
}

// Score returns the node's score from PreScore's ranking: one map lookup.
// The scores are final (levels), so the plugin has no ScoreExtensions.
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, n fwk.NodeInfo) (int64, *fwk.Status) {
	c, err := readCycle(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if s, ok := c.scores[n.Node().Name]; ok {
		return s, nil
	}
	return fwk.MinScore, nil
}

// ScoreExtensions returns nil: Score's values are already on [MinScore,
// MaxScore].
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

func readCycle(state fwk.CycleState) (*cycle, error) {
	d, err := state.Read(stateKey)
	if err != nil {
		return nil, fmt.Errorf("cassini: reading cycle state: %w", err)
	}
	c, ok := d.(*cycle)
	if !ok {
		return nil, fmt.Errorf("cassini: cycle state is %T", d)
	}
	return c, nil
}
