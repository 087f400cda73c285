package abi

import (
	"slices"
	"unsafe"
)

// Arena is the table of live blocks alloc hands out. Every pointer a host
// passes is looked up here before it is dereferenced, so a wrong one is
// refused instead of reading or overwriting the runtime's own memory. The
// zero value is empty and ready. It is not safe for concurrent use.
type Arena struct {
	blocks []block // sorted by start
	live   int     // bytes in live blocks
}

type block struct {
	start uintptr
	size  int
	mem   []uint64 // keeps the block alive; uint64 makes it 8-byte aligned
}

// Alloc returns the address of a fresh zeroed block of n bytes, aligned to
// 8, or 0 when n is not in [1, MaxBlock] or the block would take the arena
// past MaxLive bytes or MaxBlocks blocks.
func (a *Arena) Alloc(n int) uintptr {
	if n < 1 || n > MaxBlock || a.live+n > MaxLive || len(a.blocks) >= MaxBlocks {
		return 0
	}
	mem := make([]uint64, (n+7)/8)
	b := block{start: uintptr(unsafe.Pointer(unsafe.SliceData(mem))), size: n, mem: mem}
	i, _ := slices.BinarySearchFunc(a.blocks, b.start, cmpStart)
	a.blocks = slices.Insert(a.blocks, i, b)
	a.live += n
	return b.start
}

// Free releases the block that starts at p and reports whether there was
// one; anything else (an interior pointer, a freed block, 0) changes
// nothing.
func (a *Arena) Free(p uintptr) bool {
	i, ok := slices.BinarySearchFunc(a.blocks, p, cmpStart)
	if !ok {
		return false
	}
	a.live -= a.blocks[i].size
	a.blocks = slices.Delete(a.blocks, i, i+1)
	return true
}

// Live returns the number of live blocks and their total size in bytes.
func (a *Arena) Live() (blocks, bytes int) { return len(a.blocks), a.live }

// Bytes returns the n bytes at p, which must lie inside one live block.
// An empty range (n == 0) is valid at any p and returns nil.
func (a *Arena) Bytes(p uintptr, n int) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	if n < 0 {
		return nil, false
	}
	// The last block starting at or before p is the only one that can hold it.
	i, ok := slices.BinarySearchFunc(a.blocks, p, cmpStart)
	if !ok {
		i--
	}
	if i < 0 {
		return nil, false
	}
	b := &a.blocks[i]
	off := p - b.start
	if off >= uintptr(b.size) || uintptr(n) > uintptr(b.size)-off {
		return nil, false
	}
	base := unsafe.Pointer(unsafe.SliceData(b.mem))
	return unsafe.Slice((*byte)(unsafe.Add(base, off)), n), true
}

// Int32s returns the n int32 values at p (4-byte aligned, inside one live
// block); n == 0 is valid at any p.
func (a *Arena) Int32s(p uintptr, n int) ([]int32, bool) {
	if n == 0 {
		return nil, true
	}
	if n < 0 || n > MaxBlock/4 || p%4 != 0 {
		return nil, false
	}
	b, ok := a.Bytes(p, 4*n)
	if !ok {
		return nil, false
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), n), true
}

// Options returns the LinkOptions at p (8-byte aligned, inside one live
// block).
func (a *Arena) Options(p uintptr) (*LinkOptions, bool) {
	b, ok := a.aligned8(p, LinkOptionsSize)
	if !ok {
		return nil, false
	}
	return (*LinkOptions)(unsafe.Pointer(unsafe.SliceData(b))), true
}

// Result returns the LinkResult at p (8-byte aligned, inside one live
// block).
func (a *Arena) Result(p uintptr) (*LinkResult, bool) {
	b, ok := a.aligned8(p, LinkResultSize)
	if !ok {
		return nil, false
	}
	return (*LinkResult)(unsafe.Pointer(unsafe.SliceData(b))), true
}

func (a *Arena) aligned8(p uintptr, n int) ([]byte, bool) {
	if p%8 != 0 || p == 0 {
		return nil, false
	}
	return a.Bytes(p, n)
}

func cmpStart(b block, p uintptr) int {
	switch {
	case b.start < p:
		return -1
	case b.start > p:
		return 1
	}
	return 0
}
