// Package bench measures orrery on a shared, noisy machine and reports the
// results as Markdown (for docs/performance.md) and JSON (for machines).
//
// # Measuring
//
// A figure is never one timing. [Interleave] runs a set of cases in rounds:
// each round runs every case once, in an order rotated from round to round,
// so that a burst of load from another process lands on all cases alike
// instead of on whichever happened to run then. Each run is a batch of
// operations calibrated to take at least [Options.Target] of CPU time, and
// is timed on two clocks: wall time and the CPU time of the process
// ([ProcessCPU], which a busy neighbour does not inflate the way it
// inflates wall time). [Summarize] turns the per-round figures into a
// median with its spread (minimum, quartiles, maximum). [Calibrate] and
// [Run] are Interleave's two steps, for callers that interleave cases of
// their own, such as calls answered by another process.
//
// Gates compare cases, never absolute times: [Ratios] pairs the rounds of
// two cases (run next to each other in time) and the gate takes the median
// of the per-round ratios, which a loaded machine moves far less than any
// single time.
//
// # Reporting
//
// A [Report] is a list of [Section]s (a table plus the typed data behind
// it) and [Gate]s (a named check with its measured value and threshold).
// [Report.Markdown] renders the tables; the JSON encoding of a Report keeps
// every number.
//
// The suite itself is the command bench/cmd/orrery-bench (make bench).
package bench
