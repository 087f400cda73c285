// Package wasmhost provides orrery's kernels to its WebAssembly module in a
// wazero runtime: the host module [kernels.ImportModule] ("orrery_kernels")
// whose functions run the kernels natively (AVX-512 or AVX2 where the CPU
// has them) on the calling module's memory.
//
// A wasip1 build of the engine imports its kernels (see package kernels);
// instantiate this module in the runtime before instantiating such a
// build. Builds with the purego tag import nothing and ignore it.
//
// Each call reads the caller's memory afresh (a view taken once would go
// stale when the memory grows), checks that every block lies inside it
// and the kernel's contract on lengths and shifts, and panics otherwise,
// which wazero turns into an error of the guest's call: a guest cannot
// make the host read outside its memory.
package wasmhost

import (
	"context"
	"encoding/binary"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/orrery/orrery/kernels"
)

// Instantiate instantiates the kernel host module in r, under the name
// kernels.ImportModule. Close the returned module (or r) when done.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	return r.NewHostModuleBuilder(kernels.ImportModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(excess), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i64}).
		WithParameterNames("a", "b", "n", "c").
		Export("excess").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(rotations), []api.ValueType{i32, i32, i32, i32, i32, i32, i32}, nil).
		WithParameterNames("dst", "base", "rotor", "n", "c", "s0", "m").
		Export("rotations").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(excessSlack), []api.ValueType{i32, i32, i32, i32}, nil).
		WithParameterNames("a", "n", "c", "out").
		Export("excess_slack").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(addRotated), []api.ValueType{i32, i32, i32, i32}, nil).
		WithParameterNames("dst", "tile", "n", "t").
		Export("add_rotated").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(foldDelta), []api.ValueType{i32, i32, i32, i32, i32, i32}, nil).
		WithParameterNames("psi", "m", "base", "n", "v", "c").
		Export("fold_delta").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(residues), []api.ValueType{i32, i32, i32, i32, i32, i32, i32, i32, i32}, nil).
		WithParameterNames("tab", "m", "base", "n", "v", "c", "lv", "dst", "out").
		Export("residues").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(windows), []api.ValueType{i32, i32, i32, i32, i32, i32, i32, i32, i32, i32}, nil).
		WithParameterNames("out", "k", "x0lo", "x0hi", "psi", "m", "runs", "r", "from0", "pre").
		Export("windows").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(place), []api.ValueType{i32, i32, i32, i32, i32, i32, i32}, nil).
		WithParameterNames("dst", "base", "tile", "n", "t", "c", "out").
		Export("place").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(below), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("a", "n", "xlo", "xhi").
		Export("below").
		Instantiate(ctx)
}

// excess is excess(a, b *int32, n, c i32) -> i64.
func excess(_ context.Context, m api.Module, stack []uint64) {
	a, b, n, c := uint32(stack[0]), uint32(stack[1]), api.DecodeI32(stack[2]), api.DecodeI32(stack[3])
	if n < 0 {
		panic("orrery_kernels.excess: negative length")
	}
	mem := m.Memory()
	av, bv := int32s(mem, a, int(n)), int32s(mem, b, int(n))
	stack[0] = uint64(kernels.Excess(av, bv, checkValue(c)))
}

// rotations is rotations(dst *int64, base, rotor *int32, n, c, s0, m i32).
func rotations(_ context.Context, mod api.Module, stack []uint64) {
	dst, base, rotor := uint32(stack[0]), uint32(stack[1]), uint32(stack[2])
	n, c := int(api.DecodeI32(stack[3])), api.DecodeI32(stack[4])
	s0, m := int(api.DecodeI32(stack[5])), int(api.DecodeI32(stack[6]))
	if n < 1 || s0 < 0 || s0 >= n || m < 1 || m > n-s0 {
		panic("orrery_kernels.rotations: shifts outside [0, n)")
	}
	mem := mod.Memory()
	out := int64s(mem, dst, m)
	kernels.Rotations(out, int32s(mem, base, n), int32s(mem, rotor, kernels.RotorLen(n)), checkValue(c), s0)
	store64(mem, dst, out)
}

// excessSlack is excess_slack(a *int32, n, c i32, out *int64).
func excessSlack(_ context.Context, m api.Module, stack []uint64) {
	a, n, c, out := uint32(stack[0]), int(api.DecodeI32(stack[1])), api.DecodeI32(stack[2]), uint32(stack[3])
	if n < 1 {
		panic("orrery_kernels.excess_slack: length below 1")
	}
	mem := m.Memory()
	res := int64s(mem, out, 2)
	res[0], res[1] = kernels.ExcessSlack(int32s(mem, a, n), checkValue(c))
	store64(mem, out, res)
}

