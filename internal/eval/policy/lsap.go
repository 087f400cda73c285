package policy

import (
	"errors"
	"math"
)

// errInfeasible: no assignment of every row to a distinct column has a
// finite cost.
var errInfeasible = errors.New("policy: assignment infeasible")

// assignment solves the rectangular linear sum assignment problem exactly:
// each of nr rows gets a distinct one of nc ≥ nr columns, minimizing the
// summed cost(i, j). It is the shortest augmenting path method (Crouse,
// "On implementing 2D rectangular assignment algorithms", IEEE TAES 2016)
// as SciPy's linear_sum_assignment implements it, including where it
// breaks ties between equally cheap paths: rows are added in order, the
// columns of a row's search are scanned from a list that starts in
// reverse order and loses each visited column by a swap with its last
// element, and among equally short paths a later unassigned column wins.
// The Shockwave authors' AlloX solves its matching with that function, so
// the same instance gives the same assignment (TestAssignmentMatchesSciPy),
// not only the same cost. It returns col4row; costs are computed on demand,
// so the matrix need not exist. O(nr²·nc) time, O(nr + nc) space.
type assignment struct {
	u, v, spc    []float64
	path, row4c  []int
	col4row, rem []int
	sr, sc       []bool
}

func (a *assignment) solve(nr, nc int, cost func(i, j int) float64) ([]int, error) {
	if nr > nc {
		return nil, errors.New("policy: assignment with more rows than columns")
	}
	a.u = fill(a.u, nr, 0.0)
	a.v = fill(a.v, nc, 0.0)
	a.spc = fill(a.spc, nc, 0.0)
	a.path = fill(a.path, nc, -1)
	a.row4c = fill(a.row4c, nc, -1)
	a.col4row = fill(a.col4row, nr, -1)
	a.rem = fill(a.rem, nc, 0)
	a.sr = fill(a.sr, nr, false)
	a.sc = fill(a.sc, nc, false)
	for cur := range nr {
		sink, minVal := a.augment(nr, nc, cur, cost)
		if sink < 0 {
			return nil, errInfeasible
		}
		// Update the dual variables, then augment along the path.
		a.u[cur] += minVal
		for i := range nr {
			if a.sr[i] && i != cur {
				a.u[i] += minVal - a.spc[a.col4row[i]]
			}
		}
		for j := range nc {
			if a.sc[j] {
				a.v[j] -= minVal - a.spc[j]
			}
		}
		for j := sink; ; {
			i := a.path[j]
			a.row4c[j] = i
			a.col4row[i], j = j, a.col4row[i]
			if i == cur {
				break
			}
		}
	}
	return a.col4row, nil
}

// augment finds the shortest augmenting path from row i (Dijkstra on the
// reduced costs) and returns its sink column and length, or −1.
func (a *assignment) augment(nr, nc, i int, cost func(i, j int) float64) (sink int, minVal float64) {
	left := nc
	for it := range nc {
		a.rem[it] = nc - it - 1
	}
	clear(a.sr)
	clear(a.sc)
	for j := range a.spc {
		a.spc[j] = math.Inf(1)
	}
	sink = -1
	for sink == -1 {
		index, lowest := -1, math.Inf(1)
		a.sr[i] = true
		for it := range left {
			j := a.rem[it]
			r := minVal + cost(i, j) - a.u[i] - a.v[j]
			if r < a.spc[j] {
				a.path[j], a.spc[j] = i, r
			}
			if a.spc[j] < lowest || (a.spc[j] == lowest && a.row4c[j] == -1) {
				lowest, index = a.spc[j], it
			}
		}
		minVal = lowest
		if math.IsInf(minVal, 1) {
			return -1, 0
		}
		j := a.rem[index]
		if a.row4c[j] == -1 {
			sink = j
		} else {
			i = a.row4c[j]
		}
		a.sc[j] = true
		left--
		a.rem[index] = a.rem[left]
	}
	return sink, minVal
}

// fill returns s resized to n elements, all x.
func fill[T any](s []T, n int, x T) []T {
	if cap(s) < n {
		s = make([]T, n)
	}
	s = s[:n]
	for i := range s {
		s[i] = x
	}
	return s
}
