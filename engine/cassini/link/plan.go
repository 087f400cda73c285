package link

import (
	"cmp"
	"math"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/internal/scratch"
)

// smallSearch is the most pair evaluations a dense search may cost for the
// plan to take it without laying out the shared circle (measured: below it
// the classes cost more to build than the kernels spend).
const smallSearch = 1 << 17

// plan chooses the circle an Exact search runs on and lays the jobs out on
// it (the method and its proof are in the package documentation).
//
// The shared layout groups every job's ticks into classes modulo
// q_j = gcd(T_j, Q) on the shared circle of Q residues, then folds the
// classes by their own periods. There a job whose classes each hold one
// demand is tiled over the circle (onCircle), a job of one class is
// shift-free and merged into the static histogram (inStatic), and the
// others keep their classes (inClasses).
//
// The dense layout tiles every job over the whole unified circle, as the
// vector kernels like best. It is taken when it is within the cap and the
// cell limit and its search costs no more: the shift vectors to try times
// one evaluation, a kernel pair per tick against classCost per class entry
// the shared layout visits.
func (w *Workspace) plan(u circle.Unified) error {
	k := len(w.jobs)
	w.points = u.Perimeter
	w.mods = scratch.Resize(w.mods, k)
	w.tiles = resizeRows(w.tiles, k, 0)
	if w.late() {
		return nil
	}
	if w.opt.Materialize {
		w.layDense(u) // setup checked the cells
		return nil
	}
	dense := u.Perimeter <= w.opt.Circle.PerimeterCap() && w.opt.CheckCells(k, u.Perimeter) == nil
	if dense && w.layout != layoutShared && (w.denseCost(u) <= smallSearch || u.Shared == u.Perimeter && !w.repeats()) {
		// A search this small costs less than laying out classes, or every
		// tick is its own residue and nothing folds (the shared layout
		// would be the dense one).
		w.layDense(u)
		return nil
	}
	w.cls = scratch.Resize(w.cls, k)
	for j, jb := range w.jobs {
		if w.late() {
			return nil
		}
		t := w.periods[j]
		w.cls[j].build(jb, t, circle.GCD(t, u.Shared), &w.scratch)
	}
	if w.late() {
		return nil
	}
	n, mu := w.fold(u.Shared)
	if dense && n == u.Perimeter && w.layout != layoutShared {
		w.layDense(u)
	} else {
		// Refused before a tile is laid.
		if err := w.opt.CheckCells(k, n); err != nil {
			return err
		}
		w.layShared(n, mu)
		if dense && w.layout != layoutShared && (w.layout == layoutDense || w.denseCost(u) <= w.sharedCost()) && !w.late() {
			w.layDense(u)
		}
	}
	if !w.static.trivial() {
		w.zero = scratch.Resize(w.zero, w.n)
		clear(w.zero)
	}
	return nil
}

// repeats reports whether some job's demand repeats within its period (or
// was padded by rounding, which the general route handles).
func (w *Workspace) repeats() bool {
	for j, jb := range w.jobs {
		if len(jb.Demand) != w.periods[j] {
			return true
		}
		var p int
		if w.pre, p = period(jb.Demand, w.pre); p < len(jb.Demand) {
			return true
		}
	}
	return false
}

// layShared lays the folded classes out on the shared circle of n residues.
func (w *Workspace) layShared(n int, mu int64) {
	w.n, w.mu, w.dense = n, mu, false
	w.static.reset()
	w.order = w.order[:0]
	for j := range w.jobs {
		c := &w.cls[j]
		w.mods[j] = c.mod
		switch {
		case c.single():
			// One demand a class: a tile of period c.mod; its class size
			// is a factor of every tuple count.
			w.kind[j] = onCircle
			w.mu *= c.size()
			tile := scratch.Resize(w.tiles[j], n)
			for s := range tile {
				tile[s] = c.val[c.off[s%c.mod]]
			}
			w.tiles[j] = tile
		case c.mod == 1 && w.mergeWorth(c, n) && w.merge(c):
			w.kind[j] = inStatic
		default:
			w.kind[j] = inClasses
			w.order = append(w.order, j)
		}
	}
	if !w.static.trivial() {
		w.order = append(w.order, -1)
	}
	density := func(j int) float64 {
		c := &w.static
		if j >= 0 {
			c = &w.cls[j]
		}
		return float64(len(c.val)) / float64(c.mod)
	}
	slices.SortStableFunc(w.order, func(a, b int) int { return cmp.Compare(density(a), density(b)) })
	w.ecost = w.classCostOf()
}

