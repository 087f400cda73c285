package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/orrery/orrery/engine/wire"
)

// demoLink is the built-in example: two VGG19-like data-parallel jobs on
// one 50 Gbps link (the paper's Fig. 2 setting).
const demoLink = `{"capacity_gbps": 50,
 "jobs": [
  {"id": "vgg19-a", "period_ms": 240, "phases": [{"ms": 130, "gbps": 0}, {"ms": 110, "gbps": 40}]},
  {"id": "vgg19-b", "period_ms": 240, "phases": [{"ms": 130, "gbps": 0}, {"ms": 110, "gbps": 40}]}]}`

func runDemo(ctx context.Context, args []string, s stdio) error {
	fs := flags("demo", s)
	plotDir := fs.String("out", "out", "directory for the demo's plots")
	if err := parse(fs, args); err != nil {
		return err
	}
	_ = plotDir // the plots come with the simulators
	out, err := wire.Call(ctx, "cassini.link", []byte(demoLink))
	if err != nil {
		return err
	}
	var r wire.LinkResponse
	if err := json.Unmarshal(out, &r); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "CASSINI link search: two VGG19 jobs on a 50 Gbps link\n")
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
