//go:build linux

package testbed

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/replay"
)

// FluidArm is the fluid model's counterpart of an arm: the same scenario
// simulated by package netsim (orrery cassini simulate -scenario S -noise
// none, or gauss:CV, -iterations N -policies baseline,cassini).
type FluidArm struct {
	Arm     string  `json:"arm"` // overlapped (the scheduler's placement, no shift) or agents (CASSINI's shifts, Elastic agents)
	MeanMs  float64 `json:"mean_iter_ms"`
	P50Ms   float64 `json:"p50_iter_ms"`
	P99Ms   float64 `json:"p99_iter_ms"`
	Command string  `json:"command"`
}

// fluid simulates the run's scenario in the fluid model: its overlapped
// arm and its agents' (every job on its shift, the simulator's default
// Elastic agents), with the run's jitter (Gaussian, one seed) or none.
func fluid(ctx context.Context, opt Options) ([]FluidArm, error) {
	c := replay.Cassini{Scenario: opt.Scenario, MaxIterations: opt.Iterations, Seeds: []uint64{max(opt.Seed, 1)},
		Arms: []replay.Arm{{Policy: netsim.Baseline}, {Policy: netsim.Cassini}}}
	noise := "none"
	if opt.NoiseCV > 0 {
		c.Noise, c.NoiseCV = replay.Gaussian, opt.NoiseCV
		noise = fmt.Sprintf("gauss:%g -seed %d", opt.NoiseCV, max(opt.Seed, 1))
	}
	if opt.AgentMode == "pad" {
		c.AgentMode = agent.Pad
	}
	rep, err := replay.RunCassini(ctx, c)
	if err != nil {
		return nil, err
	}
	cmd := fmt.Sprintf("orrery cassini simulate -scenario %s -noise %s -iterations %d -policies baseline,cassini", opt.Scenario, noise, opt.Iterations)
	if opt.AgentMode == "pad" {
		cmd += " -agent-mode pad"
	}
	var out []FluidArm
	for i, a := range rep.Arms {
		run := a.Runs[0]
		out = append(out, FluidArm{Arm: []string{"overlapped", "agents"}[i], MeanMs: run.MeanIterMs, P50Ms: run.P50IterMs, P99Ms: run.P99IterMs, Command: cmd})
	}
	return out, nil
}
