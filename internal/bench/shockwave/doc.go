// Package shockwave writes the Shockwave authors' per-round program as a
// mixed-integer linear program (package mip), exactly as their code builds
// it for Gurobi (scheduler/shockwave.py, dynamic_eisenberg_gale_scheduling),
// so that an off-the-shelf MILP solver can be run side by side with
// orrery's exact planner (engine/shockwave/market) on the same program, and so that
// either side's plan can be checked and scored by the other's definition.
//
// # The program
//
// For N jobs on M GPUs over T rounds of Δ seconds ([Build]):
//
//	x_{j,t} ∈ {0,1}         job j runs in round t
//	y_j ≥ 0                 epochs planned
//	λ_{j,b} ≥ 0, z_{j,b} ∈ {0,1}   SOS2 interpolation of the log at the
//	                        breakpoints β_b (0, .2, .4, .6, .8, 1)
//	r_j ≥ 0, τ ≥ 0          residual runtime max(0, R_j − D̄_j·y_j) and its max
//
//	maximize (1/(N·T))·Σ_j p_j·Σ_b ℓ_b·λ_{j,b} − k·τ
//	  Σ_j w_j·x_{j,t} ≤ M                 every round t
//	  D̄_j·y_j ≤ Δ·Σ_t x_{j,t}
//	  Σ_b E_j·β_b·λ_{j,b} − y_j = F_j,  Σ_b λ_{j,b} = 1   ((F_j+y_j)/E_j, scaled by E_j)
//	  λ_{j,b} ≤ z_{j,b},  Σ_b z_{j,b} ≤ 2,  z_{j,a} + z_{j,c} ≤ 1 (c ≥ a+2)
//	  r_j + D̄_j·y_j ≥ R_j,  τ ≥ r_j
//	  r_j ≤ s·(ρ_max·FT*_j − Δ·(r+T))     finish-time fairness (the [Fair] path)
//
// with ℓ_b = ln β_b (ln 1e-6 for β = 0), s = min(1, M/N) and p_j = 1 on the
// fair path. On the [Relaxed] path (the authors' fallback when the fair
// program is infeasible) the fairness rows are dropped and p_j are the
// authors' priorities ([Priorities]). The authors' cvxpy model states
// max(0, R_j − D̄_j·y_j) and the max over jobs directly; r_j and τ are their
// standard linear form, with the same optimum.
//
// # Judging plans
//
// [Program.Assign] turns a round plan (orrery's market.Solution.Rounds) into
// a full assignment of the program's variables, with y_j, λ, z, r_j and τ
// at their best values for those rounds, so that mip.Model.Check proves the
// plan feasible and mip.Model.Objective scores it by the program's own
// objective. [Program.Plan] reads a solver's x back into rounds, and
// [Evaluate] scores any plan by the count formulation orrery solves, so
// each side is checked by the other's definition.
//
// # Instances
//
// [Load] reads one of the authors' setups (trace, throughput table,
// configuration; [Setups]) and [Loaded.Problem] builds a planner problem
// from it as engine/shockwave/market's tests and benchmarks do: every job of the trace
// active, progress drawn uniformly in [0, 0.9·E_j) with a seed, R_j and D̄_j
// from the faithful predictor, FT*_j the authors' uniform-share estimate.
package shockwave