// addRotated is add_rotated(dst, tile *int32, n, t i32).
func addRotated(_ context.Context, m api.Module, stack []uint64) {
	dst, tile, n, t := uint32(stack[0]), uint32(stack[1]), int(api.DecodeI32(stack[2])), int(api.DecodeI32(stack[3]))
	if n < 1 || t < 0 || t >= n {
		panic("orrery_kernels.add_rotated: shift outside [0, n)")
	}
	mem := m.Memory()
	d := int32s(mem, dst, n)
	kernels.AddRotated(d, int32s(mem, tile, n), t)
	store32(mem, dst, d)
}

// foldDelta is fold_delta(psi *int64, m i32, base *int32, n, v, c i32).
func foldDelta(_ context.Context, mod api.Module, stack []uint64) {
	psi, m, base := uint32(stack[0]), int(api.DecodeI32(stack[1])), uint32(stack[2])
	n, v, c := int(api.DecodeI32(stack[3])), api.DecodeI32(stack[4]), api.DecodeI32(stack[5])
	if m < 1 || n < 1 {
		panic("orrery_kernels.fold_delta: length below 1")
	}
	mem := mod.Memory()
	p := int64s(mem, psi, m)
	kernels.FoldDelta(p, int32s(mem, base, n), checkValue(v), checkValue(c))
	store64(mem, psi, p)
}

// maxStack is the most class structures whose walk scratch the host keeps
// on its stack (a link of that many class jobs is far past any the search
// lays out in classes).
const maxStack = 16

// residues is residues(tab *int32, m i32, base *int32, n, v, c i32, lv,
// dst, out *int64). The host walks with scratch of its own and leaves lv
// alone; tab's rows are read, not written.
func residues(_ context.Context, mod api.Module, stack []uint64) {
	tab, m, base := uint32(stack[0]), int(api.DecodeI32(stack[1])), uint32(stack[2])
	n, v, c := int(api.DecodeI32(stack[3])), api.DecodeI32(stack[4]), api.DecodeI32(stack[5])
	dst, out := uint32(stack[7]), uint32(stack[8])
	if m < 1 || n < 1 || m >= 1<<20 {
		panic("orrery_kernels.residues: length below 1")
	}
	mem := mod.Memory()
	rows := int32s(mem, tab, kernels.ResidueRow*m)
	var clsBuf [maxStack]kernels.Classes
	var scrBuf [8*maxStack + 4]int64
	cls, scratch := clsBuf[:0], scrBuf[:]
	if m > maxStack {
		cls, scratch = make([]kernels.Classes, 0, m), make([]int64, kernels.ResiduesScratch(m))
	}
	for l := range m {
		row := rows[kernels.ResidueRow*l:]
		k := int(row[0])
		if k < 1 || k >= 1<<28 {
			panic("orrery_kernels.residues: modulus below 1")
		}
		off := int32s(mem, uint32(row[2]), k+1)
		e := int(off[k])
		cls = append(cls, kernels.Classes{
			Off: off, At: int(row[1]),
			Val: int32s(mem, uint32(row[3]), e),
			Cnt: int64s(mem, uint32(row[4]), e),
			Sum: int64s(mem, uint32(row[5]), e),
		})
	}
	var d []int64
	if dst != 0 {
		d = int64s(mem, dst, n)
	}
	res := int64s(mem, out, 2)
	res[0], res[1] = kernels.Residues(d, cls, int32s(mem, base, n), checkValue(v), checkValue(c), scratch)
	if d != nil {
		store64(mem, dst, d)
	}
	store64(mem, out, res)
}

// windows is windows(out *int64, k, x0lo, x0hi i32, psi *int64, m i32,
// runs *int32, r, from0 i32, pre *int64); kernels.Windows refuses runs off
// the circle.
func windows(_ context.Context, mod api.Module, stack []uint64) {
	out, k := uint32(stack[0]), int(api.DecodeI32(stack[1]))
	x0 := int64(uint32(stack[2])) | int64(uint32(stack[3]))<<32
	psi, m := uint32(stack[4]), int(api.DecodeI32(stack[5]))
	runs, r, from0, pre := uint32(stack[6]), int(api.DecodeI32(stack[7])), int(api.DecodeI32(stack[8])), uint32(stack[9])
	if m < 1 || m >= 1<<28 || k < 0 || r < 0 {
		panic("orrery_kernels.windows: length below 1")
	}
	if from0 < 0 || from0 >= m || k > m {
		panic("orrery_kernels.windows: shifts outside [0, m)")
	}
	mem := mod.Memory()
	o, p := int64s(mem, out, k), int64s(mem, pre, kernels.WindowsScratch(m))
	kernels.Windows(o, x0, int64s(mem, psi, m), runsAt(mem, runs, r), from0, p)
	store64(mem, out, o)
	store64(mem, pre, p)
}

