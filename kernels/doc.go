// Package kernels holds the integer vector kernels behind CASSINI's link
// rotation search: excess-bandwidth sums and the across-shift rotation scan.
//
// Every kernel works on exact integers (int32 demand, int64 sums), so every
// implementation (AVX-512, AVX2, generic Go, the WebAssembly build) returns
// bit-identical results. Inputs are not validated here: the documented
// limits ([MaxValue]) are the caller's contract, checked once at the engine's
// API boundary, and within them no implementation can overflow.
//
// The kernels never allocate; buffers are caller-owned.
package kernels
