// Package abi defines version 1 of the binary interface orrery's
// WebAssembly module (package wasm) and C shared library (bindings/c)
// export, and implements the parts both share: the block table that checks
// every pointer a host passes, and the flat numeric rotation search.
//
// # The module
//
// The module is a WASI preview 1 reactor built from package wasm with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o orrery.wasm ./wasm
//
// A host instantiates it with the wasi_snapshot_preview1 imports, calls
// _initialize once, and then the exports below. An instance is
// single-threaded: a host that calls from several threads keeps one
// instance per thread (the Go binding keeps a pool).
//
//	abi_version() -> i32
//	alloc(size i32) -> ptr i32
//	free(ptr i32) -> i32
//	call(ptr i32, len i32) -> i64
//	link_search(k i32, periods i32, demand i32, capacity i32, fixed i32, options i32, shifts i32, result i32) -> i32
//
// abi_version returns [Version]. A host checks it before anything else.
//
// alloc returns a fresh, zeroed, 8-byte-aligned block of size bytes in
// linear memory, or 0 when size is not in [1, [MaxBlock]] or when the live
// blocks would exceed [MaxLive] bytes or [MaxBlocks] blocks. free releases
// a block by its start and returns 0, or 1 (and does nothing) when ptr is
// not the start of a live block. Every pointer a host passes to call or
// link_search must lie, with its length, inside one live block; the module
// checks this before it reads or writes anything, so a wrong pointer is an
// error, never a trap or a write into the runtime's own memory.
//
// call runs one request envelope of schema v1 (package wire):
//
//	{"op": "cassini.link", "request": {...}}
//
// and returns the response envelope, byte for byte what an orrery.Session
// returns natively for the same bytes, packed as ptr<<32 | len. The
// instance is the session: the handles of the stateful operations
// ("shockwave.scheduler.new" and the rest) live in it, so a host keeps one
// instance for as long as it uses a handle. The response lives
// in module memory until the next call on the instance: read (copy) it
// before calling again, and do not free it. A request outside every live
// block gets an error envelope with code "invalid_argument" and a message
// starting "abi:". A host whose envelope is larger than [MaxBlock] (so it
// cannot be placed in memory) replies itself, with the error orrery.Handle
// gives every envelope over wire.MaxRequestBytes:
//
//	{"version":1,"error":{"code":"limit_exceeded","message":"request is N bytes, above the 67108864 byte limit"}}
//
// link_search is the flat fast path of "cassini.link" (package link) for
// callers that already hold quantized profiles: k jobs, their periods
// (k int32 ticks), their demands (the k profiles' per-tick demands, int32
// units, concatenated: sum of the periods values), the capacity in units,
// optional fixed shifts (k int32, -1 for a free job; 0 for none), optional
// options ([LinkOptions], 0 for defaults), and outputs: shifts (k int32
// ticks) and result ([LinkResult]). It returns a [Code]; on an error other
// than [BadPointer] the result's Message holds the reason. It keeps one
// link.Workspace per instance, so a warm instance searches without
// allocating. Exact searches of more than [MaxSearchCells] jobs times
// perimeter ticks are [Limit] errors, so that a search cannot outgrow a
// 32-bit memory.
//
// # Determinism
//
// Everything a result depends on comes in the request: the module reads no
// clock or random source that changes an answer. The one exception is a
// request's "time_limit_ms" (a wall-clock limit), under which the result
// depends on the host's speed; hosts that need reproducible answers bound
// the search with "budget" (pair evaluations) instead. link_search has no
// time limit.
//
// # Memory
//
// Linear memory only grows. Host views of it (a wazero Memory.Read slice, a
// JavaScript typed array over memory.buffer) go stale when it grows, which
// alloc and call may do; take a new view after each of them. A warm
// link_search does not grow memory.
//
// The module answers every input with a response or an error, with one
// limit it cannot check: a valid request whose search needs more memory
// than the host lets linear memory grow to (at most 4 GiB) ends the
// instance with a trap, as it would end a native process. Hosts discard an
// instance that trapped and start a new one (the bindings do).
package abi
