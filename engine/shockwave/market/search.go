package market

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/orrery/orrery/internal/deadline"
)

// The count relaxation aggregates capacity over the window, and aggregate
// feasibility does not imply a packing (M = 2, T = 2: a 2-GPU job with one
// round and a 1-GPU job with two). Packable count vectors are closed under
// decrease, so when the relaxation's counts n do not pack, the jobs S the
// greedy had placed when it failed cannot all keep counts ≥ n_S (the greedy
// is exact on S). Branching on one s ∈ S, n_s ≤ n_s − 1 or n_s ≥ n_s,
// excludes n and no packable point; a node whose S sits entirely at its lower
// bounds is infeasible. Nodes are explored best bound first, and a repair
// (pack the lower bounds, then as many of the other rounds as fit) supplies
// incumbents.

// branchBound is the branch and bound on packing covers.
type branchBound struct {
	baseLo, baseHi []int32 // the root node's bounds on the counts
	pathLo         []int32 // the path's lower bounds (FTF), before the root's fixing
	lo, hi, counts []int32 // the node being solved: its bounds, its relaxation's counts
	nodes          []node
	ubs            []uint64 // node id → its upper bound, one number each
	heap           []int32  // the open nodes (pushID, popNode)
	processed      int      // nodes solved
	floor          float64  // the node being solved's makespan floor (node.floor)
	open           []uint64 // the best bound of a node dropped unfinished
	bound          []uint64 // the bound on the optimum (search's result)
	gapTmp         []uint64 // prune's scratch
	// repair's scratch: the repaired counts, the jobs by residual, the score.
	repCounts, repOrder []int32
	repScore            []uint64
	// branch's scratch: the jobs branched on and the loss of one round less.
	branchJobs []int32
	branchLoss []float64
}

// incumbent is the best plan found so far.
type incumbent struct {
	counts []int32  // n_j
	x      []bool   // its packing, as packing.x
	score  []uint64 // its score (gains form, exact.go)
}

// node is a branch-and-bound node: its parent's bounds with one job's bounds
// tightened to [lo, hi]. Its upper bound (a score) is number id of w.bb.ubs.
type node struct {
	parent int32
	job    int32 // −1 at the root
	lo, hi int32
	// floor: no plan in the node's box has a makespan at or below it
	// (nodeLP's certificate, inherited by the children).
	floor float64
}

// search runs the branch and bound from the bounds w.bb.baseLo, w.bb.baseHi. The caller
// has packed the lower bounds and made them the incumbent. It returns the
// status and writes an upper bound on the program's optimum (a score) to
// bound.
func (w *Workspace) search(ctx context.Context, bound []uint64) Status {
	N := len(w.bb.baseLo)
	lo, hi, counts := w.bb.lo[:N], w.bb.hi[:N], w.bb.counts[:N]

	// The root's bound: every job gets all the rounds it can use.
	w.bb.nodes = w.bb.nodes[:0]
	w.bb.ubs = w.bb.ubs[:0]
	w.newNode(node{parent: -1, job: -1, floor: math.Inf(-1)}, nil)
	root := w.num(w.bb.ubs, 0)
	w.evalCounts(w.bb.baseHi, root)
	w.bb.heap = append(w.bb.heap[:0], 0)
	proven := true
	open := w.bb.open[:w.ex.limbs] // best bound of nodes dropped unfinished
	hasOpen := false
	processed := 0
	lagTried := false
	for len(w.bb.heap) > 0 {
		if deadline.Done(ctx) || processed >= w.cfg.maxNodes {
			break
		}
		id := w.popNode()
		w.bb.floor = w.bb.nodes[id].floor
		if w.prune(w.num(w.bb.ubs, int(id)), &proven) {
			continue
		}
		w.bounds(id, lo, hi)
		r := w.relax(ctx, lo, hi, counts)
		processed++
		if !r.feasible {
			continue
		}
		if w.prune(r.bound, &proven) {
			continue
		}
		if !r.complete && (!hasOpen || cmpNum(r.bound, open) > 0) {
			copy(open, r.bound)
			hasOpen = true
		}
		res, fail := w.packCounts(counts)
		if res == packed {
			if cmpNum(r.best, w.inc.score) > 0 {
				w.setIncumbent(counts, r.best)
			}
			continue
		}
		if id == 0 && !lagTried {
			// The root's counts do not pack: bring in the configuration
			// LP and its Lagrangian bound, and solve the root again.
			lagTried = true
			if w.lagrangeRoot(ctx, r.tau) {
				if w.lag.proven {
					w.bb.heap = w.bb.heap[:0]
				} else {
					w.pushID(0)
				}
				continue
			}
		}
		nr := lpNone
		if w.lag.active {
			nr = w.nodeLP(ctx, lo, hi, r.tau)
		}
		if nr == lpCut {
			w.raiseFloor(id, lo, counts, r)
			continue
		}
		if nr == lpSolved {
			// The node's own prices: a tighter bound, and new counts.
			if r = w.relax(ctx, lo, hi, counts); !r.feasible || w.prune(r.bound, &proven) {
				continue
			}
			if res, fail = w.packCounts(counts); res == packed {
				if cmpNum(r.best, w.inc.score) > 0 {
					w.setIncumbent(counts, r.best)
				}
				continue
			}
		}
		if res == undecided {
			proven = false
		}
		w.repair(lo, counts)
		w.branch(id, fail, lo, hi, counts, r.tau, r.bound)
	}
	w.bb.processed = processed
	w.bb.floor = math.Inf(-1)
	copy(bound, w.inc.score)
	if hasOpen && cmpNum(open, bound) > 0 {
		copy(bound, open)
	}
	for _, id := range w.bb.heap {
		if ub := w.num(w.bb.ubs, int(id)); cmpNum(ub, bound) > 0 {
			copy(bound, ub)
		}
	}
	if len(w.bb.heap) > 0 || hasOpen || !proven {
		return Feasible
	}
	return Optimal
}

