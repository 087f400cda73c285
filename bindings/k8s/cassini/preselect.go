package cassini

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// preselect returns up to n placements of a job, each its placed nodes
// followed by remaining nodes from feasible: the topology's pre-selection,
// which keeps the ranking within the cycle's budget.
//
// Each candidate starts at one rack (seed) and spills into the racks after
// it, at a stride, nearest in the fabric first (racks of the seed's block
// before others); seeds and strides run until enough distinct candidates
// exist. The candidates are then ordered most compact first (fewest domains
// at the top tier, then below), which is also the ranking's tie-break. The
// job's planned placement from its previous pod, when its nodes are still
// feasible, comes first, so a job placed pod by pod keeps to its plan
// unless the ranking finds better.
func preselect(f *fabric, placed, planned []int, remaining int, feasible []int, n int) [][]int {
	free := slices.Clone(feasible)
	slices.SortFunc(free, f.less)
	free = slices.Compact(free)
	remaining = min(remaining, len(free))
	if remaining == 0 {
		return nil
	}
	groups := racks(f, free)
	var out [][]int
	keys := map[string]bool{}
	addCand := func(nodes []int) bool {
		k := key(nodes)
		if keys[k] {
			return false
		}
		keys[k] = true
		out = append(out, append(slices.Clone(placed), nodes...))
		return true
	}
	if p := plannedNodes(planned, placed, free, remaining); p != nil {
		addCand(p)
	}
	first := len(out)
	want := first + 4*n // generate more than n, keep the most compact n
	for stride := 1; stride <= max(1, len(groups)-1) && len(out) < want; stride++ {
		for seed := range groups {
			if nodes := fill(f, groups, seed, stride, remaining); nodes != nil {
				addCand(nodes)
			}
			if len(out) >= want {
				break
			}
		}
	}
	type spanned struct {
		nodes []int
		span  []int // domains spanned, top tier first
	}
	rest := make([]spanned, 0, len(out)-first)
	for _, c := range out[first:] {
		rest = append(rest, spanned{c, reverse(f.span(c))})
	}
	slices.SortStableFunc(rest, func(a, b spanned) int { return slices.Compare(a.span, b.span) })
	for i, r := range rest {
		out[first+i] = r.nodes
	}
	return out[:min(len(out), n)]
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
// seed's nearest groups first.
func fill(f *fabric, groups [][]int, seed, stride, remaining int) []int {
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
