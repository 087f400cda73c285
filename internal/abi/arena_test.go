package abi

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

func TestArenaAllocFree(t *testing.T) {
	var a Arena
	for _, n := range []int{0, -1, MaxBlock + 1} {
		if p := a.Alloc(n); p != 0 {
			t.Errorf("Alloc(%d) = %#x, want 0", n, p)
		}
	}
	p := a.Alloc(13)
	if p == 0 || p%8 != 0 {
		t.Fatalf("Alloc(13) = %#x", p)
	}
	if b, ok := a.Bytes(p, 13); !ok || len(b) != 13 || uintptr(unsafe.Pointer(&b[0])) != p {
		t.Fatalf("Bytes(p, 13) = %v, %v", len(b), ok)
	}
	for _, c := range []struct {
		p uintptr
		n int
	}{{p, 14}, {p + 13, 1}, {p - 1, 1}, {p + 1, 13}, {0, 1}, {p, -1}, {^uintptr(0), 2}, {p + 12, int(^uint(0) >> 1)}} {
		if _, ok := a.Bytes(c.p, c.n); ok {
			t.Errorf("Bytes(%#x, %d) accepted outside the block at %#x", c.p, c.n, p)
		}
	}
	if b, ok := a.Bytes(p+12, 1); !ok || len(b) != 1 {
		t.Error("Bytes refused the last byte")
	}
	if b, ok := a.Bytes(12345, 0); !ok || b != nil {
		t.Error("an empty range is refused")
	}
	if _, ok := a.Int32s(p+2, 1); ok {
		t.Error("Int32s accepted a misaligned pointer")
	}
	if _, ok := a.Int32s(p, 4); ok {
		t.Error("Int32s accepted 16 bytes in a 13-byte block")
	}
	if _, ok := a.Result(p); ok {
		t.Error("Result accepted a 13-byte block")
	}
	if a.Free(p+8) || a.Free(0) {
		t.Error("Free accepted a non-start")
	}
	if !a.Free(p) || a.Free(p) {
		t.Error("Free of the start: want true once")
	}
	if _, ok := a.Bytes(p, 1); ok {
		t.Error("a freed block is still readable")
	}
	if n, size := a.Live(); n != 0 || size != 0 {
		t.Errorf("Live = %d, %d after freeing everything", n, size)
	}
}

func TestArenaLimits(t *testing.T) {
	var a Arena
	var ps []uintptr
	for range MaxLive / MaxBlock {
		p := a.Alloc(MaxBlock)
		if p == 0 {
			t.Fatal("Alloc(MaxBlock) refused below MaxLive")
		}
		ps = append(ps, p)
	}
	if a.Alloc(1) != 0 {
		t.Error("Alloc past MaxLive accepted")
	}
	for _, p := range ps {
		a.Free(p)
	}
	for range MaxBlocks {
		if a.Alloc(1) == 0 {
			t.Fatal("Alloc(1) refused below MaxBlocks")
		}
	}
	if a.Alloc(1) != 0 {
		t.Error("Alloc past MaxBlocks accepted")
	}
}

// Random allocations and frees against a model: every live block is found
// by every pointer inside it and by no pointer outside.
func TestArenaModel(t *testing.T) {
	var a Arena
	live := map[uintptr]int{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		if r.IntN(3) == 0 && len(live) > 0 {
			for p := range live {
				if !a.Free(p) {
					t.Fatalf("Free(%#x) of a live block failed", p)
				}
				delete(live, p)
				break
			}
			continue
		}
		n := 1 + r.IntN(200)
		p := a.Alloc(n)
		if p == 0 {
			t.Fatal("Alloc refused")
		}
		live[p] = n
	}
	inside := func(q uintptr, m int) bool {
		for p, n := range live {
			if q >= p && q+uintptr(m) <= p+uintptr(n) {
				return true
			}
		}
		return false
	}
	for p, n := range live {
		for _, off := range []int{-9, -1, 0, 1, n - 1, n, n + 1} {
			for _, m := range []int{1, 2, n, n + 1} {
				q := p + uintptr(off)
				if _, ok := a.Bytes(q, m); ok != inside(q, m) {
					t.Fatalf("Bytes(%#x%+d, %d) = %v, model %v", p, off, m, ok, !ok)
				}
			}
		}
	}
	if n, _ := a.Live(); n != len(live) {
		t.Errorf("Live = %d blocks, model %d", n, len(live))
	}
}
