package market

import (
	"math"
	"math/bits"
	"slices"

	"github.com/orrery/orrery/internal/scratch"
)

// # Exact comparisons over the whole priority range
//
// On the relaxed path a job far behind its target weighs p_j = ρ̂_j^λ, which
// reaches 1e20 and more (up to MaxPriority = 1e300) next to jobs weighing 1.
// In float64, a sum that holds a 1e19 term has a rounding step of 2048, so
// the other jobs' terms of 1e-3 vanish from every total the solver compares
// (the knapsack's base, the per-class prefix sums, the convolution, the τ
// search), and the solver picks among their choices blindly.
//
// Options weighed: double-double accumulation (about 106 bits) is not
// associative, still rounds, and cannot span 1e300 to 1; tier-by-tier
// lexicographic optimization is exact only when a tier's smallest possible
// change outweighs everything below it, which real-valued terms cannot
// guarantee (two heavy jobs trading a round change the heavy tier by an
// arbitrarily small amount). What is used here combines the two ideas on an
// integer grid, where "smallest possible change" is one grid unit:
//
//  1. Every term of the objective is an item with a scale s, an upper bound
//     on its magnitude: a job's welfare term p_j·f(u)/(N·T) has s_j =
//     |val_j(0)|, the makespan term k·τ has s = k·max_j R_j.
//  2. Items are sorted by scale and cut into tiers, from the largest: a
//     tier's grid is 2^e with e = ⌊log₂ s_min⌋ − guardBits (s_min its
//     smallest item), and a cut is made below an item whenever that grid
//     unit exceeds the sum of the scales of all items below. Each term is
//     stored as ⌊|term|/2^e⌋, an integer of the tier's width, so sums are
//     exact integer additions (math/bits carries) and never absorb.
//  3. A number (a welfare total, a prefix sum, a DP cell, an objective) is
//     the concatenation of its tiers' integers, most significant tier first,
//     each big-endian in 64-bit limbs. Comparing two numbers limb by limb is
//     comparing their exact real values: if tier t is the first that
//     differs, the two differ there by at least one unit 2^{e_t}, while all
//     lower tiers together differ by at most the sum of their scales, which
//     the cut rule makes smaller than 2^{e_t}. Within a tier, limbs compare
//     as the integer they hold.
//
// So comparisons are exact for the program whose terms are rounded down to
// their tier's grid, at most 2^-guardBits of each term's own scale: 2^11
// times finer than float64 resolves the term itself, and far below the
// error with which the terms are computed (the curve is evaluated from
// logarithms of that scale). A typical instance needs two limbs; priorities
// from 1 to 1e22 in one tier need three; 1e300 next to 1 makes two tiers of
// two limbs each. Wider layouts (long chains of priorities each about 1e15
// apart) are coarsened to maxLimbs by dropping the least significant limbs:
// the solver then works with terms rounded down further, every plan's value
// is still overestimated (magnitudes are rounded down), so the bound stays
// valid, and the status is at best Feasible.
//
// Everything is kept in "gains" form so that numbers are non-negative: a
// job contributes G_j(n) = V_j(0) − V_j(n), the grid value it gains over no
// rounds, and the makespan term contributes Mmax − M(τ). The constant
// C0 = Σ_j V_j(0) + Mmax turns a score back into the objective,
// −(C0 − score), tier by tier without borrows (every score is at most C0 in
// each tier).

const (
	// guardBits is the grid resolution below the smallest scale of a tier.
	guardBits = 64
	// maxLimbs bounds the limbs of a number; wider layouts are coarsened.
	maxLimbs = 8
)

// tier is one lexicographic level of a number.
type tier struct {
	off, n int32 // the tier's limbs are [off, off+n) of a number
	exp    int32 // one unit of the tier's last limb is worth 2^exp
}

// item is one term of the objective, for the tier layout.
type item struct {
	s float64 // scale: an upper bound on the term's magnitude
	j int32   // job index, or −1 for the makespan term
}

