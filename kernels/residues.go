package kernels

import "unsafe"

// Classes is one class structure of a residue walk ([Residues]): a job's
// ticks (or a histogram's entries) grouped into Mod = len(Off)-1 classes.
// Class r is entries Off[r] to Off[r+1] of Val, Cnt and Sum; every class
// holds at least one entry. Within a class Val holds the distinct demands
// in ascending order, Cnt[e] how many ticks of the class show Val[e] or
// more, and Sum[e] their summed demand (suffix counts and sums, so the
// excess of a class on top of a partial sum is one binary search). At is
// the class the structure shows at the walk's first residue; it shows
// class (At+i) mod Mod at residue i.
type Classes struct {
	Off []int32
	Val []int32
	Cnt []int64
	Sum []int64
	At  int
}

// ResidueRow is how many int32s describe one class structure in the table
// the residues import reads (see the package documentation, WebAssembly).
const ResidueRow = 8

// ResiduesScratch returns the length of the scratch [Residues] needs for
// m class structures.
func ResiduesScratch(m int) int { return 8*m + 4 }

// Residues returns the excess over c of base plus v plus the class
// structures cls, residue by residue: at residue i every structure shows one
// class, and the excess there is summed over every tuple of one entry per
// class, weighted by the product of their tick counts,
//
//	dst[i] = sum over tuples of count * max(base[i] + v + sum of demands - c, 0)
//
// (with no structures, max(base[i]+v-c, 0)). It writes dst[i] for each
// residue when dst is not nil (len(dst) >= len(base)), and returns the sum
// over the residues and the walk's evaluations: per residue, one for each
// node of the tuple tree it visits (a class whose partial sum is below the
// capacity whatever the rest adds, or above it whatever the rest adds, ends
// its subtree in a closed form; the last class is one binary search) plus
// the entries of each class it walks through; with no structures, one per
// residue. The count is part of a search's answer, so every implementation
// counts the same.
//
// scratch must hold ResiduesScratch(len(cls)) entries; its contents are
// overwritten. It panics if a structure is malformed (At outside
// [0, Mod), entries past Off[Mod]) or a slice is too short. Products and
// sums wrap as int64 arithmetic does; keeping them within int64 is the
// caller's contract (the link search bounds a link's summed demand).
func Residues(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (excess, evals int64) {
	if dst != nil && len(dst) < len(base) {
		panic("kernels: Residues with len(dst) < len(base)")
	}
	if len(scratch) < ResiduesScratch(len(cls)) {
		panic("kernels: Residues scratch too short")
	}
	for i := range cls {
		k := &cls[i]
		mod := len(k.Off) - 1
		if mod < 1 || k.At < 0 || k.At >= mod {
			panic("kernels: Residues class structure outside its modulus")
		}
		if e := int(k.Off[mod]); e > len(k.Val) || e > len(k.Cnt) || e > len(k.Sum) || k.Off[0] < 0 {
			panic("kernels: Residues entries past their slices")
		}
	}
	if len(base) == 0 {
		return 0, 0
	}
	if len(cls) == 0 {
		return residuesFlat(dst, base, v, c), int64(len(base))
	}
	return residues(dst, cls, base, v, c, scratch)
}

// residuesFlat is Residues without class structures.
func residuesFlat(dst []int64, base []int32, v, c int32) int64 {
	off := int64(v) - int64(c)
	var e int64
	for i, b := range base {
		x := max(int64(b)+off, 0)
		if dst != nil {
			dst[i] = x
		}
		e += x
	}
	return e
}

// level is the walk's state at one class structure l: the class it shows
// (at) and, for the structures from l on, the sum of their classes'
// smallest and largest demands and, over all their entry tuples, the tuple
// count and summed demand. The scratch of Residues holds one per structure
// and one more, five int64s each.
type level struct {
	min, max, n, s, at int64
}

// walk is the state of residuesGeneric.
type walk struct {
	cls   []Classes
	lv    []level
	c     int64
	evals int64
}

// residuesGeneric is the reference for [Residues], len(cls) >= 1 and
// len(base) >= 1.
func residuesGeneric(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (excess, evals int64) {
	m := len(cls)
	_ = scratch[5*(m+1)-1]
	w := walk{cls: cls, lv: unsafe.Slice((*level)(unsafe.Pointer(unsafe.SliceData(scratch))), m+1), c: int64(c)}
	lv := w.lv
	for l := range cls {
		lv[l].at = int64(cls[l].At)
	}
	lv[m] = level{n: 1}
	var e int64
	for i, b := range base {
		for l := m - 1; l >= 0; l-- {
			k := &cls[l]
			cur, nx := &lv[l], &lv[l+1]
			lo, hi := k.Off[cur.at], k.Off[cur.at+1]
			cl := k.Cnt[lo]
			cur.min = nx.min + int64(k.Val[lo])
			cur.max = nx.max + int64(k.Val[hi-1])
			cur.n = cl * nx.n
			cur.s = k.Sum[lo]*nx.n + cl*nx.s
		}
		x := w.product(0, int64(b)+int64(v), 1)
		if dst != nil {
			dst[i] = x
		}
		e += x
		for l := range cls {
			if lv[l].at++; lv[l].at == int64(len(cls[l].Off)-1) {
				lv[l].at = 0
			}
		}
	}
	return e, w.evals
}

// product returns mult times the excess over every tuple of entries of the
// structures from l on, on top of the partial sum p: below the capacity
// whatever the rest adds, nothing; above it whatever the rest adds, the
// closed form; otherwise one level deeper for each entry, and at the last
// structure one binary search over its suffix sums.
func (w *walk) product(l int, p, mult int64) int64 {
	k, r := &w.cls[l], &w.lv[l]
	lo, hi := int(k.Off[r.at]), int(k.Off[r.at+1])
	w.evals++
	if l == len(w.cls)-1 {
		// First entry with p + v > c.
		i, j := lo, hi
		for i < j {
			h := int(uint(i+j) >> 1)
			if p+int64(k.Val[h]) <= w.c {
				i = h + 1
			} else {
				j = h
			}
		}
		if i == hi {
			return 0
		}
		return mult * (k.Cnt[i]*(p-w.c) + k.Sum[i])
	}
	if p+r.max <= w.c {
		return 0
	}
	if p+r.min >= w.c {
		return mult * (r.n*(p-w.c) + r.s)
	}
	var e int64
	for i := lo; i < hi; i++ {
		n := k.Cnt[i]
		if i+1 < hi {
			n -= k.Cnt[i+1]
		}
		e += w.product(l+1, p+int64(k.Val[i]), mult*n)
	}
	w.evals += int64(hi - lo)
	return e
}
