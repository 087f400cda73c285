package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/orrery/orrery/internal/eval/data"
	"github.com/orrery/orrery/internal/eval/replay"
)

// regimeFlags is one `orrery cassini regime` run.
type regimeFlags struct {
	replay.Regime
	NoiseDir string // -noise-dir
	PlotDir  string // -plot: where cassini_regime.png goes ("": none)
	Doc      string // -doc: a Markdown file whose table block is rewritten ("": none)
	JSON     bool
	Quiet    bool
}

// The block of a -doc file that the command rewrites.
const (
	regimeBegin = "<!-- cassini regime: begin (orrery cassini regime rewrites this block) -->"
	regimeEnd   = "<!-- cassini regime: end -->"
)

// runCassiniRegime is `orrery cassini regime`: the congestion sweep.
func runCassiniRegime(ctx context.Context, args []string, s stdio) (err error) {
	fs := flags("cassini regime", s)
	defer func() { err = withUsage(fs, err) }()
	f, err := parseCassiniRegimeFlags(fs, args, s)
	if err != nil {
		return err
	}
	prog := newProgress(s, f.Quiet)
	defer prog.Done()
	f.Progress = func(done, cells int) { prog.Report("cassini regime", done, cells) }
	f.Base.NoiseData = data.Alibaba
	if f.NoiseDir != "" {
		if st, err := os.Stat(f.NoiseDir); err != nil || !st.IsDir() {
			return fmt.Errorf("-noise-dir %s: not a folder", f.NoiseDir)
		}
		f.Base.NoiseData = os.DirFS(f.NoiseDir)
	}
	r, err := replay.RunRegime(ctx, f.Regime)
	prog.Done()
	if errors.Is(err, replay.ErrInvalid) {
		return fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(err.Error(), "replay: "))
	}
	if err != nil {
		return err
	}
	if f.PlotDir != "" {
		if _, err := plotRegime(f.PlotDir, r); err != nil {
			return err
		}
	}
	var table strings.Builder
	writeRegimeTable(&table, r)
	if f.Doc != "" {
		if err := rewriteBlock(f.Doc, table.String()); err != nil {
			return err
		}
	}
	if f.JSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return writeJSON(s.out, b, false)
	}
	_, err = io.WriteString(s.out, table.String())
	return err
}

func parseCassiniRegimeFlags(fs *flag.FlagSet, args []string, s stdio) (f regimeFlags, err error) {
	o := &f.Base
	scenario := fs.String("scenario", "paper", "the experiment: paper (the paper's Fig. 11 setup) or poisson (all 13 models)")
	oversub := fs.String("oversub", "2,4,8", "oversubscriptions of the paper's fabric (its ToRs' server to uplink capacity), comma-separated")
	placements := fs.String("placements", "contiguous,themis,scattered", "placement rules, comma-separated: contiguous, themis, scattered")
	transports := fs.String("transports", "maxmin,dcqcn,mltcp", "transports, comma-separated: "+strings.Join(replay.Transports(), ", "))
	auction := fs.String("auction", "paper", "Themis's mechanism in every cell: paper or greedy")
	fs.IntVar(&o.Jobs, "jobs", 40, "jobs per trace")
	load := fs.Float64("load", 0.9, "average fraction of GPUs busy (Poisson arrivals)")
	iters := fs.String("iterations", "200-1000", "iterations per job: N or MIN-MAX")
	seed := fs.String("seed", "1-5", "seeds: N, N-M or a list; every cell runs every arm on every seed")
	noise := fs.String("noise", "both", "iteration-time noise: both, traces, cov (Alibaba PAI), gauss:CV or none")
	fs.StringVar(&f.NoiseDir, "noise-dir", "", "folder of the Alibaba PAI files to read in place of the copy inside the binary")
	fs.StringVar(&f.PlotDir, "plot", "", "write cassini_regime.png into this directory")
	fs.StringVar(&f.Doc, "doc", "", "rewrite the table between the regime markers of this Markdown file")
	fs.BoolVar(&f.JSON, "json", false, "print JSON instead of the table")
	quiet := quietFlag(fs)
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: orrery cassini regime [flags]\n\nThe congestion sweep: the paper's experiment at several oversubscriptions, placement rules and\ntransports, each cell run with baseline, cassini-placement, cassini and ideal on the same seeds;\nprints a Markdown table of Themis/Ideal, CASSINI's gains and the fraction of the gap to Ideal\neach closes (pooled mean iteration time), with where the scheduler placed the jobs.\n\n")
		fs.PrintDefaults()
	}
	if err = parse(fs, args); err != nil {
		return f, err
	}
	f.Quiet = *quiet
	usage := func(flag string, err error) error { return fmt.Errorf("%w: %s: %v", errUsage, flag, err) }
	if o.Scenario, err = replay.ParseScenario(*scenario); err != nil || (o.Scenario != replay.Paper && o.Scenario != replay.Poisson) {
		return f, usage("-scenario", fmt.Errorf("%q: want paper or poisson", *scenario))
	}
	for _, v := range strings.Split(*oversub, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(x > 0) {
			return f, usage("-oversub", fmt.Errorf("%q: want ratios above 0", *oversub))
		}
		f.Oversubscriptions = append(f.Oversubscriptions, x)
	}
	for _, v := range strings.Split(*placements, ",") {
		p, err := replay.ParsePlacement(strings.TrimSpace(v))
		if err != nil {
			return f, usage("-placements", err)
		}
		f.Placements = append(f.Placements, p)
	}
	f.Transports = strings.Split(*transports, ",")
	if o.Auction, err = replay.ParseAuction(*auction); err != nil {
		return f, usage("-auction", err)
	}
	if o.Noise, o.NoiseCV, err = replay.ParseNoise(*noise); err != nil {
		return f, usage("-noise", err)
	}
	if o.MinIterations, o.MaxIterations, err = parseRange(*iters); err != nil {
		return f, usage("-iterations", err)
	}
	if o.Seeds, err = parseSeeds(*seed); err != nil {
		return f, usage("-seed", err)
	}
	switch {
	case o.Jobs < 1:
		return f, usage("-jobs", errors.New("must be positive"))
	case !(*load > 0):
		return f, usage("-load", fmt.Errorf("%v (want a fraction of the GPUs above 0)", *load))
	}
	o.Load = *load
	return f, nil
}

