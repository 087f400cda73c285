//go:build wasip1

package main

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/abi"
)

// instance is the module's state. An instance runs one export at a time
// (a WebAssembly instance is single-threaded), so it needs no locking.
var instance = struct {
	arena    abi.Arena
	searcher abi.Searcher
	session  *orrery.Session // the stateful operations' handles, one table per instance
	response []byte          // the last call's response, alive until the next call
}{session: orrery.NewSession()}

//go:wasmexport abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport alloc
func alloc(size int32) (ptr uint32) {
	defer func() {
		if recover() != nil {
			ptr = 0
		}
	}()
	return uint32(instance.arena.Alloc(int(size)))
}

//go:wasmexport free
func free(ptr uint32) (code int32) {
	defer func() {
		if recover() != nil {
			code = 1
		}
	}()
	if instance.arena.Free(uintptr(ptr)) {
		return 0
	}
	return 1
}

//go:wasmexport call
func call(ptr, n uint32) (packed uint64) {
	defer func() {
		if p := recover(); p != nil {
			instance.response = orrery.ErrorEnvelope(orrery.CodeInternal, fmt.Sprintf("abi: panic: %v", p))
			packed = pack(instance.response)
		}
	}()
	instance.response = nil // let the previous response go before the next one is built
	req, ok := instance.arena.Bytes(uintptr(ptr), int(n))
	if !ok {
		instance.response = orrery.ErrorEnvelope(orrery.CodeInvalid, fmt.Sprintf("abi: request [%d, %d+%d) is not inside a block from alloc", ptr, ptr, n))
	} else {
		instance.response = instance.session.Handle(context.Background(), req)
	}
	return pack(instance.response)
}

//go:wasmexport link_search
func linkSearch(k int32, periods, demand uint32, capacity int32, fixed, options, shifts, result uint32) (code int32) {
	defer func() {
		if recover() != nil {
			code = int32(abi.Internal)
		}
	}()
	a := &instance.arena
	res, ok := a.Result(uintptr(result))
	if !ok || k < 0 {
		return int32(abi.BadPointer)
	}
	ps, ok1 := a.Int32s(uintptr(periods), int(k))
	out, ok2 := a.Int32s(uintptr(shifts), int(k))
	if !ok1 || !ok2 {
		return int32(abi.BadPointer)
	}
	var fx []int32
	if fixed != 0 {
		if fx, ok = a.Int32s(uintptr(fixed), int(k)); !ok {
			return int32(abi.BadPointer)
		}
		if fx == nil {
			fx = []int32{} // k == 0 with a fixed array: the searcher reports no jobs
		}
	}
	var opt *abi.LinkOptions
	if options != 0 {
		if opt, ok = a.Options(uintptr(options)); !ok {
			return int32(abi.BadPointer)
		}
	}
	total := abi.DemandLen(ps)
	var ds []int32
	if total >= 0 {
		if ds, ok = a.Int32s(uintptr(demand), total); !ok {
			return int32(abi.BadPointer)
		}
	}
	return int32(instance.searcher.Search(ps, ds, capacity, fx, opt, out, res))
}

// pack returns b's address and length as the i64 call returns.
func pack(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | uint64(len(b))
}
