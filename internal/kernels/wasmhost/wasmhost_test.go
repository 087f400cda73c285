package wasmhost_test

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/orrery/orrery/internal/kernels"
	"github.com/orrery/orrery/internal/kernels/wasmhost"
)

// guestModule is a guest of one memory page that imports excess and
// rotations from orrery_kernels and exports them as they are, so a test
// can pass any arguments (a Go module passes only valid ones).
func guestModule() []byte {
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	sec := func(id byte, body ...[]byte) []byte {
		var b []byte
		for _, p := range body {
			b = append(b, p...)
		}
		return append([]byte{id, byte(len(b))}, b...)
	}
	i32 := byte(0x7f)
	types := sec(1, []byte{2, 0x60, 4, i32, i32, i32, i32, 1, 0x7e, 0x60, 7, i32, i32, i32, i32, i32, i32, i32, 0})
	imports := sec(2, []byte{2}, str("orrery_kernels"), str("excess"), []byte{0, 0}, str("orrery_kernels"), str("rotations"), []byte{0, 1})
	funcs := sec(3, []byte{2, 0, 1})
	memory := sec(5, []byte{1, 0, 1})
	exports := sec(7, []byte{3}, str("memory"), []byte{2, 0}, str("excess"), []byte{0, 2}, str("rotations"), []byte{0, 3})
	body := func(params, callee byte) []byte {
		b := []byte{0} // no locals
		for p := range params {
			b = append(b, 0x20, p) // local.get p
		}
		b = append(b, 0x10, callee, 0x0b) // call, end
		return append([]byte{byte(len(b))}, b...)
	}
	code := sec(10, []byte{2}, body(4, 0), body(7, 1))
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	for _, s := range [][]byte{types, imports, funcs, memory, exports, code} {
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
