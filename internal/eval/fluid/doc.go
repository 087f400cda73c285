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
// A flow's rate depends only on its connected component (the flows and links
// reachable from it through shared links), in exact arithmetic and, with this
// formulation, in floating point too: a round changes no F or n outside the
// components whose own least share or peak is L, and the components that do
// reach L freeze exactly what they would alone. So the rates are the same, bit
// for bit, whether the network is filled as a whole (the reference, one scan
// of every link and flow per round) or one component at a time (what
// [Solver.Rates] does, with a heap of the links' shares, so a component costs
// O(S log E) for S link crossings on E links), and they do not depend on the
// order the flows are given in.
//
// # Incremental solves
//
// A [Solver] remembers its previous problem. Each call splits the new problem
// into components, and a component whose flows (links and peak, compared
// exactly, in any order) and link capacities are those of a component of the
// previous call takes that component's rates without being filled again; only
// the components an event changed are recomputed. A simulator that calls Rates
// after every flow arrival or departure thus pays for the component the event
// touched, plus a linear pass over the problem to find it. Since rates are a
// function of the component alone, reusing them changes nothing: the result
// of every call is what a fresh Solver returns on the same input, bit for bit.
//
// The environment variable ORRERY_FLUID, read once at program start, selects
// the algorithm for ablations: "scratch" fills every component on every call
// (no reuse), "eager" runs the reference filling of the whole network (the
// cost of the textbook algorithm, O(F * (F + E)) per call); unset or any other
// value is the incremental default. All three give identical rates.
//
// # Cost and determinism
//
// Arithmetic is float64 in a fixed order with no fused multiply-adds, so the
// same problem gives bit-identical rates on every platform, and a [Solver]
// allocates nothing once it has seen problems of a given size.
package fluid
