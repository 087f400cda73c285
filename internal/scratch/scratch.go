// Package scratch resizes the buffers that the engine's workspaces keep
// between calls, so that a warm workspace allocates nothing.
package scratch

import "slices"

// Resize returns s with length n, on s's array when its capacity is at
// least n. The elements are not cleared: those within the old capacity
// keep what the array held (slices.Grow copies them when it must
// reallocate), the rest are zero. Callers overwrite what they read.
func Resize[S ~[]E, E any](s S, n int) S {
	return slices.Grow(s[:0], n)[:n]
}
