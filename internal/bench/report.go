package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Report is a benchmark run: where it ran, its sections and its gates.
type Report struct {
	Meta     Meta      `json:"meta"`
	Sections []Section `json:"sections"`
	Gates    []Gate    `json:"gates,omitempty"`
}

// Meta says where and how a report was measured.
type Meta struct {
	Command   string    `json:"command"`    // the command that reproduces it
	Go        string    `json:"go"`         // runtime.Version()
	OS        string    `json:"os"`         // GOOS/GOARCH
	CPU       string    `json:"cpu"`        // model name
	CPUs      int       `json:"cpus"`       // runtime.NumCPU()
	Load      string    `json:"load"`       // load averages at start, where known
	Kernels   string    `json:"kernels"`    // kernels.Implementation() of this process
	Clock     string    `json:"clock"`      // what the times measure
	Start     time.Time `json:"start"`      // when the run started
	Duration  float64   `json:"duration_s"` // how long it took
	Rounds    int       `json:"rounds"`     // repetitions per figure
	ShortMode bool      `json:"smoke"`      // the CI smoke subset
}

// Section is one table of the report and the data behind it.
type Section struct {
	ID     string     `json:"id"`
	Title  string     `json:"title"`
	Notes  []string   `json:"notes,omitempty"` // paragraphs printed under the title
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
	Data   any        `json:"data,omitempty"` // typed results, for machines
}

// Gate is a pass/fail check of a run: Value compared with Threshold.
type Gate struct {
	Name      string  `json:"name"`
	Pass      bool    `json:"pass"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Detail    string  `json:"detail"`
	// Skipped: the gate could not be evaluated here (for example no AVX2
	// on this CPU); it neither passes nor fails the run.
	Skipped bool `json:"skipped,omitempty"`
}

// Failed returns the gates that failed.
func (r *Report) Failed() []Gate {
	var f []Gate
	for _, g := range r.Gates {
		if !g.Pass && !g.Skipped {
			f = append(f, g)
		}
	}
	return f
}

// WriteJSON writes r as indented JSON. NaN and infinite numbers, which JSON
// cannot hold, must not be in r (figures use [Stats] of real samples).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Markdown writes r's sections as Markdown: a line saying where and how
// it was measured, then a heading per section (at the given level, 2 for
// "##"), its notes and its table, and, if gates is set, the gates.
func (r *Report) Markdown(w io.Writer, level int, gates bool) error {
	var b strings.Builder
	h := strings.Repeat("#", level)
	m := r.Meta
	fmt.Fprintf(&b, "Measured with `%s` (%s, %s, %d CPUs, %s; load average %s at the start). %s\n\n",
		m.Command, m.CPU, m.OS, m.CPUs, m.Go, m.Load, m.Clock)
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "%s %s\n\n", h, s.Title)
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "%s\n\n", n)
		}
		writeTable(&b, s.Header, s.Rows)
		b.WriteString("\n")
	}
	if gates && len(r.Gates) > 0 {
		fmt.Fprintf(&b, "%s Gates\n\n", h)
		rows := make([][]string, len(r.Gates))
		for i, g := range r.Gates {
			status := "pass"
			switch {
			case g.Skipped:
				status = "skipped"
			case !g.Pass:
				status = "**FAIL**"
			}
			rows[i] = []string{g.Name, status, g.Detail}
		}
		writeTable(&b, []string{"gate", "result", "measured"}, rows)
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTable(b *strings.Builder, header []string, rows [][]string) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("|")
	for _, c := range header {
		fmt.Fprintf(b, " %s |", esc(c))
	}
	b.WriteString("\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range r {
			fmt.Fprintf(b, " %s |", esc(c))
		}
		b.WriteString("\n")
	}
}

// Duration formats seconds with three significant digits and a unit
// (ns, µs, ms, s).
func Duration(sec float64) string {
	a := math.Abs(sec)
	switch {
	case math.IsNaN(sec):
		return "–"
	case a >= 1:
		return sig3(sec) + " s"
	case a >= 1e-3:
		return sig3(sec*1e3) + " ms"
	case a >= 1e-6:
		return sig3(sec*1e6) + " µs"
	}
	return sig3(sec*1e9) + " ns"
}

// sig3 formats x with three significant digits, without an exponent.
func sig3(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// Spread formats a time's statistics as "median (min–max)".
func Spread(s Stats) string {
	if s.N <= 1 {
		return Duration(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", Duration(s.Median), trim(Duration(s.Min), s.Max), Duration(s.Max))
}

// trim drops the unit of lo when hi has the same one: "74 µs–85 µs" reads
// as "74–85 µs".
func trim(lo string, hi float64) string {
	if i := strings.LastIndexByte(lo, ' '); i >= 0 && strings.HasSuffix(Duration(hi), lo[i:]) {
		return lo[:i]
	}
	return lo
}

// SI formats a count with three significant digits and an SI prefix:
// "46.2 k", "8.35 M".
func SI(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x):
		return "–"
	case a >= 1e12:
		return sig3(x/1e12) + " T"
	case a >= 1e9:
		return sig3(x/1e9) + " G"
	case a >= 1e6:
		return sig3(x/1e6) + " M"
	case a >= 1e3:
		return sig3(x/1e3) + " k"
	}
	return sig3(x)
}

// GigaSpread formats rate statistics in units of 10^9 per second as
// "median (min–max)": "43.6 (39.8–51.1)".
func GigaSpread(s Stats) string {
	if s.N <= 1 {
		return sig3(s.Median / 1e9)
	}
	return fmt.Sprintf("%s (%s–%s)", sig3(s.Median/1e9), sig3(s.Min/1e9), sig3(s.Max/1e9))
}

// Ratio formats a dimensionless ratio: "3.42×".
func Ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return sig3(x) + "×"
}
