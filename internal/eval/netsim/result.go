package netsim

import (
	"math"
	"slices"
	"time"
)

// Status says how a simulation ended.
type Status int

const (
	Complete  Status = iota // every job finished
	TimeLimit               // Config.Duration was reached
	Cancelled               // the context ended
)

func (s Status) String() string {
	switch s {
	case Complete:
		return "complete"
	case TimeLimit:
		return "time_limit"
	case Cancelled:
		return "cancelled"
	}
	return "Status(?)"
}

// JobResult is one job's outcome.
type JobResult struct {
	ID         int
	Model      string
	GPUs       int
	Servers    []int         // where it ran last (nil if never placed)
	Arrival    time.Duration // when it arrived
	Start, End time.Duration // first placed, finished (End 0 if it did not finish)
	Iterations int           // iterations completed
	Alone      time.Duration // its uncontended iteration time where it ran last (no noise, no padding; see Result.AloneMs)
	MeanIter   time.Duration // mean of its completed iterations
	// Cassini: the period its agent padded to (0 if it never had one) and
	// the agent's adjustments.
	Period      time.Duration
	Adjustments int64
	// Cassini: the last agent's plan (agent.Plan: its reference as a time
	// since the simulation's start, shift, slack and free communication
	// time), its group clock (numbered from 1 in the order of the jobs; 0
	// for none), whether an agent gave its shift up, the plans the job's
	// agents held (0 if it never had an agent) and their decisions (one per
	// iteration started under an agent).
	Reference, Shift, Slack, FreeComm time.Duration
	Group                             int
	Released                          bool
	Plans                             int
	Decisions                         int64
	// SentGbit is what it delivered; MarkedGbit the part delivered while
	// some link on the flow's path was offered more than its capacity (the
	// sum of the peak rates of the flows crossing it): the stand-in for
	// ECN marks, since a switch queue grows past any marking threshold
	// while a link is offered more than it carries.
	SentGbit, MarkedGbit float64
	Preemptions          int // times the scheduler stopped it
	Moves                int // leases it won again on GPUs placed anew (AuctionPaper)
}

// AgentStats sums the Cassini policy's agents.
type AgentStats struct {
	Agents      int           // jobs that had an agent
	Adjustments int64         // re-alignments after drift
	Replans     int64         // new plans installed on running jobs
	JobMinutes  float64       // the agents' summed spans, in minutes
	PerMinute   float64       // Adjustments / JobMinutes: adjustments per job-minute
	Padding     time.Duration // time spent waiting for slots, summed
	AdjustDelay time.Duration // waiting caused by adjustments, summed
	Slides      int64         // adjustments that slid a group's clock (Elastic)
	Released    int64         // agents that gave their shift up (Elastic)
	Saved       time.Duration // communication time the held shifts saved against the replay's free estimate (Elastic)
	Samples     int64         // communication starts observed
	Over        int64         // of those, off by more than the threshold
	MeanAbs     time.Duration // mean absolute phase error
}

// DriftStats compare the shared links' planned scores with the scores of
// the jobs' actual phase positions (Cassini).
type DriftStats struct {
	Samples  int     // link samples
	Planned  float64 // mean planned score
	Realized float64 // mean score at the actual phase positions
	Lost     float64 // Planned - Realized
}

// RankStats describe the Cassini policy's rankings.
type RankStats struct {
	Rankings     int     // placements ranked
	AllDiscarded int     // rankings where every candidate was discarded (the first was taken)
	MeanBest     float64 // mean score of the chosen candidates
	Rounded      int     // rankings whose chosen candidate had its periods rounded
	// Placed counts the jobs the rankings placed, Sharing those of them
	// whose chosen candidate has them share a binding link (the peaks of
	// its jobs exceed its capacity) with another job: the jobs a time
	// shift can matter to.
	Placed, Sharing int
}

// Result is a simulation's outcome.
type Result struct {
	Scheduler Scheduler
	Policy    Policy
	Status    Status
	End       time.Duration // simulated time at the end

	// IterMs holds every completed iteration's time in milliseconds,
	// start to start (so it includes an agent's padding), job by job.
	IterMs []float64
	// AloneMs holds, in the order of IterMs, each iteration's uncontended
	// time on the placement it ran on (a job a preemption moved has one
	// per placement; JobResult.Alone is its last).
	AloneMs []float64
	Jobs    []JobResult

	// ExcessGbit is the traffic offered above capacity, summed over links.
	ExcessGbit float64
	// SentGbit is the traffic delivered, summed over connections.
	SentGbit float64

	Events    int64 // events processed
	Placement PlacementStats
	Agent     AgentStats
	Drift     DriftStats
	Rank      RankStats
}

// Mean returns the mean iteration time in milliseconds (0 with none).
func (r Result) Mean() float64 { return Mean(r.IterMs) }

// Percentile returns the p-th percentile of the iteration times in
// milliseconds (see [Percentile]).
func (r Result) Percentile(p float64) float64 { return Percentile(r.IterMs, p) }

// Slowdowns returns every completed iteration's time divided by its
// uncontended time on the placement it ran on (AloneMs), in the order of
// IterMs, leaving out iterations with no uncontended time.
func (r Result) Slowdowns() []float64 {
	out := make([]float64, 0, len(r.IterMs))
	for k, ms := range r.IterMs {
		if r.AloneMs[k] > 0 {
			out = append(out, ms/r.AloneMs[k])
		}
	}
	return out
}

// Slowdown returns the mean of Slowdowns.
func (r Result) Slowdown() float64 { return Mean(r.Slowdowns()) }

// Mean returns the mean of v (0 for none).
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Percentile returns the p-th percentile of v (0 < p <= 100) by the
// nearest-rank rule: the smallest value with at least p% of v at or below
// it; 0 for none.
func Percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}
