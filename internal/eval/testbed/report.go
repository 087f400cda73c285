//go:build linux

package testbed

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/orrery/orrery"
)

// Report is a testbed run: the scenario, what the kernel offered, each
// job's measured profile and plan, and each arm's iterations, in the shape
// of the simulator's results (iteration times start to start, per job and
// pooled) so that the fluid model, ns-3 and the kernel sit side by side.
type Report struct {
	Scenario   string  `json:"scenario"`
	Fabric     string  `json:"fabric"`
	Scale      float64 `json:"scale"` // link rates and bytes divided by it
	Congestion string  `json:"congestion"`
	Kernel     Kernel  `json:"kernel"`
	AgentMode  string  `json:"agent_mode"`
	Edge       bool    `json:"edge_shifts,omitempty"`
	Headroom   float64 `json:"headroom,omitempty"`
	Priority   int     `json:"rt_priority"` // SCHED_FIFO priority of the workers; 0 none
	StallMs    float64 `json:"stall_ms"`    // a sleep this late is a stall
	NoiseCV    float64 `json:"noise_cv,omitempty"`
	Torch      bool    `json:"torch,omitempty"` // PyTorch DDP over gloo, the Python agent
	Seed       uint64  `json:"seed,omitempty"`

	Jobs []JobPlan   `json:"jobs"`
	Plan *Plan       `json:"plan,omitempty"`
	Arms []ArmResult `json:"arms"`
	// Fluid is the same scenario in the fluid model, for the columns side
	// by side.
	Fluid       []FluidArm `json:"fluid,omitempty"`
	WallSeconds float64    `json:"wall_s"`
}

// JobPlan is a job as measured alone and planned.
type JobPlan struct {
	ID      int    `json:"id"`
	Model   string `json:"model"`
	Servers []int  `json:"servers"`
	// Alone: the median iteration (start to start) and communication
	// time, and where communication starts in the iteration.
	AloneMs      float64 `json:"alone_ms"`
	AloneCommMs  float64 `json:"alone_comm_ms"`
	CommOffsetMs float64 `json:"comm_offset_ms"`
	// The profile cassini.profile found in the measured events.
	ProfilePeriodMs float64 `json:"profile_period_ms"`
	ProfilePeakGbps float64 `json:"profile_peak_gbps"`
	ProfileMeanGbps float64 `json:"profile_mean_gbps"`
	ProfileQuality  float64 `json:"profile_quality"`
	// The plan (cassini.rank): the period the agent holds, the search's
	// edge shift, the centred one and its room, and what the agents hold.
	PeriodMs       float64 `json:"period_ms"`
	EdgeShiftMs    float64 `json:"edge_shift_ms"`
	CentredShiftMs float64 `json:"centred_shift_ms"`
	RoomEarlyMs    float64 `json:"room_early_ms"`
	RoomLateMs     float64 `json:"room_late_ms"`
	ShiftMs        float64 `json:"shift_ms"`
	SlackMs        float64 `json:"slack_ms"`
	// FreeCommMs is the median communication time overlapped: what the
	// agents weigh their shift's saving against (0: not measured, no
	// give-up).
	FreeCommMs float64 `json:"free_comm_ms"`
}

// Plan is the ranking the agents' plans come from, request and response.
type Plan struct {
	Score    float64             `json:"score"`
	Request  orrery.RankRequest  `json:"request"`
	Response orrery.RankResponse `json:"response"`
}

