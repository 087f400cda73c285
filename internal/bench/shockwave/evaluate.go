package shockwave

import (
	"errors"
	"fmt"
)

// Value is a plan's score under the count formulation orrery solves.
type Value struct {
	Objective float64 // Welfare − k·Makespan
	Welfare   float64 // (1/(N·T))·Σ_j p_j·f((F_j+y_j)/E_j)
	Makespan  float64 // max_j max(0, R_j − D̄_j·y_j), seconds
	Counts    []int   // n_j, rounds per job
}

// ErrInfeasible reports a plan that breaks the program: a round over
// capacity, a job twice in a round, a fairness target missed.
var ErrInfeasible = errors.New("shockwave: plan infeasible")

// Evaluate checks a round plan against the program by counts, as
// engine/shockwave/market states it (the objective depends on x only through
// n_j = Σ_t x_{j,t}, with y_j = min(n_j·Δ/D̄_j, E_j − F_j)), and scores it.
// It is independent of Model: a second definition each side is judged by.
func (pg *Program) Evaluate(rounds [][]int) (Value, error) {
	pr, par := pg.Problem, pg.Params
	N := len(pr.Jobs)
	if len(rounds) > par.T {
		return Value{}, fmt.Errorf("%w: %d rounds in a %d-round window", ErrInfeasible, len(rounds), par.T)
	}
	v := Value{Counts: make([]int, N)}
	for t, js := range rounds {
		used := 0
		seen := make(map[int]bool, len(js))
		for _, j := range js {
			if j < 0 || j >= N || seen[j] {
				return Value{}, fmt.Errorf("%w: round %d lists job %d twice or out of range", ErrInfeasible, t, j)
			}
			seen[j] = true
			used += pr.Jobs[j].GPUs
			v.Counts[j]++
		}
		if used > pr.GPUs {
			return Value{}, fmt.Errorf("%w: round %d uses %d of %d GPUs", ErrInfeasible, t, used, pr.GPUs)
		}
	}
	s := share(pr.GPUs, N)
	end := par.Delta * float64(pr.Round+par.T)
	nt := float64(N) * float64(par.T)
	for j, job := range pr.Jobs {
		y := pg.epochs(j, v.Counts[j])
		u := (float64(job.Progress) + y) / float64(job.Epochs)
		v.Welfare += pg.Priority[j] * par.Curve(u) / nt
		r := max(0, job.Remaining-job.MeanEpoch*y)
		v.Makespan = max(v.Makespan, r)
		if pg.Path == Fair && end+r/s > par.RhoMax*job.FairFinish*(1+1e-12) {
			return Value{}, fmt.Errorf("%w: job %d finishes at %.6g, past its target %.6g", ErrInfeasible, j, end+r/s, par.RhoMax*job.FairFinish)
		}
	}
	v.Objective = v.Welfare - par.K*v.Makespan
	return v, nil
}