// raiseFloor handles node id's certificate (nodeLP) that no plan of its box
// has a makespan at or below r.tau, the relaxation's counts among them:
// the node goes back to the heap with that floor and r's bound, to be
// solved again above it. The repair still tries the counts.
func (w *Workspace) raiseFloor(id int32, lo, counts []int32, r relaxation) {
	w.repair(lo, counts)
	w.bb.nodes[id].floor = r.tau
	copy(w.num(w.bb.ubs, int(id)), r.bound)
	w.pushID(id)
}

// newNode appends a node with upper bound ub (nil: set by the caller).
func (w *Workspace) newNode(nd node, ub []uint64) int32 {
	w.bb.nodes = append(w.bb.nodes, nd)
	k := len(w.bb.ubs)
	for range w.ex.limbs {
		w.bb.ubs = append(w.bb.ubs, 0)
	}
	if ub != nil {
		copy(w.bb.ubs[k:], ub)
	}
	return int32(len(w.bb.nodes) - 1)
}

// prune reports whether a node with upper bound ub cannot beat the
// incumbent (exactly); a node pruned only thanks to the Gap tolerance
// clears proven.
func (w *Workspace) prune(ub []uint64, proven *bool) bool {
	if cmpNum(ub, w.inc.score) <= 0 {
		return true
	}
	if w.cfg.gap > 0 {
		tmp := w.bb.gapTmp[:w.ex.limbs]
		inc := w.objective(w.inc.score, tmp)
		if w.objective(ub, tmp)-inc <= w.cfg.gap*math.Abs(inc) {
			*proven = false
			return true
		}
	}
	return false
}

// setIncumbent records counts (packed in w.pk.x) as the best plan so far.
func (w *Workspace) setIncumbent(counts []int32, s []uint64) {
	copy(w.inc.counts, counts)
	copy(w.inc.x, w.pk.x)
	copy(w.inc.score, s)
}

// bounds writes node id's bounds: the base bounds tightened along its path.
func (w *Workspace) bounds(id int32, lo, hi []int32) {
	copy(lo, w.bb.baseLo)
	copy(hi, w.bb.baseHi)
	for ; id >= 0; id = w.bb.nodes[id].parent {
		nd := &w.bb.nodes[id]
		if nd.job >= 0 {
			lo[nd.job] = max(lo[nd.job], nd.lo)
			hi[nd.job] = min(hi[nd.job], nd.hi)
		}
	}
}

