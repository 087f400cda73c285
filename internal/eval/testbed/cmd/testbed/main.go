//go:build linux

// Command testbed runs a fixed experiment of the CASSINI paper on real
// kernel TCP in network namespaces (package internal/eval/testbed): each
// job alone (its profile), overlapped, and with its agents holding the
// shifts planned from the measured profiles. Root only.
//
//	go run ./internal/eval/testbed/cmd/testbed -scenario fig2 -cc cubic,reno,bbr
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/testbed"
)

func main() {
	scenario := flag.String("scenario", "fig2", "fixed experiment: fig2 or snapshot1..snapshot5")
	ccs := flag.String("cc", "cubic", "comma-separated congestion controls, one run each (cubic, reno, bbr; dctcp where the kernel has it)")
	arms := flag.String("arms", "alone,overlapped,agents", "comma-separated arms: alone, overlapped, shifted (started at the shift, no agent), agents")
	iterations := flag.Int("iterations", 200, "iterations per job in every arm but alone")
	alone := flag.Int("alone", 40, "iterations per job alone (its profile)")
	mode := flag.String("agent-mode", "elastic", "agents: elastic (on the plan's clock) or pad")
	edge := flag.Bool("edge", false, "hold the search's edge shifts (shifts_ms) instead of the centred ones, with no slack")
	headroom := flag.Float64("headroom", 0, "idle fraction added to each measured period before planning")
	budget := flag.Float64("budget", 0, "elastic agents' adjustments per minute (0: the default, negative: no cap)")
	noGiveUp := flag.Bool("no-give-up", false, "elastic agents never give their shifts up")
	meanGiveUp := flag.Bool("mean-give-up", false, "elastic agents weigh giving up by moving averages (the rule before; its ablation)")
	planBudget := flag.Bool("plan-budget", false, "elastic agents' budget applies on the plan's clock too (the rule before; its ablation)")
	scale := flag.Float64("scale", testbed.DefaultScale, "divide the links' rates and the jobs' bytes by this")
	queue := flag.Int("queue-kb", 0, "each port's drop-tail buffer in KB (0: 32 ms of the link)")
	ecn := flag.Bool("ecn", false, "RED marking with DCTCP (only where the kernel has both)")
	prio := flag.Int("priority", 10, "workers' SCHED_FIFO priority (chrt -f); negative: normal priority")
	stall := flag.Float64("stall-ms", 10, "a sleep that wakes this much late counts as a host stall")
	noise := flag.Float64("noise-cv", 0, "Gaussian jitter of each iteration's compute, coefficient of variation (0: the host's own only)")
	seed := flag.Uint64("seed", 1, "seed of the jitter")
	torch := flag.Bool("torch", false, "run the ranks as PyTorch DDP (gloo) with the Python agent (needs python3-torch; reno or bbr)")
	worker := flag.String("worker", "", "the worker binary (default: go build it, from inside the module)")
	tag := flag.String("tag", "", "name the JSON files SCENARIO-CC-TAG.json instead of SCENARIO-CC-MODE.json")
	out := flag.String("out", "", "write each run's report as JSON into this directory")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var armList []testbed.Arm
	for _, a := range strings.Split(*arms, ",") {
		arm, err := testbed.ParseArm(strings.TrimSpace(a))
		if err != nil {
			fail(err)
		}
		armList = append(armList, arm)
	}
	for _, cc := range strings.Split(*ccs, ",") {
		opt := testbed.Options{Scenario: replay.Scenario(*scenario), Congestion: strings.TrimSpace(cc), Iterations: *iterations,
			AloneIterations: *alone, Arms: armList, AgentMode: *mode, Edge: *edge, Headroom: *headroom, Budget: *budget, NoGiveUp: *noGiveUp, MeanGiveUp: *meanGiveUp, PlanBudget: *planBudget,
			Scale: *scale, QueueBytes: *queue * 1000, ECN: *ecn, Priority: *prio, StallMs: *stall, NoiseCV: *noise, Seed: *seed, Torch: *torch, Worker: *worker, Log: os.Stderr}
		rep, err := testbed.Run(ctx, opt)
		if errors.Is(err, testbed.ErrUnavailable) {
			fmt.Fprintln(os.Stderr, "testbed: skipped:", err)
			os.Exit(0)
		}
		if err != nil {
			fail(err)
		}
		fmt.Print(rep.Table())
		if *out != "" {
			if err := os.MkdirAll(*out, 0o755); err != nil {
				fail(err)
			}
			b, _ := json.MarshalIndent(rep, "", "  ")
			name := fmt.Sprintf("%s-%s-%s.json", rep.Scenario, rep.Congestion, rep.AgentMode)
			if *tag != "" {
				name = fmt.Sprintf("%s-%s-%s.json", rep.Scenario, rep.Congestion, *tag)
			}
			if err := os.WriteFile(filepath.Join(*out, name), append(b, '\n'), 0o644); err != nil {
				fail(err)
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testbed:", err)
	os.Exit(1)
}
