// Package policy holds the scheduling policies the Shockwave paper compares,
// as [sim.Policy] implementations for the round simulator (package sim):
//
//	shockwave                Shockwave: orrery's market planner (package round)
//	max_min_fairness         Gavel's max-min fairness ("Gavel")
//	finish_time_fairness     finish-time fairness, min max ρ ("Themis")
//	min_total_duration       minimum makespan ("OSSP")
//	max_sum_throughput_perf  maximum total throughput ("MST")
//	allox                    AlloX, alpha 0.2 ("AlloX")
//	gandiva_fair             Gandiva-Fair's equal split ("Gandiva-Fair")
//
// The names are the authors' (github.com/uw-mad-dash/shockwave,
// scheduler/utils.py get_policy); [New] builds any of them and also accepts
// the figures' legends.
//
// # The baselines
//
// Each baseline is an [Allocator], a program over time fractions: job j
// runs on w_j GPUs for a fraction x_j ∈ [0, 1] of the time, within the
// cluster's M GPUs, Σ_j w_j·x_j ≤ M. The authors solve these with cvxpy
// (ECOS, Gurobi for finish-time fairness); here each has an exact solver of
// its own, documented on its type:
//
//   - [MaxMinFairness]: max min_j w_j·x_j, solved by water-filling over the
//     sorted breakpoints (closed form, piecewise linear);
//   - [FinishTimeFairness]: min max_j ρ_j(x_j), solved by bisection on the
//     common level ρ to adjacent floating-point numbers (each job's demand
//     at a level is a closed-form hyperbola, the total is monotone);
//   - [MinTotalDuration]: the smallest makespan T has the closed form
//     max(max_j rem_j/tput_j, Σ_j w_j·rem_j/tput_j / M);
//   - [MaxSumThroughput]: a fractional knapsack, solved greedily;
//   - [AlloX]: a min-cost matching of the longest-waiting jobs to
//     (worker, position) slots, solved exactly by the shortest augmenting
//     path method with SciPy's tie-breaking, so that the same jobs win the
//     same GPUs as in the authors' runs; the first job of each worker is
//     allocated, and allocations persist across recomputations as upstream;
//   - [GandivaFair]: x_j = min(1, M/N), closed form.
//
// When a program has several optima, the solver returns a documented
// canonical one (the lexicographically fair point for the two fairness
// programs, the smallest point for OSSP, ties by job ID for MST); the
// authors get whichever point their solver happens to return.
//
// [Gavel] turns the fractions into rounds as Gavel does: the allocation is
// recomputed at most every 1000 s when the job set changed, each job's
// priority is x_j over the share of time it received since then, and jobs
// are packed greedily by priority. Its doc lists the upstream behaviours it
// reproduces.
//
// # Shockwave
//
// [Shockwave] feeds the simulator's events to round.Scheduler, the
// counterpart of the authors' ShockwaveScheduler, which re-plans on
// arrivals, completions and every 8 rounds with the exact market solver.
package policy
