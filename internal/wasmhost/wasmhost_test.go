package wasmhost_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/orrery/orrery/internal/wasmhost"
	"github.com/orrery/orrery/kernels"
)

// guestImports are the kernels guestModule imports and re-exports: name,
// parameter count (all i32) and result type (0 for none).
var guestImports = []struct {
	name   string
	params int
	result byte
}{
	{"excess", 4, 0x7e}, {"rotations", 7, 0}, {"residues", 9, 0}, {"windows", 10, 0},
	{"place", 7, 0}, {"below", 4, 0x7f},
}

// guestModule is a guest of one memory page that imports guestImports from
// orrery_kernels and exports them as they are, so a test can pass any
// arguments (a Go module passes only valid ones).
func guestModule() []byte {
	uleb := func(n int) []byte {
		var b []byte
		for {
			c := byte(n & 0x7f)
			if n >>= 7; n == 0 {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	str := func(s string) []byte { return append(uleb(len(s)), s...) }
	sec := func(id byte, body ...[]byte) []byte {
		var b []byte
		for _, p := range body {
			b = append(b, p...)
		}
		return append(append([]byte{id}, uleb(len(b))...), b...)
	}
	n := len(guestImports)
	types, imports, funcs := [][]byte{uleb(n)}, [][]byte{uleb(n)}, [][]byte{uleb(n)}
	exports, code := [][]byte{uleb(n + 1), str("memory"), {2, 0}}, [][]byte{uleb(n)}
	for i, g := range guestImports {
		ty := append([]byte{0x60}, uleb(g.params)...)
		for range g.params {
			ty = append(ty, 0x7f)
		}
		if g.result != 0 {
			ty = append(ty, 1, g.result)
		} else {
			ty = append(ty, 0)
		}
		types = append(types, ty)
		imports = append(imports, str("orrery_kernels"), str(g.name), []byte{0}, uleb(i))
		funcs = append(funcs, uleb(i))
		exports = append(exports, str(g.name), []byte{0}, uleb(n+i))
		body := []byte{0} // no locals
		for p := range g.params {
			body = append(body, 0x20, byte(p)) // local.get p
		}
		body = append(body, 0x10, byte(i), 0x0b) // call, end
		code = append(code, uleb(len(body)), body)
	}
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	for _, s := range [][]byte{sec(1, types...), sec(2, imports...), sec(3, funcs...), sec(5, []byte{1, 0, 1}), sec(7, exports...), sec(10, code...)} {
		out = append(out, s...)
	}
	return out
}

func newGuest(t *testing.T) api.Module {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	if _, err := wasmhost.Instantiate(ctx, r); err != nil {
		t.Fatal(err)
	}
	g, err := r.Instantiate(ctx, guestModule())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestHost checks the host's answers on valid calls, written in the
// guest's memory.
func TestHost(t *testing.T) {
	ctx := context.Background()
	g := newGuest(t)
	n := 100
	a, b := make([]int32, n), make([]int32, n)
	for i := range a {
		a[i], b[i] = int32(i*37%101), int32(i*11%97)
	}
	rotor := kernels.PrepareRotor(nil, b)
	put := func(off uint32, v []int32) {
		g.Memory().Write(off, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
	}
	put(0, a)
	put(1024, b)
	put(2048, rotor)
	res, err := g.ExportedFunction("excess").Call(ctx, 0, 1024, uint64(n), 90)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := int64(res[0]), kernels.Excess(a, b, 90); got != want {
		t.Errorf("excess = %d, want %d", got, want)
	}
	if _, err := g.ExportedFunction("rotations").Call(ctx, 8192, 0, 2048, uint64(n), 90, 3, 40); err != nil {
		t.Fatal(err)
	}
	want := make([]int64, 40)
	kernels.Rotations(want, a, rotor, 90, 3)
	raw, _ := g.Memory().Read(8192, 8*40)
	got := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), 40)
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("rotations dst[%d] = %d, want %d", k, got[k], want[k])
		}
	}
	// place: a+b with b delayed 7 ticks at 20480, its excess and slack at 24576
	if _, err := g.ExportedFunction("place").Call(ctx, 20480, 0, 1024, uint64(n), 7, 90, 24576); err != nil {
		t.Fatal(err)
	}
	sum := make([]int32, n)
	e, sl := kernels.Place(sum, a, b, 7, 90)
	rawSum, _ := g.Memory().Read(20480, uint32(4*n))
	rawOut, _ := g.Memory().Read(24576, 16)
	if !slices.Equal(unsafe.Slice((*int32)(unsafe.Pointer(&rawSum[0])), n), sum) ||
		!slices.Equal(unsafe.Slice((*int64)(unsafe.Pointer(&rawOut[0])), 2), []int64{e, sl}) {
		t.Errorf("place: wrong sum or (excess, slack) = %v, want (%d, %d)", unsafe.Slice((*int64)(unsafe.Pointer(&rawOut[0])), 2), e, sl)
	}
	// below: the first of 40 int64s at most -2^33 - 1, both halves of x read
	vals := make([]int64, 40)
	for i := range vals {
		vals[i] = int64(40-i) << 33
	}
	vals[31] = -(1 << 33) - 1
	g.Memory().Write(28672, unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), 8*len(vals)))
	x := int64(-(1 << 33) - 1)
	res, err = g.ExportedFunction("below").Call(ctx, 28672, 40, uint64(uint32(x)), uint64(uint32(uint64(x)>>32)))
	if err != nil {
		t.Fatal(err)
	}
	if got := int32(res[0]); got != 31 || kernels.Below(vals, x) != 31 {
		t.Errorf("below = %d, want 31", got)
	}
}

