package cassini

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/orrery/orrery/bindings/k8s/plan"
	"github.com/orrery/orrery/engine/cassini/candidate"
)

// Reserve records the pod's node and, when this cycle ranked the pod's job,
// the time shifts of the candidate it was placed by: the best-ranked
// placement that puts a pod on the node (or, in a pod-group cycle, the
// placement NormalizePlacementScore ranked). Shifts are relative, so each
// connected group of jobs is moved as a whole to keep as many running jobs
// on their current shifts as possible. Reserve never fails.
func (p *Plugin) Reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	job := p.cfg.jobKey(pod)
	if job == "" {
		return nil
	}
	rk, c, ok := p.chosen(state, node)
	if !ok {
		rk, c, ok = p.rankAt(ctx, state, pod, node)
	}
	if !ok {
		// Not ranked (the plugin abstained): the pod still gets its job's
		// plan, if it has one.
		p.write(p.led.reserve(pod.UID, pod.Namespace, pod.Name, job, node, nil, nil)...)
		return nil
	}
	plans := p.plans(rk, c)
	planned := make([]string, len(rk.nodes[c]))
	for i, n := range rk.nodes[c] {
		planned[i] = rk.fab.names[n]
	}
	p.write(p.led.reserve(pod.UID, pod.Namespace, pod.Name, job, node, plans, planned)...)
	klog.FromContext(ctx).V(4).Info("Cassini reserved", "pod", klog.KObj(pod), "node", node, "score", rk.r.Outcomes[c].Score)
	return nil
}

// Unreserve undoes the pod's Reserve, and has the plans it changed back
// written.
func (p *Plugin) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	p.write(p.led.unreserve(pod.UID)...)
}

// rankAt ranks the one placement a Reserve on node makes, where no
// PreScore ranked the pod and none abstained: the framework scores no pod
// with a single feasible node, and the job's plan must still be the one of
// its placement with this pod (the last pod of a job placed pod by pod
// often has a single node left).
func (p *Plugin) rankAt(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) (ranked, int, bool) {
	if _, err := state.Read(stateKey); err == nil {
		return ranked{}, 0, false // PreScore abstained
	}
	if ps := state.GetPlacementCycleState(); ps != nil {
		return ranked{}, 0, false // a pod-group cycle: NormalizePlacementScore ranked or abstained
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.budget)
	defer cancel()
	w, err := p.world(pod)
	if err != nil {
		return ranked{}, 0, false
	}
	n, ok := w.fab.index[node]
	if !ok {
		return ranked{}, 0, false
	}
	rk, err := p.rank(ctx, w, [][]int{append(slices.Clone(w.jobs[w.self].nodes), n)})
	if err != nil {
		klog.FromContext(ctx).V(4).Info("Cassini abstains at Reserve", "pod", klog.KObj(pod), "reason", err)
		return ranked{}, 0, false
	}
	return rk, 0, true
}

// chosen returns the ranking and candidate a Reserve on node follows.
func (p *Plugin) chosen(state fwk.CycleState, node string) (ranked, int, bool) {
	if ps := state.GetPlacementCycleState(); ps != nil {
		if d, err := ps.Read(stateKey); err == nil {
			if pd, ok := d.(*groupChoice); ok {
				return pd.rk, pd.cand, true
			}
		}
	}
	c, err := readCycle(state)
	if err != nil {
		return ranked{}, 0, false
	}
	ci, ok := c.cand[node]
	return c.rk, ci, ok
}

