package main

import (
	"cmp"
	"context"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/eval/replay"
	"github.com/orrery/orrery/internal/eval/workload"
)

// cassiniPolicyStyle fixes each policy's color, dashes and width, so every
// plot draws a policy alike and no two arms share a dash pattern: arms
// whose curves coincide (CASSINI's placement with and without its shifts)
// still show both, the wider drawn first.
func cassiniPolicyStyle(policy string) (color.Color, []vg.Length, vg.Length) {
	pt := vg.Points
	switch policy {
	case "baseline":
		return color.RGBA{R: 214, G: 39, B: 40, A: 255}, nil, pt(2.6)
	case "random":
		return color.RGBA{R: 255, G: 127, B: 14, A: 255}, []vg.Length{pt(8), pt(3)}, pt(1.8)
	case "cassini-placement":
		return color.RGBA{R: 148, G: 103, B: 189, A: 255}, []vg.Length{pt(7), pt(3), pt(1.5), pt(3)}, pt(2.2)
	case "cassini", "cassini/elastic":
		return color.RGBA{R: 31, G: 119, B: 180, A: 255}, []vg.Length{pt(4), pt(2.5)}, pt(1.5)
	case "cassini/pad":
		return color.RGBA{R: 140, G: 86, B: 75, A: 255}, []vg.Length{pt(3), pt(3), pt(0.5), pt(3)}, pt(1.5)
	case "cassini/paper":
		return color.RGBA{R: 127, G: 127, B: 127, A: 255}, []vg.Length{pt(1), pt(2)}, pt(1.5)
	case "ideal":
		return color.RGBA{R: 44, G: 160, B: 44, A: 255}, []vg.Length{pt(1.2), pt(2.2)}, pt(2)
	}
	return color.Black, nil, pt(1.5)
}

// logTicks labels a log axis from lo to hi with the 1-2-5 values within
// it (1, 2, 5, 10, 20, ... and 0.1, 0.2, 0.5 below 1) and marks the values
// between them (3, 4, 6, 7, 8 and 9 times a power of ten) as minor ticks;
// where the range is narrow (under a factor of 4, as slowdowns are) every
// one of them is labelled, and 1.5 too (0.8, 0.9, 1, 1.5, 2). Labels carry
// only the digits the value needs.
func logTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	narrow := hi/lo < 4
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)) - 1; e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			for _, frac := range []float64{0, 0.5} {
				if frac > 0 && !(narrow && m < 2) {
					continue // 1.5 only where the range is narrow
				}
				v := (float64(m) + frac) * p
				if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
					continue
				}
				major := narrow || m == 1 || m == 2 || m == 5
				label := ""
				if major {
					label = strconv.FormatFloat(v, 'g', 4, 64)
				}
				ticks = append(ticks, plot.Tick{Value: v, Label: label})
			}
		}
	}
	return ticks
}

// plotCassiniCDF draws the cumulative distributions of the iteration times
// of every policy of r, one curve each: on the left in milliseconds, on the
// right divided by each job's uncontended iteration time (the slowdown the
// network causes, which the mix of models hides on the left). It writes
// cassini_iteration_cdf.png into dir (created if needed) and returns its
// path. The image depends only on r.
func plotCassiniCDF(dir string, r replay.CassiniReport) (string, error) {
	if len(firstRuns(r)) == 0 {
		return "", fmt.Errorf("plot: no policies")
	}
	ms, err := cdfPanel(r, "iteration time (ms, log scale), start to start", func(p replay.CassiniRun) []float64 { return p.IterMs },
		func(p replay.CassiniRun) string {
			return fmt.Sprintf("%s: mean %.0f, p99 %.0f ms", p.Arm, p.MeanIterMs, p.P99IterMs)
		})
	if err != nil {
		return "", err
	}
	slow, err := cdfPanel(r, "slowdown (log scale): iteration time / the same job alone on its placement", func(p replay.CassiniRun) []float64 { return p.Slowdowns },
		func(p replay.CassiniRun) string {
			return fmt.Sprintf("%s: mean %.3f, p99 %.2f", p.Arm, p.MeanSlowdown, p.P99Slowdown)
		})
	if err != nil {
		return "", err
	}
	title := fmt.Sprintf("CASSINI simulation (%s, %s, %s fabric, %d jobs, load %.2f, noise %s, seed %d): CDF of iteration times",
		r.Scenario, r.Scheduler, r.Topology, r.Jobs, r.Load, r.Noise, r.Seeds[0])
	fig := sideBySide{W: 12 * vg.Inch, H: 4.8 * vg.Inch, TitleH: 0.45 * vg.Inch, PadX: vg.Inch / 3, PadRight: vg.Points(8)}
	return fig.save(dir, "cassini_iteration_cdf.png", title, ms, slow)
}

