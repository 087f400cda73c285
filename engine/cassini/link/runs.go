package link

import (
	"slices"

	"github.com/orrery/orrery/internal/scratch"
	"github.com/orrery/orrery/kernels"
)

// runWeight is what one scalar step of a run scan costs against one kernel
// pair evaluation: a run scan is taken over the kernels only when it needs
// that many times fewer steps. The AVX-512 kernel adds about 40 pairs in
// the time of one scalar step, the generic one about 2 (README); 24 keeps
// the kernels on short circles and takes runs where they save orders of
// magnitude. (It must not depend on the CPU: the evaluations are part of
// the answer.)
const runWeight = 24

// pattern is a job's demand as runs, for the run scan of its shifts: m is
// the pattern's length (its period on the dense circle, its modulus on the
// shared one), size the ticks of one class, vals the distinct nonzero
// demands in ascending order, and runs the stretches of the pattern (its
// ticks, or its classes, modulo m) with the same count of ticks at one
// demand: those at vals[i] are runs[ends[i-1]:ends[i]] (from 0 for i = 0),
// in the layout kernels.Windows reads in place.
type pattern struct {
	m     int
	size  int64
	vals  []int32
	ends  []int32
	runs  []kernels.Run
	built bool
}

// runEntry is one (class, demand, count) of a pattern being built.
type runEntry struct {
	v int32
	c int32
	n int64
}

// resetPatterns forgets the run patterns of the previous search.
func (w *Workspace) resetPatterns() {
	w.pat = scratch.Resize(w.pat, len(w.jobs))
	for j := range w.pat {
		w.pat[j].built = false
	}
}

// pattern returns job j's run pattern, building it on first use.
func (w *Workspace) pattern(j int) *pattern {
	p := &w.pat[j]
	if !p.built {
		w.buildPattern(j)
		p.built = true
	}
	return p
}

// buildPattern builds the run pattern of job j on the layout.
func (w *Workspace) buildPattern(j int) {
	{
		p := &w.pat[j]
		p.vals, p.ends, p.runs = p.vals[:0], p.ends[:0], p.runs[:0]
		w.ents = w.ents[:0]
		switch {
		case w.kind[j] == onCircle:
			// One tick a class: the tile's period (the job's own on the
			// dense circle, its modulus on the shared one).
			p.m, p.size = w.mods[j], 1
			if w.dense {
				p.m = w.periods[j]
			}
			for c := range p.m {
				if v := w.tiles[j][c]; v != 0 {
					w.ents = append(w.ents, runEntry{v, int32(c), 1})
				}
			}
		default:
			c := &w.cls[j]
			p.m, p.size = c.mod, c.size()
			for r := range c.mod {
				lo, hi := int(c.off[r]), int(c.off[r+1])
				for e := lo; e < hi; e++ {
					if c.val[e] != 0 {
						w.ents = append(w.ents, runEntry{c.val[e], int32(r), c.count(e, hi)})
					}
				}
			}
		}
		slices.SortFunc(w.ents, func(a, b runEntry) int {
			if a.v != b.v {
				return int(a.v) - int(b.v)
			}
			return int(a.c) - int(b.c)
		})
		for _, e := range w.ents {
			if k := len(p.vals); k == 0 || p.vals[k-1] != e.v {
				if k > 0 {
					p.ends = append(p.ends, int32(len(p.runs)))
				}
				p.vals = append(p.vals, e.v)
			} else if r := &p.runs[len(p.runs)-1]; r.N == e.n && r.Start+r.Len == e.c {
				r.Len++ // the last run is this demand's
				continue
			}
			p.runs = append(p.runs, kernels.Run{Start: e.c, Len: 1, N: e.n})
		}
		if len(p.vals) > 0 {
			p.ends = append(p.ends, int32(len(p.runs)))
		}
	}
}

// runCost returns the steps of a run scan of job j's candidates from
// from0 on: for every distinct demand a pass over the circle (at the cost
// of one evaluation point) and a fold, then every run at every shift.
func (w *Workspace) runCost(j, from0 int) int64 {
	p := w.pattern(j)
	per := w.ecost / int64(w.n) // one point of an evaluation
	return int64(len(p.vals)+1)*(int64(w.n)*max(per, 1)+int64(p.m)) + int64(w.ncand[j]-from0)*int64(len(p.runs))
}

