// Package link solves CASSINI's per-link optimization (Table 1 of the paper):
// rotate the jobs sharing a link on their unified circle so that their summed
// bandwidth demand exceeds the link capacity as little as possible.
//
// For a set A of points on the unified circle (perimeter P = LCM of the
// periods) and a capacity C, the score of time shifts t_j is
//
//	score = 1 - sum_{a in A} max(sum_j d_j((a - t_j) mod T_j) - C, 0) / (|A| * C)
//
// where d_j is job j's per-tick demand and T_j its period: 1 means the jobs
// never exceed the link together; it can be negative. Shifts are delays in
// ticks, t_j in [0, T_j).
//
// # Modes
//
// [Exact] (the default) takes A = every tick of the unified circle and
// searches every shift. [Paper] is the paper's discretization: |A| = 72
// angles (5 degrees), A sampled at ticks floor(a*P/72), and each job rotated
// by whole multiples of 5 degrees within one of its own periods,
// Δ_j in [0, 2π/r_j), whose time shift (Eq. 5) floor(m*P/72) is the tick
// the rotation starts in.
//
// # The shared circle
//
// An Exact search never needs the unified circle itself. Let Q be the LCM of
// the periods' pairwise gcds and q_j = gcd(T_j, Q). For every shift vector,
// the ticks of the unified circle correspond one to one to the tuples of
// per-job ticks x_j ≡ σ - t_j (mod q_j), σ in [0, Q) (package circle proves
// it): at each of the Q residues every job shows each tick of one class of
// T_j/q_j ticks, independently of the others. So the excess is a sum over
// Q residues of sums over products of class histograms, and job j's shift
// matters only modulo q_j. Coprime periods give Q = 1: no shift changes
// anything, and (5000, 4999) ms costs three histogram steps where its
// unified circle has 24,995,000 ticks.
//
// The classes are folded again by their own periods: if job j's class
// histograms repeat with period p_j dividing q_j, the same theorem applies to
// the periods p_j (classes in place of ticks): the circle shrinks to the LCM
// of the pairwise gcd(p_i, p_j), classes merge, shifts matter modulo
// gcd(p_j, that LCM), and the excess is the folded one times the LCM of the
// old moduli over that of the p_j. Repeated until nothing repeats, this
// proves, for instance, that every one of 4800 shift vectors of three jobs
// of 180, 200 and 240 ms whose phases spread evenly over their classes has
// the same excess, in two evaluations.
//
// On the folded circle a job whose classes each hold one demand is tiled
// over it; a job of one class is shift-free and merged with the others into
// a static histogram (a demand v adds max(b+v-C, 0) = max(b-(C-v), 0) at a
// tick of base b: one kernel pass per distinct v); the others keep their
// classes, and a residue's excess is a walk over the product of their
// histograms, cut short where every tuple is below the capacity (nothing)
// or above it (a closed form), the last class one binary search over its
// suffix sums. The whole unified circle is tiled instead, for the vector
// kernels, when it is within the cap and the cell limit and costs less. The
// cap ([circle.Options.MaxPerimeter]) bounds the circle the search builds;
// the unified perimeter is bounded only so that the excess summed over it
// fits an int64. All of it is integer arithmetic, so every path (and every
// kernel, and WebAssembly) gives the same answer.
//
// # Search
//
// The score is unchanged when every job is delayed by the same amount, so
// one job is fixed (job 0, or the caller's fixed jobs), and since a fixed
// job's shift matters only modulo its modulus, the first free job needs only
// shifts below the gcd of its modulus and the LCM of the fixed jobs' moduli.
// Two free jobs with the same period and demand are ordered (swapping their
// shifts changes nothing). Each of these keeps the lexicographically
// smallest optimum among the shifts searched: it satisfies every one of them
// (a vector that does not is equivalent to a smaller one).
//
// One free job is one scan of its shifts. Three or more jobs are solved by
// depth-first branch and bound over the free jobs' shifts in input order,
// the last job's shifts scanned at each leaf, pruned by lower bounds on the
// excess (the excess already caused plus the part of the remaining demand
// that cannot fit in the capacity left free; and, the excess being convex,
// the sum of each remaining job's least increment). A scan scores every
// shift with the across-shift kernel, or, when the job's demand is few runs
// of equal demand, by the runs: with Φ_v the excess at each residue if the
// job showed demand v there, folded modulo the job's pattern into Ψ_v,
//
//	E(s) = size·sum Ψ_0 + sum_runs n·sum_{c in run} (Ψ_v - Ψ_0)[(c+s) mod m],
//
// each inner sum one difference of prefix sums: a pass per distinct demand
// plus one step per run and shift, instead of one kernel pair per tick and
// shift (two equal periods of 2550 ticks: 4x faster; 100000 ticks: 10^10
// pairs become 6·10^5 steps). A partial state counts the class jobs it does
// not hold as if they showed no demand, so that states with and without a
// job compare in one unit. Unless the proof would cost little even with
// nothing pruned (within the budget and 64 rounds of descent: then it runs
// from the unshifted shifts, and ends at the same optimum for less),
// coordinate descent with restarts supplies an incumbent first; if the
// budget or the context's deadline ends the proof, the result is the best
// found, with status [Budget] or [TimeLimit] and an upper bound on the
// optimal score. [Options.Materialize] runs the search as it was before the
// shared circle, the baseline the benchmarks measure against.
//
// # Ties
//
// Among optimal shift vectors the lexicographically smallest (in job order)
// wins, so results are deterministic.
//
// # Rounding
//
// Periods are rounded only past the limits and only with
// [circle.Options.Round]: up to the smallest grid on which the shared circle
// fits the cap. The result then says so (Circle.Rounded) and scores its
// shifts on the jobs' own periods too ([Result.Unrounded]).
//
// # Allocation
//
// A [Workspace] holds every buffer; once it has seen a problem of a given
// size, searching problems of that size or smaller allocates nothing.
package link
