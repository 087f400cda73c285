package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/workload"
)

// CassiniSimResult is what `orrery cassini simulate` measures: per arm of
// the ablation, its runs (one per seed) and their spread.
type CassiniSimResult struct {
	Scenario   string             `json:"scenario"`
	Scheduler  string             `json:"scheduler"`
	Topology   string             `json:"topology"`
	Servers    int                `json:"servers"`
	Jobs       int                `json:"jobs"` // of the first seed's trace
	Load       float64            `json:"load"`
	Seeds      []uint64           `json:"seeds"`
	Noise      string             `json:"noise"`
	Arms       []CassiniArmResult `json:"arms"`
	ElapsedSec float64            `json:"-"` // wall-clock time of the whole run
}

// CassiniArmResult is one arm over every seed: each metric's mean, standard
// deviation, minimum and maximum across the seeds, the speedups over the
// first arm on the same seeds, and the per-model means.
type CassiniArmResult struct {
	Arm          string `json:"arm"`
	MeanIterMs   spread `json:"mean_iter_ms"`
	P99IterMs    spread `json:"p99_iter_ms"`
	MeanSlowdown spread `json:"mean_slowdown"`
	P99Slowdown  spread `json:"p99_slowdown"`
	ExcessGbit   spread `json:"excess_gbit"`
	// MarkedMbitPerIter is the traffic a job delivers while a link on its
	// path is offered more than its capacity (the ECN-mark stand-in), per
	// job-iteration.
	MarkedMbitPerIter spread `json:"marked_mbit_per_iter"`
	// SpeedupMean and SpeedupP99 are the first arm's mean (p99) iteration
	// time over this arm's, per seed.
	SpeedupMean spread `json:"speedup_mean"`
	SpeedupP99  spread `json:"speedup_p99"`
	// Cassini only: adjustments per job-minute of the agents, jobs that
	// held a shift, agents that gave theirs up.
	AdjustmentsPerMin *spread `json:"adjustments_per_min,omitempty"`
	Agents            *spread `json:"agents,omitempty"`
	Released          *spread `json:"released,omitempty"`

	Models []CassiniModelResult  `json:"models"`
	Runs   []CassiniPolicyResult `json:"runs"`
}

// spread summarizes one metric across seeds.
type spread struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := spread{Min: v[0], Max: v[0]}
	for _, x := range v {
		s.Mean += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean /= float64(len(v))
	for _, x := range v {
		s.SD += float64((x - s.Mean) * (x - s.Mean)) // rounded: no fused multiply-add
	}
	if len(v) > 1 {
		s.SD = math.Sqrt(s.SD / float64(len(v)-1))
	} else {
		s.SD = 0
	}
	s.Mean, s.SD, s.Min, s.Max = cassiniRound(s.Mean), cassiniRound(s.SD), cassiniRound(s.Min), cassiniRound(s.Max)
	return s
}

// CassiniPolicyResult is one arm's run on one seed. Iteration times run
// start to start, so they include the agents' waiting.
type CassiniPolicyResult struct {
	Arm               string  `json:"arm"`
	Seed              uint64  `json:"seed"`
	Status            string  `json:"status"`
	MeanIterMs        float64 `json:"mean_iter_ms"`
	P50IterMs         float64 `json:"p50_iter_ms"`
	P90IterMs         float64 `json:"p90_iter_ms"`
	P99IterMs         float64 `json:"p99_iter_ms"`
	MeanSlowdown      float64 `json:"mean_slowdown"` // iteration time / the job's uncontended one
	P99Slowdown       float64 `json:"p99_slowdown"`
	ExcessGbit        float64 `json:"excess_gbit"` // traffic offered above capacity, summed over links
	MarkedMbitPerIter float64 `json:"marked_mbit_per_iter"`
	Iterations        int     `json:"iterations"`
	Finished          int     `json:"jobs_finished"`
	Preemptions       int     `json:"preemptions"`
	MeanJCTSec        float64 `json:"mean_jct_s"` // arrival to finish, over the finished jobs
	SimSeconds        float64 `json:"sim_seconds"`

	// Cassini only.
	AdjustmentsPerMin *float64 `json:"adjustments_per_min,omitempty"` // per job-minute of the agents
	Agents            *int     `json:"agents,omitempty"`
	Released          *int64   `json:"released,omitempty"` // agents that gave their shift up
	MeanDriftMs       *float64 `json:"mean_drift_ms,omitempty"`
	PlannedScore      *float64 `json:"planned_score,omitempty"`
	RealizedScore     *float64 `json:"realized_score,omitempty"`
	MeanRankScore     *float64 `json:"mean_rank_score,omitempty"`

	Models []CassiniModelResult `json:"models"`

	IterMs    []float64 `json:"-"` // every iteration, for plots
	Slowdowns []float64 `json:"-"` // every iteration / its job's uncontended one
}

