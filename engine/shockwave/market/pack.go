package market

import (
	"encoding/binary"
	"slices"

	"github.com/orrery/orrery/internal/scratch"
)

// Round packing: given counts n_j ≤ T, find x_{j,t} ∈ {0,1} with
// Σ_t x_{j,t} = n_j and Σ_j w_j·x_{j,t} ≤ M for every round t.
//
// # The greedy and when it is exact
//
// pack takes the jobs by width, widest first, and gives each job the n_j
// rounds with the most free GPUs (ties: earliest round).
//
// Theorem. If the distinct widths w_1 < ... < w_k form a divisibility chain
// (w_i divides w_{i+1}) and every width but the largest divides M, the greedy
// packs every packable count vector (each n_j ≤ T). Powers of two qualify
// whenever M is a multiple of the second-largest width in use: {1, 2, 4, 8}
// on M = 8, 12, 16, 32, ...
//
// Proof sketch. Free capacities only matter as a multiset, since a job's
// placement constrains no other job except through them. Let L be the
// vector of free GPUs after all jobs of width ≥ w are placed; every entry is
// a multiple of the next smaller width v (the chain and v | M), so for a job
// of width v "a round can take it" is "the entry is non-zero", measured in
// units of v. Write a ≺ b when a is majorized by b (a is more level, equal
// sums). (i) For non-negative vectors, a ≺ b implies a has at least as many
// non-zero entries as b, so whatever job fits b's rounds fits a's.
// (ii) Subtracting one unit from the n largest entries ("Robin Hood")
// yields the ≺-least vector among all ways to subtract one unit from n
// distinct entries, and it is monotone: a ≺ b implies D_n(a) ≺ D_n(b).
// By induction over the jobs in the greedy's order, the greedy's free vector
// is ≺ the free vector of any feasible packing at the same point, so by (i)
// the greedy never fails where that packing succeeds. Changing units from v
// to a smaller width multiplies entries by v/v', which preserves ≺. The
// widest class starts from equal rounds of ⌊M/w_k⌋ slots, where the greedy
// is McNaughton's wrap-around and (i) holds in slots, so w_k itself need not
// divide M; after it every entry is M − w_k·u_t, a multiple of w_{k−1}. ∎
//
// The property test TestPackGreedyExact checks the theorem against brute
// force on random small instances. Examples of the conditions:
//
//	{1, 2, 4, 8} on M = 8, 12, 16, 20, 32: exact (1, 2 and 4 divide M)
//	{1, 2, 4, 8} on M = 10 or 14: not guaranteed (4 does not divide M)
//	{1, 2, 4} on M = 6: exact (only the largest width may leave a remainder)
//	{1, 3, 6} on M = 9: exact; {2, 3} on any M: not a chain, not guaranteed
//
// When the conditions fail, a failure of the greedy goes to the
// configuration LP with the counts fixed (lpPack, lagrange.go): a rounded
// pattern mixture that holds them packs them, and an infeasible LP's duals,
// as integer prices, certify exactly that nothing does. What it leaves is
// decided by an exact depth-first search over the multiset of free
// capacities (packDFS) with a node budget; an exhausted budget leaves the
// counts "unknown", which the solver treats as unpackable and reports by
// returning Feasible rather than Optimal.

// packing is the greedy's state: the free GPUs of each round and the
// assignment it builds.
type packing struct {
	free   []int32 // per round: free GPUs
	byFree []int32 // the rounds by free GPUs desc, then index asc
	merged []int32 // mergeOrd's scratch
	x      []bool  // job-major N×T: job j runs in round t at j·T+t
	exact  bool    // the widths in use make the greedy exact (the theorem)
	unsure bool    // some packing was left undecided: the solve is Feasible at best
}

// packSearch is the exact packing search's state (packDFS).
type packSearch struct {
	// ord, pick and groups hold each depth's rounds by free GPUs, its
	// group counts and its groups' starts: depth pos owns
	// ord[pos·T:(pos+1)·T] and pick, groups [pos·(T+1):(pos+1)·(T+1)].
	ord, pick, groups []int32
	budget            int   // nodes left for this search
	left              int   // nodes left for the whole solve
	rest              []int // rest[pos]: GPU-rounds the jobs from position pos on need
	freeTotal         int   // free GPU-rounds over the window
	key               []byte
	failed            stateSet // refuted states (stateKey)
}

// exactPacking reports whether the widths in use satisfy the theorem.
func exactPacking(widths []int32, m int32) bool {
	for i := 0; i+1 < len(widths); i++ {
		if widths[i+1]%widths[i] != 0 || m%widths[i] != 0 {
			return false
		}
	}
	return true
}