// writeRegimeTable prints r as a Markdown table, with a line on how it
// was run.
func writeRegimeTable(w io.Writer, r replay.RegimeReport) {
	seeds := strconv.FormatUint(r.Seeds[0], 10)
	if n := len(r.Seeds); n > 1 {
		seeds = fmt.Sprintf("%d-%d", r.Seeds[0], r.Seeds[n-1])
	}
	fmt.Fprintf(w, "Scenario %s, %d jobs, load %.2f, noise %s, Themis's %s auction, seeds %s; pooled iteration times over every seed.\n\n",
		r.Scenario, r.Jobs, r.Load, r.Noise, r.Auction, seeds)
	fmt.Fprintln(w, "| oversub. | placement | transport | Themis/Ideal mean | Themis/Ideal p99 | placement gain | placement closes | + shifts gain | + shifts closes | MLTCP gain | MLTCP closes | cross-rack | uplink hops | binding sharers | binding share | uplink load |")
	fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	opt := func(x *float64, format string) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf(format, *x)
	}
	for _, c := range r.Cells {
		fmt.Fprintf(w, "| %g:1 | %s | %s | %.3f | %.3f | %.3f | %.2f | %.3f | %.2f | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
			c.Oversubscription, c.Placement, c.Transport, c.ThemisOverIdeal, c.ThemisOverIdealP99, c.PlacementGain, c.PlacementClosed,
			c.ShiftsGain, c.ShiftsClosed, opt(c.MLTCPGain, "%.3f"), opt(c.MLTCPClosed, "%.2f"),
			c.CrossRack, c.UplinkHops, c.BindingSharers, c.BindingShare, c.UplinkLoad)
	}
}

// rewriteBlock replaces what lies between the regime markers of the
// Markdown file path with text.
func rewriteBlock(path, text string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(b)
	i, j := strings.Index(doc, regimeBegin), strings.Index(doc, regimeEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%w: -doc %s: no block between %q and %q", errUsage, path, regimeBegin, regimeEnd)
	}
	doc = doc[:i+len(regimeBegin)] + "\n" + text + doc[j:]
	return os.WriteFile(path, []byte(doc), 0o644)
}

