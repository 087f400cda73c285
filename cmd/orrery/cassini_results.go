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
	load := fmt.Sprintf(", load %.2f", r.Load)
	if r.Scenario != string(replay.Poisson) && r.Scenario != string(replay.Dynamic) {
		load = "" // a fixed experiment's or the caller's own arrivals
	}
	transport := ""
	if r.Transport != "" {
		transport = ", transport " + r.Transport
	}
	fmt.Fprintf(w, "CASSINI simulation (%s, %s): %s fabric (%d servers), %s%s, noise %s%s, seed %s\n\n",
		r.Scenario, r.Scheduler, r.Topology, r.Servers, jobs, load, r.Noise, transport, seeds)
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

// cassiniColumns says what each column of writeCassiniSimTable compares.
const cassiniColumns = `
What the columns compare, per arm, over every iteration of every job on the seed:
  mean/p99 iter        iteration time, start to start (it includes an agent's waiting)
  mean/p99 slowdown    each iteration over the same job's iteration alone on the network on the
                       placement it got: it counts what sharing costs a job, not whether the
                       placement itself is faster or slower alone
  x <first arm>        the first arm's mean (p99) iteration time over this arm's on the same seed:
                       above 1 is faster
  marked               traffic sent while a link on the job's path is offered more than its
                       capacity (the ECN-mark stand-in), Mbit per iteration
  agents ... gave up   CASSINI's time-shift agents: jobs holding a shift, adjustments per
                       job-minute (and pooled over the seeds), shifts given up as not paying
  sharing              of the jobs CASSINI placed, those sharing a link their peaks exceed
`

// writeCassiniNotes explains, from r's first seed, why an arm can lose to
// the first arm on one seed: the models CASSINI's placement slowed to spare
// others, and, when Ideal's mean iteration is above CASSINI's, the model
// Ideal leaves on the scheduler's placement that CASSINI placed faster.
func writeCassiniNotes(w io.Writer, r replay.CassiniReport) error {
	arm := func(name string) *replay.CassiniRun {
		for _, a := range r.Arms {
			if a.Arm == name {
				return &a.Runs[0]
			}
		}
		return nil
	}
	model := func(run *replay.CassiniRun, name string) *replay.CassiniModel {
		for i := range run.Models {
			if run.Models[i].Model == name {
				return &run.Models[i]
			}
		}
		return nil
	}
	var b strings.Builder
	b.WriteString(cassiniColumns)
	first, cas, ideal := &r.Arms[0].Runs[0], arm("cassini-placement"), arm("ideal")
	if cas == nil {
		cas = arm("cassini")
	}
	if cas != nil && first.Arm != cas.Arm {
		var slower []string
		for _, m := range cas.Models {
			f := model(first, m.Model)
			if f != nil && m.MeanIterMs > f.MeanIterMs*1.01 {
				slower = append(slower, fmt.Sprintf("%s %.0f -> %.0f ms (marked %.0f -> %.0f Mbit)", m.Model, f.MeanIterMs, m.MeanIterMs, f.MarkedMbitPerIter, m.MarkedMbitPerIter))
			}
		}
		fmt.Fprintf(&b, "\nWhy an arm can lose on one seed: a seed is one trace, and CASSINI ranks each decision's\n"+
			"candidates by the delay it predicts for all the jobs, so it may put a job on a shared link to\n"+
			"spare others, and the slowdown columns count that job's loss. ")
		if slower == nil {
			fmt.Fprintf(&b, "On this seed no model ran slower\nunder %s than under %s.\n", cas.Arm, first.Arm)
		} else {
			fmt.Fprintf(&b, "On this seed %s slowed\n"+
				"these models (mean iteration, and marked traffic per iteration, against %s):\n", cas.Arm, first.Arm)
			for _, s := range slower {
				fmt.Fprintf(&b, "  %s\n", s)
			}
		}
	}
	if cas != nil && ideal != nil && ideal.MeanIterMs > cas.MeanIterMs {
		worst, gap := "", 0.0
		for _, m := range ideal.Models {
			if c := model(cas, m.Model); c != nil && m.MeanIterMs-c.MeanIterMs > gap {
				worst, gap = m.Model, m.MeanIterMs-c.MeanIterMs
			}
		}
		if worst != "" {
			im, cm := model(ideal, worst), model(cas, worst)
			fmt.Fprintf(&b, "Ideal keeps the scheduler's own placements and removes only the other jobs' traffic, so a\n"+
				"job that contends with itself stays as slow: %s takes %.0f ms under ideal (marked %.0f Mbit,\n"+
				"its own groups) and %.0f ms on %s's placement, which is why ideal's mean iteration\n"+
				"(%.1f ms) is above %s's (%.1f ms) here.\n", worst, im.MeanIterMs, im.MarkedMbitPerIter, cm.MeanIterMs, cas.Arm,
				ideal.MeanIterMs, cas.Arm, cas.MeanIterMs)
		}
	}
	b.WriteString("Over the 16 seeds of the full experiment (README's table) CASSINI's placement lowers the\n" +
		"mean and p99 slowdown: go run ./cmd/orrery cassini simulate -seed 1-16\n")
	_, err := io.WriteString(w, b.String())
	return err
}
