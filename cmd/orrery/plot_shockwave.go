package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/orrery/orrery/internal/eval/replay"
)

// plotShockwaveFTF draws the cumulative distribution of the finish-time
// fairness ρ of every job, one curve per policy, with the fair share ρ = 1
// marked, and writes it to dir as shockwave_ftf_cdf.png and .svg (the
// directory is created if needed). It returns the paths written. The
// output depends only on the results.
func plotShockwaveFTF(dir string, rep replay.ShockwaveReport) ([]string, error) {
	if len(rep.Results) == 0 {
		return nil, fmt.Errorf("plot: no results")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Finish-time fairness, %d jobs on %d GPUs", rep.TraceJobs, rep.GPUs)
	p.X.Label.Text = "finish-time fairness ρ = JCT / (T_iso · N/M), log scale   (≤ 1 is fair)"
	p.Y.Label.Text = "fraction of jobs with ρ ≤ x"
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"},
		{Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}}
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Millimeter
	p.Legend.YOffs = vg.Millimeter
	xmin, xmax := 1.0, 1.0
	for i, r := range rep.Results {
		if len(r.PerJob) == 0 {
			return nil, fmt.Errorf("plot: %s has no finished jobs", r.Policy)
		}
		rho := make([]float64, len(r.PerJob))
		for k, j := range r.PerJob {
			rho[k] = j.FTF
		}
		slices.Sort(rho)
		if !(rho[0] > 0) {
			return nil, fmt.Errorf("plot: %s: finish-time fairness %v", r.Policy, rho[0])
		}
		xmin, xmax = min(xmin, rho[0]), max(xmax, rho[len(rho)-1])
		// A step curve: the fraction of jobs with ρ ≤ x.
		pts := make(plotter.XYs, 0, 2*len(rho))
		for k, v := range rho {
			pts = append(pts, plotter.XY{X: v, Y: float64(k) / float64(len(rho))},
				plotter.XY{X: v, Y: float64(k+1) / float64(len(rho))})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plot: %s: %w", r.Policy, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.6)
		line.Dashes = plotutil.Dashes(i)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (worst %.2f)", r.Legend, r.WorstFTF), line)
	}
	fair, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	fair.Color = color.Gray{Y: 90}
	fair.Width = vg.Points(0.8)
	fair.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(fair)
	p.X.Min, p.X.Max = xmin/1.1, xmax*1.1
	var ticks []plot.Tick
	for _, v := range []float64{0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100} {
		if v >= p.X.Min && v <= p.X.Max {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(24)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, "shockwave_ftf_cdf."+ext)
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