// pack runs the greedy on counts, writing the assignment to w.pk.x. On failure
// it returns the position in w.tab.order of the job that did not fit: the jobs
// at positions ≤ fail (with non-zero counts) cannot be packed together when
// the greedy is exact.
func (w *Workspace) pack(counts []int32) (ok bool, fail int) {
	T, M := w.cfg.T, int32(w.p.GPUs)
	free, ord := w.pk.free[:T], w.pk.byFree[:T]
	for t := range free {
		free[t], ord[t] = M, int32(t)
	}
	clear(w.pk.x)
	for pos, j := range w.tab.order {
		n := int(counts[j])
		if n == 0 {
			continue
		}
		wj := w.tab.width[j]
		if free[ord[n-1]] < wj {
			return false, pos
		}
		row := w.pk.x[int(j)*T : int(j)*T+T]
		for _, t := range ord[:n] {
			free[t] -= wj
			row[t] = true
		}
		w.mergeOrd(n)
	}
	return true, -1
}

// mergeOrd restores w.ord (rounds by free GPUs desc, then index asc) after
// its first n rounds lost the same number of GPUs: both runs are sorted.
func (w *Workspace) mergeOrd(n int) {
	T := w.cfg.T
	free, ord, tmp := w.pk.free, w.pk.byFree[:T], w.pk.merged[:T]
	a, b, o := 0, n, 0
	for a < n && b < T {
		ta, tb := ord[a], ord[b]
		if free[ta] > free[tb] || (free[ta] == free[tb] && ta < tb) {
			tmp[o], a = ta, a+1
		} else {
			tmp[o], b = tb, b+1
		}
		o++
	}
	o += copy(tmp[o:], ord[a:n])
	copy(tmp[o:], ord[b:T])
	copy(ord, tmp)
}

// packResult is the outcome of packing with the exactness fallback.
type packResult uint8

const (
	packed packResult = iota
	unpackable
	undecided // the exact search ran out of budget
)

// packBudget bounds the exact search's nodes per call.
const packBudget = 20000

// solveBudget bounds the exact search's nodes over one solve.
const solveBudget = 400000

// packCounts packs counts into w.pk.x, exactly: the greedy, then, when the
// greedy is not guaranteed exact and fails, the depth-first search.
func (w *Workspace) packCounts(counts []int32) (packResult, int) {
	ok, fail := w.pack(counts)
	if ok {
		return packed, -1
	}
	if w.pk.exact {
		return unpackable, fail
	}
	switch w.lpPack(w.ctx, counts) {
	case packed:
		return packed, -1
	case unpackable:
		return unpackable, len(w.tab.order) - 1
	}
	switch w.packDFS(counts) {
	case packed:
		return packed, -1
	case unpackable:
		return unpackable, len(w.tab.order) - 1
	}
	return undecided, len(w.tab.order) - 1
}

// packDFS is the exact search: jobs in w.tab.order, each choosing how many of
// its rounds come from each group of rounds with equal free GPUs (rounds in
// a group are interchangeable), most free first.
func (w *Workspace) packDFS(counts []int32) packResult {
	T, N := w.cfg.T, len(w.tab.order)
	for t := 0; t < T; t++ {
		w.pk.free[t] = int32(w.p.GPUs)
	}
	clear(w.pk.x)
	w.dfs.ord = scratch.Resize(w.dfs.ord, N*T)
	w.dfs.pick = scratch.Resize(w.dfs.pick, N*(T+1))
	w.dfs.groups = scratch.Resize(w.dfs.groups, N*(T+1))
	// Each search gets packBudget nodes, all of a solve's searches together
	// solveBudget; past that, undecided at once.
	w.dfs.budget = min(packBudget, w.dfs.left)
	defer func() { w.dfs.left -= min(packBudget, w.dfs.left) - max(w.dfs.budget, 0) }()
	// rest[pos]: GPU-rounds the jobs from position pos on still need.
	w.dfs.rest = scratch.Resize(w.dfs.rest, N+1)
	w.dfs.rest[N] = 0
	for pos := N - 1; pos >= 0; pos-- {
		j := w.tab.order[pos]
		w.dfs.rest[pos] = w.dfs.rest[pos+1] + int(w.tab.width[j])*int(counts[j])
	}
	w.dfs.freeTotal = w.p.GPUs * T
	w.dfs.failed.reset()
	return w.dfsJob(0, counts)
}

// dfsJob places the jobs from position pos of w.tab.order on.
func (w *Workspace) dfsJob(pos int, counts []int32) packResult {
	for pos < len(w.tab.order) && counts[w.tab.order[pos]] == 0 {
		pos++
	}
	if pos == len(w.tab.order) {
		return packed
	}
	if w.dfs.rest[pos] > w.dfs.freeTotal {
		return unpackable
	}
	if w.dfs.budget--; w.dfs.budget < 0 {
		return undecided
	}
	T := w.cfg.T
	j := int(w.tab.order[pos])
	// Rounds by free desc, index asc; each depth owns a slice of w.dfs.ord.
	ord := w.dfs.ord[pos*T : pos*T+T]
	for t := range ord {
		ord[t] = int32(t)
	}
	free := w.pk.free
	slices.SortFunc(ord, func(a, b int32) int {
		if free[a] != free[b] {
			return int(free[b] - free[a])
		}
		return int(a - b)
	})
	wj := w.tab.width[j]
	avail := 0
	for avail < T && free[ord[avail]] >= wj {
		avail++
	}
	n := int(counts[j])
	if avail < n {
		return unpackable
	}
	// States (position, multiset of free GPUs) already refuted.
	if w.dfs.failed.has(w.stateKey(pos, ord)) {
		return unpackable
	}
	// Enumerate selections as group counts, lexicographically from the most
	// free group: pick[g] rounds of group g, taking each group's first rounds.
	gstart := w.dfsGroups(pos, ord[:avail])
	ng := len(gstart) - 1
	pick := w.dfs.pick[pos*(T+1) : pos*(T+1)+ng]
	rest := n
	for g := 0; g < ng; g++ {
		pick[g] = int32(min(rest, int(gstart[g+1]-gstart[g])))
		rest -= int(pick[g])
	}
	result := unpackable
	for {
		w.apply(j, ord, gstart, pick, -wj)
		r := w.dfsJob(pos+1, counts)
		if r == packed {
			return packed
		}
		w.apply(j, ord, gstart, pick, wj)
		if r == undecided {
			result = undecided
			if w.dfs.budget < 0 {
				return undecided
			}
		}
		if !nextPick(pick, gstart) {
			if result == unpackable {
				w.dfs.failed.add(w.stateKey(pos, ord))
			}
			return result
		}
	}
}

