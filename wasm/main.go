// Command wasm is orrery's WebAssembly module: a WASI preview 1 reactor that
// exports ABI v1 (package wasm/abi documents it in full):
//
//	abi_version() -> i32                      1
//	alloc(size i32) -> ptr i32                a zeroed 8-aligned block, 0 if refused
//	free(ptr i32) -> i32                      0, or 1 if ptr is not a live block
//	call(ptr i32, len i32) -> i64             schema-v1 envelope in, response envelope out (ptr<<32 | len)
//	link_search(k, periods, demand, capacity, fixed, options, shifts, result i32) -> i32
//
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o orrery.wasm ./wasm
//
// or with wasm/build.sh (make wasm), which then shrinks it with binaryen's
// wasm-opt -Oz when that is installed (the same exports and answers).
//
// call answers exactly what an orrery.Session answers natively, so every
// operation of the schema ("cassini.link", "cassini.rank",
// "shockwave.plan", "shockwave.predict", the stateful
// "shockwave.scheduler.*", and any added later) works through it
// unchanged. The instance is the session: its scheduler handles live as
// long as it does.
// Every pointer is checked against the blocks alloc handed out before it is
// used, every export recovers panics, and nothing an answer depends on
// comes from the host (no clock, no randomness) except a request's
// "time_limit_ms": hosts that need the same answer everywhere use "budget".
//
// Built for any other platform this is an empty program, so that go build
// ./... and go vet ./... cover the package.
package main

func main() {}
