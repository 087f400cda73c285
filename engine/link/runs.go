package link

import (
	"slices"

	"github.com/orrery/orrery/internal/kernels"
)

// runWeight is what one scalar step of a run scan costs against one kernel
// pair evaluation: a run scan is taken over the kernels only when it needs
// that many times fewer steps. The AVX-512 kernel adds about 40 pairs in
// the time of one scalar step, the generic one about 2 (README); 24 keeps
// the kernels on short circles and takes runs where they save orders of
// magnitude. (It must not depend on the CPU: the evaluations are part of
// the answer.)
const runWeight = 24

// run is a stretch of a job's pattern (its ticks, or its classes, modulo
// its pattern length) with the same count of ticks at one nonzero demand.
type run struct {
	v     int32 // demand
	start int32 // first class
	len   int32 // classes
	n     int64 // ticks at demand v in each of them
}

// pattern is a job's demand as runs, for the run scan of its shifts: m is
// the pattern's length (its period on the dense circle, its modulus on the
// shared one), size the ticks of one class, vals the distinct nonzero
// demands, and runs sorted by demand.
type pattern struct {
	m     int
	size  int64
	vals  []int32
	runs  []run
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
	w.pat = grow(w.pat, len(w.jobs))
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
		p.vals, p.runs = p.vals[:0], p.runs[:0]
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
			if len(p.vals) == 0 || p.vals[len(p.vals)-1] != e.v {
				p.vals = append(p.vals, e.v)
			}
			if k := len(p.runs) - 1; k >= 0 {
				if r := &p.runs[k]; r.v == e.v && r.n == e.n && r.start+r.len == e.c {
					r.len++
					continue
				}
			}
			p.runs = append(p.runs, run{v: e.v, start: e.c, len: 1, n: e.n})
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
// each inner sum one difference of prefix sums.
func (w *Workspace) runLeaf(base []int32, j, from0 int, out []int64) {
	p := w.pattern(j)
	m := p.m
	was := w.in[j]
	w.in[j] = true
	f := w.unplaced() // the other jobs the state does not hold
	w.in[j] = false   // Φ is over the other jobs' tuples
	w.psi = grow(w.psi, m)
	w.pre2 = grow(w.pre2, 2*m+1)
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
	for s := range out {
		out[s] = p.size * e0
	}
	lo := 0
	for _, v := range p.vals {
		hi := lo
		for hi < len(p.runs) && p.runs[hi].v == v {
			hi++
		}
		w.delta(base, v, trivial)
		// Prefix sums of psi over two turns, pre[m+i] = pre[m] + pre[i], so
		// that a run's window starting at residue a < m is pre[a+len] -
		// pre[a] however it wraps.
		pre := w.pre2
		pre[0] = 0
		for i, x := range w.psi {
			pre[i+1] = pre[i] + x
		}
		for i, x := range pre[1 : m+1] {
			pre[m+1+i] = pre[m] + x
		}
		w.evals += int64(m)
		for _, r := range p.runs[lo:hi] {
			// Shift from0+s starts the run at residue a0+s, which wraps
			// to 0 at s = m-a0 (from0+len(out) <= m: one wrap at most).
			a0, l := int(r.start)+from0, int(r.len)
			if a0 >= m {
				a0 -= m
			}
			k := min(len(out), m-a0)
			addWindows(out[:k], pre[a0:], pre[a0+l:], r.n)
			addWindows(out[k:], pre, pre[l:], r.n)
		}
		w.evals += int64(len(out)) * int64(hi-lo)
		lo = hi
	}
	w.in[j] = was
	if f != 1 {
		for s := range out {
			out[s] *= f
		}
	}
}

// addWindows adds n times hi[s] - lo[s] to each dst[s]: a run's window
// sums at consecutive shifts.
func addWindows(dst, lo, hi []int64, n int64) {
	lo, hi = lo[:len(dst)], hi[:len(dst)]
	for s := range dst {
		dst[s] += n * (hi[s] - lo[s])
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
	dst = grow(dst, len(base))
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