// CassiniModelResult is one model's jobs in a run (or, in an arm, the mean
// over its runs).
type CassiniModelResult struct {
	Model             string  `json:"model"`
	Jobs              int     `json:"jobs"`
	Iterations        int     `json:"iterations"`
	MeanIterMs        float64 `json:"mean_iter_ms"`
	P99IterMs         float64 `json:"p99_iter_ms"`
	MeanSlowdown      float64 `json:"mean_slowdown"`
	MarkedMbitPerIter float64 `json:"marked_mbit_per_iter"`
}

func summarizeCassini(arm cassiniArm, seed uint64, r netsim.Result) CassiniPolicyResult {
	slow := r.Slowdowns()
	pr := CassiniPolicyResult{
		Arm: arm.String(), Seed: seed, Status: r.Status.String(),
		MeanIterMs: cassiniRound(r.Mean()), P50IterMs: cassiniRound(r.Percentile(50)), P90IterMs: cassiniRound(r.Percentile(90)), P99IterMs: cassiniRound(r.Percentile(99)),
		MeanSlowdown: cassiniRound(netsim.Mean(slow)), P99Slowdown: cassiniRound(netsim.Percentile(slow, 99)),
		ExcessGbit: cassiniRound(r.ExcessGbit), Iterations: len(r.IterMs), SimSeconds: cassiniRound(r.End.Seconds()),
		IterMs: r.IterMs, Slowdowns: slow,
	}
	var marked, jct float64
	for _, j := range r.Jobs {
		marked += j.MarkedGbit
		pr.Preemptions += j.Preemptions
		if j.End > 0 {
			pr.Finished++
			jct += (j.End - j.Arrival).Seconds()
		}
	}
	if pr.Iterations > 0 {
		pr.MarkedMbitPerIter = cassiniRound(marked * 1e3 / float64(pr.Iterations))
	}
	if pr.Finished > 0 {
		pr.MeanJCTSec = cassiniRound(jct / float64(pr.Finished))
	}
	pr.Models = modelResults(r)
	if r.Policy == netsim.Cassini {
		f := func(v float64) *float64 { v = cassiniRound(v); return &v }
		agents, released := r.Agent.Agents, r.Agent.Released
		pr.Agents, pr.Released = &agents, &released
		pr.AdjustmentsPerMin = f(r.Agent.PerMinute)
		pr.MeanDriftMs = f(float64(r.Agent.MeanAbs) / 1e6)
		pr.PlannedScore, pr.RealizedScore = f(r.Drift.Planned), f(r.Drift.Realized)
	}
	if r.Policy == netsim.Cassini || r.Policy == netsim.CassiniPlacement {
		v := cassiniRound(r.Rank.MeanBest)
		pr.MeanRankScore = &v
	}
	return pr
}

