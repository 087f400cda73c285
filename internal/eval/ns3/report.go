package ns3

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteReport prints runs as tables: one row per run, then one per job.
func WriteReport(w io.Writer, runs []Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tvariant\tcc\tfluid ms\tns-3 ms\tcalibrated ms\tfluid p90\tns-3 p90\texcess Gbit\tmarks\tdrops\tack drops\tadj fluid/ns-3\tsim s\tcpu s\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%d\t%d/%d\t%.1f\t%.1f\t\n", r.Case, r.Variant, r.CC,
			r.FluidMs, r.PacketMs, r.CalibratedMs, r.FluidP90, r.PacketP90, r.FluidExcessGbit, r.Marks, r.Drops, r.AckDrops,
			r.FluidAdjustments, r.PacketAdjustments, r.SimSec, r.CPUSec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tvariant\tcc\tjob\tmodel\talone\titers\tfluid ms\tns-3 ms\tcalibrated\tns-3 first\tns-3 last\tmarks/iter\toverlap\tfirst q\tlast q\t")
	for _, r := range runs {
		for _, j := range r.Jobs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%.2f\t%.2f\t%.2f\t\n", r.Case, r.Variant, r.CC,
				j.ID, j.Model, j.AloneMs, j.Iterations, j.FluidMs, j.PacketMs, j.CalibratedMs, j.FirstMs, j.LastMs, j.MarksPerIter(),
				j.Overlap, j.OverlapFirst, j.OverlapLast)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		if len(r.Offsets) > 0 {
			fmt.Fprintf(w, "%s %s %s: second job's communication start after the first's (ms):", r.Case, r.Variant, r.CC)
			for _, o := range r.Offsets {
				fmt.Fprintf(w, " %.1f", o)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}
