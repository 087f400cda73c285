// Package fluid computes the rates of flows sharing a network under max-min
// fairness: the fluid model of a data-center fabric whose congestion control
// (DCQCN in the CASSINI testbed) shares every bottleneck fairly.
//
// A flow crosses a list of links and can send at most its peak rate. Rates are
// found by progressive filling: every unfrozen flow's rate rises at the same
// pace; when a link runs out of capacity the flows crossing it freeze at the
// current level, and when a flow reaches its peak it freezes there; the others
// keep rising until every flow is frozen. The result is the unique max-min
// fair allocation: no flow's rate can grow without shrinking the rate of a
// flow that is no faster.
//
// A link listed k times in one flow carries k connections of that flow, each
// at the flow's rate: the hops of one ring all-reduce that cross the same link
// move in lock step, so the ring is one flow whose rate is its slowest hop's
// and which takes k fair shares of a link it crosses k times.
//
// # Cost and determinism
//
// Each filling round freezes at least one flow, so a solve costs
// O(F * (F + E)) for F flows crossing E link slots in total, and a [Solver]
// allocates nothing once it has seen a problem of a given size. Arithmetic is
// float64 in a fixed order with no fused multiply-adds, so the same problem
// gives bit-identical rates on every platform.
package fluid