// branch splits node id, whose counts do not pack, on the cover
// S = w.tab.order[:fail+1]: no packable point has n_s ≥ counts_s for every s in
// S, so the children "n_{s_i} ≤ counts_{s_i} − 1 and n_{s_h} ≥ counts_{s_h}
// for h < i" partition the node's packable points. Only the jobs of S above
// their lower bound can give up a round; with none, the node is infeasible.
// The jobs are ordered by the objective they lose with one round less, and
// the cheapest child is explored first. The "n ≥ counts" chain is kept as
// nodes that are never solved (their relaxation is the parent's).
func (w *Workspace) branch(id int32, fail int, lo, hi, counts []int32, tau float64, ub []uint64) {
	T, k := w.cfg.T, w.cfg.k
	L := w.bb.branchJobs[:0]
	for _, j := range w.tab.order[:fail+1] {
		if counts[j] > 0 && counts[j] > lo[j] {
			L = append(L, j)
		}
	}
	loss := w.bb.branchLoss[:len(w.p.Jobs)]
	for _, j := range L {
		row, n := int(j)*(T+1), int(counts[j])
		loss[j] = w.tab.val[row+n] - w.tab.val[row+n-1] + float64(k*max(0, w.tab.res[row+n-1]-tau))
	}
	slices.SortStableFunc(L, func(a, b int32) int { return cmp.Compare(loss[a], loss[b]) })
	w.bb.branchJobs = L
	prev := id
	first := len(w.bb.nodes)
	f := w.bb.nodes[id].floor
	for _, s := range L {
		w.newNode(node{parent: prev, job: s, lo: lo[s], hi: counts[s] - 1, floor: f}, ub)
		prev = w.newNode(node{parent: prev, job: s, lo: counts[s], hi: hi[s], floor: f}, ub)
	}
	for i := len(L) - 1; i >= 0; i-- { // the cheapest child last: newest, popped first
		w.pushID(int32(first + 2*i))
	}
}

// repair turns unpackable counts into packable ones ≥ lo: the lower bounds
// first, then each job's extra rounds where they still fit (most free
// first), the jobs that would otherwise keep the longest residual runtime
// (the makespan term) first. A better result becomes the incumbent.
func (w *Workspace) repair(lo, counts []int32) {
	if ok, _ := w.pack(lo); !ok {
		return
	}
	T := w.cfg.T
	got := w.bb.repCounts[:len(lo)]
	copy(got, lo)
	by := w.bb.repOrder[:0]
	for _, j := range w.tab.order {
		if counts[j] > lo[j] {
			by = append(by, j)
		}
	}
	slices.SortStableFunc(by, func(a, b int32) int {
		return cmp.Compare(w.tab.res[int(b)*(T+1)+int(lo[b])], w.tab.res[int(a)*(T+1)+int(lo[a])])
	})
	w.bb.repOrder = by
	for _, j := range by {
		extra := counts[j] - lo[j]
		wj := w.tab.width[j]
		row := w.pk.x[int(j)*T : int(j)*T+T]
		for q := 0; q < T && extra > 0; q++ {
			t := w.pk.byFree[q]
			if w.pk.free[t] < wj {
				break
			}
			if !row[t] {
				row[t] = true
				w.pk.free[t] -= wj
				got[j]++
				extra--
			}
		}
		w.sortOrd()
	}
	s := w.bb.repScore[:w.ex.limbs]
	if w.evalCounts(got, s); cmpNum(s, w.inc.score) > 0 {
		w.setIncumbent(got, s)
	}
}

// sortOrd re-sorts w.pk.byFree by free desc, index asc (insertion sort: T is small
// and the order nearly sorted).
func (w *Workspace) sortOrd() {
	ord, free := w.pk.byFree[:w.cfg.T], w.pk.free
	for i := 1; i < len(ord); i++ {
		t := ord[i]
		k := i
		for k > 0 && (free[ord[k-1]] < free[t] || (free[ord[k-1]] == free[t] && ord[k-1] > t)) {
			ord[k] = ord[k-1]
			k--
		}
		ord[k] = t
	}
}

// The open nodes form a binary max-heap on ub; ties go to the newer node,
// which makes the search depth-first among equal bounds.
func (w *Workspace) nodeLess(a, b int32) bool {
	if c := cmpNum(w.num(w.bb.ubs, int(a)), w.num(w.bb.ubs, int(b))); c != 0 {
		return c < 0
	}
	return a < b
}

// pushID adds node id to the heap of open nodes.
func (w *Workspace) pushID(id int32) {
	h := append(w.bb.heap, id)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !w.nodeLess(h[p], h[i]) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	w.bb.heap = h
}

// popNode removes and returns the open node with the best bound.
func (w *Workspace) popNode() int32 {
	h := w.bb.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && w.nodeLess(h[m], h[l]) {
			m = l
		}
		if r < len(h) && w.nodeLess(h[m], h[r]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	w.bb.heap = h
	return top
}
