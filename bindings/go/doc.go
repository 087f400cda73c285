// Package orrerywasm hosts orrery's WebAssembly module (package wasm, ABI
// v1 in package wasm/abi) with wazero, and exposes the same calls as the
// native engine: [Module.Handle] is orrery.Handle, [Module.Call] is
// orrery.Call, [Module.Link], [Module.Rank], [Module.Plan] and
// [Module.Predict] take and return the front door's request and response
// types, [Module.Search] is link.Workspace.Search over the module's flat
// fast path, and [Module.NewScheduler] is orrery.NewScheduler: the
// stateful "shockwave.scheduler.*" operations behind a [Scheduler] with
// orrery.Scheduler's methods, in an instance of its own (a [Session]),
// since a handle lives in the instance that made it.
//
// Go programs normally link the engine directly; this package is for a Go
// host that wants the module itself: the byte-identical answers every other
// host (node, Python, a browser) gets, a sandbox with a memory limit around
// the engine, or a scheduler that loads a module built from another
// version of orrery.
//
// # Module bytes
//
// New takes the module's bytes; nothing is embedded. Build the module with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o orrery.wasm ./wasm
//
// (make wasm runs this through wasm/build.sh, which then shrinks it with
// binaryen's wasm-opt -Oz when installed). It is a build product of the engine's sources, reproducible
// with -trimpath, and rebuilt in seconds; a committed copy would go stale
// with every engine change, so the tests build it from the sources.
//
// # Kernels
//
// The module imports its integer kernels from the host module
// "orrery_kernels" (package kernels documents them). New
// instantiates that host module in its runtime, running them natively on
// each instance's memory (AVX-512 or AVX2 where the CPU has them), so the
// rotation search runs at native speed inside the sandbox. A module built
// with the purego tag imports none; New takes it too ([ImportsKernels]
// tells them apart). Both answer the same bytes.
//
// # Concurrency
//
// The module is compiled ahead of time with wazero's compiler (its
// interpreter on platforms the compiler does not support). A WebAssembly
// instance runs one call at a time. A [Module] keeps a pool of
// up to [Options.Instances] instances of one compiled module and is safe for
// concurrent use: each call takes an idle instance, or starts one (a few
// milliseconds), or waits for one. Compilation happens once, in [New]; pass
// a [wazero.CompilationCache] (for example one made with
// wazero.NewCompilationCacheWithDir) to share it across Modules and runs.
//
// # Failure
//
// Bad input is an error response, never a failure of the module. An
// instance that traps all the same (a search that needs more memory than
// the memory limit, or a bug) is discarded and replaced, and the call
// returns an error wrapping [ErrTrap].
package orrerywasm