// layDense tiles every job over the whole unified circle.
func (w *Workspace) layDense(u circle.Unified) {
	w.n, w.mu, w.dense = u.Perimeter, 1, true
	w.static.reset()
	w.order = w.order[:0]
	for j, jb := range w.jobs {
		w.kind[j] = onCircle
		w.mods[j] = circle.GCD(w.periods[j], u.Shared)
		w.tiles[j] = circle.Tile(w.tiles[j], jb.Demand, w.periods[j], w.n)
	}
	w.ecost = int64(w.n)
}

// mergeWorth reports whether merging the one-class job c into the static
// histogram pays: it does when the merged histogram stays small enough for
// a kernel pass per entry, or when it is reused at more than one residue;
// on a circle of one residue a single walk of the classes is cheaper than
// sorting their sums.
func (w *Workspace) mergeWorth(c *classes, n int) bool {
	prod := len(w.static.val) * len(c.val)
	return prod <= staticPasses || n > 1 && prod <= mergeLimit
}

// vectors returns the number of shift vectors a search with these
// candidate moduli tries, as a float (it may be astronomical).
func (w *Workspace) vectors(mods func(j int) int) float64 {
	if len(w.free) == 0 {
		return 1
	}
	v := 1.0
	for j, c := range w.freeMods(mods) {
		if c > 0 && w.isFree(j) {
			v *= float64(c)
		}
	}
	return v
}

// freeMods returns each job's candidate count under the given moduli, with
// the first free job reduced by the frame (see candidates).
func (w *Workspace) freeMods(mods func(j int) int) []int {
	w.cands = scratch.Resize(w.cands, len(w.jobs))
	for j := range w.jobs {
		w.cands[j] = mods(j)
	}
	w.frame(w.cands)
	return w.cands
}

// denseCost estimates a dense search: the shift vectors times the circle,
// plus tiling every job and a rotor over it.
func (w *Workspace) denseCost(u circle.Unified) float64 {
	v := w.vectors(func(j int) int { return circle.GCD(w.periods[j], u.Shared) })
	return (v + float64(len(w.jobs)+2)) * float64(u.Perimeter)
}

func (w *Workspace) sharedCost() float64 {
	return w.vectors(func(j int) int { return w.cls[j].mod }) * float64(w.ecost)
}

// frame reduces the first free job's candidates: rotating every job by s
// ticks changes no excess, and a rotation by a multiple of the LCM of the
// fixed jobs' moduli leaves their shifts equivalent, so the first free job
// with more than one candidate needs only shifts below the gcd of its
// modulus and that LCM (the jobs before it keep their shifts, so the
// lexicographically smallest optimum is among those).
func (w *Workspace) frame(cands []int) {
	l := 1
	first := -1
	for j := range w.jobs {
		if w.isFree(j) && cands[j] > 1 {
			if first < 0 {
				first = j
			}
			continue
		}
		if c := cands[j]; c > 0 {
			if l > math.MaxInt/c {
				return // past any modulus: no reduction
			}
			l = l / circle.GCD(l, c) * c
		}
	}
	if first >= 0 {
		cands[first] = circle.GCD(cands[first], l)
	}
}

// trivial reports whether the search holds only tiled jobs: the circle is
// every tick and the kernels score it directly.
func (w *Workspace) trivial() bool {
	return w.mode == Paper || (len(w.order) == 0 && w.static.trivial())
}
