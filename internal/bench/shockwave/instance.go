package shockwave

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// Loaded is a setup read from disk: the trace's jobs, their derived
// per-epoch profiles and the configuration.
type Loaded struct {
	Setup    trace.Setup
	Jobs     []trace.Job
	Profiles []trace.Profile
	Config   trace.Config
}

// Load reads setup s from dir (the repository's internal/eval/data/shockwave).
func Load(dir string, s trace.Setup) (*Loaded, error) {
	jobs, err := trace.ParseFile(filepath.Join(dir, "traces", s.Trace))
	if err != nil {
		return nil, err
	}
	tab, err := throughput.LoadFile(filepath.Join(dir, s.Table))
	if err != nil {
		return nil, err
	}
	profs, err := trace.DeriveAll(jobs, tab, trace.DeriveOptions{})
	if err != nil {
		return nil, err
	}
	cfg, err := trace.LoadConfigFile(filepath.Join(dir, "configurations", s.Config))
	if err != nil {
		return nil, err
	}
	return &Loaded{Setup: s, Jobs: jobs, Profiles: profs, Config: cfg}, nil
}

// Instance selects a problem from a loaded setup. The zero value is every
// job of the trace on the setup's cluster, seed 1, the authors' FT*.
type Instance struct {
	Jobs   int // N; 0 means all of the trace (more repeat it with new IDs)
	Offset int // first trace job used
	GPUs   int // M; 0 means the setup's
	Rounds int // T; 0 means the configuration's future_rounds
	Seed   uint64
	// FairScale multiplies every FT*_j; 0 means 1 (the authors' targets,
	// under which the fair program is usually infeasible). Larger values
	// make the finish-time-fair path feasible.
	FairScale float64
}

// Problem builds the planner problem of in, as engine/shockwave/market's tests do:
// progress F_j uniform in [0, 0.9·E_j) from the seed, R_j and D̄_j from the
// faithful predictor, FT*_j the authors' uniform-share estimate from the
// job's arrival on M GPUs among N jobs, the round index the first after the
// last arrival, and the configuration's k, λ, ρ_max and breakpoints.
func (l *Loaded) Problem(in Instance) (*market.Problem, error) {
	M, N := in.GPUs, in.Jobs
	if M == 0 {
		M = l.Setup.GPUs
	}
	if N == 0 {
		N = len(l.Jobs)
	}
	scale := in.FairScale
	if scale == 0 {
		scale = 1
	}
	seed := in.Seed
	if seed == 0 {
		seed = 1
	}
	T := in.Rounds
	if T == 0 {
		T = l.Config.FutureRounds
	}
	rng := rand.New(rand.NewPCG(seed, uint64(M)))
	span := 0.0
	for _, j := range l.Jobs {
		span = max(span, j.Arrival)
	}
	p := &market.Problem{GPUs: M, Config: market.Config{Rounds: T, K: l.Config.K, Lambda: l.Config.Lambda,
		RhoMax: l.Config.RhoMax, Breakpoints: l.Config.LogBases}}
	var pred predictor.Predictor
	last := 0.0
	for i := range N {
		k := (in.Offset + i) % len(l.Jobs)
		tj, prof := &l.Jobs[k], &l.Profiles[k]
		if tj.GPUs > M {
			return nil, fmt.Errorf("%w: trace job %d needs %d GPUs, the cluster has %d", ErrProblem, k, tj.GPUs, M)
		}
		arrival := tj.Arrival + float64((in.Offset+i)/len(l.Jobs))*span
		last = max(last, arrival)
		E := prof.Epochs()
		F := int(rng.Float64() * 0.9 * float64(E))
		est, err := pred.Predict(&predictor.Job{Epochs: E, Progress: F, EpochBS: prof.EpochBS, EpochDur: prof.MetadataDurations(nil)})
		if err != nil {
			return nil, err
		}
		ft, err := est.Finish(arrival, M, N)
		if err != nil {
			return nil, err
		}
		p.Jobs = append(p.Jobs, market.Job{ID: i, GPUs: tj.GPUs, Epochs: E, Progress: F,
			MeanEpoch: est.MeanEpoch, Remaining: est.Remaining, FairFinish: ft * scale})
	}
	p.Round = int(math.Ceil(last / market.DefaultRoundSeconds))
	return p, nil
}
