package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// classSpec is one class structure drawn for a test: per class, its
// distinct demands (ascending) and how many ticks show each.
type classSpec struct {
	vals [][]int32
	cnts [][]int64
	at   int
}

// classes lays s out as Residues reads it.
func (s classSpec) classes() Classes {
	k := Classes{Off: []int32{0}, At: s.at}
	for r, vs := range s.vals {
		start := len(k.Val)
		k.Val = append(k.Val, vs...)
		var n, sum int64
		cs := make([]int64, len(vs))
		ss := make([]int64, len(vs))
		for i := len(vs) - 1; i >= 0; i-- {
			n += s.cnts[r][i]
			sum += s.cnts[r][i] * int64(vs[i])
			cs[i], ss[i] = n, sum
		}
		k.Cnt, k.Sum = append(k.Cnt, cs...), append(k.Sum, ss...)
		k.Off = append(k.Off, int32(start+len(vs)))
	}
	return k
}

// drawSpec draws a structure of mod classes with up to maxEntries distinct
// demands each, around the threshold c so that every branch of the walk
// (nothing, the closed form, deeper) is taken.
func drawSpec(rng *rand.Rand, mod, maxEntries int, c int32) classSpec {
	s := classSpec{at: rng.IntN(mod)}
	for range mod {
		n := 1 + rng.IntN(maxEntries)
		set := map[int32]bool{}
		for len(set) < n {
			var v int32
			switch rng.IntN(4) {
			case 0:
				v = 0
			case 1:
				v = rng.Int32N(c/2 + 1)
			case 2:
				v = c/2 + rng.Int32N(c+1)
			default:
				v = rng.Int32N(MaxValue/8 + 1)
			}
			set[v] = true
		}
		vs := make([]int32, 0, n)
		for v := range set {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		cs := make([]int64, n)
		for i := range cs {
			cs[i] = 1 + rng.Int64N(5)
		}
		s.vals, s.cnts = append(s.vals, vs), append(s.cnts, cs)
	}
	return s
}

// naiveResidues is Residues' excess by its definition: every tuple of
// entries enumerated at every residue.
func naiveResidues(specs []classSpec, base []int32, v, c int32) []int64 {
	out := make([]int64, len(base))
	for i, b := range base {
		var rec func(l int, p, mult int64) int64
		rec = func(l int, p, mult int64) int64 {
			if l == len(specs) {
				return mult * max(p-int64(c), 0)
			}
			s := specs[l]
			r := (s.at + i) % len(s.vals)
			var e int64
			for k, x := range s.vals[r] {
				e += rec(l+1, p+int64(x), mult*s.cnts[r][k])
			}
			return e
		}
		out[i] = rec(0, int64(b)+int64(v), 1)
	}
	return out
}

// residuesCase is one drawn input of Residues.
type residuesCase struct {
	specs []classSpec
	cls   []Classes
	base  []int32
	v, c  int32
}

func drawResidues(rng *rand.Rand) residuesCase {
	var rc residuesCase
	rc.c = []int32{0, 1, 40, 1000, MaxValue / 2, rng.Int32N(MaxValue + 1)}[rng.IntN(6)]
	m := rng.IntN(5)
	for range m {
		mod := 1 + rng.IntN(7)
		s := drawSpec(rng, mod, 1+rng.IntN(6), rc.c)
		rc.specs = append(rc.specs, s)
		rc.cls = append(rc.cls, s.classes())
	}
	rc.base = make([]int32, 1+rng.IntN(60))
	for i := range rc.base {
		rc.base[i] = rng.Int32N(rc.c/2 + 2)
	}
	if rng.IntN(2) == 0 {
		rc.v = rng.Int32N(rc.c/4 + 1)
	}
	return rc
}

// TestResidues checks Residues, on every implementation that has its own
// and through the public API on every path, against the definition (the
// excess of every residue, every tuple enumerated), and every
// implementation's evaluations against the generic walk's.
func TestResidues(t *testing.T) {
	check := func(t *testing.T, name string, f func(dst []int64, cls []Classes, base []int32, v, c int32, scratch []int64) (int64, int64), public bool) {
		rng := rand.New(rand.NewPCG(41, 42))
		for it := range 3000 {
			rc := drawResidues(rng)
			if !public && len(rc.cls) == 0 {
				continue // the implementations walk at least one structure
			}
			want := naiveResidues(rc.specs, rc.base, rc.v, rc.c)
			var wantE int64
			for _, x := range want {
				wantE += x
			}
			scratch := make([]int64, ResiduesScratch(len(rc.cls)))
			wantEvals := int64(len(rc.base)) // one per residue with no structures
			if len(rc.cls) > 0 {
				_, wantEvals = residuesGeneric(nil, rc.cls, rc.base, rc.v, rc.c, scratch)
			}
			for i := range scratch {
				scratch[i] = -1 // whatever the scratch held before
			}
			dst := make([]int64, len(rc.base)+1)
			dst[len(rc.base)] = 77 // past the residues: untouched
			e, evals := f(dst, rc.cls, rc.base, rc.v, rc.c, scratch)
			if e != wantE || evals != wantEvals {
				t.Fatalf("%s #%d (m=%d, n=%d, v=%d, c=%d): (%d, %d evals), want (%d, %d)", name, it, len(rc.cls), len(rc.base), rc.v, rc.c, e, evals, wantE, wantEvals)
			}
			if d := cmp.Diff(append(want, 77), dst); d != "" {
				t.Fatalf("%s #%d: dst (-want +got)\n%s", name, it, d)
			}
			if e2, ev2 := f(nil, rc.cls, rc.base, rc.v, rc.c, scratch); e2 != e || ev2 != evals {
				t.Fatalf("%s #%d: without dst (%d, %d), with it (%d, %d)", name, it, e2, ev2, e, evals)
			}
			for l, k := range rc.cls {
				if k.At != rc.specs[l].at {
					t.Fatalf("%s #%d: structure %d's At changed", name, it, l)
				}
			}
		}
	}
	forEachImpl(t, func(t *testing.T, im impl) {
		if im.residues == nil {
			t.Skipf("%s: no residue walk of its own", im.name)
		}
		check(t, im.name, im.residues, false)
	})
	forEachPath(t, func(t *testing.T) {
		check(t, "public API", Residues, true)
	})
}

// TestResiduesEvaluations pins the generic walk's count on a case worked
// by hand: one residue, two structures of one class each, base 0, c 10.
// The first structure's class is {4 x1, 8 x1}, the second's {3 x2, 6 x1}:
// the root (1), the first class walked (+2 entries), under 4 the second
// class's search (1) and under 8 its search (1): 5. Under 4: 4+6 = 10 is
// not above 10, nothing; under 8: 8+3 and 8+6 pass, 2*1 + 1*4 = 6.
func TestResiduesEvaluations(t *testing.T) {
	a := classSpec{vals: [][]int32{{4, 8}}, cnts: [][]int64{{1, 1}}}
	b := classSpec{vals: [][]int32{{3, 6}}, cnts: [][]int64{{2, 1}}}
	cls := []Classes{a.classes(), b.classes()}
	e, evals := Residues(nil, cls, []int32{0}, 0, 10, make([]int64, ResiduesScratch(2)))
	if e != 6 || evals != 5 {
		t.Fatalf("Residues = (%d, %d evals), want (6, 5)", e, evals)
	}
	// Base 9: 9+4+3 = 16 > 10 whatever the rest adds: the closed form at
	// the root, one evaluation; the excess is the sum over tuples of
	// count*(9+x+y-10): 6*2 + 9*1 + 10*2 + 13*1 = 54.
	e, evals = Residues(nil, cls, []int32{9}, 0, 10, make([]int64, ResiduesScratch(2)))
	if e != 54 || evals != 1 {
		t.Fatalf("Residues at base 9 = (%d, %d evals), want (54, 1)", e, evals)
	}
}

// TestResiduesPanics checks the documented panics.
func TestResiduesPanics(t *testing.T) {
	ok := classSpec{vals: [][]int32{{1, 2}, {3}}, cnts: [][]int64{{1, 1}, {2}}}.classes()
	bad := func(f func(k *Classes)) []Classes {
		k := ok
		k.Off = slices.Clone(ok.Off)
		f(&k)
		return []Classes{k}
	}
	base := []int32{1, 2, 3}
	for name, f := range map[string]func(){
		"scratch":     func() { Residues(nil, []Classes{ok}, base, 0, 5, make([]int64, 3)) },
		"dst":         func() { Residues(make([]int64, 2), nil, base, 0, 5, nil) },
		"at":          func() { Residues(nil, bad(func(k *Classes) { k.At = 2 }), base, 0, 5, make([]int64, 12)) },
		"negative at": func() { Residues(nil, bad(func(k *Classes) { k.At = -1 }), base, 0, 5, make([]int64, 12)) },
		"no classes":  func() { Residues(nil, bad(func(k *Classes) { k.Off = k.Off[:1] }), base, 0, 5, make([]int64, 12)) },
		"entries":     func() { Residues(nil, bad(func(k *Classes) { k.Off[2] = 4 }), base, 0, 5, make([]int64, 12)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if e, evals := Residues(nil, []Classes{ok}, nil, 0, 5, make([]int64, 12)); e != 0 || evals != 0 {
		t.Errorf("Residues over no residues = (%d, %d)", e, evals)
	}
}

// FuzzResidues compares every implementation of the residue walk with the
// generic one, and the public API with the definition, on structures built
// from the fuzzer's bytes: a byte per structure (its modulus and entries
// per class), then demands and counts, two bytes each.
func FuzzResidues(f *testing.F) {
	f.Add([]byte{0x23, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, uint8(2), uint32(40), uint16(3))
	f.Add(make([]byte, 64), uint8(0), uint32(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, mRaw uint8, cRaw uint32, vRaw uint16) {
		m := int(mRaw % 5)
		if len(data) < m {
			return
		}
		c := int32(cRaw % (MaxValue + 1))
		next := func() int32 {
			if len(data) < 2 {
				return 0
			}
			x := int32(data[0]) | int32(data[1])<<8
			data = data[2:]
			return x
		}
		shape, data := data[:m], data[m:]
		specs := make([]classSpec, m)
		cls := make([]Classes, m)
		for l := range specs {
			mod, per := 1+int(shape[l]&7), 1+int(shape[l]>>4&3)
			s := classSpec{at: int(shape[l]>>6) % mod}
			for range mod {
				vs, cs := []int32{}, []int64{}
				for range per {
					v := next() % 4096 * 64 // steps of 64 up to 2^18
					if i, found := slices.BinarySearch(vs, v); !found {
						vs, cs = slices.Insert(vs, i, v), slices.Insert(cs, i, int64(1+v%5))
					}
				}
				s.vals, s.cnts = append(s.vals, vs), append(s.cnts, cs)
			}
			specs[l], cls[l] = s, s.classes()
		}
		base := make([]int32, 1+len(data)/2)
		for i := range base {
			base[i] = next() * 64
		}
		v := int32(vRaw)
		want := naiveResidues(specs, base, v, c)
		dst := make([]int64, len(base))
		scratch := make([]int64, ResiduesScratch(m))
		wantEvals := int64(len(base))
		if m > 0 {
			_, wantEvals = residuesGeneric(nil, cls, base, v, c, scratch)
		}
		e, evals := Residues(dst, cls, base, v, c, scratch)
		var wantE int64
		for _, x := range want {
			wantE += x
		}
		if e != wantE || evals != wantEvals || !slices.Equal(dst, want) {
			t.Fatalf("Residues (%s) m=%d n=%d: (%d, %d evals), want (%d, %d); dst %v want %v", Implementation(), m, len(base), e, evals, wantE, wantEvals, dst, want)
		}
		for _, im := range impls() {
			if !im.ok || im.residues == nil || m == 0 {
				continue
			}
			if e2, ev2 := im.residues(dst, cls, base, v, c, scratch); e2 != wantE || ev2 != wantEvals {
				t.Fatalf("%s residues m=%d n=%d: (%d, %d evals), want (%d, %d)", im.name, m, len(base), e2, ev2, wantE, wantEvals)
			}
		}
	})
}
