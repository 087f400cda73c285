package orrerywasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/abi"
)

var probe = []byte(`{"op":"cassini.link","request":{"capacity_gbps":50,"jobs":[{"id":"a","phases":[{"ms":30,"gbps":40},{"ms":42,"gbps":0}]},{"id":"b","phases":[{"ms":30,"gbps":40},{"ms":42,"gbps":0}]}]}}`)

// FuzzModule drives the module with random envelopes, pointers and
// lengths. Properties: no input traps the module; an envelope gets the
// bytes an orrery.Session gives natively; call on any pointer and length returns
// a well-formed envelope; alloc, free and link_search on any arguments
// return one of their documented values; and afterwards the instance still
// answers a known request exactly.
func FuzzModule(f *testing.F) {
	for _, c := range loadCorpus(f) {
		for _, step := range c.Steps {
			f.Add(step, uint32(0), uint32(len(step)), uint8(0), uint32(2), uint32(0), uint32(0), uint32(50))
		}
		if len(c.Envelope) < 2000 && !c.Session() {
			f.Add(c.Envelope, uint32(0), uint32(len(c.Envelope)), uint8(0), uint32(2), uint32(0), uint32(0), uint32(50))
		}
	}
	f.Add(probe, uint32(8), uint32(1<<31), uint8(1), uint32(0xfffffff8), uint32(7), uint32(1), uint32(0))
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 5, 5, 5}, uint32(0), uint32(0), uint8(2), uint32(2), uint32(0), uint32(8), uint32(9))
	f.Add([]byte("\x04\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00\x03\x00\x00\x00"), uint32(4), uint32(4), uint8(3), uint32(2), uint32(0), uint32(4), uint32(4))
	ctx := context.Background()
	want := orrery.Handle(ctx, probe)
	// One instance serves every input, so damage one input did to the
	// module's state would show in the next. It is compiled here, before
	// the fuzzer times inputs.
	m := newModule(f, Options{Instances: 1})
	// The native session the instance's mirrors. An input that may touch
	// the stateful ops starts both afresh afterwards: the arbitrary call
	// of step 2 may replay it in the module alone.
	native := orrery.NewSession()
	f.Fuzz(func(t *testing.T, env []byte, ptr, n uint32, op uint8, a, b, c, d uint32) {
		in, err := m.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stateful := bytes.Contains(env, []byte("scheduler"))
		defer func() {
			if stateful && err == nil {
				err = ErrTrap // discard the instance: its handles are past mirroring
				native = orrery.NewSession()
			}
			m.release(ctx, in, err)
		}()

		// 1. The envelope, as a host sends it.
		var got []byte
		if got, err = in.handle(ctx, env); err != nil {
			t.Fatalf("envelope %q trapped: %v", env, err)
		}
		if native := native.Handle(ctx, env); !bytes.Equal(got, native) && !timeLimited(env, got, native) {
			t.Fatalf("envelope %q\nmodule %s\nnative %s", env, got, native)
		}

		// 2. call on an arbitrary pointer and length.
		var r uint64
		if r, err = in.invoke(ctx, in.call, uint64(ptr), uint64(n)); err != nil {
			t.Fatalf("call(%#x, %d) trapped: %v", ptr, n, err)
		}
		resp, ok := in.mem.Read(uint32(r>>32), uint32(r))
		if !ok || !wellFormed(resp) {
			t.Fatalf("call(%#x, %d) = %q", ptr, n, resp)
		}

		// 3. One other export on arbitrary or fuzzed arguments.
		switch op % 4 {
		case 0:
			if r, err = in.invoke(ctx, in.free, uint64(a)); err != nil || r > 1 {
				t.Fatalf("free(%#x) = %d, %v", a, r, err)
			}
		case 1:
			size := int32(a)
			if size > 1<<20 {
				size %= 1 << 20 // keep memory small; the limits have their own test
			}
			if r, err = in.invoke(ctx, in.alloc, uint64(uint32(size))); err != nil {
				t.Fatalf("alloc(%d) trapped: %v", size, err)
			}
			if p := uint32(r); p != 0 {
				if size < 1 || p%8 != 0 {
					t.Fatalf("alloc(%d) = %#x", size, p)
				}
				in.invoke(ctx, in.free, uint64(p))
			}
		case 2:
			if r, err = in.invoke(ctx, in.search, uint64(a), uint64(b), uint64(c), uint64(d), uint64(ptr), uint64(n), uint64(a+b), uint64(c&^7)); err != nil {
				t.Fatalf("link_search on arbitrary pointers trapped: %v", err)
			}
			if code := abi.Code(int32(r)); code < abi.OK || code > abi.BadPointer {
				t.Fatalf("link_search returned %d", code)
			}
		case 3:
			err = fuzzSearch(ctx, t, in, env, a, b, c, d)
		}
		if err != nil {
			return
		}
		// 4. The instance is intact.
		if got, err = in.handle(ctx, probe); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("after this input the probe answers %s, %v", got, err)
		}
	})
}