// TestHostRefuses checks that arguments outside the guest's memory or the
// kernels' contract fail the guest's call (a trap) instead of reading
// outside the memory or computing nonsense.
func TestHostRefuses(t *testing.T) {
	ctx := context.Background()
	const page = 65536
	for _, tc := range []struct {
		name string
		fn   string
		args []uint64
		want string
	}{
		{"past the memory", "excess", []uint64{page - 8, 0, 4, 1}, "outside the module's memory"},
		{"length wraps 32 bits", "excess", []uint64{0, 0, 1 << 30, 1}, "outside the module's memory"},
		{"negative length", "excess", []uint64{0, 0, uint64(uint32(0xffffffff)), 1}, "negative length"},
		{"threshold too large", "excess", []uint64{0, 0, 4, kernels.MaxValue + 1}, "threshold"},
		{"shift past the circle", "rotations", []uint64{0, 1024, 2048, 10, 1, 10, 1}, "shifts outside"},
		{"range wraps", "rotations", []uint64{0, 1024, 2048, 10, 1, 5, 6}, "shifts outside"},
		{"no shifts", "rotations", []uint64{0, 1024, 2048, 10, 1, 0, 0}, "shifts outside"},
		{"rotor past the memory", "rotations", []uint64{0, 1024, page - 64, 10, 1, 0, 1}, "outside the module's memory"},
		// residues(tab, m, base, n, v, c, lv, dst, out) with a zeroed table
		// at 0: every row's modulus is 0.
		{"no structures", "residues", []uint64{0, 0, 1024, 4, 0, 1, 0, 0, 8192}, "length below 1"},
		{"no residues", "residues", []uint64{0, 1, 1024, 0, 0, 1, 0, 0, 8192}, "length below 1"},
		{"modulus 0", "residues", []uint64{0, 1, 1024, 4, 0, 1, 0, 0, 8192}, "modulus below 1"},
		{"table past the memory", "residues", []uint64{page - 16, 1, 1024, 4, 0, 1, 0, 0, 8192}, "outside the module's memory"},
		// place(dst, base, tile, n, t, c, out), below(a, n, xlo, xhi)
		{"place shift past the circle", "place", []uint64{0, 1024, 2048, 10, 10, 1, 4096}, "shift outside"},
		{"place empty", "place", []uint64{0, 1024, 2048, 0, 0, 1, 4096}, "shift outside"},
		{"place threshold too large", "place", []uint64{0, 1024, 2048, 10, 0, kernels.MaxValue + 1, 4096}, "threshold"},
		{"place tile past the memory", "place", []uint64{0, 1024, page - 16, 10, 0, 1, 4096}, "outside the module's memory"},
		{"place out past the memory", "place", []uint64{0, 1024, 2048, 10, 0, 1, page - 8}, "outside the module's memory"},
		{"below empty", "below", []uint64{0, 0, 0, 0}, "length below 1"},
		{"below past the memory", "below", []uint64{page - 16, 4, 0, 0}, "outside the module's memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuest(t)
			_, err := g.ExportedFunction(tc.fn).Call(ctx, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s%v: error %v, want one containing %q", tc.fn, tc.args, err, tc.want)
			}
		})
	}
}

