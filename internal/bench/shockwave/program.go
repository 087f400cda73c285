package shockwave

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/internal/bench/mip"
)

// Path says which of the authors' two programs to build.
type Path uint8

const (
	// Fair is the first attempt: finish-time-fairness constraints, p_j = 1.
	Fair Path = iota
	// Relaxed drops the fairness constraints and weights jobs by the
	// authors' priorities.
	Relaxed
)

func (p Path) String() string {
	if p == Fair {
		return "fair"
	}
	return "relaxed"
}

// ErrProblem reports a problem this package cannot build: one that
// market.Solve would reject, checked here only as far as the build needs.
var ErrProblem = errors.New("shockwave: invalid problem")

// Params are a problem's planner knobs with market's defaults applied.
type Params struct {
	T                   int       // rounds
	Delta               float64   // round length, seconds
	K                   float64   // makespan weight
	Lambda, RhoMax      float64   // priority power, FTF bound
	LogZero, Urgent     float64   // ln(0) stand-in, power for jobs about to finish
	Breakpoints, LogsAt []float64 // β_b and ℓ_b
}

// Resolve applies market.Config's documented defaults. It does not support
// market.ExactLog (the authors' program is piecewise).
func Resolve(c market.Config) (Params, error) {
	if c.Log != market.PiecewiseLog {
		return Params{}, fmt.Errorf("%w: log mode %v (the authors' program is piecewise)", ErrProblem, c.Log)
	}
	def := func(v, d float64) float64 {
		if v == 0 {
			return d
		}
		return v
	}
	p := Params{T: c.Rounds, Delta: def(c.RoundSeconds, market.DefaultRoundSeconds), K: def(c.K, market.DefaultK),
		Lambda: def(c.Lambda, market.DefaultLambda), RhoMax: def(c.RhoMax, market.DefaultRhoMax),
		LogZero: def(c.LogZero, market.DefaultLogZero), Urgent: def(c.UrgentPower, market.DefaultUrgentPower),
		Breakpoints: c.Breakpoints}
	if p.T == 0 {
		p.T = market.DefaultRounds
	}
	if p.Breakpoints == nil {
		p.Breakpoints = market.DefaultBreakpoints()
	}
	for i, b := range p.Breakpoints {
		if i == 0 {
			p.LogsAt = append(p.LogsAt, math.Log(p.LogZero))
		} else {
			p.LogsAt = append(p.LogsAt, math.Log(b))
		}
	}
	return p, nil
}

// Curve is the authors' piecewise-linear log at normalized progress u.
func (p *Params) Curve(u float64) float64 {
	bp, lg := p.Breakpoints, p.LogsAt
	i := 1
	for i < len(bp)-1 && u > bp[i] {
		i++
	}
	return lg[i-1] + (u-bp[i-1])*(lg[i]-lg[i-1])/(bp[i]-bp[i-1])
}

// share is the authors' future share min(1, M/N).
func share(gpus, jobs int) float64 {
	if jobs == 0 {
		return 1
	}
	return min(1, float64(gpus)/float64(jobs))
}

// Priorities returns the relaxed path's weights, the authors'
// relax_finish_time_constraints: with ρ̂_j = (Δ·r + R_j/s)/FT*_j,
// p_j = ρ̂_j^λ if ρ̂_j > ρ_max (ρ̂_j^100 if also R_j < Δ), else 1, capped
// at market.MaxPriority.
func Priorities(pr *market.Problem, par Params) []float64 {
	s := share(pr.GPUs, len(pr.Jobs))
	out := make([]float64, len(pr.Jobs))
	for j, job := range pr.Jobs {
		rho := (par.Delta*float64(pr.Round) + job.Remaining/s) / job.FairFinish
		p := 1.0
		if rho > par.RhoMax {
			p = math.Pow(rho, par.Lambda)
			if job.Remaining < par.Delta {
				p = math.Pow(rho, par.Urgent)
			}
		}
		out[j] = min(p, market.MaxPriority)
	}
	return out
}

// Program is the authors' program for one problem and path, with the
// index of every variable in Model.
type Program struct {
	Model    *mip.Model
	Problem  *market.Problem
	Params   Params
	Path     Path
	Priority []float64 // p_j

	X    [][]int // X[j][t]: x_{j,t}
	Y, R []int   // y_j, r_j
	L, Z [][]int // λ_{j,b}, z_{j,b}
	Tau  int
}

