package cassini

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// shiftPlan is a job's time shift on the quantization grid.
type shiftPlan struct {
	shift, period, comm int // ticks
	score               float64
}

// jobState is what the plugin remembers of a job between cycles: its plan
// (what Reserve sets and Unreserve restores) and where the plan is to be
// written (which Unreserve leaves alone).
type jobState struct {
	planState
	// sent is the highest generation handed to the writer: it may be on
	// some of the job's pods, so a plan restored by Unreserve gets a new
	// one (generations never go down on a pod).
	sent int64
	// members are the job's pods the plan is written on: the pods this
	// plugin reserved (bound or being bound), and those the writer found
	// bound in the informer.
	members map[types.UID]*member
}

// planState is a job's plan as Reserve leaves it.
type planState struct {
	plan    shiftPlan
	has     bool     // plan is set
	gen     int64    // generation of plan: the annotation's
	ver     int64    // ledger generation of the state's last change
	planned []string // nodes of the placement the job's last Reserve chose
}

// member is a pod of a job, as the writer knows it.
type member struct {
	namespace, name string
	written         int64 // generation of the job's plan last written on it (or found there), 0 none
	// inFlight says Reserve placed the pod and its binding has not ended:
	// the writer leaves it alone (a patch would contend with the binding
	// for the same object) until PostBind queues its job again.
	inFlight bool
}

// reservation is a pod Reserve recorded and Unreserve may undo.
type reservation struct {
	uid   types.UID
	job   string
	node  string
	plans map[string]shiftPlan // what the Reserve installed, changed or not
	undo  []change
}

// change is one job's plan before a Reserve changed it, and the version
// the Reserve left: Unreserve restores prev (its version included, so
// older changes still match) only if nothing changed the job since.
type change struct {
	job  string
	prev planState
	gen  int64
}

// ledger is the plugin's memory: the jobs' plans, the pods reserved but
// not yet bound, and which generation of its job's plan each pod carries.
// Reserve and Unreserve run in scheduling and binding goroutines, PostBind
// in binding goroutines, the writer in its own: every method locks.
type ledger struct {
	mu   sync.Mutex
	gen  int64 // the last generation given out, at least the highest annotated one seen
	jobs map[string]*jobState
	pods map[types.UID]*reservation
}

func (l *ledger) init() {
	if l.jobs == nil {
		l.jobs, l.pods = map[string]*jobState{}, map[types.UID]*reservation{}
	}
}

// state returns job's state, creating it.
func (l *ledger) state(job string) *jobState {
	st, ok := l.jobs[job]
	if !ok {
		st = &jobState{members: map[types.UID]*member{}}
		l.jobs[job] = st
	}
	return st
}

// reserve records pod (uid, namespace, name) of job on node, installs
// plans (job -> plan) and the job's planned placement, and remembers how
// to undo all of it. It returns the jobs whose plans are to be written:
// those it changed, and job itself.
func (l *ledger) reserve(uid types.UID, namespace, name, job, node string, plans map[string]shiftPlan, planned []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	var dirty []string
	if old, ok := l.pods[uid]; ok {
		delete(l.pods, uid) // reserved twice without Unreserve: the later wins
		dirty = l.undoLocked(old)
	}
	r := &reservation{uid: uid, job: job, node: node, plans: plans}
	touch := func(k string) *jobState {
		st := l.state(k)
		for i := range r.undo {
			if r.undo[i].job == k {
				return st
			}
		}
		r.undo = append(r.undo, change{job: k, prev: st.planState})
		return st
	}
	for _, k := range sortedKeys(plans) {
		pl := plans[k]
		if st, ok := l.jobs[k]; ok && st.has && st.plan == pl {
			continue
		}
		st := touch(k)
		st.plan, st.has = pl, true
		l.gen++
		st.gen, st.ver = l.gen, l.gen
		dirty = append(dirty, k)
	}
	if st, ok := l.jobs[job]; planned != nil && (!ok || !slices.Equal(st.planned, planned)) {
		st = touch(job)
		st.planned = planned
		l.gen++
		st.ver = l.gen
	}
	for i := range r.undo {
		r.undo[i].gen = l.jobs[r.undo[i].job].ver
	}
	l.pods[uid] = r
	st := l.state(job)
	if m, ok := st.members[uid]; ok {
		m.namespace, m.name, m.inFlight = namespace, name, true
	} else {
		st.members[uid] = &member{namespace: namespace, name: name, inFlight: true}
	}
	return append(dirty, job)
}

// unreserve forgets pod uid and undoes its Reserve's changes, newest
// first, where no later Reserve changed the job since. A change another
// live reservation relies on (it installed the same plan: the job's other
// pods) passes to that reservation, to be undone with it. It returns the
// jobs whose plans it changed.
func (l *ledger) unreserve(uid types.UID) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.pods[uid]
	if !ok {
		return nil
	}
	delete(l.pods, uid)
	if st, ok := l.jobs[r.job]; ok {
		delete(st.members, uid) // not bound: it is scheduled again
	}
	return l.undoLocked(r)
}