// modelResults splits r's iterations by model, in Table 3's order.
func modelResults(r netsim.Result) []CassiniModelResult {
	type acc struct {
		jobs, iterations int
		ms, slow         []float64
		markedGbit       float64
	}
	by := map[string]*acc{}
	k := 0
	for _, j := range r.Jobs {
		a := by[j.Model]
		if a == nil {
			a = &acc{}
			by[j.Model] = a
		}
		a.jobs++
		a.iterations += j.Iterations
		a.markedGbit += j.MarkedGbit
		for _, x := range r.IterMs[k : k+j.Iterations] {
			a.ms = append(a.ms, x)
			if j.Alone > 0 {
				a.slow = append(a.slow, x/(float64(j.Alone)/1e6))
			}
		}
		k += j.Iterations
	}
	var out []CassiniModelResult
	for _, m := range workload.Models() {
		a := by[m.Name]
		if a == nil {
			continue
		}
		mr := CassiniModelResult{Model: m.Name, Jobs: a.jobs, Iterations: a.iterations,
			MeanIterMs: cassiniRound(netsim.Mean(a.ms)), P99IterMs: cassiniRound(netsim.Percentile(a.ms, 99)),
			MeanSlowdown: cassiniRound(netsim.Mean(a.slow))}
		if a.iterations > 0 {
			mr.MarkedMbitPerIter = cassiniRound(a.markedGbit * 1e3 / float64(a.iterations))
		}
		out = append(out, mr)
	}
	return out
}

// aggregateCassini summarizes an arm's runs, with speedups over base (the
// first arm's runs on the same seeds).
func aggregateCassini(arm cassiniArm, runs, base []CassiniPolicyResult) CassiniArmResult {
	pick := func(f func(CassiniPolicyResult) float64) spread {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return spreadOf(v)
	}
	a := CassiniArmResult{Arm: arm.String(), Runs: runs,
		MeanIterMs:        pick(func(r CassiniPolicyResult) float64 { return r.MeanIterMs }),
		P99IterMs:         pick(func(r CassiniPolicyResult) float64 { return r.P99IterMs }),
		MeanSlowdown:      pick(func(r CassiniPolicyResult) float64 { return r.MeanSlowdown }),
		P99Slowdown:       pick(func(r CassiniPolicyResult) float64 { return r.P99Slowdown }),
		ExcessGbit:        pick(func(r CassiniPolicyResult) float64 { return r.ExcessGbit }),
		MarkedMbitPerIter: pick(func(r CassiniPolicyResult) float64 { return r.MarkedMbitPerIter }),
	}
	sp := func(f func(CassiniPolicyResult) float64) spread {
		v := make([]float64, len(runs))
		for i, r := range runs {
			if x := f(r); x > 0 {
				v[i] = f(base[i]) / x
			}
		}
		return spreadOf(v)
	}
	a.SpeedupMean = sp(func(r CassiniPolicyResult) float64 { return r.MeanIterMs })
	a.SpeedupP99 = sp(func(r CassiniPolicyResult) float64 { return r.P99IterMs })
	if runs[0].Agents != nil {
		adj := pick(func(r CassiniPolicyResult) float64 { return *r.AdjustmentsPerMin })
		ag := pick(func(r CassiniPolicyResult) float64 { return float64(*r.Agents) })
		rel := pick(func(r CassiniPolicyResult) float64 { return float64(*r.Released) })
		a.AdjustmentsPerMin, a.Agents, a.Released = &adj, &ag, &rel
	}
	for _, name := range modelNames(runs) {
		m := CassiniModelResult{Model: name}
		var n float64
		for _, r := range runs {
			for _, x := range r.Models {
				if x.Model != name {
					continue
				}
				n++
				m.Jobs += x.Jobs
				m.Iterations += x.Iterations
				m.MeanIterMs += x.MeanIterMs
				m.P99IterMs += x.P99IterMs
				m.MeanSlowdown += x.MeanSlowdown
				m.MarkedMbitPerIter += x.MarkedMbitPerIter
			}
		}
		m.MeanIterMs, m.P99IterMs = cassiniRound(m.MeanIterMs/n), cassiniRound(m.P99IterMs/n)
		m.MeanSlowdown, m.MarkedMbitPerIter = cassiniRound(m.MeanSlowdown/n), cassiniRound(m.MarkedMbitPerIter/n)
		a.Models = append(a.Models, m)
	}
	return a
}

// show formats a spread: the mean, and ± the standard deviation with
// several seeds.
func (s spread) show(format string) string {
	out := fmt.Sprintf(format, s.Mean)
	if s.SD > 0 || s.Min != s.Max {
		out += " ±" + fmt.Sprintf(format, s.SD)
	}
	return out
}

