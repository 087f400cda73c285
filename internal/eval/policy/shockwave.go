package policy

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/engine/shockwave/round"
	"github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/trace"
)

// Shockwave drives orrery's Shockwave planner (package round's incremental
// Scheduler over the exact market solver) from the simulator, as the
// authors' simulator drives their ShockwaveScheduler:
//
//   - a job is added with its profile (the authors' JobMetaData: per-epoch
//     batch sizes and whole-second durations) and its admission time as
//     the submission time;
//   - after each round, finished jobs are removed, and every job that ran
//     reports its completed epochs ⌊steps/⌈D/bs⌉⌉ and its measured
//     throughput (for calibration); then the round pointer advances, which
//     forces a re-plan every 8 rounds;
//   - the scheduler re-plans on arrivals, completions, every 8 rounds and
//     when its window is used up, and otherwise replays its cached plan.
type Shockwave struct {
	s       *round.Scheduler
	out     []int
	replans int
	relaxed int
	inexact int
}

// NewShockwave returns the policy for a cluster of gpus GPUs.
func NewShockwave(gpus int, cfg round.Config) (*Shockwave, error) {
	s, err := round.New(gpus, cfg)
	if err != nil {
		return nil, err
	}
	return &Shockwave{s: s}, nil
}

// ShockwaveConfig converts the authors' configuration file (package trace)
// into the planner's, for rounds of delta seconds (0 means 120 s). The
// solver settings (relative gap, threads, time limit) are not carried over:
// orrery's solver proves optimality within market.Config.MaxNodes.
func ShockwaveConfig(c trace.Config, delta float64) round.Config {
	return round.Config{Market: market.Config{Rounds: c.FutureRounds, RoundSeconds: delta, K: c.K,
		Lambda: c.Lambda, RhoMax: c.RhoMax, Breakpoints: c.LogBases}}
}

// Name returns "shockwave".
func (p *Shockwave) Name() string { return "shockwave" }

// Stats reports the re-plans, those that took the relaxed (priority) path,
// and those not proven optimal (node limit or deadline).
func (p *Shockwave) Stats() []sim.Stat {
	return []sim.Stat{{Name: "replans", Value: float64(p.replans)},
		{Name: "relaxed", Value: float64(p.relaxed)}, {Name: "not_optimal", Value: float64(p.inexact)}}
}

// Admit implements sim.Policy.
func (p *Shockwave) Admit(j *sim.Job) error {
	if j.Profile == nil {
		return fmt.Errorf("%w: job %d has no profile", ErrInvalid, j.ID)
	}
	err := p.s.Add(round.Job{ID: j.ID, GPUs: j.GPUs, Submit: j.Admitted, EpochBS: j.Profile.EpochBS,
		EpochDur: j.Profile.MetadataDurations(nil), SamplesPerEpoch: float64(j.Profile.SamplesPerEpoch)})
	return err
}

// EndRound implements sim.Policy.
func (p *Shockwave) EndRound(r *sim.Report) error {
	for _, l := range r.Leases {
		if l.Finished {
			if err := p.s.Remove(l.ID); err != nil {
				return err
			}
			continue
		}
		if err := p.s.Observe(l.ID, predictor.Sample{Round: r.Round, ItPerSec: l.Throughput, BatchSize: l.BatchSize}); err != nil {
			return err
		}
		if err := p.s.Progress(l.ID, l.Progress); err != nil {
			return err
		}
	}
	return p.s.EndRound()
}

// Schedule implements sim.Policy.
func (p *Shockwave) Schedule(ctx context.Context, s *sim.State) ([]int, error) {
	ids, err := p.s.Schedule(ctx)
	if err != nil {
		return nil, err
	}
	// A plan for the current round is only ever computed by this call.
	if pl := p.s.LastPlan(); pl != nil && pl.Round == p.s.Round() {
		p.replans++
		if pl.Relaxed {
			p.relaxed++
		}
		if pl.Status != market.Optimal {
			p.inexact++
		}
	}
	// Upstream skips planned jobs that have completed meanwhile; here none
	// can be planned, as every completion (Remove) forces a re-plan. The
	// copy keeps the caller off the scheduler's cached plan.
	p.out = append(p.out[:0], ids...)
	return p.out, nil
}