// TestHostResidues checks the host's residue walk on a table written in
// the guest's memory, and that a table whose classes reach outside the
// memory fails the guest's call.
func TestHostResidues(t *testing.T) {
	ctx := context.Background()
	const page = 65536
	put := func(g api.Module, off uint32, p unsafe.Pointer, size int) {
		g.Memory().Write(off, unsafe.Slice((*byte)(p), size))
	}
	// Two structures: mod 2 with classes {0, 5} and {7}; mod 3 with {2},
	// {4, 9} and {1}.
	k1 := kernels.Classes{Off: []int32{0, 2, 3}, Val: []int32{0, 5, 7}, Cnt: []int64{3, 1, 2}, Sum: []int64{5, 5, 14}, At: 1}
	k2 := kernels.Classes{Off: []int32{0, 1, 3, 4}, Val: []int32{2, 4, 9, 1}, Cnt: []int64{1, 2, 1, 1}, Sum: []int64{2, 13, 9, 1}, At: 2}
	base := []int32{3, 0, 6, 1, 8, 2, 4}
	want := make([]int64, len(base))
	wantE, wantEvals := kernels.Residues(want, []kernels.Classes{k1, k2}, base, 1, 9, make([]int64, kernels.ResiduesScratch(2)))
	setup := func(t *testing.T, mod1 int32, off1 uint32) api.Module {
		g := newGuest(t)
		tab := []int32{mod1, 1, int32(off1), 1100, 1200, 1300, 0, 0, 3, 2, 1400, 1500, 1600, 1700, 0, 0}
		put(g, 0, unsafe.Pointer(&tab[0]), 4*len(tab))
		put(g, 1000, unsafe.Pointer(&k1.Off[0]), 12)
		put(g, 1100, unsafe.Pointer(&k1.Val[0]), 12)
		put(g, 1200, unsafe.Pointer(&k1.Cnt[0]), 24)
		put(g, 1300, unsafe.Pointer(&k1.Sum[0]), 24)
		put(g, 1400, unsafe.Pointer(&k2.Off[0]), 16)
		put(g, 1500, unsafe.Pointer(&k2.Val[0]), 16)
		put(g, 1600, unsafe.Pointer(&k2.Cnt[0]), 32)
		put(g, 1700, unsafe.Pointer(&k2.Sum[0]), 32)
		put(g, 2000, unsafe.Pointer(&base[0]), 4*len(base))
		return g
	}
	call := func(g api.Module, dst uint64) error {
		_, err := g.ExportedFunction("residues").Call(ctx, 0, 2, 2000, uint64(len(base)), 1, 9, 4000, dst, 8192)
		return err
	}
	g := setup(t, 2, 1000)
	if err := call(g, 3000); err != nil {
		t.Fatal(err)
	}
	raw, _ := g.Memory().Read(3000, uint32(8*len(base)))
	got := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), len(base))
	out, _ := g.Memory().Read(8192, 16)
	res := unsafe.Slice((*int64)(unsafe.Pointer(&out[0])), 2)
	if res[0] != wantE || res[1] != wantEvals {
		t.Errorf("residues = (%d, %d evals), want (%d, %d)", res[0], res[1], wantE, wantEvals)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("residues dst[%d] = %d, want %d", i, got[i], want[i])
		}
	}
	for _, tc := range []struct {
		name string
		mod  int32
		off  uint32
		want string
	}{
		{"offsets past the memory", 2, page - 8, "outside the module's memory"},
		{"modulus past the classes", 1 << 20, 1000, "outside the module's memory"},
		{"entries past the memory", 2, 1000, "outside the module's memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := setup(t, tc.mod, tc.off)
			if tc.name == "entries past the memory" {
				g.Memory().WriteUint32Le(1008, 1<<20) // off = {0, 2, 2^20}
			}
			if err := call(g, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestHostWindows checks the host's window scan on runs written in the
// guest's memory (runs that wrap, from0 > 0), and that bad lengths, runs
// off the circle and blocks outside the memory fail the guest's call.
func TestHostWindows(t *testing.T) {
	ctx := context.Background()
	const page = 65536
	m := 50
	psi := make([]int64, m)
	for i := range psi {
		psi[i] = int64(i*i%17) - 5
	}
	runs := []kernels.Run{{Start: 45, Len: 9, N: 3}, {Start: 0, Len: 50, N: -1}, {Start: 20, Len: 1, N: 7}}
	k, from0 := 30, 12
	want := make([]int64, k)
	for s := range want {
		want[s] = int64(s)
	}
	x0 := int64(-3) << 33 // both halves matter
	kernels.Windows(want, x0, psi, runs, from0, make([]int64, kernels.WindowsScratch(m)))
	// out at 0, psi at 1024, runs at 2048, pre at 4096.
	setup := func(t *testing.T) api.Module {
		g := newGuest(t)
		out := make([]int64, k)
		for s := range out {
			out[s] = int64(s)
		}
		g.Memory().Write(0, unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 8*k))
		g.Memory().Write(1024, unsafe.Slice((*byte)(unsafe.Pointer(&psi[0])), 8*m))
		g.Memory().Write(2048, unsafe.Slice((*byte)(unsafe.Pointer(&runs[0])), 16*len(runs)))
		return g
	}
	call := func(g api.Module, args ...uint64) error {
		_, err := g.ExportedFunction("windows").Call(ctx, args...)
		return err
	}
	g := setup(t)
	if err := call(g, 0, uint64(k), uint64(uint32(x0)), uint64(uint64(x0)>>32), 1024, uint64(m), 2048, uint64(len(runs)), uint64(from0), 4096); err != nil {
		t.Fatal(err)
	}
	raw, _ := g.Memory().Read(0, uint32(8*k))
	got := unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), k)
	for s := range want {
		if got[s] != want[s] {
			t.Fatalf("windows out[%d] = %d, want %d", s, got[s], want[s])
		}
	}
	neg := uint64(uint32(0xffffffff))
	for _, tc := range []struct {
		name string
		args []uint64 // out, k, x0lo, x0hi, psi, m, runs, r, from0, pre
		want string
	}{
		{"empty circle", []uint64{0, 0, 0, 0, 1024, 0, 2048, 1, 0, 4096}, "length below 1"},
		{"negative shifts", []uint64{0, neg, 0, 0, 1024, 50, 2048, 1, 0, 4096}, "length below 1"},
		{"negative runs", []uint64{0, 3, 0, 0, 1024, 50, 2048, neg, 0, 4096}, "length below 1"},
		{"from0 past the circle", []uint64{0, 3, 0, 0, 1024, 50, 2048, 1, 50, 4096}, "shifts outside"},
		{"more shifts than the circle", []uint64{0, 51, 0, 0, 1024, 50, 2048, 1, 0, 4096}, "shifts outside"},
		{"run past the circle", []uint64{0, 3, 0, 0, 1024, 40, 2048, 1, 0, 4096}, "run outside the circle"},
		{"runs misaligned", []uint64{0, 3, 0, 0, 1024, 50, 2052, 1, 0, 4096}, "not 8-aligned"},
		{"runs past the memory", []uint64{0, 3, 0, 0, 1024, 50, page - 16, 2, 0, 4096}, "outside the module's memory"},
		{"scratch past the memory", []uint64{0, 3, 0, 0, 1024, 50, 2048, 1, 0, page - 800}, "outside the module's memory"},
		{"psi past the memory", []uint64{0, 3, 0, 0, page - 8, 50, 2048, 1, 0, 4096}, "outside the module's memory"},
		{"out past the memory", []uint64{page - 8, 3, 0, 0, 1024, 50, 2048, 1, 0, 4096}, "outside the module's memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := call(setup(t), tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("windows%v: error %v, want one containing %q", tc.args, err, tc.want)
			}
		})
	}
}