// Build writes the program of pr on the given path (see the package doc).
// On the fair path, a job whose target is already past (ρ_max·FT*_j <
// Δ·(r+T)) makes the program infeasible, as in the authors' code: its row
// r_j ≤ (a negative number) stays in the model.
func Build(pr *market.Problem, path Path) (*Program, error) {
	par, err := Resolve(pr.Config)
	if err != nil {
		return nil, err
	}
	if pr.GPUs < 1 || par.T < 1 {
		return nil, fmt.Errorf("%w: %d GPUs, %d rounds", ErrProblem, pr.GPUs, par.T)
	}
	N, T, B := len(pr.Jobs), par.T, len(par.Breakpoints)
	for j, job := range pr.Jobs {
		if job.Epochs < 1 || job.MeanEpoch <= 0 || job.FairFinish <= 0 || job.GPUs < 1 {
			return nil, fmt.Errorf("%w: job %d: %+v", ErrProblem, j, job)
		}
	}
	pg := &Program{Model: &mip.Model{Maximize: true}, Problem: pr, Params: par, Path: path,
		X: make([][]int, N), Y: make([]int, N), R: make([]int, N), L: make([][]int, N), Z: make([][]int, N)}
	if path == Relaxed {
		pg.Priority = Priorities(pr, par)
	} else {
		pg.Priority = make([]float64, N)
		for j := range pg.Priority {
			pg.Priority[j] = 1
		}
	}
	m := pg.Model
	inf := math.Inf(1)
	js := func(j int) string { return strconv.Itoa(j) }
	for j := range N {
		pg.X[j] = make([]int, T)
		for t := range T {
			pg.X[j][t] = m.Add("x_"+js(j)+"_"+strconv.Itoa(t), mip.Binary, 0, 1)
		}
		pg.Y[j] = m.Add("y_"+js(j), mip.Continuous, 0, inf)
		pg.R[j] = m.Add("r_"+js(j), mip.Continuous, 0, inf)
		pg.L[j], pg.Z[j] = make([]int, B), make([]int, B)
		for b := range B {
			pg.L[j][b] = m.Add("l_"+js(j)+"_"+strconv.Itoa(b), mip.Continuous, 0, inf)
		}
		for b := range B {
			pg.Z[j][b] = m.Add("z_"+js(j)+"_"+strconv.Itoa(b), mip.Binary, 0, 1)
		}
	}
	pg.Tau = m.Add("tau", mip.Continuous, 0, inf)

	// Objective: (1/(N·T))·Σ_j p_j·Σ_b ℓ_b·λ_{j,b} − k·τ.
	nt := float64(N) * float64(T)
	for j := range N {
		for b := range B {
			if c := pg.Priority[j] * par.LogsAt[b] / nt; c != 0 {
				m.Obj = append(m.Obj, mip.Term{Var: pg.L[j][b], Coef: c})
			}
		}
	}
	m.Obj = append(m.Obj, mip.Term{Var: pg.Tau, Coef: -par.K})

	// 1. Capacity per round.
	for t := range T {
		row := make([]mip.Term, N)
		for j, job := range pr.Jobs {
			row[j] = mip.Term{Var: pg.X[j][t], Coef: float64(job.GPUs)}
		}
		m.Constrain("cap_"+strconv.Itoa(t), row, mip.LE, float64(pr.GPUs))
	}
	s := share(pr.GPUs, N)
	end := par.Delta * float64(pr.Round+T)
	for j, job := range pr.Jobs {
		// 2. Progress: D̄_j·y_j − Δ·Σ_t x_{j,t} ≤ 0.
		row := []mip.Term{{Var: pg.Y[j], Coef: job.MeanEpoch}}
		for t := range T {
			row = append(row, mip.Term{Var: pg.X[j][t], Coef: -par.Delta})
		}
		m.Constrain("prog_"+js(j), row, mip.LE, 0)
		// 3. The SOS2 λ-formulation of the log.
		conv := []mip.Term{{Var: pg.Y[j], Coef: -1}}
		one := make([]mip.Term, B)
		zs := make([]mip.Term, B)
		for b := range B {
			if c := float64(job.Epochs) * par.Breakpoints[b]; c != 0 {
				conv = append(conv, mip.Term{Var: pg.L[j][b], Coef: c})
			}
			one[b] = mip.Term{Var: pg.L[j][b], Coef: 1}
			zs[b] = mip.Term{Var: pg.Z[j][b], Coef: 1}
			m.Constrain("lz_"+js(j)+"_"+strconv.Itoa(b), []mip.Term{{Var: pg.L[j][b], Coef: 1}, {Var: pg.Z[j][b], Coef: -1}}, mip.LE, 0)
		}
		m.Constrain("conv_"+js(j), conv, mip.EQ, float64(job.Progress))
		m.Constrain("one_"+js(j), one, mip.EQ, 1)
		m.Constrain("ztwo_"+js(j), zs, mip.LE, 2)
		for a := range B {
			for c := a + 2; c < B; c++ {
				m.Constrain("adj_"+js(j)+"_"+strconv.Itoa(a)+"_"+strconv.Itoa(c),
					[]mip.Term{{Var: pg.Z[j][a], Coef: 1}, {Var: pg.Z[j][c], Coef: 1}}, mip.LE, 1)
			}
		}
		// Residual and its max.
		m.Constrain("res_"+js(j), []mip.Term{{Var: pg.R[j], Coef: 1}, {Var: pg.Y[j], Coef: job.MeanEpoch}}, mip.GE, job.Remaining)
		m.Constrain("mk_"+js(j), []mip.Term{{Var: pg.Tau, Coef: 1}, {Var: pg.R[j], Coef: -1}}, mip.GE, 0)
		// 4. Finish-time fairness: Δ·(r+T) + r_j/s ≤ ρ_max·FT*_j.
		if path == Fair {
			m.Constrain("ftf_"+js(j), []mip.Term{{Var: pg.R[j], Coef: 1}}, mip.LE, s*(par.RhoMax*job.FairFinish-end))
		}
	}
	return pg, nil
}

