package orrery

import (
	"context"
	"time"
)

// A request's time limit covers the whole call: decoding the request,
// checking it, building its tables and the search, from the moment Call
// or Handle took it (issue 29). The operations whose requests carry a
// limit are marked timed in the registry; runOp notes their start in the
// context, and withLimit counts the limit from there. Encoding the
// answer comes after, and costs a few nanoseconds a byte
// (docs/reliability.md has the measured ratios).

// startKey is the context key of a call's start.
type startKey struct{}

// withStart notes in ctx that the call started now, unless an outer call
// noted it already.
func withStart(ctx context.Context) context.Context {
	if _, ok := ctx.Value(startKey{}).(time.Time); ok {
		return ctx
	}
	return context.WithValue(ctx, startKey{}, time.Now())
}

// callStart returns the start withStart noted in ctx, or now: the typed
// functions (Rank, Plan, ...) count their limit from their own start.
func callStart(ctx context.Context) time.Time {
	if t, ok := ctx.Value(startKey{}).(time.Time); ok {
		return t
	}
	return time.Now()
}