// exactArith is the layout of the solve's exact numbers and the grid
// tables they are built from.
type exactArith struct {
	limbs        int     // W, the limbs of a number
	tiers        []tier  // most significant first
	jobTier      []int32 // job → its tier, −1 for a term that is always 0
	makespanTier int32   // the makespan term's tier, or −1
	// coarse: the layout was cut to maxLimbs, so the terms are rounded down
	// further and the status is at best Feasible; full keeps the fine
	// layout to value the plan.
	coarse  bool
	full    fullLayout
	items   []item    // layout's scratch: the terms by scale
	suf     []float64 // layout's scratch: suffix sums of the scales
	tauMax  float64   // max_j R_j: the makespan with no rounds
	gainOff []int32   // job → the offset of its grid table in gains
	// gains holds, per job with a tier and count n = 0..T, G_j(n) then
	// G_j(n) − G_j(n−1), each in the tier's width.
	gains   []uint64
	c0      []uint64 // Σ_j V_j(0) on the grid
	mmax    []uint64 // M(τmax), the makespan term with no rounds
	tmp     []uint64 // one number of scratch (finish)
	scratch []uint64 // backs every scratch number of the workspace ([Workspace.numbers])
}

// fullLayout is a coarsened solve's fine layout, kept for reporting.
type fullLayout struct {
	tiers        []tier
	jobTier      []int32
	makespanTier int32
	buf          []uint64
}

// layout cuts the objective's terms into tiers (see above) and sizes the
// numbers. It needs the float tables (val, res) and sets the limbs, the
// tiers, each job's tier, the makespan term's and coarse.
func (w *Workspace) layout() {
	ex := &w.ex
	items := w.layoutItems()
	suf := ex.suf
	tiers := ex.tiers[:0]
	for a := 0; a < len(items); {
		i := a
		for ; i+1 < len(items); i++ {
			e := math.Ilogb(items[i].s) - guardBits
			if math.Ldexp(1, e) > suf[i+1] {
				break
			}
		}
		e := int32(math.Ilogb(items[i].s) - guardBits)
		sum := 0.0
		for q := a; q <= i; q++ {
			sum += items[q].s
		}
		sum *= 1 + 0x1p-30
		// Every tier value is below sum/2^e < 2^(ilogb(sum)+1−e).
		nbits := int32(math.Ilogb(sum)) + 1 - e
		for q := a; q <= i; q++ {
			if j := items[q].j; j >= 0 {
				ex.jobTier[j] = int32(len(tiers))
			} else {
				ex.makespanTier = int32(len(tiers))
			}
		}
		tiers = append(tiers, tier{n: (nbits + 63) / 64, exp: e})
		a = i + 1
	}
	tiers = w.coarsen(tiers)
	off := int32(0)
	for t := range tiers {
		tiers[t].off = off
		off += tiers[t].n
	}
	ex.tiers = tiers
	ex.limbs = max(int(off), 1)
}

// layoutItems lists the objective's terms by scale, largest first, with
// each job's tier and the makespan term's reset to −1 (none), and fills
// ex.suf: suf[i] is the sum of the scales of items i.., inflated past the
// rounding of a float sum of at most 2^20 + 1 terms.
func (w *Workspace) layoutItems() []item {
	ex, tab := &w.ex, &w.tab
	N, T := len(w.p.Jobs), w.cfg.T
	items := ex.items[:0]
	ex.tauMax = 0
	for j := 0; j < N; j++ {
		ex.jobTier[j] = -1
		if s := -tab.val[j*(T+1)]; s > 0 {
			items = append(items, item{s: s, j: int32(j)})
		}
		ex.tauMax = max(ex.tauMax, tab.res[j*(T+1)])
	}
	ex.makespanTier = -1
	// k·τmax exactly is at most the rounded product times (1 + 2^-52).
	if s := float64(w.cfg.k*ex.tauMax) * (1 + 0x1p-50); s > 0 {
		items = append(items, item{s: s, j: -1})
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return int(a.j - b.j)
	})
	ex.items = items
	suf := scratch.Resize(ex.suf, len(items)+1)
	suf[len(items)] = 0
	for i := len(items) - 1; i >= 0; i-- {
		suf[i] = suf[i+1] + items[i].s
	}
	for i := range suf {
		suf[i] *= 1 + 0x1p-30
	}
	ex.suf = suf
	return items
}

