// Package fluid computes the rates of flows sharing a network under max-min
// fairness: the fluid model of a data-center fabric whose congestion control
// shares every bottleneck fairly at once. [DCQCN] is the other fluid model
// here: the CASSINI testbed's congestion control itself, DCQCN's control
// law over fluid switch queues, stepped in time (its doc).
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
// # The filling, exactly
//
// Each link l keeps F, the load of its frozen connections, and n, the number
// of its unfrozen ones; its fair share is max((capacity - F) / n, 0). A round
// takes the level L = the least fair share of a link with n > 0 and the least
// peak of an unfrozen flow; every unfrozen flow whose peak is at most L, or
// that crosses a link whose share is at most L, freezes at rate L; then every
// link on which m connections froze adds m*L to F and subtracts m from n. A
// round freezes at least one flow, so there are at most as many rounds as
// flows.
//
// Rounding in this formulation stays local: a round changes no F or n outside
// the links where something froze, so a flow's rate depends only on the flows
// and links it is connected to, bit for bit, and not on the order the flows
// are given in. The reference implementation scans every link and flow in
// every round (O(F * (F + E)) for F flows on E links, the textbook cost);
// [Solver.Rates] computes the same rates, bit for bit, much faster, by
// leaving out what provably plays no part:
//
//   - Cold links. A link whose connections' peaks sum to less than its
//     capacity (by a margin that covers every rounding of the filling) never
//     saturates: it never sets a level nor freezes a flow, and its share is
//     never read. A flow that crosses only cold links sends at its peak.
//   - Unconnected flows. The flows on hot links are split into groups joined
//     by hot links, and each group is filled on its own, the hot links'
//     shares in a heap: O(S log E) for S crossings of E hot links.
//
// In a cluster simulation's fabric most links are cold (flows are limited by
// their NICs, and only some uplinks are oversubscribed), so a solve costs a
// linear pass over the problem plus the filling of its few saturated links.
//
// # Changing problems
//
// A simulator's problem changes a few flows at a time. [Network] keeps it:
// flows are added and removed, and [Network.Solve] fills again only the hot
// components that the changed links reach (the components of the links
// that are or were hot and gained a crossing, or lost one while they
// saturated in their last filling, and of the new flows: a flow that
// leaves links that never saturated moves no other flow's rate). By
// locality every other flow's rate is what a solve of the whole problem
// would give, bit for bit, and so are the links' offered loads, kept per
// link in order of addition. A link's heat there uses its own crossing
// count in the margin (its crossings bound the terms of its load and the
// rounds that update its frozen load, which is what the problem's counts
// bound above), so it changes only when the link's own flows do. It fills
// a component in place, the rounds running on its own records of the
// flows and links that the walk finding the component lists; there, as in
// a Solver, a component of at most 96 hot links takes each round's level
// from a scan of them rather than from a heap (the same rounds either way).
//
// A [Filling] other than the default selects the algorithm for tests and
// ablations (netsim.Config.Filling): [Full] fills each connected component
// with every link taking part (no cold links left out), [Eager] runs the
// reference filling of the whole network. The three give identical rates.
// [Legacy] runs the filling this package used
// before: one common level for the whole network, each link's residual
// capacity decremented by every round's increment (so a flow's rate depends,
// in its last bits, on unrelated links), residuals within 1e-12 of capacity
// counted as zero. It gives the same allocation to rounding (rates within
// about 1e-15, relative) at the reference's cost, to reproduce older results
// exactly. Under any of the three a Network solves every flow at every
// change, with that filling.
//
// # Cost and determinism
//
// Arithmetic is float64 in a fixed order with no fused multiply-adds, so the
// same problem gives bit-identical rates on every platform, and a [Solver]
// allocates nothing once it has seen problems of a given size.
package fluid
