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

// jobState is what the plugin remembers of a job between cycles.
type jobState struct {
	plan    shiftPlan
	has     bool     // plan is set
	gen     int64    // ledger generation that set the plan: the annotation's
	ver     int64    // ledger generation of the state's last change
	written int64    // gen last written to the job's bound pods
	planned []string // nodes of the placement the job's last Reserve chose
}

// reservation is a pod Reserve recorded and Unreserve may undo.
type reservation struct {
	uid   types.UID
	job   string
	node  string
	plans map[string]shiftPlan // what the Reserve installed, changed or not
	undo  []change
}

// change is one job's state before a Reserve changed it, and the version
// the Reserve left: Unreserve restores prev (its version included, so
// older changes still match) only if nothing changed the job since.
type change struct {
	job  string
	prev jobState
	had  bool // the job was in the ledger
	gen  int64
}

// ledger is the plugin's memory: the jobs' plans and the pods reserved but
// not yet bound. Reserve and Unreserve run in scheduling and binding
// goroutines, PreBind in binding goroutines: every method locks.
type ledger struct {
	mu   sync.Mutex
	gen  int64
	jobs map[string]*jobState
	pods map[types.UID]*reservation
}

// reserve records pod uid of job on node, installs plans (job -> plan) and
// the job's planned placement, and remembers how to undo all of it.
func (l *ledger) reserve(uid types.UID, job, node string, plans map[string]shiftPlan, planned []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.jobs == nil {
		l.jobs, l.pods = map[string]*jobState{}, map[types.UID]*reservation{}
	}
	if old, ok := l.pods[uid]; ok {
		delete(l.pods, uid) // reserved twice without Unreserve: the later wins
		l.undoLocked(old)
	}
	r := &reservation{uid: uid, job: job, node: node, plans: plans}
	touch := func(k string) *jobState {
		st, had := l.jobs[k]
		if !had {
			st = &jobState{}
			l.jobs[k] = st
		}
		for i := range r.undo {
			if r.undo[i].job == k {
				return st
			}
		}
		prev := jobState{}
		if had {
			prev = *st
		}
		r.undo = append(r.undo, change{job: k, prev: prev, had: had})
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
}

// unreserve forgets pod uid and undoes its Reserve's changes, newest
// first, where no later Reserve changed the job since. A change another
// live reservation relies on (it installed the same plan: the job's other
// pods) passes to that reservation, to be undone with it.
func (l *ledger) unreserve(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.pods[uid]; ok {
		delete(l.pods, uid)
		l.undoLocked(r)
	}
}

func (l *ledger) undoLocked(r *reservation) {
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
		if !c.had {
			delete(l.jobs, c.job)
			continue
		}
		written := st.written // a plan written since is to be written again
		*st = c.prev
		st.written = written
	}
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

// bound forgets pod uid's reservation, keeping its plans: the pod is bound.
func (l *ledger) bound(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pods, uid)
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

// unwritten returns the jobs whose plan changed since it was last written.
func (l *ledger) unwritten() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, st := range l.jobs {
		if st.has && st.gen != st.written {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// written records that generation gen of job's plan is on its bound pods.
func (l *ledger) markWritten(job string, gen int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st, ok := l.jobs[job]; ok && st.gen == gen {
		st.written = gen
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

// reservations returns the pods reserved and not yet bound.
func (l *ledger) reservations() []reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]reservation, 0, len(l.pods))
	for _, r := range l.pods {
		out = append(out, reservation{uid: r.uid, job: r.job, node: r.node})
	}
	slices.SortFunc(out, func(a, b reservation) int {
		if a.uid < b.uid {
			return -1
		}
		if a.uid > b.uid {
			return 1
		}
		return 0
	})
	return out
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
