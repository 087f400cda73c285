package wasmhost_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/orrery/orrery/kernels"
)

// simdPath is the JavaScript binding's SIMD kernel module, tested here
// under wazero (which runs WebAssembly SIMD) against the Go kernels.
const simdPath = "../../bindings/js/kernels.wasm"

// memoryModule is a module that exports a growable memory of one page as
// "memory": the Go module's part, for the kernel module to import.
var memoryModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
	0x05, 0x03, 0x01, 0x00, 0x01, // memory section: one memory, min 1 page, no max
	0x07, 0x0a, 0x01, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, // export "memory"
}

// simdKernels is the kernel module instantiated on a memory of its own.
type simdKernels struct {
	mem                                                                  api.Memory
	excess, rotations, excessSlack, addRot, foldDelta, residues, windows api.Function
	place, below                                                         api.Function
	stack                                                                [10]uint64
	next                                                                 uint32 // bump allocator over the memory
}

func newSIMD(t *testing.T) *simdKernels {
	t.Helper()
	ctx := context.Background()
	bin, err := os.ReadFile(simdPath)
	if err != nil {
		t.Fatal(err)
	}
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	mm, err := r.InstantiateWithConfig(ctx, memoryModule, wazero.NewModuleConfig().WithName("orrery"))
	if err != nil {
		t.Fatal(err)
	}
	km, err := r.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithName("kernels"))
	if err != nil {
		t.Fatal(err)
	}
	return &simdKernels{mem: mm.Memory(), excess: km.ExportedFunction("excess"), rotations: km.ExportedFunction("rotations"),
		excessSlack: km.ExportedFunction("excess_slack"), addRot: km.ExportedFunction("add_rotated"), foldDelta: km.ExportedFunction("fold_delta"),
		residues: km.ExportedFunction("residues"), windows: km.ExportedFunction("windows"),
		place: km.ExportedFunction("place"), below: km.ExportedFunction("below")}
}

// put copies v into the memory at a fresh offset (misaligned by skew
// int32s) and returns the offset.
func (s *simdKernels) put(t *testing.T, v []int32, skew int) uint32 {
	t.Helper()
	off := s.next + uint32(4*skew)
	size := uint32(4*len(v) + 64)
	for off+size > s.mem.Size() {
		if _, ok := s.mem.Grow(16); !ok {
			t.Fatal("memory.grow failed")
		}
	}
	if len(v) > 0 {
		s.mem.Write(off, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
	}
	s.next = (off + size + 63) &^ 63
	return off
}

func (s *simdKernels) call(t *testing.T, f api.Function, args ...uint64) uint64 {
	t.Helper()
	copy(s.stack[:], args)
	if err := f.CallWithStack(context.Background(), s.stack[:]); err != nil {
		t.Fatal(err)
	}
	return s.stack[0]
}

// TestSIMDKernels checks the SIMD module's excess and rotations against
// the Go kernels on every length to 300 and longer circles past the
// widening points, at every alignment, with random and extreme values.
func TestSIMDKernels(t *testing.T) {
	s := newSIMD(t)
	rng := rand.New(rand.NewPCG(21, 22))
	lengths := []int{2039, 2040, 2041, 4097, 8193}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		s.next = 0
		base, rot := make([]int32, n), make([]int32, n)
		fill(rng, base, n%5)
		fill(rng, rot, (n/5)%5)
		for _, c := range []int32{0, 1, kernels.MaxValue / 2, kernels.MaxValue, rng.Int32N(kernels.MaxValue + 1)} {
			pa, pb := s.put(t, base, n%4), s.put(t, rot, (n/4)%4)
			got := int64(s.call(t, s.excess, uint64(pa), uint64(pb), uint64(n), uint64(c)))
			if want := kernels.Excess(base, rot, c); got != want {
				t.Fatalf("excess n=%d c=%d: got %d want %d", n, c, got, want)
			}
			if n == 0 {
				continue
			}
			rotor := kernels.PrepareRotor(nil, rot)
			pr := s.put(t, rotor, (n/16)%4)
			for _, r := range [][2]int{{0, n}, {rng.IntN(n), 0}, {n - 1, 1}} {
				s0, m := r[0], r[1]
				if m == 0 {
					m = 1 + rng.IntN(n-s0)
				}
				want := make([]int64, m)
				kernels.Rotations(want, base, rotor, c, s0)
				pd := s.put(t, make([]int32, 2*m+2), 0) // room for m int64s and a sentinel
				s.call(t, s.rotations, uint64(pd), uint64(pa), uint64(pr), uint64(n), uint64(c), uint64(s0), uint64(m))
				raw, _ := s.mem.Read(pd, uint32(8*m+8))
				got := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), m+1)
				for k := range want {
					if got[k] != want[k] {
						t.Fatalf("rotations n=%d c=%d s0=%d m=%d: dst[%d] = %d, want %d", n, c, s0, m, k, got[k], want[k])
					}
				}
				if got[m] != 0 {
					t.Fatalf("rotations n=%d s0=%d m=%d wrote past dst", n, s0, m)
				}
			}
		}
	}
}

