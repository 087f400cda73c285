package cassini

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// preselect returns up to n placements of a job, each its placed nodes
// followed by remaining nodes from feasible: the topology's pre-selection,
// which keeps the ranking within the cycle's budget. on maps each fabric
// link to the running jobs crossing it; claimed are the nodes (sorted)
// other jobs' planned placements count on but do not hold yet.
//
// Each candidate starts at one rack (seed) and spills into other racks in
// two ways: nearest in the fabric first (the seed's block before others),
// and least loaded first (fewest running jobs on the rack's uplinks); seeds
// and strides through the racks run until a pool of 4n distinct candidates
// exists, each rack's unclaimed nodes taken first. The pool is then
// ordered by how many claimed nodes a candidate takes (jobs arriving
// together do not take each other's racks), then by how many running jobs
// it shares links with, then most compact first (fewest domains at the top
// tier, then below), and cut to n; that order is also the ranking's
// tie-break. The job's planned placement from its previous pod, when its
// nodes are still feasible, comes first, so a job placed pod by pod keeps
// to its plan unless the ranking finds better.
func preselect(f *fabric, placed, planned []int, remaining int, feasible []int, n int, on map[int][]int, claimed []int) [][]int {
	free := slices.Clone(feasible)
	slices.SortFunc(free, f.less)
	free = slices.Compact(free)
	remaining = min(remaining, len(free))
	if remaining == 0 {
		return nil
	}
	load := func(l int) int { return len(on[l]) }
	nodeLoad := func(x int) int { return load(2*x) + load(2*x+1) }
	isClaimed := func(x int) bool { _, ok := slices.BinarySearch(claimed, x); return ok }
	slices.SortStableFunc(free, func(a, b int) int { // unclaimed, then quiet NICs first within each rack
		if f.rackOf(a) != f.rackOf(b) {
			return f.less(a, b)
		}
		if ca, cb := isClaimed(a), isClaimed(b); ca != cb {
			if cb {
				return -1
			}
			return 1
		}
		return cmp.Compare(nodeLoad(a), nodeLoad(b))
	})
	groups := racks(f, free)
	rackLoad := make([]int, len(groups))
	for i, g := range groups {
		if d := f.rackOf(g[0]); d >= 0 {
			rackLoad[i] = load(f.base[0]+2*d) + load(f.base[0]+2*d+1)
		}
	}
	var out [][]int
	keys := map[string]bool{}
	addCand := func(nodes []int) {
		if k := key(nodes); !keys[k] {
			keys[k] = true
			out = append(out, append(slices.Clone(placed), nodes...))
		}
	}
	if p := plannedNodes(planned, placed, free, remaining); p != nil {
		addCand(p)
	}
	first := len(out)
	want := first + 4*n // generate more than n, keep the best n
	for stride := 1; stride <= max(1, len(groups)-1) && len(out) < want; stride++ {
		for seed := range groups {
			for _, quiet := range []bool{false, true} {
				if nodes := fill(f, groups, rackLoad, seed, stride, remaining, quiet); nodes != nil {
					addCand(nodes)
				}
			}
			if len(out) >= want {
				break
			}
		}
	}
	type ordered struct {
		nodes []int
		key   []int // claimed nodes taken, running jobs sharing links, then domains spanned, top tier first
	}
	rest := make([]ordered, 0, len(out)-first)
	var ring []int
	for _, c := range out[first:] {
		ring = f.ring(c, ring)
		taken := 0
		for _, x := range c[len(placed):] {
			if isClaimed(x) {
				taken++
			}
		}
		rest = append(rest, ordered{c, append([]int{taken, conflicts(ring, on)}, reverse(f.span(c))...)})
	}
	slices.SortStableFunc(rest, func(a, b ordered) int { return slices.Compare(a.key, b.key) })
	for i, r := range rest {
		out[first+i] = r.nodes
	}
	return out[:min(len(out), n)]
}

// conflicts counts the running jobs crossing any of links.
func conflicts(links []int, on map[int][]int) int {
	var jobs []int
	for _, l := range links {
		jobs = append(jobs, on[l]...)
	}
	slices.Sort(jobs)
	return len(slices.Compact(jobs))
}

// rackOf returns node's bottom-tier domain, or -1 with no tier.
func (f *fabric) rackOf(node int) int {
	if f.tiers() == 0 {
		return -1
	}
	return int(f.dom[0][node])
}

// racks groups nodes (in locality order) by their bottom tier's domain; with
// no tier every node is its own group.
func racks(f *fabric, nodes []int) [][]int {
	var g [][]int
	for i, n := range nodes {
		if i > 0 && f.tiers() > 0 && f.dom[0][n] == f.dom[0][nodes[i-1]] {
			g[len(g)-1] = append(g[len(g)-1], n)
			continue
		}
		g = append(g, []int{n})
	}
	return g
}

// fill takes remaining nodes starting at groups[seed], then every stride-th
// group after it (cyclically, then the groups the stride skipped), the
// seed's nearest groups first, or with quiet the least loaded first.
func fill(f *fabric, groups [][]int, load []int, seed, stride, remaining int, quiet bool) []int {
	order := make([]int, 0, len(groups))
	visited := make([]bool, len(groups))
	for i := seed; !visited[i]; i = (i + stride) % len(groups) {
		visited[i] = true
		order = append(order, i)
	}
	for i := range groups {
		if !visited[i] {
			order = append(order, i)
		}
	}
	s := groups[seed][0]
	slices.SortStableFunc(order[1:], func(a, b int) int {
		if quiet {
			if c := cmp.Compare(load[a], load[b]); c != 0 {
				return c
			}
		}
		return cmp.Compare(f.distance(s, groups[a][0]), f.distance(s, groups[b][0]))
	})
	nodes := make([]int, 0, remaining)
	for _, g := range order {
		for _, n := range groups[g] {
			if len(nodes) == remaining {
				return nodes
			}
			nodes = append(nodes, n)
		}
	}
	if len(nodes) < remaining {
		return nil
	}
	return nodes
}

// distance is the lowest tier above the racks at which a and b meet (the
// number of tiers if they meet only at the top).
func (f *fabric) distance(a, b int) int {
	for t := 1; t < f.tiers(); t++ {
		if f.dom[t][a] == f.dom[t][b] {
			return t
		}
	}
	return f.tiers()
}

// plannedNodes returns remaining nodes of the job's plan that are feasible
// and not yet used, or nil if the plan no longer fits.
func plannedNodes(planned, placed, free []int, remaining int) []int {
	if len(planned) == 0 {
		return nil
	}
	left := slices.Clone(planned)
	for _, n := range placed {
		if i := slices.Index(left, n); i >= 0 {
			left = slices.Delete(left, i, i+1)
		}
	}
	var nodes []int
	for _, n := range left {
		if slices.Contains(free, n) && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
		if len(nodes) == remaining {
			return nodes
		}
	}
	return nil
}

func key(nodes []int) string {
	s := slices.Clone(nodes)
	slices.Sort(s)
	var b strings.Builder
	for _, n := range s {
		b.WriteString(strconv.Itoa(n))
		b.WriteByte(',')
	}
	return b.String()
}

func reverse(s []int) []int {
	slices.Reverse(s)
	return s
}
