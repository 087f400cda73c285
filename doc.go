// Package orrery is the front door of orrery, an optimization engine for
// ML-cluster schedulers. It implements two published mechanisms:
//
//   - CASSINI (NSDI '24), network-aware placement. A training job's
//     bandwidth demand repeats every iteration, so it is drawn on a circle
//     whose perimeter is the iteration time. Jobs that share a link are
//     overlaid on a unified circle and rotated until their summed demand
//     exceeds the link's capacity as little as possible; the link's
//     compatibility score is 1 − excess/(points·capacity). An affinity graph
//     turns the per-link rotations into one time shift per job, and a
//     scheduler's placement candidates are ranked by the scores of the links
//     they share.
//   - Shockwave (NSDI '23), fair and efficient rounds for jobs whose batch
//     size changes during training: a dynamic Fisher market maximizing Nash
//     social welfare over a window of future rounds, with a makespan
//     regularizer and finish-time-fairness constraints, fed by a Bayesian
//     prediction of each job's remaining runtime. The authors solve each
//     round's program with Gurobi; orrery solves it exactly, with no solver.
//
// # The front door
//
// One import covers the common case, in the units a scheduler has (string
// job ids, milliseconds, Gbps, seconds):
//
//   - [Link]: the rotation search of the jobs sharing one link (Table 1).
//   - [Rank]: placement candidates ranked by link compatibility, with the
//     best candidate's time shifts (Algorithms 1 and 2).
//   - [Plan]: Shockwave's plan for the next rounds, a pure function of the
//     cluster state; [Predict]: its predictions alone.
//
// Each is one operation of the versioned JSON schema (v1) that the command
// line, the WebAssembly module and every binding speak: the request and
// response types of this package are that schema, with its JSON names. [Call]
// runs an operation on JSON bytes and [Handle] on an envelope; both decode
// strictly (unknown or repeated keys, wrong types and trailing data are
// errors) and then run exactly the typed function, so the typed and JSON
// forms cannot disagree. [Ops] lists the operations.
//
// # The hot path
//
// A scheduler that ranks in its inner loop links the engine packages
// beneath, which work on quantized profiles (integer ticks and units) and
// keep their buffers in a reusable Workspace, so that steady-state calls
// do not allocate:
//
//	engine/cassini/profile    a job's per-iteration demand, quantized
//	engine/cassini/circle     the unified circle (LCM with a cap, period rounding)
//	engine/cassini/link       link.Workspace: the per-link rotation search
//	engine/cassini/affinity   the affinity graph and Algorithm 1 (loop handling)
//	engine/cassini/candidate  candidate.Workspace: Algorithm 2, ranking candidates
//	internal/eval/topology   fabrics (the paper's testbed, Clos) and their paths
//	engine/cassini/agent      the time-shift agent a training loop calls each iteration
//
// # Errors
//
// Every error of an operation is an *[Error] with a code (malformed_json,
// invalid_argument, limit_exceeded, unknown_op, internal) and, when it
// concerns one value, the request's field by its JSON path
// ("jobs[1].phases[0].gbps"). It wraps one of [ErrMalformed], [ErrInvalid],
// [ErrLimit], [ErrUnknownOp], [ErrInternal] and the engine's own sentinel,
// so errors.Is works with either.
//
// # Determinism
//
// Bandwidth and time are quantized to integers, so scores are exact integer
// sums: every kernel path (AVX-512, AVX2, generic Go) and the WebAssembly
// module give bit-identical results, and the same request gives
// byte-identical JSON on every host. Ties are broken by documented rules,
// never by map order. A time limit is the one exception: what is found
// before it depends on the host's speed, and the response says so in its
// status.
package orrery