// ArmResult is one arm's outcome.
type ArmResult struct {
	Arm string `json:"arm"`
	// IterMs holds every iteration's time (rank 0's starts, start to
	// start; the last to its communication's end), job by job.
	IterMs []float64 `json:"iter_ms"`
	MeanMs float64   `json:"mean_iter_ms"`
	P50Ms  float64   `json:"p50_iter_ms"`
	P90Ms  float64   `json:"p90_iter_ms"`
	P99Ms  float64   `json:"p99_iter_ms"`
	Jobs   []JobArm  `json:"jobs"`
	// PhaseMs (two jobs or more) is, per iteration of the second job, how
	// far its communication started after the first job's latest one,
	// within [-g/4, 3g/4) of the first job's gap g between its
	// communications: the two jobs' relative phase (0 in lock step), which
	// an agent holds at the plan's.
	PhaseMs []float64 `json:"phase_ms,omitempty"`
	// Host: sleeps that woke more than the stall threshold late (the
	// workers' compute sleeps, agent waits and 5 ms monitors), of how
	// many, and the latest.
	Stalls    int     `json:"stalls"`
	Sleeps    int     `json:"sleeps"`
	MaxLateMs float64 `json:"max_late_ms"`
	// Disturbed counts the ranks' iterations whose sleeps (compute, the
	// agent's wait) woke more than the stall threshold late in all, of
	// RankIterations: the iterations a host stall may have moved.
	Disturbed      int `json:"disturbed"`
	RankIterations int `json:"rank_iterations"`
	// Network: the senders' retransmissions and timeouts (TCP_INFO), the
	// fabric's queue drops and RED marks.
	Retrans int64 `json:"retrans"`
	RTOs    int64 `json:"rtos"`
	Drops   int64 `json:"drops"`
	Marks   int64 `json:"marks,omitempty"`
	// Agents: adjustments, deferred adjustments and ranks that gave their
	// shift up.
	Adjustments int64   `json:"adjustments,omitempty"`
	Deferred    int64   `json:"deferred,omitempty"`
	Released    int     `json:"released,omitempty"`
	WallSeconds float64 `json:"wall_s"`
	// Workers are the ranks' own reports, every iteration's instants.
	Workers []WorkerResult `json:"workers,omitempty"`
}

// JobArm is one job in one arm.
type JobArm struct {
	ID         int     `json:"id"`
	Iterations int     `json:"iterations"`
	MedianMs   float64 `json:"median_iter_ms"`
	MeanMs     float64 `json:"mean_iter_ms"`
	P90Ms      float64 `json:"p90_iter_ms"`
	P99Ms      float64 `json:"p99_iter_ms"`
	CommMs     float64 `json:"median_comm_ms"`
	Retrans    int64   `json:"retrans"`
}

// summarize turns the workers' reports into an arm's result.
func summarize(arm Arm, jobs []job, results []WorkerResult, stallMs float64) ArmResult {
	res := ArmResult{Arm: string(arm)}
	var firstComm []int64 // the first job's communication starts
	for k, j := range jobs {
		ja := JobArm{ID: j.id}
		var its []Iteration
		for _, w := range results {
			if w.Job != j.id {
				continue
			}
			ja.Retrans += w.Retrans
			res.RTOs += w.RTONum
			if w.Rank == 0 {
				its = w.Iterations
			}
		}
		var times, comm []float64
		for i, it := range its {
			switch {
			case i+1 < len(its):
				times = append(times, ms(its[i+1].Start-it.Start))
			case it.CommEnd > 0:
				times = append(times, ms(it.CommEnd-it.Start))
			}
			if it.CommEnd > 0 {
				comm = append(comm, ms(it.CommEnd-it.CommStart))
			}
			if k == 0 {
				firstComm = append(firstComm, it.CommStart)
			} else if k == 1 && len(firstComm) > 1 {
				// After the first job's latest communication start, within
				// [-gap/4, 3gap/4) of the gap to its next: in lock step the
				// phase is 0, not 0 and a whole iteration by turns.
				x, _ := slices.BinarySearch(firstComm, it.CommStart+1)
				if x == 0 {
					continue // before the first job's first: no phase yet
				}
				x = min(x, len(firstComm)-1)
				d, gap := it.CommStart-firstComm[x-1], firstComm[x]-firstComm[x-1]
				if d >= gap-gap/4 {
					d -= gap
				}
				res.PhaseMs = append(res.PhaseMs, ms(d))
			}
		}
		ja.Iterations = len(times)
		ja.MedianMs, ja.MeanMs, ja.P90Ms, ja.P99Ms = median(times), mean(times), percentile(times, 90), percentile(times, 99)
		ja.CommMs = median(comm)
		res.Retrans += ja.Retrans
		res.IterMs = append(res.IterMs, times...)
		res.Jobs = append(res.Jobs, ja)
	}
	for _, w := range results {
		for _, it := range w.Iterations {
			res.RankIterations++
			if ms(it.Late) > stallMs {
				res.Disturbed++
			}
		}
		res.Stalls += w.Stalls
		res.Sleeps += w.Sleeps
		res.MaxLateMs = max(res.MaxLateMs, ms(w.MaxLateNs))
		if w.Agent != nil {
			res.Adjustments += w.Agent.Adjustments
			res.Deferred += w.Agent.Deferred
			if w.Agent.Released {
				res.Released++
			}
		}
	}
	res.MeanMs, res.P50Ms, res.P90Ms, res.P99Ms = mean(res.IterMs), median(res.IterMs), percentile(res.IterMs, 90), percentile(res.IterMs, 99)
	return res
}

