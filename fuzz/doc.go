// Package fuzz holds the fuzz targets for orrery's entry points that take
// outside input. It has no non-test code: the targets live in its _test.go
// files and their seed corpora in testdata/fuzz/<FuzzName>/, so a plain
// `go test ./fuzz` replays every seed and every past crasher as a
// regression test.
//
//   - FuzzHandle feeds arbitrary envelopes to orrery.Handle, the function
//     behind the WebAssembly ABI and the command-line tool. It must never
//     panic, must answer valid JSON with exactly one of "response" and
//     "error", and a cassini.link response must hold its invariants (shifts
//     within the periods, unshifted_score <= score <= bound <= 1). Before a
//     request runs, its perimeter cap, budget, restarts and workers are
//     clamped so that no single input takes more than milliseconds.
//   - FuzzLinkRequest turns bytes into a small valid cassini.link request
//     (two or three jobs, exact or paper mode, phases or samples) and checks
//     the answer against an independent brute force over every shift.
//   - FuzzProfile runs profile.FromPhases on arbitrary phases and grids: on
//     success the profile is well formed and its mass is within half a unit
//     per tick of the true mass; on failure the error wraps a sentinel.
//
// Run one target for a while with, for example:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzHandle$' -fuzztime 30s
//
// and commit any input it reports from testdata/fuzz after fixing the bug.
package fuzz
