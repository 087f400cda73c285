package cassini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// ErrBudget says the ranking did not finish within the cycle's time budget.
var ErrBudget = errors.New("cassini: ranking ran past the cycle's time budget")

// ErrNoPlacement says every candidate placement was discarded.
var ErrNoPlacement = errors.New("cassini: every candidate placement was discarded")

// runJob is a training job as the scheduler's snapshot shows it.
type runJob struct {
	key   string
	prof  *jobProfile
	nodes []int  // fabric nodes of its placed pods, with repeats, sorted
	plan  string // a pod's plan annotation, "" if none
	path  []int  // fabric links its ring crosses (not for the job being placed)
}

// world is the cluster as one scheduling cycle sees it.
type world struct {
	fab     *fabric
	jobs    []*runJob     // by key
	self    int           // the job being placed
	on      map[int][]int // fabric link -> the other jobs crossing it
	claimed []int         // nodes other jobs' planned placements count on, sorted
}

func (w *world) selfKey() string { return w.jobs[w.self].key }

// world reads the snapshot: the fabric of every node, and every training
// job's placed pods (pods reserved by this plugin but not yet in the
// snapshot included), for the job pod belongs to. A pod whose profile
// cannot be used gets a Warning event saying why.
func (p *Plugin) world(pod *v1.Pod) (*world, error) {
	key := p.cfg.jobKey(pod)
	if key == "" {
		return nil, ErrNoJob
	}
	prof, err := p.prof.of(pod, &p.cfg, p.cms)
	if err != nil {
		if errors.Is(err, ErrProfile) {
			p.warn(pod, pod.UID, ReasonBadAnnotation, err.Error())
		}
		return nil, err
	}
	infos, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fmt.Errorf("cassini: listing nodes: %w", err)
	}
	w := &world{fab: p.fabricOf(infos)}
	byKey := map[string]*runJob{}
	add := func(q *v1.Pod, node int) {
		k := p.cfg.jobKey(q)
		if k == "" {
			return
		}
		j := byKey[k]
		if j == nil {
			j = &runJob{key: k}
			byKey[k] = j
		}
		if j.prof == nil && k != key {
			j.prof, _ = p.prof.of(q, &p.cfg, p.cms) // a job without a usable profile is left out
		}
		if text := q.Annotations[p.cfg.planAnno]; text != "" && text != j.plan && p.planGen(text) > p.planGen(j.plan) {
			j.plan = text // the newest a pod carries
		}
		j.nodes = append(j.nodes, node)
	}
	for i, n := range infos {
		for _, pi := range n.GetPods() {
			add(pi.GetPod(), i)
		}
	}
	for _, r := range p.led.reservations() {
		node, ok := w.fab.index[r.node]
		if !ok || hasPod(infos[node].GetPods(), r.uid) {
			continue
		}
		if j := byKey[r.job]; j != nil || r.job == key {
			if j == nil {
				j = &runJob{key: key}
				byKey[key] = j
			}
			j.nodes = append(j.nodes, node)
		}
	}
	self := byKey[key]
	if self == nil {
		self = &runJob{key: key}
		byKey[key] = self
	}
	self.prof = prof
	for _, j := range byKey {
		slices.Sort(j.nodes)
		if j.prof != nil {
			w.jobs = append(w.jobs, j)
		}
	}
	slices.SortFunc(w.jobs, func(a, b *runJob) int { return cmp.Compare(a.key, b.key) })
	w.on = map[int][]int{}
	for i, j := range w.jobs {
		if j.key == key {
			w.self = i
			continue
		}
		j.path = w.fab.ring(j.nodes, nil)
		for _, l := range j.path {
			w.on[l] = append(w.on[l], i)
		}
	}
	for _, j := range byKey {
		if j.plan != "" {
			if q, err := p.parsed.of(j.plan); err == nil {
				pl, ok := p.fromPlan(q)
				p.led.adopt(j.key, pl, q.Generation, ok && q.Job == j.key)
			}
		}
	}
	p.led.gc(byKey)
	w.claimed = p.led.claims(key, w.fab, func(node int, job string) bool {
		j := byKey[job]
		if j == nil {
			return false
		}
		_, ok := slices.BinarySearch(j.nodes, node)
		return ok
	})
	return w, nil
}

// planGen is the generation of a plan annotation, -1 for none or a bad one.
func (p *Plugin) planGen(text string) int64 {
	if text == "" {
		return -1
	}
	q, err := p.parsed.of(text)
	if err != nil {
		return -1
	}
	return q.Generation
}

// fabricOf returns the fabric of the snapshot's nodes, rebuilt only when a
// node object (or the nodes' order) changed since the last cycle: the
// informer replaces a node's object on every update, so the same pointers
// mean the same labels.
func (p *Plugin) fabricOf(infos []fwk.NodeInfo) *fabric {
	p.fabMu.Lock()
	defer p.fabMu.Unlock()
	same := len(infos) == len(p.fabNodes)
	for i := 0; same && i < len(infos); i++ {
		same = infos[i].Node() == p.fabNodes[i]
	}
	if !same {
		p.fabNodes = make([]*v1.Node, len(infos))
		for i, n := range infos {
			p.fabNodes[i] = n.Node()
		}
		p.fab = newFabric(p.fabNodes, &p.cfg)
		for _, b := range p.fab.bad {
			p.warn(b.node, b.node.UID, ReasonBadLabel, b.note)
		}
	}
	return p.fab
}

func hasPod(pods []fwk.PodInfo, uid types.UID) bool {
	for _, pi := range pods {
		if pi.GetPod().UID == uid {
			return true
		}
	}
	return false
}