// firstRuns is every arm's run on the first seed.
func firstRuns(r replay.CassiniReport) []replay.CassiniRun {
	var out []replay.CassiniRun
	for _, a := range r.Arms {
		out = append(out, a.Runs[0])
	}
	return out
}

// sideBySide is the layout of a figure of two plots under a title line.
type sideBySide struct {
	W, H, TitleH, PadX, PadRight vg.Length
}

// save draws left and right under title and writes the PNG dir/name.
func (f sideBySide) save(dir, name, title string, left, right *plot.Plot) (string, error) {
	img := vgimg.New(f.W, f.H)
	dc := draw.New(img)
	top := draw.Crop(dc, 0, 0, 0, -f.TitleH)
	line := draw.Crop(dc, 0, 0, f.H-f.TitleH, 0)
	sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	sty.Font.Size = vg.Points(13)
	line.FillText(sty, vg.Point{X: f.W / 2, Y: line.Center().Y}, title)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: f.PadX, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: f.PadRight}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, top)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	return savePNG(dir, name, img)
}

// cdfPanel draws one CDF per policy of the values values picks, on a log
// axis (iteration times span 100 ms to seconds, and slowdowns are ratios),
// from the smallest value to the 99.9th percentile, so one outlier does
// not squash the rest.
func cdfPanel(r replay.CassiniReport, xlabel string, values func(replay.CassiniRun) []float64, legend func(replay.CassiniRun) string) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = xlabel
	p.Y.Label.Text = "fraction of iterations ≤ x"
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(logTicks)
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Millimeter
	p.Legend.YOffs = vg.Millimeter
	var all []float64
	for _, pr := range firstRuns(r) {
		for _, v := range values(pr) {
			if v > 0 {
				all = append(all, v)
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("plot: no iterations")
	}
	slices.Sort(all)
	xmax := all[min(len(all)-1, int(0.999*float64(len(all))))] * 1.03
	p.X.Min, p.X.Max = all[0]*0.97, xmax
	// The widest lines first, so that a narrower curve on top of a wider
	// one shows both.
	runs := firstRuns(r)
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		_, _, wa := cassiniPolicyStyle(runs[a].Arm)
		_, _, wb := cassiniPolicyStyle(runs[b].Arm)
		return cmp.Compare(wb, wa)
	})
	lines := make([]*plotter.Line, len(runs))
	for _, i := range order {
		pr := runs[i]
		var v []float64
		for _, x := range values(pr) {
			if x > 0 {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("plot: %s has no iterations", pr.Arm)
		}
		slices.Sort(v)
		// At most ~2000 steps per curve.
		step := max(1, len(v)/2000)
		pts := make(plotter.XYs, 0, 2*len(v)/step+2)
		for k := 0; k < len(v); k += step {
			x := min(v[k], xmax)
			pts = append(pts, plotter.XY{X: x, Y: float64(k) / float64(len(v))}, plotter.XY{X: x, Y: float64(min(k+step, len(v))) / float64(len(v))})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plot: %s: %w", pr.Arm, err)
		}
		line.Color, line.Dashes, line.Width = cassiniPolicyStyle(pr.Arm)
		p.Add(line)
		lines[i] = line
	}
	for i, pr := range runs { // the legend in the arms' order
		p.Legend.Add(legend(pr), lines[i])
	}
	return p, nil
}

// savePNG writes img to dir/name (dir created if needed).
func savePNG(dir, name string, img *vgimg.Canvas) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return "", fmt.Errorf("plot: %w", err)
	}
	return path, f.Close()
}

// cassiniCircle is two jobs sharing a link, drawn on their unified circle
// before and after CASSINI's rotation.
type cassiniCircle struct {
	Names        [2]string
	Periods      [2]int     // ms
	Demand       [2][]int32 // per ms of one period, in Mbps
	Perimeter    int        // ms
	Shift        int        // the second job's delay, ms (the first is the reference)
	CapacityGbps float64
	Before       float64 // compatibility score unshifted
	After        float64 // and with the shift
}