// stateKey builds the memo key of depth pos (position and free GPUs in
// ord's order) in a reused buffer; ord is sorted by free desc. Index
// w.dfs.failed with it.
func (w *Workspace) stateKey(pos int, ord []int32) []byte {
	key := binary.LittleEndian.AppendUint32(w.dfs.key[:0], uint32(pos))
	for _, t := range ord {
		key = binary.LittleEndian.AppendUint32(key, uint32(w.pk.free[t]))
	}
	w.dfs.key = key
	return key
}

// dfsGroups splits ord (sorted by free desc) into runs of equal free GPUs
// and returns their starts plus len(ord), in depth pos's slice of w.dfs.groups.
func (w *Workspace) dfsGroups(pos int, ord []int32) []int32 {
	T := w.cfg.T
	g := w.dfs.groups[pos*(T+1) : pos*(T+1) : pos*(T+1)+T+1]
	for i := range ord {
		if i == 0 || w.pk.free[ord[i]] != w.pk.free[ord[i-1]] {
			g = append(g, int32(i))
		}
	}
	return append(g, int32(len(ord)))
}

// apply adds delta GPUs to the free count of the picked rounds of job j and
// sets (delta < 0) or clears its membership.
func (w *Workspace) apply(j int, ord, gstart, pick []int32, delta int32) {
	T := w.cfg.T
	for g, c := range pick {
		w.dfs.freeTotal += int(delta) * int(c)
		for _, t := range ord[gstart[g] : gstart[g]+c] {
			w.pk.free[t] += delta
			w.pk.x[j*T+int(t)] = delta < 0
		}
	}
}

// nextPick advances pick (a composition of a fixed total bounded by group
// sizes) to the next one in decreasing lexicographic order: move one unit
// from the rightmost movable group to the next one to its right, then
// refill greedily to the left.
func nextPick(pick, gstart []int32) bool {
	ng := len(pick)
	size := func(g int) int32 { return gstart[g+1] - gstart[g] }
	// Find the rightmost g < ng−1 with pick[g] > 0 such that the units from
	// g+1 on can absorb one more.
	tail := int32(0)
	for g := ng - 1; g >= 0; g-- {
		if g < ng-1 && pick[g] > 0 {
			roomRight := int32(0)
			for h := g + 1; h < ng; h++ {
				roomRight += size(h)
			}
			if roomRight >= tail+1 {
				pick[g]--
				rest := tail + 1
				for h := g + 1; h < ng; h++ {
					pick[h] = min(rest, size(h))
					rest -= pick[h]
				}
				return true
			}
		}
		tail += pick[g]
	}
	return false
}

// stateSet is a set of byte strings that allocates nothing once its
// buffers have grown: the keys live in one arena, chained by a 64-bit hash
// (FNV-1a) in a map whose buckets clear keeps.
type stateSet struct {
	head    map[uint64]int32 // hash → the last entry with that hash
	entries []stateEntry
	arena   []byte
}

type stateEntry struct {
	off, n, next int32
}

func (s *stateSet) reset() {
	if s.head == nil {
		s.head = make(map[uint64]int32)
	}
	clear(s.head)
	s.entries, s.arena = s.entries[:0], s.arena[:0]
}

func fnv(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// has reports whether key is in the set (comparing the bytes: a hash
// collision is no false positive).
func (s *stateSet) has(key []byte) bool {
	i, ok := s.head[fnv(key)]
	for ok && i >= 0 {
		e := s.entries[i]
		if string(s.arena[e.off:e.off+e.n]) == string(key) {
			return true
		}
		i = e.next
	}
	return false
}

func (s *stateSet) add(key []byte) {
	h := fnv(key)
	next, ok := s.head[h]
	if !ok {
		next = -1
	}
	s.entries = append(s.entries, stateEntry{off: int32(len(s.arena)), n: int32(len(key)), next: next})
	s.arena = append(s.arena, key...)
	s.head[h] = int32(len(s.entries) - 1)
}