// useRuns reports whether the run scan of job j beats scoring its shifts
// with the kernels (or one by one with classes).
func (w *Workspace) useRuns(j, from0 int) bool {
	if w.mode != Exact || w.opt.Materialize {
		return false
	}
	if !w.pat[j].built && w.late() {
		return false // the search stops: no pattern is built for it
	}
	nc := int64(w.ncand[j] - from0)
	direct := nc * w.ecost
	if w.kind[j] == onCircle && w.noClasses(j) {
		// Short kernel scans stay kernel scans: a run scan costs at least
		// two passes over the circle and the overheads, and the vector
		// kernels are faster there.
		if direct < smallSearch || nc <= 2*runWeight {
			return false
		}
		return w.runCost(j, from0)*runWeight < direct
	}
	return w.runCost(j, from0) < direct
}

// runLeaf writes into out the excess of base plus job j at each candidate
// shift from from0 on, with the class jobs w.in holds, by runs (see the
// package documentation): with Φ_v the excess at each residue if job j
// showed demand v there, folded modulo the pattern's length m into Ψ_v,
//
//	E(s) = size·Σ Ψ_0 + Σ_runs n·Σ_{c in run} (Ψ_v - Ψ_0)[(c+s) mod m],
//
// each inner sum one difference of prefix sums (kernels.Windows, over the
// runs of each demand in turn).
func (w *Workspace) runLeaf(base []int32, j, from0 int, out []int64) {
	p := w.pattern(j)
	m := p.m
	was := w.in[j]
	w.in[j] = true
	f := w.unplaced() // the other jobs the state does not hold
	w.in[j] = false   // Φ is over the other jobs' tuples
	w.psi = scratch.Resize(w.psi, m)
	w.pre2 = scratch.Resize(w.pre2, kernels.WindowsScratch(m))
	trivial := w.trivial()
	var e0 int64
	if trivial {
		e0, _ = kernels.ExcessSlack(base, w.capacity)
		w.evals += int64(len(base))
	} else {
		w.phi0 = w.phi(w.phi0, base, 0)
		for _, x := range w.phi0 {
			e0 += x
		}
	}
	if len(p.vals) == 0 {
		for s := range out {
			out[s] = p.size * e0
		}
	} else {
		// The first scan adds size·e0: clearing out is one memory fill
		// under WebAssembly, where a loop of stores is not.
		clear(out)
	}
	lo, x0 := 0, p.size*e0
	for i, v := range p.vals {
		hi := int(p.ends[i])
		w.delta(base, v, trivial)
		kernels.Windows(out, x0, w.psi, p.runs[lo:hi], from0, w.pre2)
		w.evals += int64(m) + int64(len(out))*int64(hi-lo)
		lo, x0 = hi, 0
	}
	w.in[j] = was
	if f != 1 {
		for s := range out {
			out[s] *= f
		}
	}
}

// delta sets w.psi to Φ_v - Φ_0 folded modulo its length: in one pass
// over base when the state holds tiled jobs only, else from phi.
func (w *Workspace) delta(base []int32, v int32, trivial bool) {
	psi := w.psi
	clear(psi)
	m := len(psi)
	if trivial {
		kernels.FoldDelta(psi, base, v, w.capacity)
		w.evals += int64(len(base))
		return
	}
	w.phiv = w.phi(w.phiv, base, v)
	r := 0
	for i, x := range w.phiv {
		psi[r] += x - w.phi0[i]
		if r++; r == m {
			r = 0
		}
	}
	w.evals += int64(len(base))
}

// phi writes into dst (grown to the circle) the excess at each residue of
// base plus v with the class structures w.in holds, over their tuples.
func (w *Workspace) phi(dst []int64, base []int32, v int32) []int64 {
	dst = scratch.Resize(dst, len(base))
	c := int64(w.capacity)
	if w.trivial() {
		for i, b := range base {
			dst[i] = max(int64(b)+int64(v)-c, 0)
		}
		w.evals += int64(len(base))
		return dst
	}
	w.activate(w.cur, true)
	w.residues(base, v, dst)
	return dst
}
