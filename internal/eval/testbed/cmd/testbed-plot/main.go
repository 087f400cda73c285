// Command testbed-plot draws the relative phase of the two jobs of kernel
// testbed reports (internal/eval/testbed, cmd/testbed -out) iteration by
// iteration (ArmResult.PhaseMs: 0 in lock step): one panel per report, one
// line per arm. Where the second job's
// communication starts after the first's is what CASSINI's shift sets and
// its agents hold; drawn for every arm, it shows what real TCP does to an
// offset nobody holds.
//
//	go run ./internal/eval/testbed/cmd/testbed-plot -o docs/testbed_phase.png out/testbed/fig2-cubic-elastic.json ...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// report is the part of a testbed report the plot reads.
type report struct {
	Scenario   string `json:"scenario"`
	Congestion string `json:"congestion"`
	Jobs       []struct {
		PeriodMs float64 `json:"period_ms"`
		ShiftMs  float64 `json:"shift_ms"`
	} `json:"jobs"`
	Arms []struct {
		Arm     string  `json:"arm"`
		P50Ms   float64 `json:"p50_iter_ms"`
		Workers []struct {
			Job, Rank  int
			Iterations []struct{ CommStart int64 }
		} `json:"workers"`
	} `json:"arms"`
}

// phases is, per iteration of job 1, how far its communication started
// after job 0's latest one, within [-g/4, 3g/4) of job 0's gap g between
// its communications (ArmResult.PhaseMs): 0 in lock step.
func phases(comm [2][]int64) []float64 {
	var out []float64
	first := comm[0]
	if len(first) < 2 {
		return nil
	}
	for _, c := range comm[1] {
		x, _ := slices.BinarySearch(first, c+1)
		if x == 0 {
			continue // before job 0's first: no phase yet
		}
		x = min(x, len(first)-1)
		d, gap := c-first[x-1], first[x]-first[x-1]
		if d >= gap-gap/4 {
			d -= gap
		}
		out = append(out, float64(d)/1e6)
	}
	return out
}

var styles = map[string]struct {
	c      color.Color
	dashes []vg.Length
}{
	"overlapped": {color.RGBA{R: 214, G: 39, B: 40, A: 255}, nil},
	"shifted":    {color.RGBA{R: 255, G: 127, B: 14, A: 255}, []vg.Length{vg.Points(5), vg.Points(2)}},
	"agents":     {color.RGBA{R: 31, G: 119, B: 180, A: 255}, nil},
}

func main() {
	out := flag.String("o", "testbed_phase.png", "the PNG to write")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testbed-plot -o OUT.png REPORT.json...")
		os.Exit(2)
	}
	var panels []*plot.Plot
	for _, path := range flag.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		var r report
		if err := json.Unmarshal(b, &r); err != nil {
			fail(fmt.Errorf("%s: %w", path, err))
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s under %s", r.Scenario, r.Congestion)
		p.X.Label.Text = "iteration"
		p.Y.Label.Text = "job 1's communication after job 0's (ms)"
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		if len(r.Jobs) == 2 && r.Jobs[1].PeriodMs > 0 {
			p.Y.Min, p.Y.Max = -r.Jobs[1].PeriodMs/4, r.Jobs[1].PeriodMs
			planned := r.Jobs[1].ShiftMs - r.Jobs[0].ShiftMs
			l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: planned}, {X: float64(len(r.Arms[len(r.Arms)-1].Workers[0].Iterations)), Y: planned}})
			l.Color, l.Dashes = color.Gray{Y: 120}, []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("the plan's shift, %.0f ms", planned), l)
		}
		for _, a := range r.Arms {
			var comm [2][]int64
			for _, w := range a.Workers {
				if w.Rank == 0 && w.Job < 2 {
					for _, it := range w.Iterations {
						comm[w.Job] = append(comm[w.Job], it.CommStart)
					}
				}
			}
			ph := phases(comm)
			st, ok := styles[a.Arm]
			if !ok || len(ph) == 0 {
				continue
			}
			xy := make(plotter.XYs, len(ph))
			for i, v := range ph {
				xy[i] = plotter.XY{X: float64(i), Y: v}
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				fail(err)
			}
			l.Color, l.Dashes, l.Width = st.c, st.dashes, vg.Points(1.2)
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("%s (median iteration %.0f ms)", a.Arm, a.P50Ms), l)
		}
		panels = append(panels, p)
	}
	const w, h = 6 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(w*vg.Length(len(panels)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Inch / 4, PadY: vg.Points(4), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	png := vgimg.PngCanvas{Canvas: img}
	if _, err := png.WriteTo(f); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testbed-plot:", err)
	os.Exit(1)
}