// cassiniCircleExample profiles two jobs ("Model/batch", each on 2
// servers) at 1 ms ticks and finds the shift that interleaves them best on a
// 50 Gbps link. The paper's Table 2 snapshot 1 is WideResNet101/800 with
// VGG16/1400.
func cassiniCircleExample(ctx context.Context, a, b string) (cassiniCircle, error) {
	c := cassiniCircle{Names: [2]string{a, b}, CapacityGbps: 50}
	var profs [2]profile.Profile
	for i, spec := range []string{a, b} {
		name, batch, _ := strings.Cut(spec, "/")
		m, err := workload.Lookup(name)
		if err != nil {
			return c, err
		}
		bs := m.RefBatch
		if batch != "" {
			if bs, err = strconv.Atoi(batch); err != nil {
				return c, fmt.Errorf("%q: batch %q", spec, batch)
			}
		}
		steps, err := m.Iteration(bs, 2)
		if err != nil {
			return c, err
		}
		if profs[i], err = workload.Profile(steps, profile.Quantum{}); err != nil {
			return c, err
		}
		c.Periods[i], c.Demand[i] = profs[i].Period, profs[i].Demand
	}
	var w link.Workspace
	res, err := w.Search(ctx, link.Problem{Jobs: profs[:], Capacity: int32(c.CapacityGbps * 1000)}, link.Options{}, nil)
	if err != nil {
		return c, err
	}
	c.Perimeter, c.Shift, c.Before, c.After = res.Circle.Perimeter, res.Shifts[1], res.Unshifted, res.Score
	return c, nil
}

// plotCassiniCircle draws c as the paper's Fig. 5: time runs clockwise
// around the unified circle from the top, each job's demand is stacked
// outward in its own color (the distance from the inner ring is Gbps: faint
// rings mark every quarter of the capacity and a scale bar reads them), and
// the link capacity is the dashed ring; demand beyond it is congestion. The left panel is unshifted, the right
// after the rotation. It writes cassini_unified_circle.png into dir and
// returns its path. The image depends only on c.
func plotCassiniCircle(dir string, c cassiniCircle) (string, error) {
	if c.Perimeter <= 0 || c.CapacityGbps <= 0 {
		return "", fmt.Errorf("plot: empty unified circle")
	}
	for i := range 2 {
		if c.Periods[i] <= 0 || len(c.Demand[i]) != c.Periods[i] || c.Perimeter%c.Periods[i] != 0 {
			return "", fmt.Errorf("plot: job %d: period %d, %d demands, perimeter %d", i, c.Periods[i], len(c.Demand[i]), c.Perimeter)
		}
	}
	before, err := circlePanel(c, 0, fmt.Sprintf("unshifted: score %.3f", c.Before))
	if err != nil {
		return "", err
	}
	after, err := circlePanel(c, c.Shift, fmt.Sprintf("%s delayed %d ms: score %.3f", c.Names[1], c.Shift, c.After))
	if err != nil {
		return "", err
	}
	title := fmt.Sprintf("Unified circle of %s (%d ms) and %s (%d ms) on a %.0f Gbps link: %d ms around",
		c.Names[0], c.Periods[0], c.Names[1], c.Periods[1], c.CapacityGbps, c.Perimeter)
	fig := sideBySide{W: 11 * vg.Inch, H: 5.8 * vg.Inch, TitleH: 0.5 * vg.Inch, PadX: vg.Inch / 4, PadRight: vg.Points(4)}
	return fig.save(dir, "cassini_unified_circle.png", title, before, after)
}

// scaleBar draws the circle's Gbps scale in the panel's lower right corner:
// a bar as long as the capacity's radius, ticked at each quarter, labelled
// 0, half and the capacity in Gbps.
func scaleBar(p *plot.Plot, capGbps, lim float64) error {
	x0, y := lim-1.35, -lim+0.32
	bar, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x0 + 1, Y: y}})
	if err != nil {
		return err
	}
	bar.Width = vg.Points(1.2)
	p.Add(bar)
	var xys plotter.XYs
	var labels []string
	for k := 0; k <= 4; k++ {
		x := x0 + float64(k)/4
		tick, err := plotter.NewLine(plotter.XYs{{X: x, Y: y}, {X: x, Y: y + 0.06}})
		if err != nil {
			return err
		}
		tick.Width = vg.Points(1)
		p.Add(tick)
		if k%2 == 0 {
			xys = append(xys, plotter.XY{X: x, Y: y - 0.12})
			labels = append(labels, strconv.FormatFloat(capGbps*float64(k)/4, 'g', 4, 64))
		}
	}
	labels[len(labels)-1] += " Gbps"
	xys = append(xys, plotter.XY{X: x0 + 0.5, Y: y + 0.2})
	labels = append(labels, "demand, from the inner ring")
	lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return err
	}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].XAlign, lbl.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
	}
	p.Add(lbl)
	return nil
}

