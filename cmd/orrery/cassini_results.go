package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/orrery/orrery/internal/eval/replay"
)

// show formats a spread: the mean, and ± the standard deviation with
// several seeds.
func show(s replay.Spread, format string) string {
	out := fmt.Sprintf(format, s.Mean)
	if s.SD > 0 || s.Min != s.Max {
		out += " ±" + fmt.Sprintf(format, s.SD)
	}
	return out
}

// writeCassiniSimTable prints r's arms, one row each.
func writeCassiniSimTable(w io.Writer, r replay.CassiniReport) error {
	seeds := strconv.FormatUint(r.Seeds[0], 10)
	if n := len(r.Seeds); n > 1 {
		seeds = fmt.Sprintf("%d seeds (%d-%d): mean ± sd across seeds", n, r.Seeds[0], r.Seeds[n-1])
	}
	jobs := fmt.Sprintf("%d jobs", r.Jobs)
	if r.Sweep > 1 {
		jobs += fmt.Sprintf(" in sweeps of %d", r.Sweep)
	}
	fmt.Fprintf(w, "CASSINI simulation (%s, %s): %s fabric (%d servers), %s, load %.2f, noise %s, seed %s\n\n",
		r.Scenario, r.Scheduler, r.Topology, r.Servers, jobs, r.Load, r.Noise, seeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := r.Arms[0].Arm
	fmt.Fprintf(tw, "arm\tmean iter (ms)\tp99 iter (ms)\tmean slowdown\tp99 slowdown\tx %s mean\tx %s p99\tmarked (Mbit/iter)\tagents\tadjust/job-min\tpooled\tgave up\tsharing\t\n", first, first)
	for _, a := range r.Arms {
		opt := func(s *replay.Spread, format string) string {
			if s == nil {
				return "-"
			}
			return show(*s, format)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.Arm, show(a.MeanIterMs, "%.1f"), show(a.P99IterMs, "%.1f"),
			show(a.MeanSlowdown, "%.3f"), show(a.P99Slowdown, "%.3f"), show(a.SpeedupMean, "%.3f"), show(a.SpeedupP99, "%.3f"),
			show(a.MarkedMbitPerIter, "%.1f"), opt(a.Agents, "%.1f"), opt(a.AdjustmentsPerMin, "%.2f"), optf(a.PooledAdjustmentsPerMin, "%.2f"), opt(a.Released, "%.1f"), opt(a.Sharing, "%.3f"))
	}
	return tw.Flush()
}

// writeCassiniPlacementTable prints, per arm, the paper's metric (every
// seed's iterations pooled: mean and p99, the first arm's over the arm's,
// the fraction of the gap to Ideal closed) and where the jobs ran.
func writeCassiniPlacementTable(w io.Writer, r replay.CassiniReport) error {
	fmt.Fprintf(w, "placement %s, auction %s: pooled iteration times (the paper's metric) and where the jobs ran (means over seeds)\n\n", r.Placement, r.Auction)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := r.Arms[0].Arm
	fmt.Fprintf(tw, "arm\tpooled mean (ms)\tpooled p99 (ms)\tx %s mean\tx %s p99\tgap closed\tcross-rack\tuplink hops\tbinding sharers\tbinding share\tuplink load\tmoves\tresized\t\n", first, first)
	for _, a := range r.Arms {
		p, pl := a.Pooled, a.Placement
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.Arm, p.MeanIterMs, p.P99IterMs, p.SpeedupMean, p.SpeedupP99,
			optf(p.GapClosed, "%.3f"), show(pl.CrossRack, "%.3f"), show(pl.UplinkHops, "%.3f"), show(pl.BindingSharers, "%.2f"),
			show(pl.BindingShare, "%.3f"), show(pl.UplinkLoad, "%.3f"), show(pl.Moves, "%.1f"), show(pl.Resized, "%.1f"))
	}
	return tw.Flush()
}

// writeCassiniModelTable prints, per model, each arm's mean and p99
// iteration time and marked traffic (means over the seeds).
func writeCassiniModelTable(w io.Writer, r replay.CassiniReport) error {
	fmt.Fprintf(w, "per model (means over the seeds): mean / p99 iteration (ms) | marked Mbit per iteration\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head []string
	for _, a := range r.Arms {
		head = append(head, a.Arm)
	}
	fmt.Fprintf(tw, "model\t%s\t%s\t\n", strings.Join(head, "\t"), strings.Join(head, "\t"))
	for _, m := range r.Arms[0].Models {
		name := m.Model
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
func writeCassiniSweepTable(w io.Writer, rs []replay.CassiniReport) error {
	r := rs[0]
	seeds := strconv.FormatUint(r.Seeds[0], 10)
	if n := len(r.Seeds); n > 1 {
		seeds = fmt.Sprintf("%d seeds (%d-%d), mean ± sd", n, r.Seeds[0], r.Seeds[n-1])
	}
	fmt.Fprintf(w, "CASSINI simulation (%s, %s): %s fabric (%d servers), %d jobs, seed %s, by noise\n\n", r.Scenario, r.Scheduler, r.Topology, r.Servers, r.Jobs, seeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := r.Arms[0].Arm
	fmt.Fprintf(tw, "noise\tarm\tmean iter (ms)\tp99 iter (ms)\tx %s mean\tx %s p99\tadjust/job-min\tpooled\tgave up\t\n", first, first)
	for _, x := range rs {
		for _, a := range x.Arms {
			opt := func(s *replay.Spread, format string) string {
				if s == nil {
					return "-"
				}
				return show(*s, format)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Noise, a.Arm, show(a.MeanIterMs, "%.1f"), show(a.P99IterMs, "%.1f"),
				show(a.SpeedupMean, "%.3f"), show(a.SpeedupP99, "%.3f"), opt(a.AdjustmentsPerMin, "%.2f"), optf(a.PooledAdjustmentsPerMin, "%.2f"), opt(a.Released, "%.1f"))
		}
	}
	return tw.Flush()
}

// optf formats v, or "-" for nil.
func optf(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}