// maxFreeRunning is how many running jobs without a plan one ranking places
// with the new job: each is a free job more in the search of every
// candidate that reaches it, which costs up to a factor of its period.
const maxFreeRunning = 4

// holds returns the shift each ranked job keeps, or -1 for a job the
// ranking places, and which jobs the ranking holds without planning them.
// The job being placed is free. A running job with a usable plan (this
// plugin's, on the reference and quantum it uses now, its period the job's
// iteration time or that rounded up) keeps its plan's shift. A running job
// without one (placed before the plugin ran, or while it abstained) is
// free if it shares a link with one of the new job's candidate placements
// (near[k]), up to maxFreeRunning of them in job order: the ranking places
// it with the new job and it gets its first plan. Any other is held at
// shift 0 for the ranking (its phase is unknown) and left without a plan
// (unplanned[k]), for a later placement next to it to place.
func (p *Plugin) holds(jobs []*runJob, near []bool) (fixed []int, unplanned []bool) {
	fixed, unplanned = make([]int, len(jobs)), make([]bool, len(jobs))
	freed := 0
	for k, j := range jobs {
		fixed[k] = -1
		if k == 0 {
			continue // the job being placed: its pods are not all running yet
		}
		t := j.prof.p.Period
		if pl, ok := p.current(j); ok && pl.period >= t && pl.period < 2*t {
			fixed[k] = pl.shift
			continue
		}
		if near[k] && freed < maxFreeRunning {
			freed++
			continue
		}
		fixed[k], unplanned[k] = 0, true
	}
	return fixed, unplanned
}

// ranked is one ranking: the candidates of the job being placed, with the
// jobs that share links with any of them.
type ranked struct {
	fab   *fabric
	r     candidate.Ranking
	jobs  []*runJob // rank job -> job; 0 is the job being placed
	nodes [][]int   // candidate -> the job's nodes (placed ones first)
	fixed []int     // rank job -> the shift its plan holds it at, or -1; nil: every job free
	hold  []bool    // rank job -> held without a plan of its own: Reserve plans it not
}

// rank ranks the placements cands of the job being placed (each its full
// node list). Only the jobs connected to some candidate through shared
// links take part: the others' links are the same in every candidate. A
// ranking cut short by the budget is an error, so the caller abstains.
func (p *Plugin) rank(ctx context.Context, w *world, cands [][]int) (ranked, error) {
	rk := ranked{fab: w.fab, nodes: cands, jobs: []*runJob{w.jobs[w.self]}}
	selfPaths := make([][]int, len(cands))
	frontier := []int{}
	selfLinks := map[int]bool{} // fabric links some candidate's ring crosses
	for c, nodes := range cands {
		selfPaths[c] = w.fab.ring(nodes, nil)
		frontier = append(frontier, selfPaths[c]...)
		for _, l := range selfPaths[c] {
			selfLinks[l] = true
		}
	}
	on := w.on
	// Jobs reachable from the candidates' links through shared links.
	in := make([]bool, len(w.jobs))
	seen := map[int]bool{}
	for len(frontier) > 0 {
		l := frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		if seen[l] {
			continue
		}
		seen[l] = true
		for _, j := range on[l] {
			if !in[j] {
				in[j] = true
				frontier = append(frontier, w.jobs[j].path...)
			}
		}
	}
	for i, j := range w.jobs {
		if in[i] {
			rk.jobs = append(rk.jobs, j)
		}
	}
	// Only the links someone crosses, renumbered.
	local := map[int]int{}
	var links []candidate.Link
	path := func(fl []int) []int {
		out := make([]int, len(fl))
		for k, l := range fl {
			li, ok := local[l]
			if !ok {
				li = len(links)
				local[l] = li
				links = append(links, w.fab.links[l])
			}
			out[k] = li
		}
		return out
	}
	others := make([][]int, len(rk.jobs))
	for k, j := range rk.jobs[1:] {
		others[k+1] = path(j.path)
	}
	cs := make([]candidate.Candidate, len(cands))
	for c := range cands {
		paths := slices.Clone(others)
		paths[0] = path(selfPaths[c])
		cs[c].Paths = paths
	}
	if len(links) == 0 {
		links = append(links, candidate.Link{Capacity: 1}) // no job crosses a link: every candidate scores 1
	}
	profs := make([]profile.Profile, len(rk.jobs))
	for k, j := range rk.jobs {
		profs[k] = j.prof.p
	}
	opt := p.cfg.rank
	if p.cfg.incremental {
		near := make([]bool, len(rk.jobs))
		for k, j := range rk.jobs[1:] {
			for _, l := range j.path {
				near[k+1] = near[k+1] || selfLinks[l]
			}
		}
		rk.fixed, rk.hold = p.holds(rk.jobs, near)
		opt.Fixed = rk.fixed
	}
	r, err := p.ws.Rank(ctx, profs, links, cs, opt)
	if err != nil {
		return rk, fmt.Errorf("cassini: ranking: %w", err)
	}
	if ctx.Err() != nil {
		return rk, fmt.Errorf("%w (%v)", ErrBudget, p.cfg.budget)
	}
	for _, o := range r.Outcomes {
		if o.Status == candidate.TimeLimit {
			return rk, fmt.Errorf("%w (%v)", ErrBudget, p.cfg.budget)
		}
	}
	if r.Best < 0 {
		return rk, fmt.Errorf("%w: %v", ErrNoPlacement, r.Outcomes[0].Err)
	}
	rk.r = r
	return rk, nil
}
