// Command c is orrery's C shared library: the WebAssembly module's ABI v1
// (package wasm/abi) with native pointers, for C and C++ schedulers and for
// Python's ctypes (bindings/python). Its interface is declared in orrery.h
// next to this file; build it with
//
//	go build -buildmode=c-shared -trimpath -o liborrery.so ./bindings/c
//
// orrery_call returns exactly what an orrery.Session returns for the same
// envelope (the library's default session, where the stateful operations'
// handles live); orrery_session_new gives a session of its own, for a
// caller that wants its handles apart. orrery_link_search is abi.Searcher
// on the caller's arrays. Every function may be called from several
// threads at once.
package main

/*
#include <stdlib.h>
#define ORRERY_BUILDING_LIBRARY
#include "orrery.h"
*/
import "C"

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/abi"
)

func main() {}

//export orrery_abi_version
func orrery_abi_version() C.int32_t { return abi.Version }

// sessions are the sessions orrery_session_new handed out, by number; 0
// is the default session of orrery_call.
var sessions = struct {
	sync.Mutex
	next uint64
	m    map[uint64]*orrery.Session
}{m: map[uint64]*orrery.Session{0: orrery.NewSession()}}

// maxSessions bounds the sessions open at once.
const maxSessions = 1 << 16

//export orrery_session_new
func orrery_session_new() C.orrery_session {
	sessions.Lock()
	defer sessions.Unlock()
	if len(sessions.m) > maxSessions {
		return 0
	}
	sessions.next++
	sessions.m[sessions.next] = orrery.NewSession()
	return C.orrery_session(sessions.next)
}

//export orrery_session_free
func orrery_session_free(s C.orrery_session) {
	if s == 0 {
		return
	}
	sessions.Lock()
	defer sessions.Unlock()
	delete(sessions.m, uint64(s))
}

//export orrery_call
func orrery_call(req *C.char, n C.size_t, outLen *C.size_t) *C.char {
	return orrery_session_call(0, req, n, outLen)
}

//export orrery_session_call
func orrery_session_call(sn C.orrery_session, req *C.char, n C.size_t, outLen *C.size_t) *C.char {
	sessions.Lock()
	s := sessions.m[uint64(sn)]
	sessions.Unlock()
	var resp []byte
	switch {
	case s == nil:
		resp = orrery.ErrorEnvelope(orrery.CodeInvalid, "abi: the session is not open (orrery_session_new)")
	case n == 0:
		resp = s.Handle(context.Background(), nil)
	case req == nil:
		resp = orrery.ErrorEnvelope(orrery.CodeInvalid, "abi: request is NULL with a non-zero length")
	case uint64(n) > orrery.MaxRequestBytes:
		// Refused unread, with the length the caller gave (SIZE_MAX was
		// once reported as the 2^40 it was clamped to).
		resp = orrery.ErrorEnvelope(orrery.CodeLimit, fmt.Sprintf("request is %d bytes, above the %d byte limit", uint64(n), orrery.MaxRequestBytes))
	default:
		resp = s.Handle(context.Background(), unsafe.Slice((*byte)(unsafe.Pointer(req)), int(n)))
	}
	return cString(resp, outLen)
}

// cString copies resp into malloc'ed memory, NUL-terminated.
func cString(resp []byte, outLen *C.size_t) *C.char {
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
