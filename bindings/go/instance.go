package orrerywasm

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/orrery/orrery/internal/abi"
)

// ErrTrap is wrapped by the error of a call whose instance trapped or
// exited; the instance was discarded.
var ErrTrap = errors.New("orrerywasm: the module instance trapped")

// ErrABI is wrapped by the error of New when the bytes are not an orrery
// module of ABI version 1.
var ErrABI = errors.New("orrerywasm: not an orrery module of ABI version 1")

// instance is one instantiated module and its reusable host-side state.
type instance struct {
	mod                       api.Module
	mem                       api.Memory
	version                   api.Function
	alloc, free, call, search api.Function
	stack                     [8]uint64
	req                       block // request envelopes
	fast                      block // link_search arguments
}

// block is a buffer the host allocated in the instance's memory.
type block struct{ ptr, size uint32 }

// exports lists the functions of ABI v1 besides abi_version.
var exports = [...]string{"alloc", "free", "call", "link_search"}

func newInstance(ctx context.Context, mod api.Module) (*instance, error) {
	in := &instance{mod: mod, mem: mod.Memory()}
	v := mod.ExportedFunction("abi_version")
	fns := make([]api.Function, len(exports))
	for i, name := range exports {
		fns[i] = mod.ExportedFunction(name)
	}
	if v == nil || in.mem == nil || fns[0] == nil || fns[1] == nil || fns[2] == nil || fns[3] == nil {
		return nil, fmt.Errorf("%w: missing exports", ErrABI)
	}
	if err := v.CallWithStack(ctx, in.stack[:]); err != nil {
		return nil, fmt.Errorf("%w: abi_version: %v", ErrABI, err)
	}
	if got := api.DecodeI32(in.stack[0]); got != abi.Version {
		return nil, fmt.Errorf("%w: abi_version is %d", ErrABI, got)
	}
	in.version, in.alloc, in.free, in.call, in.search = v, fns[0], fns[1], fns[2], fns[3]
	return in, nil
}

// invoke calls f with the arguments in in.stack and returns the first
// result. An error means the instance is unusable.
func (in *instance) invoke(ctx context.Context, f api.Function, args ...uint64) (uint64, error) {
	copy(in.stack[:], args)
	if err := f.CallWithStack(ctx, in.stack[:]); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrTrap, f.Definition().Name(), err)
	}
	return in.stack[0], nil
}

// ensure makes b at least n bytes, growing it geometrically up to
// abi.MaxBlock. It reports false when the module refuses the block.
func (in *instance) ensure(ctx context.Context, b *block, n int) (bool, error) {
	if n <= int(b.size) {
		return true, nil
	}
	if n > abi.MaxBlock {
		return false, nil
	}
	size := min(max(n, 2*int(b.size), 4096), abi.MaxBlock)
	if b.ptr != 0 {
		if _, err := in.invoke(ctx, in.free, uint64(b.ptr)); err != nil {
			return false, err
		}
		*b = block{}
	}
	r, err := in.invoke(ctx, in.alloc, uint64(size))
	if err != nil {
		return false, err
	}
	p := uint32(r)
	if p == 0 {
		return false, nil
	}
	*b = block{ptr: p, size: uint32(size)}
	return true, nil
}

// handle runs one envelope; the result is a copy the caller owns.
func (in *instance) handle(ctx context.Context, env []byte) ([]byte, error) {
	var ptr uint32
	if len(env) > 0 {
		ok, err := in.ensure(ctx, &in.req, len(env))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errNoRoom
		}
		ptr = in.req.ptr
		if !in.mem.Write(ptr, env) {
			return nil, fmt.Errorf("%w: request block outside memory", ErrTrap)
		}
	}
	r, err := in.invoke(ctx, in.call, uint64(ptr), uint64(len(env)))
	if err != nil {
		return nil, err
	}
	view, ok := in.mem.Read(uint32(r>>32), uint32(r))
	if !ok {
		return nil, fmt.Errorf("%w: response outside memory", ErrTrap)
	}
	return append([]byte(nil), view...), nil
}

var errNoRoom = errors.New("orrerywasm: the module refused a block")