// plans returns the plan of every job in candidate c's affinity graph. A
// plan's score is its group's: the aggregate (Args.Aggregate) of the
// scores of the shared links among the jobs connected to it through shared
// links, which the plan's shifts decide; 1 for a job that shares no link.
func (p *Plugin) plans(rk ranked, c int) map[string]shiftPlan {
	o := rk.r.Outcomes[c]
	grid := max(o.Grid, 1)
	parent := make([]int, len(rk.jobs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	linked := make([]bool, len(rk.jobs))
	for _, l := range o.Links {
		for _, j := range l.Jobs {
			linked[j] = true
			parent[find(j)] = find(l.Jobs[0])
		}
	}
	groups := map[int][]int{}
	for j := range rk.jobs {
		if linked[j] && (rk.hold == nil || !rk.hold[j]) {
			groups[find(j)] = append(groups[find(j)], j)
		}
	}
	out := map[string]shiftPlan{}
	for root, g := range groups {
		var links []float64
		for _, l := range o.Links {
			if find(l.Jobs[0]) == root {
				links = append(links, l.Score)
			}
		}
		p.align(rk, o.Shifts, grid, p.cfg.aggregate(links), g, out)
	}
	if !linked[0] {
		// The job shares no link: it may send at any time.
		self := rk.jobs[0].prof
		out[rk.jobs[0].key] = shiftPlan{shift: 0, period: self.p.Period, comm: self.comm, score: 1}
	}
	return out
}

// aggregate is the ranking's aggregate of link scores (Args.Aggregate),
// in their order: 1 for none.
func (c *config) aggregate(scores []float64) float64 {
	if len(scores) == 0 {
		return 1
	}
	sum, worst := 0.0, scores[0]
	for _, s := range scores {
		sum += s
		worst = min(worst, s)
	}
	if c.rank.Aggregate == candidate.Min {
		return worst
	}
	return sum / float64(len(scores))
}

// align sets the plans of one connected group of jobs: the ranked shifts
// plus the common delay that keeps the most jobs on their current shifts
// (delaying every job of a group alike leaves every link's score as it is);
// none where the ranking held some of the group's jobs at their plans. A
// job whose shift, period and phase stay keeps its plan as it is, so its
// pods are not rewritten for a new score.
func (p *Plugin) align(rk ranked, shifts []int, grid int, score float64, group []int, out map[string]shiftPlan) {
	periods := make([]int, len(group))
	cur := make([]shiftPlan, len(group))
	has := make([]bool, len(group))
	for k, j := range group {
		periods[k] = roundUp(rk.jobs[j].prof.p.Period, grid)
		cur[k], has[k] = p.current(rk.jobs[j])
	}
	best := p.offset(rk, shifts, group, periods, cur, has)
	for k, j := range group {
		job := rk.jobs[j]
		pl := shiftPlan{shift: mod(shifts[j]+best, periods[k]), period: periods[k], comm: job.prof.comm, score: score}
		if has[k] && cur[k].shift == pl.shift && cur[k].period == pl.period && cur[k].comm == pl.comm {
			pl = cur[k]
		}
		out[job.key] = pl
	}
}

// offset returns the common delay of a group's ranked shifts that keeps
// the most jobs on their current shifts (ties: the least): 0 when the
// ranking held some of them.
func (p *Plugin) offset(rk ranked, shifts, group, periods []int, cur []shiftPlan, has []bool) int {
	for _, j := range group {
		if rk.fixed != nil && rk.fixed[j] >= 0 {
			return 0
		}
	}
	best, bestN := 0, -1
	for k := range group {
		if !has[k] || cur[k].period != periods[k] {
			continue
		}
		off := mod(cur[k].shift-shifts[group[k]], periods[k])
		n := 0
		for m := range group {
			if has[m] && cur[m].period == periods[m] && mod(shifts[group[m]]+off, periods[m]) == cur[m].shift {
				n++
			}
		}
		if n > bestN || n == bestN && off < best {
			best, bestN = off, n
		}
	}
	return best
}

// current returns a job's plan: the ledger's, else the one on its pods
// (written before a restart of the scheduler).
func (p *Plugin) current(j *runJob) (shiftPlan, bool) {
	if pl, _, ok := p.led.plan(j.key); ok {
		return pl, true
	}
	if j.plan == "" {
		return shiftPlan{}, false
	}
	q, err := p.parsed.of(j.plan)
	if err != nil {
		return shiftPlan{}, false
	}
	return p.fromPlan(q)
}

// fromPlan returns a plan on the quantization grid, if it is on this
// configuration's reference and grid.
func (p *Plugin) fromPlan(q plan.Plan) (shiftPlan, bool) {
	if !q.Reference.Equal(p.cfg.reference) {
		return shiftPlan{}, false
	}
	tick := p.cfg.quantum.Tick
	if q.Shift%tick != 0 || q.Period%tick != 0 {
		return shiftPlan{}, false
	}
	return shiftPlan{shift: int(q.Shift / tick), period: int(q.Period / tick), comm: int(q.CommOffset / tick), score: q.Score}, true
}

// planCache parses plan annotations, remembering them by their text: every
// cycle reads the plans of every running job it ranks.
type planCache struct {
	mu sync.Mutex
	m  map[string]planEntry
}

type planEntry struct {
	p   plan.Plan
	err error
}

const planCacheSize = 8192

func (c *planCache) of(text string) (plan.Plan, error) {
	c.mu.Lock()
	e, ok := c.m[text]
	c.mu.Unlock()
	if ok {
		return e.p, e.err
	}
	q, err := plan.Parse([]byte(text))
	c.mu.Lock()
	if c.m == nil || len(c.m) >= planCacheSize {
		c.m = make(map[string]planEntry)
	}
	c.m[text] = planEntry{q, err}
	c.mu.Unlock()
	return q, err
}

func roundUp(t, g int) int { return (t + g - 1) / g * g }

func mod(a, m int) int {
	a %= m
	if a < 0 {
		a += m
	}
	return a
}

// PostBind has the writer write the pod's job's plan on it, now that its
// binding is done, and forgets the pod's reservation: it is bound, its
// plan stays.
func (p *Plugin) PostBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	if job := p.led.landed(pod.UID); job != "" {
		p.write(job)
	}
	p.led.bound(pod.UID)
}

// planText is the annotation's value for job's plan.
func (p *Plugin) planText(job string, pl shiftPlan, gen int64) string {
	tick := p.cfg.quantum.Tick
	b, _ := (plan.Plan{Job: job, Reference: p.cfg.reference, Shift: time.Duration(pl.shift) * tick,
		Period: time.Duration(pl.period) * tick, CommOffset: time.Duration(pl.comm) * tick, Score: pl.score, Generation: gen}).MarshalJSON()
	return string(b)
}

// jobIndex names the index the plugin adds to the scheduler's pod
// informer: pods by job key, for a job label (profiles with the same label
// share it).
func (c *config) jobIndex() string { return "orrery.io/job:" + c.jobLabel }

// jobPods lists a job's pods from the informer's job index.
func (p *Plugin) jobPods(job string) ([]*v1.Pod, error) {
	if p.podIndex == nil {
		return nil, fmt.Errorf("cassini: no pod informer")
	}
	objs, err := p.podIndex.ByIndex(p.cfg.jobIndex(), job)
	if err != nil {
		return nil, err
	}
	out := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if q, ok := o.(*v1.Pod); ok {
			out = append(out, q)
		}
	}
	return out, nil
}