// epochs is y_j for n rounds: min(n·Δ/D̄_j, E_j − F_j).
func (pg *Program) epochs(j, n int) float64 {
	job := &pg.Problem.Jobs[j]
	return min(float64(n)*pg.Params.Delta/job.MeanEpoch, float64(job.Epochs-job.Progress))
}

// Assign returns the assignment of every variable for a round plan
// (rounds[t] lists the jobs, by index, that run in window round t), with
// y_j = min(n_j·Δ/D̄_j, E_j − F_j), the best for those rounds, λ and z on
// the segment of the log that holds (F_j+y_j)/E_j, r_j and τ tight. It
// fails if the plan has a round outside the window or a job index out of
// range; it does not check capacity or fairness (Model.Check does).
func (pg *Program) Assign(rounds [][]int) ([]float64, error) {
	N, T := len(pg.Problem.Jobs), pg.Params.T
	if len(rounds) > T {
		return nil, fmt.Errorf("%w: %d rounds in a %d-round window", ErrProblem, len(rounds), T)
	}
	x := make([]float64, len(pg.Model.Vars))
	n := make([]int, N)
	for t, js := range rounds {
		for _, j := range js {
			if j < 0 || j >= N {
				return nil, fmt.Errorf("%w: job %d in round %d", ErrProblem, j, t)
			}
			if x[pg.X[j][t]] == 0 {
				n[j]++
			}
			x[pg.X[j][t]] = 1
		}
	}
	bp := pg.Params.Breakpoints
	for j, job := range pg.Problem.Jobs {
		y := pg.epochs(j, n[j])
		x[pg.Y[j]] = y
		u := (float64(job.Progress) + y) / float64(job.Epochs)
		i := 1
		for i < len(bp)-1 && u > bp[i] {
			i++
		}
		hi := (u - bp[i-1]) / (bp[i] - bp[i-1])
		x[pg.L[j][i-1]], x[pg.L[j][i]] = 1-hi, hi
		x[pg.Z[j][i-1]], x[pg.Z[j][i]] = 1, 1
		r := max(0, job.Remaining-job.MeanEpoch*y)
		x[pg.R[j]] = r
		x[pg.Tau] = max(x[pg.Tau], r)
	}
	return x, nil
}

// Plan reads the rounds of an assignment (a solver's solution): job j runs
// in round t when x_{j,t} rounds to 1.
func (pg *Program) Plan(x []float64) [][]int {
	rounds := make([][]int, pg.Params.T)
	for t := range rounds {
		rounds[t] = []int{}
		for j := range pg.Problem.Jobs {
			if math.Round(x[pg.X[j][t]]) == 1 {
				rounds[t] = append(rounds[t], j)
			}
		}
	}
	return rounds
}
