package orrerywasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/abi"
	"github.com/orrery/orrery/internal/wasmhost"
	"github.com/orrery/orrery/kernels"
)

// Options configure a [Module]. The zero value means the defaults.
type Options struct {
	// Instances is the most instances the pool keeps, so the most calls
	// that run at once; 0 means runtime.GOMAXPROCS(0).
	Instances int

	// Cache, if not nil, holds compiled code across Modules (and across
	// runs, when made with wazero.NewCompilationCacheWithDir). Compiling
	// the module takes one to a few seconds; from a warm directory cache,
	// New takes under 0.2 s.
	Cache wazero.CompilationCache

	// MemoryLimitPages caps each instance's linear memory in 64 KiB pages;
	// 0 means 16384 (1 GiB; at most 65536, the 4 GiB a 32-bit memory
	// holds). A request that needs more traps its instance, which is
	// replaced.
	MemoryLimitPages uint32

	// RecycleBytes bounds the memory an idle instance keeps: WebAssembly
	// memory never shrinks, so an instance that a large request grew past
	// RecycleBytes is closed after the call (its memory released) and a
	// fresh one is started when next needed. 0 means 64 MiB; negative
	// means never.
	//
	// The pool's memory is thus bounded: at most Instances instances, each
	// at most MemoryLimitPages·64 KiB while a call runs, and, between
	// calls, Instances·RecycleBytes in all (plus the compiled code, shared).
	RecycleBytes int64

	// CloseOnContextDone makes a call's context end a running call: the
	// instance is closed and replaced, and the call returns an error
	// wrapping ErrTrap. Off by default: it adds checks to the module's
	// loops, and a request bounded by "budget" ends on its own. (A
	// request's "time_limit_ms" returns the best answer found instead.)
	CloseOnContextDone bool

	// Stderr receives what the module's runtime writes when it fails
	// (a fatal error's message); nil discards it.
	Stderr io.Writer
}

// Module is orrery's WebAssembly module, compiled once, with a pool of
// instances. It is safe for concurrent use. Close it when done.
type Module struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	config   wazero.ModuleConfig
	idle     chan *instance
	slots    chan struct{} // one token per instance that may still be started
	recycle  uint64        // memory size past which a released instance is closed; 0 never
	closed   atomic.Bool
}

// Defaults of the zero Options.
const (
	DefaultMemoryLimitPages = 16384    // 1 GiB of linear memory per instance
	DefaultRecycleBytes     = 64 << 20 // an idle instance keeps at most this
)

// New compiles the module's bytes, checks that it speaks ABI version 1 by
// starting one instance, and returns the Module.
func New(ctx context.Context, wasm []byte, opt Options) (*Module, error) {
	n := opt.Instances
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	cfg := wazero.NewRuntimeConfig().WithCloseOnContextDone(opt.CloseOnContextDone)
	if opt.Cache != nil {
		cfg = cfg.WithCompilationCache(opt.Cache)
	}
	pages := opt.MemoryLimitPages
	if pages == 0 {
		pages = DefaultMemoryLimitPages
	}
	if pages > 65536 {
		return nil, fmt.Errorf("orrerywasm: MemoryLimitPages %d is above 65536 (4 GiB)", pages)
	}
	cfg = cfg.WithMemoryLimitPages(pages)
	var recycle uint64
	switch {
	case opt.RecycleBytes == 0:
		recycle = DefaultRecycleBytes
	case opt.RecycleBytes > 0:
		recycle = uint64(opt.RecycleBytes)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	// The module's kernels, natively (a purego build imports none).
	if _, err := wasmhost.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("%w: %v", ErrABI, err)
	}
	stderr := opt.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	m := &Module{
		rt:       rt,
		compiled: compiled,
		// Real clocks only matter to a request's time_limit_ms; no answer
		// depends on them otherwise. Names are empty so instances of the
		// same module can coexist.
		config: wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
			WithSysWalltime().WithSysNanotime().WithSysNanosleep().WithStderr(stderr),
		idle:    make(chan *instance, n),
		slots:   make(chan struct{}, n),
		recycle: recycle,
	}
	for range n - 1 {
		m.slots <- struct{}{}
	}
	in, err := m.instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	m.idle <- in
	return m, nil
}

// Close closes every instance and the runtime. Calls running meanwhile
// fail.
func (m *Module) Close(ctx context.Context) error {
	if m.closed.Swap(true) {
		return nil
	}
	return m.rt.Close(ctx)
}

