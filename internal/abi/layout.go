package abi

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"structs"
)

// Version is the ABI version abi_version returns. It changes only when an
// export's signature, a struct layout or a code's meaning changes; new
// operations of the JSON schema do not change it.
const Version = 1

// Limits of alloc.
const (
	MaxBlock  = 128 << 20 // largest block, bytes (wire.MaxRequestBytes is half of it)
	MaxLive   = 512 << 20 // largest total of live blocks, bytes
	MaxBlocks = 1 << 16   // most live blocks
)

// Code is the status link_search and orrery_link_search return.
type Code int32

// Codes. Their names are the JSON schema's error codes where one applies.
const (
	OK         Code = 0 // success
	Invalid    Code = 1 // "invalid_argument": a value is out of its domain
	Limit      Code = 2 // "limit_exceeded": a size or perimeter limit was hit
	Internal   Code = 3 // "internal": a bug, please report it
	BadPointer Code = 4 // "bad_pointer": a pointer or length outside the live blocks, or misaligned; nothing was written
)

func (c Code) String() string {
	switch c {
	case OK:
		return "ok"
	case Invalid:
		return "invalid_argument"
	case Limit:
		return "limit_exceeded"
	case Internal:
		return "internal"
	case BadPointer:
		return "bad_pointer"
	}
	return fmt.Sprintf("Code(%d)", int32(c))
}

// LinkOptions are link_search's options, the fields of link.Options. The
// zero value means the defaults (exact mode, a 2^20-tick perimeter cap, no
// rounding, link.DefaultBudget, link.DefaultRestarts, seed 0). Layout, 32
// bytes, little-endian:
//
//	offset 0  int32  mode            0 exact, 1 paper
//	offset 4  int32  max_perimeter   ticks; 0 default, at most 2^24
//	offset 8  int32  round_periods   0 or 1
//	offset 12 int32  restarts        0 default, at most 65536
//	offset 16 int64  budget          pair evaluations; 0 default, -1 unlimited, below -1 invalid
//	offset 24 uint64 seed
type LinkOptions struct {
	_            structs.HostLayout
	Mode         int32
	MaxPerimeter int32
	RoundPeriods int32
	Restarts     int32
	Budget       int64
	Seed         uint64
}

// LinkResult is link_search's result. Layout, 256 bytes, little-endian:
//
//	offset 0   int32    status       0 optimal, 1 budget (link.Status)
//	offset 4   int32    points       |A|: the perimeter (exact) or 72 (paper)
//	offset 8   int32    perimeter    unified circle, ticks
//	offset 12  int32    grid         periods rounded up to multiples of it; 1 if not rounded
//	offset 16  int64    excess       unit-ticks over capacity, summed over the points
//	offset 24  int64    evaluations  pair evaluations spent
//	offset 32  float64  score        of the shifts: 1 - excess / (points * capacity)
//	offset 40  float64  bound        upper bound on the optimal score; = score when optimal
//	offset 48  float64  unshifted    score with every free job at shift 0
//	offset 56  [200]byte message     on an error: the reason, NUL-terminated (truncated)
type LinkResult struct {
	_           structs.HostLayout
	Status      int32
	Points      int32
	Perimeter   int32
	Grid        int32
	Excess      int64
	Evaluations int64
	Score       float64
	Bound       float64
	Unshifted   float64
	Message     [200]byte
}

// Sizes of the structs in memory.
const (
	LinkOptionsSize = 32
	LinkResultSize  = 256
)

// Encode writes o's memory layout into b[:LinkOptionsSize].
func (o *LinkOptions) Encode(b []byte) {
	b = b[:LinkOptionsSize]
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(o.Mode))
	le.PutUint32(b[4:], uint32(o.MaxPerimeter))
	le.PutUint32(b[8:], uint32(o.RoundPeriods))
	le.PutUint32(b[12:], uint32(o.Restarts))
	le.PutUint64(b[16:], uint64(o.Budget))
	le.PutUint64(b[24:], o.Seed)
}

// Decode reads r from its memory layout in b[:LinkResultSize].
func (r *LinkResult) Decode(b []byte) {
	b = b[:LinkResultSize]
	le := binary.LittleEndian
	r.Status = int32(le.Uint32(b[0:]))
	r.Points = int32(le.Uint32(b[4:]))
	r.Perimeter = int32(le.Uint32(b[8:]))
	r.Grid = int32(le.Uint32(b[12:]))
	r.Excess = int64(le.Uint64(b[16:]))
	r.Evaluations = int64(le.Uint64(b[24:]))
	r.Score = math.Float64frombits(le.Uint64(b[32:]))
	r.Bound = math.Float64frombits(le.Uint64(b[40:]))
	r.Unshifted = math.Float64frombits(le.Uint64(b[48:]))
	copy(r.Message[:], b[56:])
}

// Text returns the message: the bytes before the first NUL.
func (r *LinkResult) Text() string {
	m := r.Message[:]
	if i := bytes.IndexByte(m, 0); i >= 0 {
		m = m[:i]
	}
	return string(m)
}

// setMessage stores s, truncated to leave room for the NUL.
func (r *LinkResult) setMessage(s string) {
	n := copy(r.Message[:len(r.Message)-1], s)
	clear(r.Message[n:])
}
