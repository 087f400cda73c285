//go:build linux

package testbed

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/agent"
)

// plan profiles each job from what it measured alone (cassini.profile on
// its communication events) and ranks the scenario's placement with those
// profiles (cassini.rank), through the engine's public, typed API: the
// shifts, periods and rooms the agents hold.
func (r *runner) plan(ctx context.Context, rep *Report) error {
	// The simulator's cap on a unified circle (4096 ticks), periods rounded up
	// to a common grid past it: two jobs of one model measure periods a
	// tick apart (268 and 269 ms), whose circle is 72,092 ticks on which
	// every shift scores alike; rounded, they share one period.
	req := orrery.RankRequest{SearchSpec: orrery.SearchSpec{TickMs: 1, MaxPerimeterTicks: 4096, RoundPeriods: true}}
	for li, l := range r.f.Topo.Links {
		req.Links = append(req.Links, orrery.LinkSpec{ID: l.ID, CapacityGbps: r.f.Rate(li) / 1e9})
	}
	cand := orrery.CandidateSpec{ID: "pinned", Paths: map[string][]string{}}
	var profiles []orrery.SamplesSpec
	var periods []int // ticks
	for k := range r.jobs {
		j := &r.jobs[k]
		id := jobID(j.id)
		its := r.rank0(Alone, j.id)
		if len(its) < 8 {
			return fmt.Errorf("job %d: %d iterations measured alone", j.id, len(its))
		}
		var bytes int64
		for _, s := range j.steps {
			bytes += s.Bytes
		}
		ev, iters, offsets := profileEvents(its, bytes)
		med := median(iters)
		prof, err := orrery.Profile(ctx, orrery.ProfileRequest{Job: orrery.JobSpec{ID: id, Events: ev}, SearchSpec: orrery.SearchSpec{TickMs: 1}})
		if err != nil {
			return fmt.Errorf("job %d: cassini.profile: %w", j.id, err)
		}
		// The agents' slots come every period of the plan's clock, which
		// nothing stretches: the period must hold the job's pace, which the
		// profile's period (rounded to the nearest tick) may not. So it is
		// the pace (the median iteration alone) plus the slack an Elastic
		// group would keep above it (agent.DefaultMargin·σ²/θ of it, σ the
		// iterations' spread, at most θ), rounded up to a whole tick; and
		// Headroom on top.
		samples := prof.Samples
		pace := med * (1 + paceSlack(iters, med, r.opt.Threshold))
		ticks := max(len(samples.Gbps), int(math.Ceil(pace/samples.IntervalMs-1e-9)))
		ticks += int(math.Round(float64(ticks) * r.opt.Headroom))
		profiles = append(profiles, samples)
		periods = append(periods, ticks)
		var path []string
		for _, li := range j.links {
			path = append(path, r.f.Topo.Links[li].ID)
		}
		cand.Paths[id] = path
		jp := &rep.Jobs[k]
		jp.ProfilePeriodMs, jp.ProfilePeakGbps, jp.ProfileMeanGbps = prof.PeriodMs, prof.PeakGbps, prof.MeanGbps
		if prof.Fit != nil {
			jp.ProfileQuality = prof.Fit.Quality
		}
		jp.CommOffsetMs = median(offsets)
	}
	// Periods a few ticks apart are one period measured with noise (two
	// jobs of one model: 268 and 269 ms), on whose unified circle every
	// shift scores alike: they are locked harmonically, as the simulator's
	// hold gate locks them (netsim), each job to B/k_j with B the longest
	// (raised to a multiple of every k_j = ⌊B/T_j⌋) where that stretches
	// no job by more than 5%; the faster jobs' agents pad the rest.
	periods = harmonic(periods)
	for k := range r.jobs {
		samples := profiles[k]
		if pad := periods[k] - len(samples.Gbps); pad > 0 {
			samples.Gbps = append(slices.Clone(samples.Gbps), make([]float64, pad)...)
		}
		req.Jobs = append(req.Jobs, orrery.JobSpec{ID: jobID(r.jobs[k].id), Samples: &samples})
	}
	req.Candidates = []orrery.CandidateSpec{cand}
	resp, err := orrery.Rank(ctx, req)
	if err != nil {
		return fmt.Errorf("cassini.rank: %w", err)
	}
	if resp.Best == nil {
		return fmt.Errorf("cassini.rank discarded the placement: %s", resp.Candidates[0].Reason)
	}
	rep.Plan = &Plan{Request: req, Response: resp, Score: resp.Candidates[0].Score}
	for k := range r.jobs {
		id, jp := jobID(r.jobs[k].id), &rep.Jobs[k]
		jp.PeriodMs, jp.EdgeShiftMs, jp.CentredShiftMs = resp.PeriodsMs[id], resp.ShiftsMs[id], resp.CentredShiftsMs[id]
		if room, ok := resp.ShiftRoomMs[id]; ok {
			jp.RoomEarlyMs, jp.RoomLateMs = room.EarlyMs, room.LateMs
		}
		jp.ShiftMs, jp.SlackMs = jp.CentredShiftMs, jp.RoomLateMs
		if r.opt.Edge {
			jp.ShiftMs, jp.SlackMs = jp.EdgeShiftMs, 0
		}
	}
	r.logf("plan: score %.3f; %s", rep.Plan.Score, planText(rep.Jobs))
	return nil
}