// get reads n int32s at off.
func (s *simdKernels) get(off uint32, n int) []int32 {
	raw, _ := s.mem.Read(off, uint32(4*n))
	return slices.Clone(unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(raw))), n))
}

// TestSIMDLoopKernels checks excess_slack, add_rotated, fold_delta and
// place against the Go kernels, as TestSIMDKernels does.
func TestSIMDLoopKernels(t *testing.T) {
	s := newSIMD(t)
	rng := rand.New(rand.NewPCG(23, 24))
	lengths := []int{1023, 1024, 1025, 4099}
	for n := 1; n <= 200; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		s.next = 0
		a, tile := make([]int32, n), make([]int32, n)
		fill(rng, a, n%5)
		fill(rng, tile, (n/5)%5)
		pa, pt := s.put(t, a, n%4), s.put(t, tile, (n/4)%4)
		for _, c := range []int32{0, 1, kernels.MaxValue / 2, kernels.MaxValue, rng.Int32N(kernels.MaxValue + 1)} {
			po := s.put(t, make([]int32, 4), 0)
			s.call(t, s.excessSlack, uint64(pa), uint64(n), uint64(c), uint64(po))
			got := s.get(po, 4)
			e, sl := kernels.ExcessSlack(a, c)
			if ge, gs := int64(uint32(got[0]))|int64(got[1])<<32, int64(uint32(got[2]))|int64(got[3])<<32; ge != e || gs != sl {
				t.Fatalf("excess_slack n=%d c=%d: got (%d, %d) want (%d, %d)", n, c, ge, gs, e, sl)
			}
			for _, m := range []int{1, 2, 3, 4, 5, 7, 8, n, n + 3, 1 + rng.IntN(n)} {
				v := rng.Int32N(kernels.MaxValue + 1)
				psi := make([]int64, m)
				for r := range psi {
					psi[r] = int64(r)<<40 | int64(rng.Int32())
				}
				pp := s.put(t, unsafe.Slice((*int32)(unsafe.Pointer(&psi[0])), 2*m), 0)
				kernels.FoldDelta(psi, a, v, c)
				s.call(t, s.foldDelta, uint64(pp), uint64(m), uint64(pa), uint64(n), uint64(v), uint64(c))
				raw := s.get(pp, 2*m)
				if gotPsi := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), m); !slices.Equal(gotPsi, psi) {
					t.Fatalf("fold_delta n=%d m=%d v=%d c=%d: got %v want %v", n, m, v, c, gotPsi, psi)
				}
			}
		}
		for _, sh := range []int{0, n - 1, rng.IntN(n), rng.IntN(n)} {
			pd := s.put(t, append(slices.Clone(a), 0), 1) // and a sentinel
			want := slices.Clone(a)
			kernels.AddRotated(want, tile, sh)
			s.call(t, s.addRot, uint64(pd), uint64(pt), uint64(n), uint64(sh))
			if got := s.get(pd, n+1); !slices.Equal(got[:n], want) || got[n] != 0 {
				t.Fatalf("add_rotated n=%d t=%d: got %v want %v (and 0 past it)", n, sh, got, want)
			}
		}
		// place on halves, whose sums stay within MaxValue (its contract),
		// over old contents of dst, which must not leak in.
		hb, ht := slices.Clone(a), slices.Clone(tile)
		for i := range hb {
			hb[i], ht[i] = hb[i]/2, ht[i]/2
		}
		phb, pht := s.put(t, hb, n%4), s.put(t, ht, (n/4)%4)
		for _, sh := range []int{0, n - 1, rng.IntN(n), rng.IntN(n)} {
			c := []int32{0, 1, kernels.MaxValue / 2, kernels.MaxValue, rng.Int32N(kernels.MaxValue + 1)}[rng.IntN(5)]
			old := make([]int32, n+1) // and a sentinel
			fill(rng, old[:n], 0)
			pd, po := s.put(t, old, 1), s.put(t, make([]int32, 4), 0)
			want := make([]int32, n)
			e, sl := kernels.Place(want, hb, ht, sh, c)
			s.call(t, s.place, uint64(pd), uint64(phb), uint64(pht), uint64(n), uint64(sh), uint64(c), uint64(po))
			got, res := s.get(pd, n+1), s.get(po, 4)
			if !slices.Equal(got[:n], want) || got[n] != 0 {
				t.Fatalf("place n=%d t=%d: got %v want %v (and 0 past it)", n, sh, got, want)
			}
			if ge, gs := int64(uint32(res[0]))|int64(res[1])<<32, int64(uint32(res[2]))|int64(res[3])<<32; ge != e || gs != sl {
				t.Fatalf("place n=%d t=%d c=%d: got (%d, %d) want (%d, %d)", n, sh, c, ge, gs, e, sl)
			}
		}
	}
}

