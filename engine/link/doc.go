// Package link solves CASSINI's per-link optimization (Table 1 of the paper):
// rotate the jobs sharing a link on their unified circle so that their summed
// bandwidth demand exceeds the link capacity as little as possible.
//
// For a set A of points on the unified circle (perimeter p = LCM of the
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
// angles (5 degrees), A sampled at ticks floor(a*p/72), and each job rotated
// by whole multiples of 5 degrees within one of its own periods,
// Δ_j in [0, 2π/r_j), whose time shift (Eq. 5) floor(m*p/72) is the tick
// the rotation starts in.
//
// # Search
//
// The score is unchanged when every job is delayed by the same amount, so
// one job is fixed (job 0, or the caller's fixed jobs). In Exact mode the
// score also depends on job j's shift only modulo
// g_j = gcd(T_j, L_j), L_j the LCM of the other jobs' periods: the other
// jobs' summed demand has period L_j, and by the Chinese remainder theorem
// tick a of the circle meets the pair (a mod L_j, (a - t_j) mod T_j); as a
// runs over the circle these pairs run over exactly the (x, y) with
// x ≡ y + t_j (mod g_j), once each, a set that depends on t_j only through
// t_j mod g_j. So only shifts [0, g_j) are searched; for two jobs with
// periods 255 and 181 ticks that is 1 shift instead of 181.
//
// Two jobs are solved exhaustively by one vector kernel call over all
// candidate shifts (package kernels). Three or more are solved by depth-first
// branch and bound over the free jobs' shifts in input order, the last job's
// shifts scanned by the kernel at each leaf, pruned by a lower bound on the
// excess: the excess already caused by the jobs placed so far, plus the part
// of the remaining jobs' demand that cannot fit in the capacity left free.
// When the search would cost more than the budget, coordinate descent with
// restarts supplies an incumbent first; if the budget or the context's
// deadline ends the proof, the result is the best found, with status
// [Budget] or [TimeLimit] and an upper bound on the optimal score.
//
// # Ties
//
// Among optimal shift vectors the lexicographically smallest (in job order)
// wins, so results are deterministic.
//
// # Allocation
//
// A [Workspace] holds every buffer; once it has seen a problem of a given
// size, searching problems of that size or smaller allocates nothing.
package link