// fuzzSearch runs link_search on valid pointers to fuzzed contents: the
// bytes of env are the periods and demands, a to d pick k, the capacity
// and the options.
func fuzzSearch(ctx context.Context, t *testing.T, in *instance, env []byte, a, b, c, d uint32) error {
	k := int(a % 6)
	size := abi.LinkOptionsSize + abi.LinkResultSize + 8*k + max(len(env), 4*k) + 8
	ok, err := in.ensure(ctx, &in.fast, size)
	if err != nil || !ok {
		t.Fatalf("ensure(%d): %v %v", size, ok, err)
	}
	base := in.fast.ptr
	o := abi.LinkOptions{Mode: int32(b % 2), Budget: 1 + int64(c%20000), Restarts: int32(d % 3), Seed: uint64(d)}
	if b&2 != 0 {
		o.MaxPerimeter, o.RoundPeriods = int32(c%4096), 1
	}
	buf := make([]byte, size)
	o.Encode(buf)
	periodsAt := abi.LinkOptionsSize + abi.LinkResultSize
	shiftsAt := periodsAt + 4*k
	dataAt := shiftsAt + 4*k
	copy(buf[dataAt:], env)
	// Small periods, so the demand tends to fit in env's bytes.
	for j := range k {
		v := binary.LittleEndian.Uint32(buf[dataAt+4*j:]) % 64
		binary.LittleEndian.PutUint32(buf[periodsAt+4*j:], v)
	}
	for i := dataAt; i+4 <= len(buf); i += 4 {
		v := binary.LittleEndian.Uint32(buf[i:])
		if b&4 != 0 {
			v %= 100 // mostly valid demands
		}
		binary.LittleEndian.PutUint32(buf[i:], v)
	}
	in.mem.Write(base, buf)
	r, err := in.invoke(ctx, in.search, uint64(k), uint64(base)+uint64(periodsAt), uint64(base)+uint64(dataAt),
		uint64(d%200), 0, uint64(base), uint64(base)+uint64(shiftsAt), uint64(base)+abi.LinkOptionsSize)
	if err != nil {
		t.Fatalf("link_search on fuzzed data trapped: %v", err)
	}
	if code := abi.Code(int32(r)); code < abi.OK || code > abi.BadPointer {
		t.Fatalf("link_search returned %d", code)
	}
	return nil
}

// timeLimited reports whether a request may have set a wall-clock limit
// (the one input whose answer depends on the host's speed), or one of its
// answers shows that a limit was hit.
func timeLimited(env []byte, answers ...[]byte) bool {
	low := bytes.ToLower(env)
	if bytes.Contains(low, []byte("limit_ms")) || bytes.Contains(low, []byte(`\u`)) {
		return true
	}
	for _, a := range answers {
		if bytes.Contains(a, []byte(`"time_limit"`)) {
			return true
		}
	}
	return false
}

// wellFormed reports whether b is a response envelope of version 1 with
// exactly one of response and error.
func wellFormed(b []byte) bool {
	var r reply
	if json.Unmarshal(b, &r) != nil || r.Version != 1 {
		return false
	}
	return (r.Error == nil) != (r.Response == nil)
}
