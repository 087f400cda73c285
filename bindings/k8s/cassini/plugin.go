package cassini

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corelisters "k8s.io/client-go/listers/core/v1"
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
	cms    configMapGetter

	fabMu    sync.Mutex
	fabNodes []*v1.Node // the nodes fab was built from
	fab      *fabric

	batchMu    sync.Mutex   // creating a pod-group cycle's batch
	groupRanks atomic.Int64 // pod-group cycles ranked, for tests
	pods       corelisters.PodLister
}

var (
	_ fwk.PreScorePlugin       = (*Plugin)(nil)
	_ fwk.ScorePlugin          = (*Plugin)(nil)
	_ fwk.ScoreExtensions      = (*Plugin)(nil)
	_ fwk.ReservePlugin        = (*Plugin)(nil)
	_ fwk.PreBindPlugin        = (*Plugin)(nil)
	_ fwk.PostBindPlugin       = (*Plugin)(nil)
	_ fwk.PlacementScorePlugin = (*Plugin)(nil)
)

// New is the plugin's factory, for app.WithPlugin(cassini.Name, cassini.New)
// and the framework's registries. args is nil, the *runtime.Unknown the
// framework decodes a pluginConfig entry into, or an *Args.
func New(_ context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
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
			p.pods = f.Core().V1().Pods().Lister()
			if !a.DisableConfigMapProfiles {
				l := f.Core().V1().ConfigMaps().Lister()
				p.cms = func(ns, name string) (*v1.ConfigMap, error) { return l.ConfigMaps(ns).Get(name) }
			}
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
	scores map[string]int64 // node -> raw score
	cand   map[string]int   // node -> best kept candidate placing a pod on it
	floor  int64            // raw score of a node in no candidate
}

func (c *cycle) Clone() fwk.StateData { return c }

// skip is the neutral answer: the framework leaves the plugin out of the
// pod's scores.
func skip(ctx context.Context, pod klog.ObjectRef, err error) *fwk.Status {
	klog.FromContext(ctx).V(4).Info("Cassini abstains", "pod", pod, "reason", err)
	return fwk.NewStatus(fwk.Skip, err.Error())
}

// PreScore builds the pod's job's candidate placements, pre-selected by
// topology from the feasible nodes, and ranks them once for the cycle,
// within the time budget. A pod that is not part of a training job, has no
// usable profile, or whose ranking does not finish in time gets Skip: the
// framework then scores it without this plugin.
func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.budget)
	defer cancel()
	w, err := p.world(pod)
	if err != nil {
		return skip(ctx, klog.KObj(pod), err)
	}
	feasible := make([]int, 0, len(nodes))
	for _, n := range nodes {
		if i, ok := w.fab.index[n.Node().Name]; ok {
			feasible = append(feasible, i)
		}
	}
	self := w.jobs[w.self]
	remaining := 1
	if size := p.cfg.jobSize(pod); size > len(self.nodes) {
		remaining = size - len(self.nodes)
	}
	placed := self.nodes
	cands := preselect(w.fab, placed, p.led.planned(w.selfKey(), w.fab), remaining, feasible, p.cfg.candidates, w.on)
	if len(cands) == 0 {
		return skip(ctx, klog.KObj(pod), fmt.Errorf("%w: no candidate placement", ErrNoJob))
	}
	rk, err := p.rank(ctx, w, cands)
	if err != nil {
		return skip(ctx, klog.KObj(pod), err)
	}
	state.Write(stateKey, p.score(w, rk, len(placed)))
	return nil
}

// score turns a ranking into raw per-node scores: a node scores as the best
// kept candidate that places one of the job's remaining pods on it.
func (p *Plugin) score(w *world, rk ranked, placed int) *cycle {
	c := &cycle{job: w.selfKey(), rk: rk, scores: map[string]int64{}, cand: map[string]int{}}
	for pos, ci := range rk.r.Order {
		raw := rawScore(rk.r.Outcomes[ci].Score, pos)
		if pos == 0 || raw < c.floor {
			c.floor = raw
		}
		for _, n := range rk.nodes[ci][placed:] {
			name := w.fab.names[n]
			if _, ok := c.scores[name]; !ok {
				c.scores[name], c.cand[name] = raw, ci
			}
		}
	}
	c.floor -= rawPositions
	return c
}

// rawPositions separates score buckets: a candidate's raw score is its
// compatibility in units of 1e-4 times rawPositions, less its rank, so
// equal scores keep the ranking's order (topology preference) and the best
// candidate's nodes always score highest.
const rawPositions = 2 * MaxCandidates

func rawScore(score float64, pos int) int64 {
	return int64(score*1e4+0.5)*rawPositions - int64(pos)
}

// Score returns the node's raw score from PreScore's ranking: one map
// lookup.
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, n fwk.NodeInfo) (int64, *fwk.Status) {
	c, err := readCycle(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if s, ok := c.scores[n.Node().Name]; ok {
		return s, nil
	}
	return c.floor, nil
}

// ScoreExtensions returns p: it normalizes its raw scores.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore maps the raw scores linearly onto [MinScore, MaxScore]:
// the best candidate's nodes get MaxScore.
func (p *Plugin) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	normalize(len(scores), func(i int) *int64 { return &scores[i].Score })
	return nil
}

// normalize rescales n raw scores in place; equal scores all become
// MinScore.
func normalize(n int, at func(int) *int64) {
	if n == 0 {
		return
	}
	lo, hi := *at(0), *at(0)
	for i := range n {
		lo, hi = min(lo, *at(i)), max(hi, *at(i))
	}
	for i := range n {
		s := at(i)
		if hi == lo {
			*s = fwk.MinScore
			continue
		}
		*s = fwk.MinScore + int64(float64(*s-lo)*float64(fwk.MaxScore-fwk.MinScore)/float64(hi-lo)+0.5)
	}
}

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
