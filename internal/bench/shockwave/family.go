package shockwave

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/orrery/orrery/engine/shockwave/market"
)

// Family describes synthetic planner instances that stress the round
// packing: job widths from a given set on clusters of any size, with either
// finish-time-fairness targets the plan can meet (the fair path) or a job
// already past its target (the relaxed path), optionally with a few jobs far
// behind, whose priorities reach 1e20 to 1e300. The zero value of every
// field but Widths, GPUs and Jobs means its documented default.
type Family struct {
	Widths []int   // the job widths drawn from, uniformly (those ≤ GPUs)
	GPUs   int     // M
	Jobs   int     // N
	Rounds int     // T; 0 means 10
	K      float64 // the makespan weight; 0 means market.DefaultK
	Path   Path    // the program the instance is built for
	// Huge gives one to three jobs of a relaxed instance priorities from
	// 1e6 up to market.MaxPriority.
	Huge bool
	Seed uint64 // 0 means 1
}

// String names the family's instance, e.g. "24 jobs, 32 GPUs, widths
// {1,2,4,8}, 10 rounds, k 0.001, fair, seed 1".
func (f Family) String() string {
	ws := make([]string, len(f.Widths))
	for i, w := range f.Widths {
		ws[i] = strconv.Itoa(w)
	}
	s := fmt.Sprintf("%d jobs, %d GPUs, widths {%s}, %d rounds, k %g, %s", f.Jobs, f.GPUs, strings.Join(ws, ","), f.rounds(), f.k(), f.Path)
	if f.Huge {
		s += " (huge priorities)"
	}
	return s + fmt.Sprintf(", seed %d", f.seed())
}

func (f Family) rounds() int {
	if f.Rounds == 0 {
		return 10
	}
	return f.Rounds
}

func (f Family) k() float64 {
	if f.K == 0 {
		return market.DefaultK
	}
	return f.K
}

func (f Family) seed() uint64 {
	if f.Seed == 0 {
		return 1
	}
	return f.Seed
}

// Problem draws the instance. Jobs have 5 to 60 epochs, up to 90% done,
// mean epochs of 20 to 420 s and a remaining runtime within ±30% of what
// the mean predicts (one in eight about to finish: below one round), so
// most jobs could use every round of the window and the rounds are
// contended. On the fair path the targets are set from a random packing
// (rounds filled first-fit in a random job order): every job's target is
// met, with 0 to 10% to spare, by some share (30 to 100%, or none) of the
// rounds that packing gives it, so the fair program is feasible and its
// lower bounds bind. On the relaxed path the targets are the 1/N-share
// estimate scaled by 0.2 to 1.4, and job 0's is already past, so the fair
// program is infeasible.
func (f Family) Problem() (*market.Problem, error) {
	M, N, T := f.GPUs, f.Jobs, f.rounds()
	var widths []int
	for _, w := range f.Widths {
		if w >= 1 && w <= M {
			widths = append(widths, w)
		}
	}
	if M < 1 || N < 1 || len(widths) == 0 {
		return nil, fmt.Errorf("%w: family %v has no job that fits", ErrProblem, f)
	}
	rng := rand.New(rand.NewPCG(f.seed(), uint64(M)<<20|uint64(N)))
	const delta = market.DefaultRoundSeconds
	p := &market.Problem{GPUs: M, Round: 5 + rng.IntN(20), Config: market.Config{Rounds: T, K: f.K}}
	for j := range N {
		E := 5 + rng.IntN(56)
		F := int(float64(rng.Float64()*0.9) * float64(E))
		D := 20 + float64(rng.Float64()*400)
		R := float64(D*float64(E-F)) * (0.7 + float64(rng.Float64()*0.6))
		if rng.IntN(8) == 0 {
			R = float64(rng.Float64() * delta)
		}
		p.Jobs = append(p.Jobs, market.Job{ID: 1 + j, GPUs: widths[rng.IntN(len(widths))], Epochs: E, Progress: F,
			MeanEpoch: D, Remaining: R})
	}
	s := share(M, N)
	end := float64(delta * float64(p.Round+T))
	if f.Path == Fair {
		counts := randomPacking(rng, p, T)
		for j := range p.Jobs {
			job := &p.Jobs[j]
			n := 0
			if u := rng.Float64(); u < 0.8 {
				n = int(math.Floor(float64(counts[j]) * (0.3 + 0.7*u/0.8)))
			}
			y := min(float64(n)*delta/job.MeanEpoch, float64(job.Epochs-job.Progress))
			r := max(0, job.Remaining-float64(job.MeanEpoch*y))
			job.FairFinish = (end + r/s) * (1 + float64(rng.Float64()*0.1))
		}
		return p, nil
	}
	for j := range p.Jobs {
		job := &p.Jobs[j]
		job.FairFinish = end + float64(job.Remaining/s*(0.2+float64(rng.Float64()*1.2))) + float64(rng.Float64()*100)
	}
	p.Jobs[0].FairFinish = end / 2
	if f.Huge {
		targets := []float64{1e6, 1e12, 1e20, 1e22, 1e40, 1e100, 1e300}
		for q := 0; q < 1+rng.IntN(3); q++ {
			job := &p.Jobs[rng.IntN(N)]
			num := float64(delta*float64(p.Round)) + job.Remaining/s
			power := market.DefaultLambda
			if job.Remaining < delta {
				power = market.DefaultUrgentPower
			}
			job.FairFinish = num / math.Pow(targets[rng.IntN(len(targets))], 1/power)
		}
	}
	return p, nil
}

