package orrerywasm

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/abi"
)

// raw gives the tests the instance of a one-instance Module.
func raw(t *testing.T) (*Module, *instance) {
	t.Helper()
	m := newModule(t, Options{Instances: 1})
	in, err := m.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.release(context.Background(), in, nil) })
	return m, in
}

func (in *instance) mustCall(t *testing.T, name string, args ...uint64) uint64 {
	t.Helper()
	f := in.mod.ExportedFunction(name)
	r, err := in.invoke(context.Background(), f, args...)
	if err != nil {
		t.Fatalf("%s%v trapped: %v", name, args, err)
	}
	return r
}

// errorCode returns the error code of a response envelope, or "".
func errorCode(t *testing.T, resp []byte) string {
	t.Helper()
	var r reply
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("response is not JSON: %v: %q", err, resp)
	}
	if r.Version != 1 || (r.Error == nil) == (r.Response == nil) {
		t.Fatalf("bad envelope %q", resp)
	}
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}

func (in *instance) response(t *testing.T, packed uint64) []byte {
	t.Helper()
	b, ok := in.mem.Read(uint32(packed>>32), uint32(packed))
	if !ok {
		t.Fatalf("response %#x outside memory", packed)
	}
	return bytes.Clone(b)
}

func TestABIVersion(t *testing.T) {
	_, in := raw(t)
	if v := api32Decode(in.mustCall(t, "abi_version")); v != abi.Version {
		t.Fatalf("abi_version = %d", v)
	}
}

func api32Decode(v uint64) int32 { return int32(uint32(v)) }

// Alloc refuses what the ABI says it refuses and nothing else, and free
// accepts exactly the live block starts.
func TestAllocFree(t *testing.T) {
	_, in := raw(t)
	for _, n := range []int64{0, -1, math.MinInt32, abi.MaxBlock + 1, math.MaxInt32} {
		if p := in.mustCall(t, "alloc", uint64(uint32(int32(n)))); p != 0 {
			t.Errorf("alloc(%d) = %#x, want 0", n, p)
		}
	}
	p := uint32(in.mustCall(t, "alloc", 100))
	if p == 0 || p%8 != 0 {
		t.Fatalf("alloc(100) = %#x, want an 8-aligned address", p)
	}
	b, _ := in.mem.Read(p, 100)
	if !bytes.Equal(b, make([]byte, 100)) {
		t.Error("a new block is not zeroed")
	}
	for _, q := range []uint32{0, p + 1, p + 8, p - 8, 1, math.MaxUint32} {
		if r := in.mustCall(t, "free", uint64(q)); r != 1 {
			t.Errorf("free(%#x) = %d, want 1", q, r)
		}
	}
	if r := in.mustCall(t, "free", uint64(p)); r != 0 {
		t.Errorf("free(block) = %d, want 0", r)
	}
	if r := in.mustCall(t, "free", uint64(p)); r != 1 {
		t.Errorf("second free(block) = %d, want 1", r)
	}
}

// A request outside the live blocks is an error envelope, never a read of
// the runtime's memory; a request at the edge of a block is fine.
func TestCallPointers(t *testing.T) {
	_, in := raw(t)
	env := []byte(`{"op":"cassini.link","request":{"capacity_gbps":50,"jobs":[{"id":"a","phases":[{"ms":30,"gbps":40},{"ms":42,"gbps":0}]}]}}`)
	want := orrery.Handle(context.Background(), env)
	n := uint32(len(env))
	p := uint32(in.mustCall(t, "alloc", uint64(n)))
	in.mem.Write(p, env)
	if got := in.response(t, in.mustCall(t, "call", uint64(p), uint64(n))); !bytes.Equal(got, want) {
		t.Fatalf("call = %s, want %s", got, want)
	}
	memSize := in.mem.Size()
	for _, c := range []struct{ ptr, n uint32 }{
		{p, n + 1}, {p + 1, n}, {p - 1, n}, {0, 10}, {8, 64}, {p, math.MaxUint32},
		{math.MaxUint32, 1}, {memSize - 4, 8}, {memSize, 1}, {math.MaxUint32 - 3, 8},
	} {
		got := in.response(t, in.mustCall(t, "call", uint64(c.ptr), uint64(c.n)))
		if code := errorCode(t, got); code != orrery.CodeInvalid || !bytes.Contains(got, []byte("abi: request")) {
			t.Errorf("call(%#x, %d) = %s, want an abi invalid_argument error", c.ptr, c.n, got)
		}
	}
	// An empty request is the schema's error, wherever it points.
	for _, ptr := range []uint32{0, 12345, math.MaxUint32} {
		got := in.response(t, in.mustCall(t, "call", uint64(ptr), 0))
		if !bytes.Equal(got, orrery.Handle(context.Background(), nil)) {
			t.Errorf("call(%#x, 0) = %s", ptr, got)
		}
	}
	// The instance still answers correctly.
	if got := in.response(t, in.mustCall(t, "call", uint64(p), uint64(n))); !bytes.Equal(got, want) {
		t.Fatalf("call after bad pointers = %s, want %s", got, want)
	}
}