// TestSIMDBelow checks below against the Go kernel on every position of
// the first value at most x, at the extremes of int64.
func TestSIMDBelow(t *testing.T) {
	s := newSIMD(t)
	rng := rand.New(rand.NewPCG(25, 26))
	for n := 1; n <= 40; n++ {
		a := make([]int64, n)
		for _, x := range []int64{math.MinInt64, -1, 0, 1<<40 + 3, math.MaxInt64 - 1} {
			for first := 0; first <= n; first++ {
				for i := range a {
					switch {
					case i < first:
						a[i] = x + 1 + rng.Int64N(1<<20)
						if x > math.MaxInt64-(1<<21) {
							a[i] = math.MaxInt64
						}
					case i == first:
						a[i] = x
					default:
						a[i] = rng.Int64()
					}
				}
				s.next = 0
				pa := s.put64(t, a)
				got := int(int32(s.call(t, s.below, uint64(pa), uint64(n), uint64(uint32(x)), uint64(uint32(uint64(x)>>32)))))
				if got != first || kernels.Below(a, x) != first {
					t.Fatalf("below n=%d x=%d, first at %d: got %d, the Go kernel %d", n, x, first, got, kernels.Below(a, x))
				}
			}
		}
	}
}

// put64 is put for int64s (8-aligned).
func (s *simdKernels) put64(t *testing.T, v []int64) uint32 {
	t.Helper()
	if len(v) == 0 {
		return s.put(t, nil, 0)
	}
	return s.put(t, unsafe.Slice((*int32)(unsafe.Pointer(&v[0])), 2*len(v)), 0)
}