// summary is the arm's one-line log.
func (a ArmResult) summary() string {
	return fmt.Sprintf("median %.1f ms, mean %.1f, p99 %.1f; %d of %d iterations disturbed, %d stalls of %d sleeps (latest %.0f ms); %d retransmissions, %d drops; %d adjustments, %d released",
		a.P50Ms, a.MeanMs, a.P99Ms, a.Disturbed, a.RankIterations, a.Stalls, a.Sleeps, a.MaxLateMs, a.Retrans, a.Drops, a.Adjustments, a.Released)
}

// Arm returns the result of the arm named a, or nil.
func (r Report) Arm(a Arm) *ArmResult {
	for i := range r.Arms {
		if r.Arms[i].Arm == string(a) {
			return &r.Arms[i]
		}
	}
	return nil
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return round3(s / float64(len(x)))
}

func median(x []float64) float64 { return percentile(x, 50) }

// percentile is the nearest-rank percentile (0 for none), to a
// thousandth.
func percentile(x []float64, p float64) float64 { return round3(exactPercentile(x, p)) }

func exactPercentile(x []float64, p float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(x))
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Table is the report as text: the plan, then a row per arm.
func (r Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "testbed %s (%s at 1/%v), %s, kernel %s, agents %s\n", r.Scenario, r.Fabric, r.Scale, r.Congestion, r.Kernel.Release, r.AgentMode)
	for _, j := range r.Jobs {
		fmt.Fprintf(&b, "  job %d %s on servers %v: alone %.1f ms (comm %.1f at %.1f); period %.0f, shift %.0f (edge %.0f, room -%.0f/+%.0f), free comm %.1f\n",
			j.ID, j.Model, j.Servers, j.AloneMs, j.AloneCommMs, j.CommOffsetMs, j.PeriodMs, j.ShiftMs, j.EdgeShiftMs, j.RoomEarlyMs, j.RoomLateMs, j.FreeCommMs)
	}
	fmt.Fprintf(&b, "  %-10s %8s %8s %8s %8s %9s %7s %8s %7s %6s %6s %5s\n", "arm", "p50 ms", "mean", "p90", "p99", "disturbed", "stalls", "retrans", "drops", "adjust", "gaveup", "wall")
	for _, a := range r.Arms {
		fmt.Fprintf(&b, "  %-10s %8.1f %8.1f %8.1f %8.1f %9d %7d %8d %7d %6d %6d %4.0fs\n", a.Arm, a.P50Ms, a.MeanMs, a.P90Ms, a.P99Ms, a.Disturbed, a.Stalls, a.Retrans, a.Drops, a.Adjustments, a.Released, a.WallSeconds)
	}
	for _, a := range r.Fluid {
		fmt.Fprintf(&b, "  %-10s %8.1f %8.1f %8s %8.1f   (the fluid model)\n", "fluid/"+a.Arm, a.P50Ms, a.MeanMs, "", a.P99Ms)
	}
	if o, g := r.Arm(Overlapped), r.Arm(Agents); o != nil && g != nil && g.P50Ms > 0 {
		fmt.Fprintf(&b, "  agents vs overlapped: %.3fx on medians, %.3fx on means", o.P50Ms/g.P50Ms, o.MeanMs/g.MeanMs)
		if len(r.Fluid) == 2 {
			fmt.Fprintf(&b, " (the fluid model: %.3fx on means)", r.Fluid[0].MeanMs/r.Fluid[1].MeanMs)
		}
		b.WriteString("\n")
	}
	return b.String()
}
