package cassini

import (
	"context"
	"sync"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// groupChoice is NormalizePlacementScore's ranking, left in each
// placement's cycle state for the Reserve of the placement's pods.
type groupChoice struct {
	rk   ranked
	cand int
}

func (g *groupChoice) Clone() fwk.StateData { return g }

// batch collects a pod-group cycle's placements as ScorePlacement sees
// them (in parallel), for NormalizePlacementScore to rank at once.
type batch struct {
	mu    sync.Mutex
	items map[*fwk.Placement]batchItem
}

type batchItem struct {
	nodes []string
	state fwk.PlacementCycleState
}

func (b *batch) Clone() fwk.StateData { return b }

// ScorePlacement records the placement's proposed assignment of the whole
// pod group; the score comes from NormalizePlacementScore, which ranks every
// placement of the cycle in one call.
func (p *Plugin) ScorePlacement(_ context.Context, state fwk.PlacementCycleState, _ fwk.PodGroupInfo, a *fwk.PodGroupAssignments) (int64, *fwk.Status) {
	b := p.batchOf(state.GetPodGroupSchedulingCycle())
	if b == nil {
		return 0, nil
	}
	nodes := make([]string, len(a.ProposedAssignments))
	for i, pa := range a.ProposedAssignments {
		nodes[i] = pa.GetNodeName()
	}
	b.mu.Lock()
	b.items[a.Placement] = batchItem{nodes, state}
	b.mu.Unlock()
	return 0, nil
}

// batchOf returns the pod-group cycle's batch, creating it.
func (p *Plugin) batchOf(state fwk.PodGroupCycleState) *batch {
	if state == nil {
		return nil
	}
	p.batchMu.Lock()
	defer p.batchMu.Unlock()
	if d, err := state.Read(stateKey); err == nil {
		if b, ok := d.(*batch); ok {
			return b
		}
	}
	b := &batch{items: map[*fwk.Placement]batchItem{}}
	state.Write(stateKey, b)
	return b
}

// PlacementScoreExtensions returns p: the ranking happens in
// NormalizePlacementScore.
func (p *Plugin) PlacementScoreExtensions() fwk.PlacementScoreExtensions { return p }

// NormalizePlacementScore ranks the pod group's placements (each its
// scheduled pods plus the proposed assignment) in one call within the time
// budget, and scores them onto [MinScore, MaxScore], the best MaxScore. A
// group without a profile, or a ranking past the budget, scores every
// placement MinScore: neutral.
func (p *Plugin) NormalizePlacementScore(ctx context.Context, state fwk.PodGroupCycleState, pg fwk.PodGroupInfo, scores []fwk.PlacementScore) *fwk.Status {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.budget)
	defer cancel()
	neutral := func(err error) *fwk.Status {
		klog.FromContext(ctx).V(4).Info("Cassini abstains for the pod group", "podGroup", pg.GetKey(), "reason", err)
		for i := range scores {
			scores[i].Score = fwk.MinScore
		}
		return nil
	}
	var b *batch
	if d, err := state.Read(stateKey); err == nil {
		b, _ = d.(*batch)
	}
	pods := pg.GetUnscheduledPods()
	if b == nil || len(pods) == 0 {
		return neutral(ErrNoJob)
	}
	w, err := p.world(pods[0])
	if err != nil {
		return neutral(err)
	}
	placed := w.jobs[w.self].nodes
	cands := make([][]int, len(scores))
	items := make([]batchItem, len(scores))
	for i, s := range scores {
		items[i] = b.items[s.Placement]
		c := append([]int(nil), placed...)
		for _, n := range items[i].nodes {
			if k, ok := w.fab.index[n]; ok {
				c = append(c, k)
			}
		}
		cands[i] = c
	}
	rk, err := p.rank(ctx, w, cands)
	if err != nil {
		return neutral(err)
	}
	lv := levels(rk.r) // discarded placements: -1
	for i := range scores {
		scores[i].Score = max(lv[i], fwk.MinScore)
	}
	p.groupRanks.Add(1)
	for i := range scores {
		if items[i].state != nil {
			items[i].state.Write(stateKey, &groupChoice{rk: rk, cand: i})
		}
	}
	return nil
}