// drawClasses draws a class structure of mod classes, each with 1 to per
// distinct demands around c, for Residues.
func drawClasses(rng *rand.Rand, mod, per int, c int32) kernels.Classes {
	k := kernels.Classes{Off: []int32{0}, At: rng.IntN(mod)}
	for range mod {
		vals := map[int32]bool{}
		for n := 1 + rng.IntN(per); len(vals) < n; {
			switch rng.IntN(4) {
			case 0:
				vals[0] = true
			case 1:
				vals[rng.Int32N(c/2+1)] = true
			case 2:
				vals[c/2+rng.Int32N(c+1)] = true
			default:
				vals[rng.Int32N(2*c+64)] = true // enough values for any per
			}
		}
		vs := make([]int32, 0, len(vals))
		for v := range vals {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		start := len(k.Val)
		k.Val = append(k.Val, vs...)
		k.Cnt = append(k.Cnt, make([]int64, len(vs))...)
		k.Sum = append(k.Sum, make([]int64, len(vs))...)
		var n, sum int64
		for i := len(vs) - 1; i >= 0; i-- {
			cnt := 1 + rng.Int64N(4)
			n, sum = n+cnt, sum+cnt*int64(vs[i])
			k.Cnt[start+i], k.Sum[start+i] = n, sum
		}
		k.Off = append(k.Off, int32(len(k.Val)))
	}
	return k
}

// TestSIMDResidues checks the kernel module's residue walk against the Go
// kernel: the excess of every residue, the sum and the evaluations, with
// one to four structures of moduli to 9 and up to 6 entries per class.
func TestSIMDResidues(t *testing.T) {
	s := newSIMD(t)
	rng := rand.New(rand.NewPCG(25, 26))
	for it := range 2000 {
		s.next = 0
		c := []int32{1, 40, 1000, kernels.MaxValue / 2}[it%4]
		m := 1 + rng.IntN(4)
		cls := make([]kernels.Classes, m)
		tab := make([]int32, kernels.ResidueRow*m)
		for l := range cls {
			k := drawClasses(rng, 1+rng.IntN(9), 1+rng.IntN(6), c)
			cls[l] = k
			row := tab[kernels.ResidueRow*l:]
			row[0], row[1] = int32(len(k.Off)-1), int32(k.At)
			row[2], row[3] = int32(s.put(t, k.Off, 0)), int32(s.put(t, k.Val, 1))
			row[4], row[5] = int32(s.put64(t, k.Cnt)), int32(s.put64(t, k.Sum))
		}
		base := make([]int32, 1+rng.IntN(80))
		for i := range base {
			base[i] = rng.Int32N(c/2 + 2)
		}
		v := rng.Int32N(c/4 + 1)
		want := make([]int64, len(base))
		wantE, wantEvals := kernels.Residues(want, cls, base, v, c, make([]int64, kernels.ResiduesScratch(m)))
		pt, pb := s.put(t, tab, 0), s.put(t, base, it%4)
		plv := s.put64(t, make([]int64, 4*(m+1)))
		pd := s.put64(t, make([]int64, len(base)+1)) // and a sentinel
		po := s.put64(t, make([]int64, 2))
		dst := uint64(pd)
		if it%5 == 4 {
			dst = 0 // no per-residue excess asked for
		}
		s.call(t, s.residues, uint64(pt), uint64(m), uint64(pb), uint64(len(base)), uint64(v), uint64(c), uint64(plv), dst, uint64(po))
		raw := s.get(po, 4)
		out := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), 2)
		if out[0] != wantE || out[1] != wantEvals {
			t.Fatalf("residues #%d m=%d n=%d v=%d c=%d: (%d, %d evals), want (%d, %d)", it, m, len(base), v, c, out[0], out[1], wantE, wantEvals)
		}
		raw = s.get(pd, 2*len(base)+2)
		got := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), len(base)+1)
		if dst == 0 {
			want = make([]int64, len(base))
		}
		if !slices.Equal(got[:len(base)], want) || got[len(base)] != 0 {
			t.Fatalf("residues #%d m=%d n=%d: dst %v, want %v (and 0 past it)", it, m, len(base), got, want)
		}
	}
}

