package orrerywasm

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/orrery/orrery/kernels"
)

// TestModuleInterface checks both builds' exports and imports, signatures
// included: ABI v1's functions and the memory, nothing else exported, and
// imports from WASI and (the default build only) the kernels module. Run
// on the modules make wasm ships (make crosscheck sets ORRERY_WASM and
// ORRERY_WASM_PORTABLE), it checks that wasm-opt kept the interface.
func TestModuleInterface(t *testing.T) {
	ctx := context.Background()
	b, pb := bothModules(t)
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	want := map[string]string{
		"_initialize": sig(nil, nil),
		"abi_version": sig(nil, []api.ValueType{i32}),
		"alloc":       sig([]api.ValueType{i32}, []api.ValueType{i32}),
		"free":        sig([]api.ValueType{i32}, []api.ValueType{i32}),
		"call":        sig([]api.ValueType{i32, i32}, []api.ValueType{i64}),
		"link_search": sig([]api.ValueType{i32, i32, i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}),
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for _, tc := range []struct {
		name    string
		bytes   []byte
		imports []string
	}{
		{"default", b, []string{kernels.ImportModule, "wasi_snapshot_preview1"}},
		{"purego", pb, []string{"wasi_snapshot_preview1"}},
	} {
		compiled, err := rt.CompileModule(ctx, tc.bytes)
		if err != nil {
			t.Fatalf("%s build: %v", tc.name, err)
		}
		got := map[string]string{}
		for name, f := range compiled.ExportedFunctions() {
			got[name] = sig(f.ParamTypes(), f.ResultTypes())
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s build: exported functions (-want +got):\n%s", tc.name, d)
		}
		var mems []string
		for name := range compiled.ExportedMemories() {
			mems = append(mems, name)
		}
		if d := cmp.Diff([]string{"memory"}, mems); d != "" {
			t.Errorf("%s build: exported memories (-want +got):\n%s", tc.name, d)
		}
		var mods []string
		for _, f := range compiled.ImportedFunctions() {
			if mod, _, _ := f.Import(); !slices.Contains(mods, mod) {
				mods = append(mods, mod)
			}
		}
		slices.Sort(mods)
		if d := cmp.Diff(tc.imports, mods); d != "" {
			t.Errorf("%s build: modules imported from (-want +got):\n%s", tc.name, d)
		}
	}
}

// sig spells a function type as "(i32, i32) -> (i64)".
func sig(params, results []api.ValueType) string {
	s := "("
	for i, p := range params {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(p)
	}
	s += ") -> ("
	for i, r := range results {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(r)
	}
	return s + ")"
}
