//go:build linux

package testbed

import (
	"fmt"
	"math"
)

// Policy is what a short testbed run (CI) asserts, and when it cannot
// tell.
type Policy struct {
	// Margin is the least ratio of the overlapped arm's median iteration
	// to the agents' arm's: the agents must beat overlapped jobs by it.
	Margin float64
	// AloneTolerance bounds how far each job's median iteration alone may
	// be from its model's (the fluid model's uncontended time), as a
	// fraction: the testbed must run the workload it claims to.
	AloneTolerance float64
	// MaxDisturbed is the largest fraction of the ranks' iterations in the
	// overlapped and agents arms whose sleeps a host stall may have moved
	// (ArmResult.Disturbed) for the run to count; past it the run is in
	// doubt: neither a pass nor a failure.
	MaxDisturbed float64
}

// DefaultPolicy is the CI's.
var DefaultPolicy = Policy{Margin: 1.05, AloneTolerance: 0.03, MaxDisturbed: 0.05}

// Outcome is a run's verdict under a policy.
type Outcome int

// The outcomes.
const (
	Pass Outcome = iota
	Fail
	InDoubt // the host stalled too often to tell
)

func (o Outcome) String() string {
	return [...]string{"PASS", "FAIL", "IN DOUBT"}[o]
}

// Judge applies the policy to a report with Alone, Overlapped and Agents
// arms; alone[k] is job k's model time alone (ms). It returns the outcome
// and a line saying why, with the stall counts.
func (p Policy) Judge(r Report, alone []float64) (Outcome, string) {
	o, g, a := r.Arm(Overlapped), r.Arm(Agents), r.Arm(Alone)
	if o == nil || g == nil || a == nil {
		return Fail, "the report lacks the alone, overlapped or agents arm"
	}
	stalls := fmt.Sprintf("disturbed iterations: overlapped %d of %d, agents %d of %d (stalls past %v ms: %d and %d, latest %.0f and %.0f ms)",
		o.Disturbed, o.RankIterations, g.Disturbed, g.RankIterations, r.StallMs, o.Stalls, g.Stalls, o.MaxLateMs, g.MaxLateMs)
	ratio := o.P50Ms / g.P50Ms
	gain := fmt.Sprintf("medians: overlapped %.1f ms, agents %.1f ms: %.3fx (margin %.2fx)", o.P50Ms, g.P50Ms, ratio, p.Margin)
	for _, arm := range []*ArmResult{o, g} {
		if float64(arm.Disturbed) > p.MaxDisturbed*float64(arm.RankIterations) {
			return InDoubt, fmt.Sprintf("the host stalled too often (more than %.0f%% of the iterations of the %s arm); %s; %s", 100*p.MaxDisturbed, arm.Arm, stalls, gain)
		}
	}
	for k, j := range a.Jobs {
		if k < len(alone) && math.Abs(j.MedianMs/alone[k]-1) > p.AloneTolerance {
			return Fail, fmt.Sprintf("job %d alone: median %.1f ms, its model's %.1f ms (tolerance %.0f%%); %s", j.ID, j.MedianMs, alone[k], 100*p.AloneTolerance, stalls)
		}
	}
	if !(ratio >= p.Margin) {
		return Fail, gain + "; " + stalls
	}
	return Pass, gain + "; " + stalls
}