// coarsen cuts a layout wider than maxLimbs down to it by dropping the
// least significant limbs, and then whole tiers (their terms count as 0,
// their magnitudes rounded down); it keeps the full layout to value the
// plan (finish) and sets ex.coarse.
func (w *Workspace) coarsen(tiers []tier) []tier {
	ex := &w.ex
	ex.coarse = false
	width := int32(0)
	for t := range tiers {
		tiers[t].off = width
		width += tiers[t].n
	}
	if width > maxLimbs {
		N := len(w.p.Jobs)
		ex.full.tiers = append(ex.full.tiers[:0], tiers...)
		ex.full.jobTier = append(ex.full.jobTier[:0], ex.jobTier[:N]...)
		ex.full.makespanTier = ex.makespanTier
	}
	for width > maxLimbs {
		ex.coarse = true
		last := &tiers[len(tiers)-1]
		if last.n > 1 {
			last.n--
			last.exp += 64
			width--
			continue
		}
		drop := int32(len(tiers) - 1)
		for j := range w.p.Jobs {
			if ex.jobTier[j] == drop {
				ex.jobTier[j] = -1
			}
		}
		if ex.makespanTier == drop {
			ex.makespanTier = -1
		}
		tiers = tiers[:drop]
		width--
	}
	return tiers
}

// toGrid writes ⌊v/2^e⌋ (v ≥ 0 finite) into z, big-endian.
func toGrid(z []uint64, v float64, e int32) {
	clear(z)
	b := math.Float64bits(v)
	x, m := int(b>>52&0x7ff), b&(1<<52-1)
	if x == 0 { // zero or subnormal: m·2^-1074
		x = 1
	} else {
		m |= 1 << 52
	}
	placeShifted(z, 0, m, x-1075-int(e)) // v = m·2^(x−1075)
}

// placeShifted sets the bits of ⌊(hi·2^64 + lo)·2^s⌋ in z (big-endian,
// cleared); the caller sizes z so that nothing is cut off at the top.
func placeShifted(z []uint64, hi, lo uint64, s int) {
	if s < 0 {
		r := -s
		switch {
		case r >= 128:
			return
		case r >= 64:
			lo, hi = hi>>(r-64), 0
		default:
			lo = lo>>r | hi<<(64-r) // hi<<64 is 0 in Go
			hi >>= r
		}
		s = 0
	}
	q, b := s/64, uint(s%64)
	n := len(z)
	// Limbs q, q+1, q+2 from the least significant.
	v0, v1, v2 := lo<<b, hi<<b|lo>>(64-b), hi>>(64-b)
	if b == 0 {
		v1, v2 = hi, 0
	}
	if q < n {
		z[n-1-q] |= v0
	}
	if q+1 < n {
		z[n-2-q] |= v1
	}
	if q+2 < n {
		z[n-3-q] |= v2
	}
}

// add sets z = x + y (numbers of equal length, big-endian).
func add(z, x, y []uint64) {
	var c uint64
	for i := len(z) - 1; i >= 0; i-- {
		z[i], c = bits.Add64(x[i], y[i], c)
	}
}

// sub sets z = x − y; the caller ensures x ≥ y in every tier, so no borrow
// crosses a tier boundary.
func sub(z, x, y []uint64) {
	var b uint64
	for i := len(z) - 1; i >= 0; i-- {
		z[i], b = bits.Sub64(x[i], y[i], b)
	}
}

// addAt adds the tier-wide y into the number z at limb offset off. The
// tier's total never overflows its width, so the carry stops inside it.
func addAt(z []uint64, off int32, y []uint64) {
	var c uint64
	zz := z[off : int(off)+len(y)]
	for i := len(y) - 1; i >= 0; i-- {
		zz[i], c = bits.Add64(zz[i], y[i], c)
	}
}

// subAt subtracts the tier-wide y from z at limb offset off.
func subAt(z []uint64, off int32, y []uint64) {
	var b uint64
	zz := z[off : int(off)+len(y)]
	for i := len(y) - 1; i >= 0; i-- {
		zz[i], b = bits.Sub64(zz[i], y[i], b)
	}
}