// place is place(dst, base, tile *int32, n, t, c i32, out *int64).
func place(_ context.Context, m api.Module, stack []uint64) {
	dst, base, tile := uint32(stack[0]), uint32(stack[1]), uint32(stack[2])
	n, t, c, out := int(api.DecodeI32(stack[3])), int(api.DecodeI32(stack[4])), api.DecodeI32(stack[5]), uint32(stack[6])
	if n < 1 || t < 0 || t >= n {
		panic("orrery_kernels.place: shift outside [0, n)")
	}
	mem := m.Memory()
	d := int32s(mem, dst, n)
	res := int64s(mem, out, 2)
	res[0], res[1] = kernels.Place(d, int32s(mem, base, n), int32s(mem, tile, n), t, checkValue(c))
	store32(mem, dst, d)
	store64(mem, out, res)
}

// below is below(a *int64, n, xlo, xhi i32) -> i32.
func below(_ context.Context, m api.Module, stack []uint64) {
	a, n := uint32(stack[0]), int(api.DecodeI32(stack[1]))
	x := int64(uint32(stack[2])) | int64(uint32(stack[3]))<<32
	if n < 1 {
		panic("orrery_kernels.below: length below 1")
	}
	stack[0] = uint64(kernels.Below(int64s(m.Memory(), a, n), x))
}

// runsAt returns n kernels.Runs of mem at off (16 bytes each, 8-aligned),
// as int64s does.
func runsAt(mem api.Memory, off uint32, n int) []kernels.Run {
	if n == 0 {
		return nil
	}
	if off%8 != 0 {
		panic("orrery_kernels.windows: runs not 8-aligned")
	}
	if n >= 1<<27 { // 16n must not wrap the uint32 Read takes
		panic("orrery_kernels: block outside the module's memory")
	}
	b, ok := mem.Read(off, uint32(16*n))
	if !ok {
		panic("orrery_kernels: block outside the module's memory")
	}
	if littleEndian {
		return unsafe.Slice((*kernels.Run)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	v := make([]kernels.Run, n)
	for i := range v {
		x := b[16*i:]
		v[i] = kernels.Run{Start: int32(binary.LittleEndian.Uint32(x)), Len: int32(binary.LittleEndian.Uint32(x[4:])),
			N: int64(binary.LittleEndian.Uint64(x[8:]))}
	}
	return v
}

// checkValue panics unless c is a valid threshold: values past the range
// cannot make a kernel read out of bounds, but they are a broken guest.
func checkValue(c int32) int32 {
	if c < 0 || c > kernels.MaxValue {
		panic("orrery_kernels: threshold outside [0, MaxValue]")
	}
	return c
}

// littleEndian reports whether the host's int32s have WebAssembly's byte
// order, so the kernels can read the memory in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// int32s returns n int32s of mem at off: a view of the memory on a
// little-endian host (int32s the guest stores are 4-aligned), else a copy.
func int32s(mem api.Memory, off uint32, n int) []int32 {
	if n == 0 {
		return nil
	}
	if n < 0 || n >= 1<<30 { // 4n must not wrap the uint32 Read takes
		panic("orrery_kernels: block outside the module's memory")
	}
	b, ok := mem.Read(off, uint32(4*n))
	if !ok {
		panic("orrery_kernels: block outside the module's memory")
	}
	if littleEndian {
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// int64s returns n int64s of mem at off, as int32s does (8-aligned).
func int64s(mem api.Memory, off uint32, n int) []int64 {
	if n < 0 || n >= 1<<29 { // 8n must not wrap the uint32 Read takes
		panic("orrery_kernels: block outside the module's memory")
	}
	b, ok := mem.Read(off, uint32(8*n))
	if !ok {
		panic("orrery_kernels: block outside the module's memory")
	}
	if littleEndian {
		return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// store32 writes v back to mem at off where int32s made a copy.
func store32(mem api.Memory, off uint32, v []int32) {
	if littleEndian {
		return
	}
	b, _ := mem.Read(off, uint32(4*len(v)))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
}

// store64 writes v back to mem at off where int64s made a copy.
func store64(mem api.Memory, off uint32, v []int64) {
	if littleEndian {
		return
	}
	b, _ := mem.Read(off, uint32(8*len(v)))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
}
