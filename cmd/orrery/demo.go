package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/kernels"
)

// demoLink is the demo's first step: two VGG19-like data-parallel jobs on
// one 50 Gbps link (the paper's Fig. 2 setting).
const demoLink = `{"capacity_gbps": 50,
 "jobs": [
  {"id": "vgg19-a", "period_ms": 240, "phases": [{"ms": 130, "gbps": 0}, {"ms": 110, "gbps": 40}]},
  {"id": "vgg19-b", "period_ms": 240, "phases": [{"ms": 130, "gbps": 0}, {"ms": 110, "gbps": 40}]}]}`

// runDemo runs both papers' mechanisms end to end on built-in data: a link
// search, the CASSINI network simulation and the Shockwave trace replay,
// printing their tables and writing plots into the -out directory. Its data
// is inside the binary, so it runs from any folder.
func runDemo(ctx context.Context, args []string, s stdio) error {
	set := flags("demo", s)
	plotDir := set.String("out", "out", "directory for the demo's plots (created if needed)")
	set.Usage = func() {
		fmt.Fprintf(s.err, "usage: orrery demo [-out DIR]\n\nRuns CASSINI and Shockwave on built-in data, prints the results and writes plots into DIR.\n")
		set.PrintDefaults()
	}
	if err := parse(set, args); err != nil {
		return err
	}
	if err := os.MkdirAll(*plotDir, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	start := time.Now()
	fmt.Fprintf(s.out, "orrery demo (kernels: %s)\n\n", kernels.Implementation())

	fmt.Fprintf(s.out, "== CASSINI: one link, two VGG19 jobs, 50 Gbps\n")
	if err := demoLinkSearch(ctx, s); err != nil {
		return err
	}

	fmt.Fprintf(s.out, "\n== CASSINI: placement policies on the paper's 24-server fabric (fluid network simulation)\n")
	cassiniPlots, err := cassiniSimulateDemo(ctx, s.out, *plotDir)
	if err != nil {
		return fmt.Errorf("demo: cassini: %w", err)
	}

	fmt.Fprintf(s.out, "\n== Shockwave: the authors' 120-job trace on 32 GPUs, Shockwave against the six baselines\n")
	shockwavePlots, err := shockwaveSimulateDemo(ctx, s.out, *plotDir)
	if err != nil {
		return fmt.Errorf("demo: shockwave: %w", err)
	}

	fmt.Fprintf(s.out, "\nPlots written to %s:\n", *plotDir)
	for _, p := range append(cassiniPlots, shockwavePlots...) {
		fmt.Fprintf(s.out, "  %s\n", p)
	}
	fmt.Fprintf(s.out, "\nDone in %.1f s.\n", time.Since(start).Seconds())
	return nil
}

func demoLinkSearch(ctx context.Context, s stdio) error {
	out, err := orrery.Call(ctx, "cassini.link", []byte(demoLink))
	if err != nil {
		return err
	}
	var r orrery.LinkResponse
	if err := json.Unmarshal(out, &r); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "  compatibility score %.3f unshifted -> %.3f with time shifts (%s)\n", r.UnshiftedScore, r.Score, r.Status)
	ids := make([]string, 0, len(r.ShiftsMs))
	for id := range r.ShiftsMs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(s.out, "  %-8s delay %6.1f ms (rotation %5.1f degrees)\n", id, r.ShiftsMs[id], r.RotationsDeg[id])
	}
	return nil
}