// writeCassiniSimTable prints r's arms, one row each.
func writeCassiniSimTable(w io.Writer, r CassiniSimResult) error {
	seeds := strconv.FormatUint(r.Seeds[0], 10)
	if n := len(r.Seeds); n > 1 {
		seeds = fmt.Sprintf("%d seeds (%d-%d): mean ± sd across seeds", n, r.Seeds[0], r.Seeds[n-1])
	}
	fmt.Fprintf(w, "CASSINI simulation (%s, %s): %s fabric (%d servers), %d jobs, load %.2f, noise %s, seed %s\n\n",
		r.Scenario, r.Scheduler, r.Topology, r.Servers, r.Jobs, r.Load, r.Noise, seeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := r.Arms[0].Arm
	fmt.Fprintf(tw, "arm\tmean iter (ms)\tp99 iter (ms)\tmean slowdown\tp99 slowdown\tx %s mean\tx %s p99\tmarked (Mbit/iter)\tagents\tadjust/job-min\tgave up\t\n", first, first)
	for _, a := range r.Arms {
		opt := func(s *spread, format string) string {
			if s == nil {
				return "-"
			}
			return s.show(format)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.Arm, a.MeanIterMs.show("%.1f"), a.P99IterMs.show("%.1f"),
			a.MeanSlowdown.show("%.3f"), a.P99Slowdown.show("%.3f"), a.SpeedupMean.show("%.3f"), a.SpeedupP99.show("%.3f"),
			a.MarkedMbitPerIter.show("%.1f"), opt(a.Agents, "%.1f"), opt(a.AdjustmentsPerMin, "%.2f"), opt(a.Released, "%.1f"))
	}
	return tw.Flush()
}

// writeCassiniModelTable prints, per model, each arm's mean and p99
// iteration time and marked traffic (means over the seeds).
func writeCassiniModelTable(w io.Writer, r CassiniSimResult) error {
	fmt.Fprintf(w, "per model (means over the seeds): mean / p99 iteration (ms) | marked Mbit per iteration\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head []string
	for _, a := range r.Arms {
		head = append(head, a.Arm)
	}
	fmt.Fprintf(tw, "model\t%s\t%s\t\n", strings.Join(head, "\t"), strings.Join(head, "\t"))
	for _, name := range modelNames(r.Arms[0].Runs) {
		var times, marks []string
		for _, a := range r.Arms {
			t, m := "-", "-"
			for _, x := range a.Models {
				if x.Model == name {
					t, m = fmt.Sprintf("%.0f / %.0f", x.MeanIterMs, x.P99IterMs), fmt.Sprintf("%.1f", x.MarkedMbitPerIter)
				}
			}
			times, marks = append(times, t), append(marks, m)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", name, strings.Join(times, "\t"), strings.Join(marks, "\t"))
	}
	return tw.Flush()
}

// writeCassiniSweepTable prints one row per noise and arm of rs (the same
// experiment under several noises).
func writeCassiniSweepTable(w io.Writer, rs []CassiniSimResult) error {
	r := rs[0]
	seeds := strconv.FormatUint(r.Seeds[0], 10)
	if n := len(r.Seeds); n > 1 {
		seeds = fmt.Sprintf("%d seeds (%d-%d), mean ± sd", n, r.Seeds[0], r.Seeds[n-1])
	}
	fmt.Fprintf(w, "CASSINI simulation (%s, %s): %s fabric (%d servers), %d jobs, seed %s, by noise\n\n", r.Scenario, r.Scheduler, r.Topology, r.Servers, r.Jobs, seeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := r.Arms[0].Arm
	fmt.Fprintf(tw, "noise\tarm\tmean iter (ms)\tp99 iter (ms)\tx %s mean\tx %s p99\tadjust/job-min\tgave up\t\n", first, first)
	for _, x := range rs {
		for _, a := range x.Arms {
			opt := func(s *spread, format string) string {
				if s == nil {
					return "-"
				}
				return s.show(format)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Noise, a.Arm, a.MeanIterMs.show("%.1f"), a.P99IterMs.show("%.1f"),
				a.SpeedupMean.show("%.3f"), a.SpeedupP99.show("%.3f"), opt(a.AdjustmentsPerMin, "%.2f"), opt(a.Released, "%.1f"))
		}
	}
	return tw.Flush()
}