// TestSIMDWindows checks the kernel module's window scan against the Go
// kernel on circles of 1 to 300 residues and a few longer ones, with runs
// anywhere on them (windows that wrap, starts that from0 moves past m),
// every count of shifts to m, and a sentinel past out.
func TestSIMDWindows(t *testing.T) {
	s := newSIMD(t)
	rng := rand.New(rand.NewPCG(27, 28))
	lengths := []int{511, 1024, 2049}
	for m := 1; m <= 300; m++ {
		lengths = append(lengths, m)
	}
	for it, m := range lengths {
		for rep := range 4 {
			s.next = 0
			psi := make([]int64, m)
			for i := range psi {
				psi[i] = rng.Int64N(1<<41) - 1<<40
			}
			runs := make([]kernels.Run, rng.IntN(6))
			for i := range runs {
				runs[i] = kernels.Run{Start: rng.Int32N(int32(m)), Len: rng.Int32N(int32(m) + 1), N: rng.Int64N(1<<16) - 1<<8}
			}
			from0 := rng.IntN(m)
			k := []int{m - from0, rng.IntN(m + 1), m, 0}[rep]
			out := make([]int64, k+1) // and a sentinel
			for i := range out {
				out[i] = rng.Int64()
			}
			want := slices.Clone(out)
			x0 := []int64{0, -1, rng.Int64(), int64(m) << 40}[rep]
			kernels.Windows(want[:k], x0, psi, runs, from0, make([]int64, kernels.WindowsScratch(m)))
			po, pp := s.put64(t, out), s.put64(t, psi)
			pr := s.put64(t, unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(append(runs, kernels.Run{})))), 2*len(runs)))
			pre := make([]int64, kernels.WindowsScratch(m))
			for i := range pre {
				pre[i] = rng.Int64() // whatever the scratch held
			}
			ps := s.put64(t, pre)
			s.call(t, s.windows, uint64(po), uint64(k), uint64(uint32(x0)), uint64(x0)>>32, uint64(pp), uint64(m), uint64(pr), uint64(len(runs)), uint64(from0), uint64(ps))
			raw := s.get(po, 2*(k+1))
			if got := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), k+1); !slices.Equal(got, want) {
				t.Fatalf("windows #%d m=%d k=%d from0=%d x0=%d runs %v: got %v, want %v (the last past out)", it, m, k, from0, x0, runs, got, want)
			}
		}
	}
}

// TestSIMDAssembled checks that kernels.wasm is kernels.wat assembled by
// wabt's wat2wasm, when it is installed (.ci/simd-check.sh installs it).
func TestSIMDAssembled(t *testing.T) {
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Skip("wat2wasm (wabt) is not installed")
	}
	out := filepath.Join(t.TempDir(), "kernels.wasm")
	if b, err := exec.Command(tool, "../../bindings/js/kernels.wat", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	want, err := os.ReadFile(simdPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("bindings/js/kernels.wasm is not kernels.wat assembled (%d bytes, want %d): run wat2wasm kernels.wat -o kernels.wasm in bindings/js", len(want), len(got))
	}
}

// fill sets v to values drawn by mode: 0 random over [0, MaxValue], 1 all
// zero, 2 all MaxValue, 3 a mix of the two, 4 small values.
func fill(rng *rand.Rand, v []int32, mode int) {
	for i := range v {
		switch mode {
		case 0:
			v[i] = rng.Int32N(kernels.MaxValue + 1)
		case 1:
			v[i] = 0
		case 2:
			v[i] = kernels.MaxValue
		case 3:
			v[i] = kernels.MaxValue * rng.Int32N(2)
		default:
			v[i] = rng.Int32N(8)
		}
	}
}