// randomPacking fills each round first-fit with the jobs in a random order
// and returns each job's rounds.
func randomPacking(rng *rand.Rand, p *market.Problem, T int) []int {
	counts := make([]int, len(p.Jobs))
	order := make([]int, len(p.Jobs))
	for j := range order {
		order[j] = j
	}
	for range T {
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		free := p.GPUs
		for _, j := range order {
			if w := p.Jobs[j].GPUs; w <= free {
				free -= w
				counts[j]++
			}
		}
	}
	return counts
}

// FamilySpec is one family of the planner comparison: a shape, how many
// seeds to draw, and whether its first seed is in the CI subset.
type FamilySpec struct {
	Name   string // e.g. "{1,2,4,8} on 10 GPUs, 24 jobs, fair"
	Family Family // Seed is set per instance (1..Seeds)
	Seeds  int
	Smoke  bool
}

// FamilySpecs lists the families of the benchmark suite's comparison with
// HiGHS: widths {1,2,4,8}, {1,2,3} and {3,5,6,1} on clusters of 7 to 512
// GPUs (powers of two and not), 20 to 2000 jobs, both paths, k from 1e-3 to
// 1e5, and priorities up to 1e300.
func FamilySpecs() []FamilySpec {
	type shape struct {
		widths       []int
		gpus, jobs   int
		rounds       int
		k            float64
		huge         bool
		seeds        int
		smokeFair    bool
		smokeRelaxed bool
	}
	w1248, w123, w3561 := []int{1, 2, 4, 8}, []int{1, 2, 3}, []int{3, 5, 6, 1}
	shapes := []shape{
		{w1248, 32, 24, 10, 0, false, 3, true, true},
		{w1248, 24, 20, 10, 0, false, 3, false, false},
		{w1248, 10, 24, 10, 0, false, 3, true, false},
		{w1248, 32, 24, 10, 10, false, 3, false, true},
		{w1248, 32, 24, 10, 1e5, false, 3, true, false},
		{w1248, 128, 200, 20, 0, false, 2, false, false},
		{w1248, 512, 2000, 20, 0, false, 1, false, false},
		{w123, 7, 20, 10, 0, false, 3, true, true},
		{w123, 13, 24, 10, 0, false, 3, false, false},
		{w123, 24, 100, 10, 0, false, 2, false, false},
		{w3561, 10, 24, 10, 0, false, 3, false, true},
		{w3561, 13, 24, 10, 0, false, 3, true, false},
		{w3561, 61, 200, 10, 0, false, 2, false, false},
		{w1248, 32, 24, 10, 0, true, 3, false, false},
		{w3561, 13, 24, 10, 0, true, 3, false, false},
	}
	var out []FamilySpec
	for _, sh := range shapes {
		for _, path := range []Path{Fair, Relaxed} {
			if sh.huge && path == Fair {
				continue // priorities are the relaxed path's
			}
			f := Family{Widths: sh.widths, GPUs: sh.gpus, Jobs: sh.jobs, Rounds: sh.rounds, K: sh.k, Path: path, Huge: sh.huge}
			ws := make([]string, len(sh.widths))
			for i, w := range sh.widths {
				ws[i] = strconv.Itoa(w)
			}
			name := fmt.Sprintf("{%s} on %d GPUs, %d jobs, %d rounds, k %g, %s", strings.Join(ws, ","), sh.gpus, sh.jobs, sh.rounds, f.k(), path)
			if sh.huge {
				name += ", priorities to 1e300"
			}
			smoke := (path == Fair && sh.smokeFair) || (path == Relaxed && sh.smokeRelaxed)
			out = append(out, FamilySpec{Name: name, Family: f, Seeds: sh.seeds, Smoke: smoke})
		}
	}
	return out
}
