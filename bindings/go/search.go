package orrerywasm

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/abi"
)

// Search solves one link's rotation problem in the module, through its
// flat fast path (link_search) instead of JSON, and returns what
// link.Workspace.Search returns natively for the same arguments: the same
// shifts, scores, status and circle. Shifts are written into dst (grown if
// needed); Circle.Periods is freshly allocated.
//
// Errors are *orrery.Error values whose code says what kind of error it is
// (errors.Is works with orrery.ErrInvalid, orrery.ErrLimit, orrery.ErrInternal);
// the engine's own sentinels are not carried across the boundary. The
// module searches with MaxCells = abi.MaxSearchCells (opt.MaxCells does not
// cross the boundary): larger exact searches are limit errors.
func (m *Module) Search(ctx context.Context, pr link.Problem, opt link.Options, dst []int) (link.Result, error) {
	k := len(pr.Jobs)
	var total int64
	for j, jb := range pr.Jobs {
		if len(jb.Demand) != jb.Period {
			return link.Result{}, searchError(abi.Invalid, fmt.Sprintf("job %d: %v: %d demands for a period of %d ticks", j, profile.ErrPeriodMismatch, len(jb.Demand), jb.Period))
		}
		total += int64(jb.Period)
	}
	if pr.Fixed != nil && len(pr.Fixed) != k {
		return link.Result{}, searchError(abi.Invalid, fmt.Sprintf("%v: %d entries for %d jobs", link.ErrFixed, len(pr.Fixed), k))
	}
	nf := 0
	if pr.Fixed != nil {
		nf = k
	}
	const head = abi.LinkOptionsSize + abi.LinkResultSize
	size := head + 4*(int64(2*k+nf)+total)
	if size > abi.MaxBlock || k > math.MaxInt32 {
		return link.Result{}, searchError(abi.Limit, fmt.Sprintf("%d jobs with periods summing to %d ticks do not fit in a %d-byte block", k, total, abi.MaxBlock))
	}

	in, err := m.acquire(ctx)
	if err != nil {
		return link.Result{}, err
	}
	res, err := in.linkSearch(ctx, pr, opt, int(size), nf, dst)
	m.release(ctx, in, err)
	return res, err
}

func (in *instance) linkSearch(ctx context.Context, pr link.Problem, opt link.Options, size, nf int, dst []int) (link.Result, error) {
	ok, err := in.ensure(ctx, &in.fast, size)
	if err != nil {
		return link.Result{}, err
	}
	if !ok {
		return link.Result{}, searchError(abi.Limit, fmt.Sprintf("the module refused a %d-byte block", size))
	}
	view, ok := in.mem.Read(in.fast.ptr, uint32(size))
	if !ok {
		return link.Result{}, fmt.Errorf("%w: argument block outside memory", ErrTrap)
	}
	k := len(pr.Jobs)
	base := in.fast.ptr
	const resultAt = abi.LinkOptionsSize
	periodsAt := resultAt + abi.LinkResultSize
	fixedAt := periodsAt + 4*k
	shiftsAt := fixedAt + 4*nf
	demandAt := shiftsAt + 4*k

	o := abi.LinkOptions{
		Mode:         clamp32(int64(opt.Mode)),
		MaxPerimeter: clamp32(int64(opt.Circle.MaxPerimeter)),
		Restarts:     clamp32(int64(opt.Restarts)),
		Budget:       opt.Budget,
		Seed:         opt.Seed,
	}
	if opt.Circle.Round {
		o.RoundPeriods = 1
	}
	o.Encode(view)
	le := binary.LittleEndian
	at := demandAt
	for j, jb := range pr.Jobs {
		le.PutUint32(view[periodsAt+4*j:], uint32(jb.Period))
		for _, d := range jb.Demand {
			le.PutUint32(view[at:], uint32(d))
			at += 4
		}
	}
	fixed := uint32(0)
	if nf > 0 {
		fixed = base + uint32(fixedAt)
		for j, t := range pr.Fixed {
			if t < 0 {
				t = -1
			} else if t > math.MaxInt32 && pr.Jobs[j].Period > 0 {
				t %= pr.Jobs[j].Period // the module takes it modulo the period too
			}
			le.PutUint32(view[fixedAt+4*j:], uint32(clamp32(int64(t))))
		}
	}

	code, err := in.invoke(ctx, in.search,
		uint64(uint32(k)), uint64(base+uint32(periodsAt)), uint64(base+uint32(demandAt)),
		api32(pr.Capacity), uint64(fixed), uint64(base), uint64(base+uint32(shiftsAt)), uint64(base+resultAt))
	if err != nil {
		return link.Result{}, err
	}
	// The call does not grow memory once the workspace is warm, but a
	// first search of a larger problem may: take a fresh view.
	if view, ok = in.mem.Read(in.fast.ptr, uint32(size)); !ok {
		return link.Result{}, fmt.Errorf("%w: argument block outside memory", ErrTrap)
	}
	var r abi.LinkResult
	r.Decode(view[resultAt:])
	if c := abi.Code(int32(code)); c != abi.OK {
		msg := r.Text()
		if c == abi.BadPointer {
			msg = "orrerywasm: the module refused the argument block (a bug in this package)"
		}
		return link.Result{}, searchError(c, msg)
	}
	if cap(dst) < k {
		dst = make([]int, k)
	}
	dst = dst[:k]
	for j := range dst {
		dst[j] = int(int32(le.Uint32(view[shiftsAt+4*j:])))
	}
	grid := max(int(r.Grid), 1)
	periods := make([]int, k)
	for j, jb := range pr.Jobs {
		periods[j] = (jb.Period + grid - 1) / grid * grid
	}
	return link.Result{
		Score:     r.Score,
		Bound:     r.Bound,
		Unshifted: r.Unshifted,
		Excess:    r.Excess,
		Points:    int(r.Points),
		Shifts:    dst,
		Status:    link.Status(r.Status),
		Circle:    circle.Unified{Perimeter: int(r.Perimeter), Periods: periods, Grid: grid, Shared: circle.Shared(periods)},
		Evaluated: r.Evaluations,
	}, nil
}

func searchError(c abi.Code, msg string) error {
	return &orrery.Error{Code: c.String(), Message: msg}
}

func clamp32(v int64) int32 {
	return int32(min(max(v, math.MinInt32), math.MaxInt32))
}

func api32(v int32) uint64 { return uint64(uint32(v)) }
