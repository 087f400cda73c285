// Command c is orrery's C shared library: the WebAssembly module's ABI v1
// (package wasm/abi) with native pointers, for C and C++ schedulers and for
// Python's ctypes (bindings/python). Its interface is declared in orrery.h
// next to this file; build it with
//
//	go build -buildmode=c-shared -trimpath -o liborrery.so ./bindings/c
//
// orrery_call returns exactly what orrery.Handle returns for the same
// envelope, and orrery_link_search is abi.Searcher on the caller's arrays.
// Every function may be called from several threads at once.
package main

/*
#include <stdlib.h>
#define ORRERY_BUILDING_LIBRARY
#include "orrery.h"
*/
import "C"

import (
	"context"
	"sync"
	"unsafe"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/abi"
)

func main() {}

//export orrery_abi_version
func orrery_abi_version() C.int32_t { return abi.Version }

// maxLen bounds the length orrery_call turns into a slice; anything past
// orrery.MaxRequestBytes is refused unread anyway.
const maxLen = 1 << 40

//export orrery_call
func orrery_call(req *C.char, n C.size_t, outLen *C.size_t) *C.char {
	var resp []byte
	switch {
	case n == 0:
		resp = orrery.Handle(context.Background(), nil)
	case req == nil:
		resp = orrery.ErrorEnvelope(orrery.CodeInvalid, "abi: request is NULL with a non-zero length")
	default:
		// Past maxLen, report a length orrery.Handle refuses just as well.
		l := uint64(n)
		if l > maxLen {
			l = maxLen
		}
		resp = orrery.Handle(context.Background(), unsafe.Slice((*byte)(unsafe.Pointer(req)), l))
	}
	out := (*byte)(C.malloc(C.size_t(len(resp) + 1)))
	if out == nil {
		return nil
	}
	b := unsafe.Slice(out, len(resp)+1)
	copy(b, resp)
	b[len(resp)] = 0
	if outLen != nil {
		*outLen = C.size_t(len(resp))
	}
	return (*C.char)(unsafe.Pointer(out))
}

//export orrery_free
func orrery_free(p unsafe.Pointer) { C.free(p) }

// searchers keeps one abi.Searcher per concurrent caller; a warm one
// searches without allocating.
var searchers = sync.Pool{New: func() any { return new(abi.Searcher) }}

//export orrery_link_search
func orrery_link_search(k C.int32_t, periods, demand *C.int32_t, capacity C.int32_t, fixed *C.int32_t,
	options *C.orrery_link_options, shifts *C.int32_t, result *C.orrery_link_result) C.int32_t {
	if result == nil {
		return C.int32_t(abi.BadPointer)
	}
	res := (*abi.LinkResult)(unsafe.Pointer(result))
	if k < 0 || (k > 0 && (periods == nil || shifts == nil)) {
		*res = abi.LinkResult{}
		copy(res.Message[:], "abi: k is negative, or periods or shifts is NULL\x00")
		return C.int32_t(abi.BadPointer)
	}
	ps := unsafe.Slice((*int32)(unsafe.Pointer(periods)), int(k))
	total := abi.DemandLen(ps)
	var ds []int32
	if total > 0 {
		if demand == nil {
			*res = abi.LinkResult{}
			copy(res.Message[:], "abi: demand is NULL\x00")
			return C.int32_t(abi.BadPointer)
		}
		ds = unsafe.Slice((*int32)(unsafe.Pointer(demand)), total)
	}
	var fx []int32
	if fixed != nil {
		fx = unsafe.Slice((*int32)(unsafe.Pointer(fixed)), int(k))
	}
	s := searchers.Get().(*abi.Searcher)
	defer searchers.Put(s)
	return C.int32_t(s.Search(ps, ds, int32(capacity), fx, (*abi.LinkOptions)(unsafe.Pointer(options)),
		unsafe.Slice((*int32)(unsafe.Pointer(shifts)), int(k)), res))
}