// profileEvents turns a job's iterations measured alone into the events
// cassini.profile takes (ms): each all-reduce at its measured offset in its
// own iteration and for its measured duration, on a grid of the median
// iteration. A loop knows where its iterations start, and a host stall
// while it profiles (one iteration 100 ms long) would otherwise shift every
// later event against the fold and smear the profile (a CI run planned a
// 57 ms shift from one). The iteration's start is an event of no bytes, so
// that the series (which starts at its first event) and the profile begin
// where the iterations do: the shifts are the iterations'. It also returns
// the iteration times and the communication offsets.
func profileEvents(its []Iteration, bytes int64) (ev *orrery.EventsSpec, iters, offsets []float64) {
	for i := 1; i < len(its); i++ {
		iters = append(iters, ms(its[i].Start-its[i-1].Start))
	}
	med := median(iters)
	ev = &orrery.EventsSpec{IntervalMs: 1, AtMs: []float64{0}, Bytes: []float64{0}, DurationMs: []float64{0}}
	for i, it := range its {
		if it.CommEnd > 0 {
			off := ms(it.CommStart - it.Start)
			ev.AtMs = append(ev.AtMs, float64(float64(i)*med)+off)
			ev.Bytes = append(ev.Bytes, float64(bytes))
			ev.DurationMs = append(ev.DurationMs, ms(it.CommEnd-it.CommStart))
			offsets = append(offsets, off)
		}
	}
	ev.MinPeriodMs, ev.MaxPeriodMs = med/2, med*2
	return ev, iters, offsets
}

// harmonic locks periods (ticks) to B/k_j, k_j = ⌊B/T_j⌋ with B the
// longest raised to a multiple of every k_j, when that stretches none by
// more than 5%; otherwise it returns them as they are.
func harmonic(periods []int) []int {
	longest := slices.Max(periods)
	l := 1
	ks := make([]int, len(periods))
	for j, t := range periods {
		ks[j] = longest / t
		l = l / gcd(l, ks[j]) * ks[j]
	}
	b := (longest + l - 1) / l * l
	out := make([]int, len(periods))
	for j, t := range periods {
		if out[j] = b / ks[j]; float64(out[j]) > 1.05*float64(t) {
			return periods // a lock would stretch this job past 5%
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// paceSlack is the slack an Elastic group keeps above a member's pace
// (engine/cassini/agent's rule): Margin·σ²/θ with σ the iterations'
// spread over their median (1.4826 median absolute deviations), at most θ.
func paceSlack(iters []float64, med, threshold float64) float64 {
	if threshold == 0 {
		threshold = agent.DefaultThreshold
	}
	dev := make([]float64, len(iters))
	for i, x := range iters {
		dev[i] = math.Abs(x/med - 1)
	}
	sd := 1.4826 * exactPercentile(dev, 50)
	return min(agent.DefaultMargin*sd*sd/threshold, threshold)
}

func planText(jobs []JobPlan) string {
	var s string
	for _, j := range jobs {
		s += fmt.Sprintf(" job %d period %.0f ms shift %.0f (edge %.0f, room -%.0f/+%.0f);", j.ID, j.PeriodMs, j.ShiftMs, j.EdgeShiftMs, j.RoomEarlyMs, j.RoomLateMs)
	}
	return s
}

func jobID(id int) string { return fmt.Sprintf("job%d", id) }

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func nsOf(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// rank0 returns job id's rank-0 iterations in the latest run of arm.
func (r *runner) rank0(arm Arm, id int) []Iteration {
	for _, res := range r.results[arm] {
		if res.Job == id && res.Rank == 0 {
			return res.Iterations
		}
	}
	return nil
}

// together runs every job at once: from the epoch (overlapped), started at
// its planned shift (shifted), or with its agents on its plan (agents).
func (r *runner) together(ctx context.Context, arm Arm, rep *Report) (ArmResult, error) {
	var ranks []rank
	n := 0
	for _, j := range r.jobs {
		n += len(j.servers)
	}
	epoch := r.epochAfter(n)
	for k := range r.jobs {
		j := &r.jobs[k]
		jp := &rep.Jobs[k]
		rs := r.ranksOf(j, r.opt.Iterations, epoch)
		for i := range rs {
			switch arm {
			case Shifted:
				rs[i].cfg.StartNs = nsOf(jp.ShiftMs)
			case Agents:
				a := &AgentConfig{Mode: r.opt.AgentMode, ReferenceNs: epoch.UnixNano(), ShiftNs: nsOf(jp.ShiftMs), PeriodNs: nsOf(jp.PeriodMs),
					CommOffsetNs: nsOf(jp.CommOffsetMs), SlackNs: nsOf(jp.SlackMs), Threshold: r.opt.Threshold, Budget: r.opt.Budget, GiveUp: r.opt.GiveUp,
					MeanGiveUp: r.opt.MeanGiveUp, PlanBudget: r.opt.PlanBudget}
				a.CommOffsetNs = min(a.CommOffsetNs, a.PeriodNs-1)
				a.SlackNs = min(a.SlackNs, a.PeriodNs-1)
				if !r.opt.NoGiveUp && jp.FreeCommMs > 0 {
					a.FreeCommNs = nsOf(jp.FreeCommMs)
				}
				rs[i].cfg.Agent = a
			}
		}
		ranks = append(ranks, rs...)
	}
	res, results, err := r.arm(ctx, arm, ranks)
	if err != nil {
		return res, err
	}
	r.keep(arm, results)
	if arm == Overlapped {
		// What the agents' shifts save is measured against this: each
		// job's communication time when nothing holds it apart.
		for k := range rep.Jobs {
			rep.Jobs[k].FreeCommMs = res.Jobs[k].CommMs
		}
	}
	return res, nil
}

// keep remembers an arm's results (the last run of each arm).
func (r *runner) keep(arm Arm, results []WorkerResult) {
	if r.results == nil {
		r.results = map[Arm][]WorkerResult{}
	}
	r.results[arm] = results
}
