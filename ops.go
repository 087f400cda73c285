package orrery

import (
	"context"
	"slices"
	"strings"
)

// Op describes one operation of schema v1.
type Op struct {
	Name    string // "cassini.link": the envelope's "op"; the command line's "orrery cassini link"
	Func    string // "Link": the typed function of this package that runs it
	Summary string // one line: what it does
}

// op is an entry of the registry: an Op and how to run it on a JSON request.
type op struct {
	Op
	run func(ctx context.Context, request []byte) (any, error)
}

// registry is the one table of operations. Call and Handle dispatch through
// it, the command line builds its JSON commands from Ops, the WebAssembly
// module and the C library answer through Handle, and a test fails when a
// binding (Go, JavaScript with its types, Python) lacks an entry. Sorted by
// name.
var registry = []op{
	{Op{"cassini.link", "Link", "optimize the time shifts of jobs sharing one link"}, jsonOp(Link)},
	{Op{"cassini.rank", "Rank", "rank placement candidates by link compatibility"}, jsonOp(Rank)},
	{Op{"shockwave.plan", "Plan", "plan the next rounds of a GPU cluster with Shockwave"}, jsonOp(Plan)},
	{Op{"shockwave.predict", "Predict", "predict the jobs' remaining runtimes and fair finish times"}, jsonOp(Predict)},
}

// jsonOp adapts a typed operation to JSON: the request is decoded strictly
// (see Call) into a Req, and the typed function's response is what Call
// encodes. The typed function is the operation; the JSON form adds nothing
// but decoding, so the two have the same semantics by construction.
func jsonOp[Req, Resp any](f func(context.Context, Req) (Resp, error)) func(context.Context, []byte) (any, error) {
	return func(ctx context.Context, data []byte) (any, error) {
		var req Req
		if err := decode(data, &req); err != nil {
			return nil, err
		}
		resp, err := f(ctx, req)
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
}

// Ops lists the operations of schema v1, sorted by name.
func Ops() []Op {
	out := make([]Op, len(registry))
	for i, o := range registry {
		out[i] = o.Op
	}
	return out
}

func lookup(name string) (op, bool) {
	i, ok := slices.BinarySearchFunc(registry, name, func(o op, name string) int { return strings.Compare(o.Name, name) })
	if !ok {
		return op{}, false
	}
	return registry[i], true
}

func opNames() []string {
	names := make([]string, len(registry))
	for i, o := range registry {
		names[i] = o.Name
	}
	return names
}
