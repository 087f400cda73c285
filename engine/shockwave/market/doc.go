// Package market is Shockwave's round planner: the per-round program of the
// authors' code (github.com/uw-mad-dash/shockwave, scheduler/shockwave.py,
// dynamic_eisenberg_gale_scheduling), solved exactly without a MILP solver.
//
// # The program
//
// N jobs share M GPUs over a window of T future rounds of Δ seconds. Job j
// runs on w_j GPUs, has E_j epochs of which F_j are done, a mean epoch
// duration D̄_j, a predicted remaining runtime R_j and a fair finish-time
// target FT*_j. The plan is x_{j,t} ∈ {0,1}, with planned epochs y_j:
//
//	maximize  (1/(N·T))·Σ_j p_j·f((F_j + y_j)/E_j)  −  k·max_j max(0, R_j − D̄_j·y_j)
//	s.t.      Σ_j w_j·x_{j,t} ≤ M                          every round t
//	          D̄_j·y_j ≤ Δ·Σ_t x_{j,t},  0 ≤ y_j ≤ E_j − F_j
//	          Δ·(r+T) + max(0, R_j − D̄_j·y_j)/s ≤ ρ_max·FT*_j   (first attempt)
//
// with s = min(1, M/N), f the piecewise-linear log through the breakpoints
// (0, .2, .4, .6, .8, 1) with ln 0 read as ln 1e-6 (or, as an option, the
// exact log), and p_j = 1. If the finish-time-fairness (FTF) constraints
// cannot all hold, the relaxed program drops them and weights job j by
// p_j = ρ̂_j^λ when its projected FTF ρ̂_j = (Δ·r + R_j/s)/FT*_j exceeds
// ρ_max (ρ̂_j^100 when also R_j < Δ). The authors' SOS2 binaries are
// redundant: f is concave, so the λ-formulation already interpolates.
//
// # The exact solver
//
// Both terms are non-decreasing in y_j, so y_j = min(n_j·Δ/D̄_j, E_j − F_j)
// and the program depends on x only through the counts n_j = Σ_t x_{j,t}:
// a job's welfare V_j(n) is concave and non-decreasing, its residual
// g_j(n) non-increasing, and its FTF constraint a lower bound n_j ≥ ℓ_j.
//
//  1. Count relaxation (capacity aggregated to Σ_j w_j·n_j ≤ M·T): for a
//     makespan bound τ, W(τ) = max Σ_j V_j(n_j) with n_j ≥ min{n: g_j(n) ≤ τ}
//     is a separable concave knapsack with few distinct weights, solved
//     exactly by width class (top marginal gains within a class, concave
//     max-plus convolution across classes). The optimal τ is some g_j(n);
//     W is non-decreasing, so a search over the sorted candidates, pruning
//     intervals whose bound W(τ_b) − k·τ_a cannot win, finds the optimum.
//  2. Round packing: the widest-first, most-free-rounds greedy packs every
//     packable count vector when the widths form a divisibility chain and
//     all but the largest divide M (pack.go has the proof); otherwise the
//     configuration LP with the counts fixed decides (a rounded pattern
//     mixture packs them, or its duals certify exactly that they cannot),
//     and an exact search over free-capacity multisets decides the rest.
//  3. When the relaxation's counts do not pack, a branch and bound on
//     packing covers (search.go) restores exactness. The aggregate capacity
//     is a weak bound when jobs are wide, so the root then brings in the
//     configuration LP (lp.go): rounds are interchangeable, a plan is a
//     multiset of T round patterns (slots per width class), and counts fit
//     the patterns exactly when every class's top-k counts fit its slots
//     (Gale–Ryser). The LP (floating point, a guide only) gives prices q_j
//     whose Lagrangian bound, Σ_j max_n (V_j(n) − q_j·n) + T·KS(q) with KS
//     the best single round, is valid for any q and is evaluated exactly
//     (lagrange.go); it joins W(τ) in every node, fixes counts at the root
//     (reduced costs), and the LP's pattern mixture, rounded and filled
//     class by class, supplies incumbents. The LP's solves after the first
//     (a separation round's new rows, the root's other makespans, a node's
//     box) start from the last basis, repaired by a dual simplex where the
//     change made it infeasible (lp.go). Nodes that still do not pack
//     re-solve the LP on their box, with the counts their makespan τ forces
//     as lower bounds; first its feasibility alone (every count fixed at
//     those bounds, a phase 1: the LP's feasible counts are closed under
//     decrease, so that is the same question, at a fraction of the simplex
//     iterations). Where it fails, the LP's duals, as integer prices q,
//     usually certify exactly that the forced counts do not pack
//     (Σ_j q_j·n_j > T·KS(q), which every packing violates): then no plan of
//     the node has a makespan ≤ τ, since a smaller makespan forces only
//     larger counts and packable counts are closed under decrease. The
//     node's makespan floor rises to τ (its children inherit it), its count
//     relaxation skips the makespans at or below the floor, and it is solved
//     again; the relaxation's counts had makespan τ, so each raise excludes
//     them and the floor only rises, through finitely many candidates. No
//     plan is lost (the floor excludes only plans that cannot pack) and the
//     search ends as before, proven: on {1,2,3} on 7 GPUs the floors end in
//     8 nodes what cover branching took 407.
//  4. Ranking (rank.go) decides which rounds each job gets, and the authors'
//     work-conserving backfill fills idle GPUs.
//
// Solutions report a [Status] (Optimal, Feasible with a Bound, Infeasible)
// and the objective. A context deadline returns the best plan so far.
//
// # Exact arithmetic
//
// On the relaxed path priorities span 1 to [MaxPriority] (ρ̂^λ is about
// 1e20 for a job far behind), and a float64 sum that holds a 1e19 term has
// a rounding step of 2048: the other jobs' terms would vanish from every
// total the solver compares. So every term of the objective is kept as an
// integer on a grid at most 2^-64 of its own scale, and the terms are cut
// into lexicographic tiers wherever one grid unit of a tier outweighs all
// the terms below it; sums are exact multi-limb integer additions and
// comparisons are exact (exact.go has the construction and its proof).
// Objective, Bound and Welfare are the exact values, correctly rounded to
// float64.
//
// # Determinism
//
// Equal inputs give equal plans: every tie is broken by a documented key
// (priority, then remaining runtime, then job ID), never by map order.
package market