func (l *ledger) undoLocked(r *reservation) []string {
	var dirty []string
	for i := len(r.undo) - 1; i >= 0; i-- {
		c := r.undo[i]
		st, ok := l.jobs[c.job]
		if !ok || st.ver != c.gen {
			continue
		}
		if heir := l.reliedOn(c.job, st.plan); heir != nil {
			heir.undo = append([]change{c}, heir.undo...) // undone when the heir is
			continue
		}
		st.planState = c.prev
		if st.has && st.sent > st.gen {
			// A newer plan may be on the pods already: the restored one
			// is written again, under a generation above it.
			l.gen++
			st.gen = l.gen
		}
		dirty = append(dirty, c.job)
	}
	return dirty
}

// reliedOn returns a live reservation that installed plan for job (the
// smallest uid), or nil.
func (l *ledger) reliedOn(job string, plan shiftPlan) *reservation {
	var heir *reservation
	for _, r := range l.pods {
		if p, ok := r.plans[job]; ok && p == plan && (heir == nil || r.uid < heir.uid) {
			heir = r
		}
	}
	return heir
}

// landed records that pod uid's binding ended (it is bound): the writer
// may write on it now. It returns the pod's job, "" if it had no
// reservation.
func (l *ledger) landed(uid types.UID) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.pods[uid]
	if !ok {
		return ""
	}
	if st, ok := l.jobs[r.job]; ok {
		if m, ok := st.members[uid]; ok {
			m.inFlight = false
		}
	}
	return r.job
}

// bound forgets pod uid's reservation, keeping its plans and the pod as a
// member of its job: the pod is bound.
func (l *ledger) bound(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pods, uid)
}

// adopt records the plan a job's pods carry (gen its generation; usable:
// pl is on this configuration's reference and grid), written before the
// scheduler (re)started, unless the ledger has a plan for the job already;
// and raises the generation counter to gen, so every plan given out later
// has a higher one.
func (l *ledger) adopt(job string, pl shiftPlan, gen int64, usable bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	l.gen = max(l.gen, gen)
	st := l.state(job)
	st.sent = max(st.sent, gen)
	if usable && !st.has {
		st.plan, st.has, st.gen = pl, true, gen
	}
}

// plan returns job's plan and its generation.
func (l *ledger) plan(job string) (shiftPlan, int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st, ok := l.jobs[job]; ok && st.has {
		return st.plan, st.gen, true
	}
	return shiftPlan{}, 0, false
}

// target is a pod the writer may write a plan on.
type target struct {
	uid             types.UID
	namespace, name string
	written         int64
	inFlight        bool
}

// task returns what the writer writes for job: its plan, its generation
// and its members; ok is false if the job has no plan. The generation
// counts as sent from here on.
func (l *ledger) task(job string) (pl shiftPlan, gen int64, members []target, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, found := l.jobs[job]
	if !found || !st.has {
		return shiftPlan{}, 0, nil, false
	}
	st.sent = max(st.sent, st.gen)
	for uid, m := range st.members {
		members = append(members, target{uid, m.namespace, m.name, m.written, m.inFlight})
	}
	slices.SortFunc(members, func(a, b target) int { return compareUID(a.uid, b.uid) })
	return st.plan, st.gen, members, true
}

// wrote records that pod uid of job carries generation gen (added as a
// member if it was not one).
func (l *ledger) wrote(job string, t target, gen int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.jobs[job]
	if !ok {
		return
	}
	m, ok := st.members[t.uid]
	if !ok {
		m = &member{namespace: t.namespace, name: t.name}
		st.members[t.uid] = m
	}
	m.written = gen
}

// forget drops pod uid from job's members: it is gone.
func (l *ledger) forget(job string, uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st, ok := l.jobs[job]; ok {
		delete(st.members, uid)
	}
}

// planned returns the nodes of job's planned placement, as fabric nodes.
func (l *ledger) planned(job string, f *fabric) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.jobs[job]
	if !ok {
		return nil
	}
	var out []int
	for _, name := range st.planned {
		if i, ok := f.index[name]; ok {
			out = append(out, i)
		}
	}
	return out
}

// claims returns, for every job but job, the planned nodes none of its
// pods holds yet (nodes maps a fabric node to the jobs with a pod on it):
// nodes another job's placement counts on.
func (l *ledger) claims(job string, f *fabric, holds func(node int, job string) bool) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	for k, st := range l.jobs {
		if k == job {
			continue
		}
		for _, name := range st.planned {
			if i, ok := f.index[name]; ok && !holds(i, k) {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// reservations returns the pods reserved and not yet bound.
func (l *ledger) reservations() []reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]reservation, 0, len(l.pods))
	for _, r := range l.pods {
		out = append(out, reservation{uid: r.uid, job: r.job, node: r.node})
	}
	slices.SortFunc(out, func(a, b reservation) int { return compareUID(a.uid, b.uid) })
	return out
}

func compareUID(a, b types.UID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// gc forgets the jobs that have neither pods in the snapshot (live) nor
// reservations: they finished.
func (l *ledger) gc(live map[string]*runJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.jobs) == 0 {
		return
	}
	held := map[string]bool{}
	for _, r := range l.pods {
		held[r.job] = true
	}
	for k := range l.jobs {
		if _, ok := live[k]; !ok && !held[k] {
			delete(l.jobs, k)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