var errClosed = errors.New("orrerywasm: module closed")

func (m *Module) instantiate(ctx context.Context) (*instance, error) {
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, m.config)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrABI, err)
	}
	in, err := newInstance(ctx, mod)
	if err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return in, nil
}

// acquire takes an idle instance, starts one if the pool has room, or
// waits.
func (m *Module) acquire(ctx context.Context) (*instance, error) {
	if m.closed.Load() {
		return nil, errClosed
	}
	select {
	case in := <-m.idle:
		return in, nil
	default:
	}
	select {
	case in := <-m.idle:
		return in, nil
	case <-m.slots:
		in, err := m.instantiate(ctx)
		if err != nil {
			m.slots <- struct{}{}
			return nil, err
		}
		return in, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// release returns in to the pool, or discards it when the call failed in
// a way that may have left it unusable or grew its memory past the
// recycling size.
func (m *Module) release(ctx context.Context, in *instance, err error) {
	if errors.Is(err, ErrTrap) || m.closed.Load() || (m.recycle > 0 && uint64(in.mem.Size()) > m.recycle) {
		in.mod.Close(context.WithoutCancel(ctx))
		m.slots <- struct{}{}
		return
	}
	m.idle <- in
}

// ABIVersion returns the module's ABI version (abi_version), through one
// instance of the pool: its cost is the per-call overhead of the binding.
func (m *Module) ABIVersion(ctx context.Context) (int32, error) {
	in, err := m.acquire(ctx)
	if err != nil {
		return 0, err
	}
	v, err := in.invoke(ctx, in.version)
	m.release(ctx, in, err)
	return int32(uint32(v)), err
}

// Handle runs one request envelope ({"op": ..., "request": {...}}) and
// returns the response envelope: the bytes orrery.Handle returns natively,
// error envelopes included. Its error is about the host only: a trapped
// instance (ErrTrap), a closed Module, or ctx ending while it waited for
// an instance.
func (m *Module) Handle(ctx context.Context, envelope []byte) ([]byte, error) {
	if len(envelope) > orrery.MaxRequestBytes {
		// Too big to be worth copying in: the module would refuse it
		// unread, with the envelope orrery.Handle gives without reading it.
		return orrery.Handle(ctx, envelope), nil
	}
	in, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	out, err := in.handle(ctx, envelope)
	m.release(ctx, in, err)
	if errors.Is(err, errNoRoom) {
		return nil, fmt.Errorf("orrerywasm: no room for a %d-byte request (the module allows %d)", len(envelope), abi.MaxBlock)
	}
	return out, err
}

// reply is the response envelope.
type reply struct {
	Version  int             `json:"version"`
	Op       string          `json:"op"`
	Response json.RawMessage `json:"response"`
	Error    *orrery.Error   `json:"error"`
}

// Call runs op on the JSON request, as orrery.Call does: it returns the JSON
// response, or an error. Errors of the request are *orrery.Error values with
// the code and field the native engine gives (errors.Is works with
// orrery.ErrInvalid and the other wire sentinels); the message of a request
// that is not JSON at all may differ, since it is sent inside an envelope.
func (m *Module) Call(ctx context.Context, op string, request []byte) ([]byte, error) {
	return callWith(ctx, m.Handle, op, request)
}

// callWith runs op on request through handle, an envelope's host.
func callWith(ctx context.Context, handle func(context.Context, []byte) ([]byte, error), op string, request []byte) ([]byte, error) {
	name, err := json.Marshal(op)
	if err != nil {
		return nil, err
	}
	env := make([]byte, 0, len(request)+len(name)+20)
	env = append(env, `{"op":`...)
	env = append(env, name...)
	env = append(env, `,"request":`...)
	env = append(env, request...)
	env = append(env, '}')
	out, err := handle(ctx, env)
	if err != nil {
		return nil, err
	}
	var r reply
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("%w: unreadable response: %v", ErrTrap, err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Response, nil
}

// ImportsKernels reports whether the module's bytes import orrery's
// kernels (the host module "orrery_kernels", see package
// kernels): a default build does, a build with the purego tag
// does not. [New] takes both: it provides the kernels natively.
func ImportsKernels(ctx context.Context, wasm []byte) (bool, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrABI, err)
	}
	for _, f := range compiled.ImportedFunctions() {
		if mod, _, _ := f.Import(); mod == kernels.ImportModule {
			return true, nil
		}
	}
	return false, nil
}