// circlePanel draws one panel: the two jobs' demand around the unified
// circle with the second delayed by shift ms.
func circlePanel(c cassiniCircle, shift int, title string) (*plot.Plot, error) {
	const r0 = 1.0 // radius of the time axis; capacity sits at r0 + 1
	p := plot.New()
	p.Title.Text = title
	p.HideAxes()
	lim := r0 + 1.9
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -lim, lim, -lim, lim
	n := c.Perimeter
	capUnits := c.CapacityGbps * 1000
	// Radii per tick: job 0 from r0, job 1 stacked on it.
	at := func(j, x int) float64 {
		s := 0
		if j == 1 {
			s = shift
		}
		t := ((x-s)%c.Periods[j] + c.Periods[j]) % c.Periods[j]
		return float64(c.Demand[j][t]) / capUnits
	}
	inner := make([]float64, n)
	colors := [2]color.Color{color.NRGBA{R: 31, G: 119, B: 180, A: 230}, color.NRGBA{R: 255, G: 127, B: 14, A: 230}}
	angle := func(x float64) float64 { return math.Pi/2 - 2*math.Pi*x/float64(n) } // clockwise from the top
	arc := func(pts plotter.XYs, r, from, to float64) plotter.XYs {
		steps := max(1, int(math.Ceil(math.Abs(to-from)/float64(n)*720)))
		for k := 0; k <= steps; k++ {
			a := angle(from + (to-from)*float64(k)/float64(steps))
			pts = append(pts, plotter.XY{X: r * math.Cos(a), Y: r * math.Sin(a)})
		}
		return pts
	}
	for j := range 2 {
		for x := 0; x < n; {
			d := at(j, x)
			y := x + 1
			for y < n && at(j, y) == d && (j == 0 || inner[y] == inner[x]) {
				y++
			}
			if d > 0 {
				lo, hi := r0+inner[x], r0+inner[x]+d
				pts := arc(nil, hi, float64(x), float64(y))
				pts = arc(pts, lo, float64(y), float64(x))
				poly, err := plotter.NewPolygon(pts)
				if err != nil {
					return nil, err
				}
				poly.Color = colors[j]
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
			for k := x; k < y; k++ {
				inner[k] += d
			}
			x = y
		}
	}
	ring := func(r float64, col color.Color, dashes []vg.Length, width vg.Length) error {
		l, err := plotter.NewLine(arc(nil, r, 0, float64(n)))
		if err != nil {
			return err
		}
		l.Color, l.Dashes, l.Width = col, dashes, width
		p.Add(l)
		return nil
	}
	if err := ring(r0, color.Gray{Y: 120}, nil, vg.Points(0.8)); err != nil {
		return nil, err
	}
	// The Gbps scale: faint rings every quarter of the capacity (but the
	// capacity's own) out to the outermost demand, and a scale bar.
	outer := 0.0
	for _, v := range inner {
		outer = max(outer, v)
	}
	for k := 1; float64(k)/4 <= max(outer, 1)+1e-9; k++ {
		if k == 4 {
			continue
		}
		if err := ring(r0+float64(k)/4, color.Gray{Y: 200}, []vg.Length{vg.Points(1), vg.Points(2)}, vg.Points(0.6)); err != nil {
			return nil, err
		}
	}
	if err := scaleBar(p, c.CapacityGbps, lim); err != nil {
		return nil, err
	}
	if err := ring(r0+1, color.RGBA{R: 200, A: 255}, []vg.Length{vg.Points(4), vg.Points(3)}, vg.Points(1.4)); err != nil {
		return nil, err
	}
	// Time labels at the quarter turns, and a legend.
	var xys plotter.XYs
	var labels []string
	for q := range 4 {
		a := angle(float64(q*n) / 4)
		xys = append(xys, plotter.XY{X: (r0 - 0.25) * math.Cos(a), Y: (r0 - 0.25) * math.Sin(a)})
		labels = append(labels, fmt.Sprintf("%d ms", q*n/4))
	}
	lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].XAlign, lbl.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
	}
	p.Add(lbl)
	for j := range 2 {
		sw, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			return nil, err
		}
		sw.Color = colors[j]
		sw.LineStyle.Width = 0
		p.Legend.Add(c.Names[j], sw)
	}
	capLine, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
	capLine.Color, capLine.Dashes, capLine.Width = color.RGBA{R: 200, A: 255}, []vg.Length{vg.Points(4), vg.Points(3)}, vg.Points(1.4)
	p.Legend.Add(fmt.Sprintf("capacity %.0f Gbps", c.CapacityGbps), capLine)
	p.Legend.Top = false
	p.Legend.Left = true
	return p, nil
}
