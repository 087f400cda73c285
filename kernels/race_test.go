//go:build race

package kernels

// raceEnabled shortens the longest tests under the race detector, which
// slows the generic reference tenfold and cannot see inside assembly anyway.
const raceEnabled = true