// plotRegime draws the sweep: on the left Themis/Ideal (pooled mean) by
// oversubscription, one line per placement (and transport); on the right
// the fraction of the gap to Ideal CASSINI's placement closes (solid), its
// placement and shifts (dashed) and MLTCP's transport alone (dotted, where
// the sweep has an mltcp cell to compare with). It writes cassini_regime.png into
// dir and returns its path; the image depends only on r.
func plotRegime(dir string, r replay.RegimeReport) (string, error) {
	if len(r.Cells) == 0 {
		return "", fmt.Errorf("plot: no cells")
	}
	type series struct {
		name string
		gap  plotter.XYs
		pl   plotter.XYs
		sh   plotter.XYs
		ml   plotter.XYs
	}
	var all []*series
	find := func(name string) *series {
		for _, s := range all {
			if s.name == name {
				return s
			}
		}
		s := &series{name: name}
		all = append(all, s)
		return s
	}
	for _, c := range r.Cells {
		name := c.Placement
		if multipleTransports(r) {
			name += "/" + c.Transport
		}
		s := find(name)
		s.gap = append(s.gap, plotter.XY{X: c.Oversubscription, Y: c.ThemisOverIdeal})
		s.pl = append(s.pl, plotter.XY{X: c.Oversubscription, Y: c.PlacementClosed})
		s.sh = append(s.sh, plotter.XY{X: c.Oversubscription, Y: c.ShiftsClosed})
		if c.MLTCPClosed != nil && c.Transport != "mltcp" {
			s.ml = append(s.ml, plotter.XY{X: c.Oversubscription, Y: *c.MLTCPClosed})
		}
	}
	left, right := plot.New(), plot.New()
	left.X.Label.Text, right.X.Label.Text = "oversubscription (server : uplink capacity at a ToR)", "oversubscription (server : uplink capacity at a ToR)"
	left.Y.Label.Text = "Themis / Ideal, pooled mean iteration time"
	right.Y.Label.Text = "fraction of the gap to Ideal closed"
	for _, p := range []*plot.Plot{left, right} {
		p.Add(plotter.NewGrid())
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = oversubTicks{}
		p.Legend.Top, p.Legend.Left = true, true
	}
	// Room above the data for the legends.
	top := 1.0
	for _, c := range r.Cells {
		top = max(top, c.ThemisOverIdeal)
	}
	left.Y.Min, left.Y.Max = 1, 1+(top-1)*1.35
	low := 0.0
	for _, c := range r.Cells {
		low = min(low, c.PlacementClosed, c.ShiftsClosed)
		if c.MLTCPClosed != nil {
			low = min(low, *c.MLTCPClosed)
		}
	}
	right.Y.Min, right.Y.Max = min(-0.1, low-0.05), 1.5
	right.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1 (Ideal)"}})
	colors := []color.Color{color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255}, color.RGBA{R: 31, G: 119, B: 180, A: 255},
		color.RGBA{R: 148, G: 103, B: 189, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255}, color.RGBA{R: 140, G: 86, B: 75, A: 255}}
	add := func(p *plot.Plot, pts plotter.XYs, col color.Color, dashes []vg.Length, legend string) error {
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		l.Color, l.Dashes, l.Width = col, dashes, vg.Points(1.8)
		s.Color = col
		p.Add(l, s)
		if legend != "" {
			p.Legend.Add(legend, l, s)
		}
		return nil
	}
	for i, s := range all {
		col := colors[i%len(colors)]
		if err := add(left, s.gap, col, nil, s.name); err != nil {
			return "", err
		}
		if err := add(right, s.pl, col, nil, s.name+": placement"); err != nil {
			return "", err
		}
		if err := add(right, s.sh, col, []vg.Length{vg.Points(5), vg.Points(3)}, s.name+": placement + shifts"); err != nil {
			return "", err
		}
		if len(s.ml) > 0 {
			if err := add(right, s.ml, col, []vg.Length{vg.Points(1.5), vg.Points(3)}, s.name+": Themis over MLTCP"); err != nil {
				return "", err
			}
		}
	}
	seeds := strconv.FormatUint(r.Seeds[0], 10)
	if n := len(r.Seeds); n > 1 {
		seeds = fmt.Sprintf("%d-%d", r.Seeds[0], r.Seeds[n-1])
	}
	title := fmt.Sprintf("CASSINI's regime (%s, %d jobs, load %.2f, noise %s, Themis's %s auction, seeds %s)", r.Scenario, r.Jobs, r.Load, r.Noise, r.Auction, seeds)
	fig := sideBySide{W: 12 * vg.Inch, H: 5 * vg.Inch, TitleH: 0.45 * vg.Inch, PadX: vg.Inch / 3, PadRight: vg.Points(8)}
	return fig.save(dir, "cassini_regime.png", title, left, right)
}

func multipleTransports(r replay.RegimeReport) bool {
	for _, c := range r.Cells {
		if c.Transport != r.Cells[0].Transport {
			return true
		}
	}
	return false
}

// oversubTicks marks the powers of two as ratios.
type oversubTicks struct{}

func (oversubTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for x := 1.0; x <= max*1.001; x *= 2 {
		if x >= min*0.999 {
			out = append(out, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64) + ":1"})
		}
	}
	return out
}