// link_search refuses every pointer that is not inside a block with the
// bytes it needs, without writing anything.
func TestLinkSearchPointers(t *testing.T) {
	_, in := raw(t)
	blk := uint32(in.mustCall(t, "alloc", 4096))
	// periods {4, 4} at blk, demand at blk+8 (8 values), shifts at +40,
	// options at +48 (zero: defaults), result at +80.
	w := func(off uint32, vals ...int32) {
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
		in.mem.Write(blk+off, b)
	}
	w(0, 4, 4)
	w(8, 3, 3, 0, 0, 3, 3, 0, 0)
	good := []uint64{2, uint64(blk), uint64(blk + 8), 4, 0, uint64(blk + 48), uint64(blk + 40), uint64(blk + 80)}
	call := func(args []uint64) int32 { return api32Decode(in.mustCall(t, "link_search", args...)) }
	if c := call(good); c != int32(abi.OK) {
		res, _ := in.mem.Read(blk+80, abi.LinkResultSize)
		var r abi.LinkResult
		r.Decode(res)
		t.Fatalf("link_search = %d (%s)", c, r.Text())
	}
	shifts, _ := in.mem.Read(blk+40, 8)
	if got := []byte{shifts[4], shifts[5], shifts[6], shifts[7]}; got[0] != 2 || got[1]|got[2]|got[3] != 0 {
		t.Fatalf("shift of job 1 = %v, want 2 (the pulses interleave)", got)
	}
	bad := func(i int, v uint64) []uint64 {
		a := append([]uint64(nil), good...)
		a[i] = v
		return a
	}
	for name, args := range map[string][]uint64{
		"periods outside":    bad(1, 8),
		"periods misaligned": bad(1, uint64(blk+1)),
		"demand outside":     bad(2, uint64(blk+4096-16)),
		"demand misaligned":  bad(2, uint64(blk+9)),
		"shifts outside":     bad(6, uint64(blk+4096-4)),
		"shifts zero":        bad(6, 0),
		"options outside":    bad(5, uint64(blk+4096-8)),
		"options misaligned": bad(5, uint64(blk+52)),
		"result outside":     bad(7, uint64(blk+4096-128)),
		"result zero":        bad(7, 0),
		"result misaligned":  bad(7, uint64(blk+84)),
		"fixed outside":      bad(4, 16),
		"k huge":             bad(0, math.MaxInt32),
		"k negative":         bad(0, uint64(uint32(0xffffffff))),
	} {
		if c := call(args); c != int32(abi.BadPointer) {
			t.Errorf("%s: link_search = %d, want %d", name, c, abi.BadPointer)
		}
	}
	// Values the searcher rejects come back as codes with a message.
	w(0, 0, 4)
	if c := call(good); c != int32(abi.Invalid) {
		t.Errorf("zero period: %d, want %d", c, abi.Invalid)
	}
	w(0, 1<<25, 4)
	if c := call(good); c != int32(abi.Limit) {
		t.Errorf("huge period: %d, want %d", c, abi.Limit)
	}
	w(0, 4, 4)
	w(48, 7) // mode 7
	if c := call(good); c != int32(abi.Invalid) {
		t.Errorf("mode 7: %d, want %d", c, abi.Invalid)
	}
	res, _ := in.mem.Read(blk+80, abi.LinkResultSize)
	var r abi.LinkResult
	r.Decode(res)
	if r.Text() == "" {
		t.Error("no message with an invalid mode")
	}
	w(48, 0)
	if c := call(good); c != int32(abi.OK) {
		t.Errorf("good call after errors: %d", c)
	}
}