// cmpNum compares two numbers (or two integers of one tier): the sign of
// x − y in exact arithmetic.
func cmpNum(x, y []uint64) int {
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// fbuild rounds a sum of non-overlapping binary pieces, fed from the most
// significant down, to the nearest float64 (ties to even).
type fbuild struct {
	top    int    // position of the leading bit
	win    uint64 // bits top−63 .. top
	sticky bool   // any bit below the window
	set    bool
}

// limb adds v·2^p; every bit of it lies below the bits fed before.
func (f *fbuild) limb(v uint64, p int) {
	if v == 0 {
		return
	}
	if !f.set {
		f.top, f.set = p+bits.Len64(v)-1, true
	}
	switch sh := p - (f.top - 63); {
	case sh >= 0:
		f.win |= v << sh
	case sh > -64:
		f.win |= v >> -sh
		if v<<(64+sh) != 0 {
			f.sticky = true
		}
	default:
		f.sticky = true
	}
}

// tier feeds an integer of one tier (big-endian limbs, unit 2^exp).
func (f *fbuild) tier(x []uint64, exp int32) {
	for i, v := range x {
		f.limb(v, int(exp)+64*(len(x)-1-i))
	}
}

func (f *fbuild) float() float64 {
	if !f.set {
		return 0
	}
	m := f.win >> 11
	half := f.win>>10&1 != 0
	rest := f.win&(1<<10-1) != 0 || f.sticky
	if half && (rest || m&1 == 1) {
		m++ // m = 2^53 is still exact
	}
	return math.Ldexp(float64(m), f.top-52)
}

// real is the value of a number (non-negative in every tier), correctly
// rounded: the tiers' bits do not overlap (the cut rule), so the number is
// their concatenation in binary.
func (w *Workspace) real(x []uint64) float64 { return realIn(w.ex.tiers, x) }

func realIn(tiers []tier, x []uint64) float64 {
	var f fbuild
	for _, t := range tiers {
		f.tier(x[t.off:t.off+t.n], t.exp)
	}
	return f.float()
}

// fullValue returns the welfare and the objective of counts n on the full
// layout, which a coarsened solve keeps for this: −Σ_j V_j(n_j) and
// −(Σ_j V_j(n_j) + M(τ)), exact on the fine grid and correctly rounded.
func (w *Workspace) fullValue(n []int32, tau float64) (welfare, objective float64) {
	W, L := 0, 0
	for _, t := range w.ex.full.tiers {
		W, L = max(W, int(t.off+t.n)), max(L, int(t.n))
	}
	buf := scratch.Resize(w.ex.full.buf, W+L)
	w.ex.full.buf = buf
	x, v := buf[:W], buf[W:]
	clear(x)
	T := w.cfg.T
	for j, c := range n {
		if t := w.ex.full.jobTier[j]; t >= 0 {
			tr := w.ex.full.tiers[t]
			toGrid(v[:tr.n], -w.tab.val[j*(T+1)+int(c)], tr.exp)
			addAt(x, tr.off, v[:tr.n])
		}
	}
	welfare = neg(realIn(w.ex.full.tiers, x))
	if w.ex.full.makespanTier >= 0 {
		tr := w.ex.full.tiers[w.ex.full.makespanTier]
		clear(v)
		mkTier(v[:tr.n], w.cfg.k, tau, tr.exp)
		addAt(x, tr.off, v[:tr.n])
	}
	return welfare, neg(realIn(w.ex.full.tiers, x))
}

// objective is the program's objective at a score (gains form, see above):
// −(C0 − s), correctly rounded. tmp is scratch of one number.
func (w *Workspace) objective(s, tmp []uint64) float64 {
	add(tmp, w.ex.c0, w.ex.mmax)
	sub(tmp, tmp, s)
	return neg(w.real(tmp))
}

// neg is −x without a negative zero, which would print as "-0".
func neg(x float64) float64 {
	if x == 0 {
		return 0
	}
	return -x
}

// num returns number i of a pool of numbers.
func (w *Workspace) num(pool []uint64, i int) []uint64 {
	return pool[i*w.ex.limbs : (i+1)*w.ex.limbs : (i+1)*w.ex.limbs]
}

// gain returns G_j(n), the grid value job j gains with n rounds over none,
// in its tier's width (nil for a job whose term is always 0).
func (w *Workspace) gain(j, n int) []uint64 {
	t := w.ex.jobTier[j]
	if t < 0 {
		return nil
	}
	L := int(w.ex.tiers[t].n)
	o := int(w.ex.gainOff[j]) + 2*n*L
	return w.ex.gains[o : o+L : o+L]
}

// marginal returns G_j(n) − G_j(n−1) in the job's tier width (n ≥ 1).
func (w *Workspace) marginal(j, n int) []uint64 {
	t := w.ex.jobTier[j]
	if t < 0 {
		return nil
	}
	L := int(w.ex.tiers[t].n)
	o := int(w.ex.gainOff[j]) + 2*n*L + L
	return w.ex.gains[o : o+L : o+L]
}

// addGain adds G_j(n) to the number z.
func (w *Workspace) addGain(z []uint64, j, n int) {
	if t := w.ex.jobTier[j]; t >= 0 {
		addAt(z, w.ex.tiers[t].off, w.gain(j, n))
	}
}

// grid fills the grid tables from the float ones: per job and count n, the
// gain G_j(n) and the marginal G_j(n) − G_j(n−1) (interleaved), with the
// magnitudes V_j(n) = ⌊|val_j(n)|/2^e⌋ made non-increasing and the
// marginals V_j(n−1) − V_j(n) non-increasing (concavity, which rounding
// could break by a unit); then C0's parts and Mmax.
func (w *Workspace) grid() {
	N, T := len(w.p.Jobs), w.cfg.T
	size := 0
	for j := 0; j < N; j++ {
		w.ex.gainOff[j] = int32(size)
		if t := w.ex.jobTier[j]; t >= 0 {
			size += 2 * (T + 1) * int(w.ex.tiers[t].n)
		}
	}
	w.ex.gains = scratch.Resize(w.ex.gains, size)
	clear(w.ex.gains)
	clear(w.ex.c0)
	for j := 0; j < N; j++ {
		t := w.ex.jobTier[j]
		if t < 0 {
			continue
		}
		tr := w.ex.tiers[t]
		L := int(tr.n)
		row := j * (T + 1)
		var prev, cur, d, pd, g [maxLimbs]uint64
		toGrid(prev[:L], -w.tab.val[row], tr.exp)
		addAt(w.ex.c0, tr.off, prev[:L])
		cell := w.ex.gains[int(w.ex.gainOff[j]) : int(w.ex.gainOff[j])+2*(T+1)*L]
		top := int(w.tab.top[j])
		for n := 1; n <= T; n++ {
			if n > top { // done: nothing changes, the marginal is 0
				copy(cell[2*n*L:], g[:L])
				continue
			}
			toGrid(cur[:L], -w.tab.val[row+n], tr.exp)
			if cmpNum(cur[:L], prev[:L]) > 0 {
				cur = prev
			}
			sub(d[:L], prev[:L], cur[:L])
			if n >= 2 && cmpNum(d[:L], pd[:L]) > 0 {
				d = pd
			}
			sub(prev[:L], prev[:L], d[:L]) // V(n) as the marginals define it
			add(g[:L], g[:L], d[:L])
			copy(cell[2*n*L:], g[:L])
			copy(cell[(2*n+1)*L:], d[:L])
			pd = d
		}
	}
	w.mkGrid(w.ex.mmax, w.ex.tauMax)
}

// mkGrid writes M(τ) = ⌊k·τ/2^e⌋ of the makespan tier into the number z
// (cleared): the exact product of two float64 mantissas, shifted.
func (w *Workspace) mkGrid(z []uint64, tau float64) {
	clear(z)
	if w.ex.makespanTier < 0 || tau == 0 {
		return
	}
	t := w.ex.tiers[w.ex.makespanTier]
	mkTier(z[t.off:t.off+t.n], w.cfg.k, tau, t.exp)
}

// mkTier writes ⌊k·τ/2^e⌋ into z (cleared, big-endian).
func mkTier(z []uint64, k, tau float64, e int32) {
	fk, xk := math.Frexp(k)
	ft, xt := math.Frexp(tau)
	hi, lo := bits.Mul64(uint64(math.Ldexp(fk, 53)), uint64(math.Ldexp(ft, 53)))
	placeShifted(z, hi, lo, xk+xt-106-int(e))
}

// mkInto sets z = Mmax − M(τ), the makespan term's contribution to a score.
func (w *Workspace) mkInto(z []uint64, tau float64) {
	w.mkGrid(z, tau)
	sub(z, w.ex.mmax, z)
}
