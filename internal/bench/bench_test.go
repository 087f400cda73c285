package bench

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{5, 1, math.NaN(), 3, 2, 4})
	want := Stats{N: 5, Min: 1, Q1: 2, Median: 3, Q3: 4, Max: 5}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	s = Summarize([]float64{1, 2, 3, 4})
	if s.Median != 2.5 || s.Q1 != 1.75 || s.Q3 != 3.25 {
		t.Fatalf("interpolation: %+v", s)
	}
	if s := Summarize([]float64{7}); s.N != 1 || s.Min != 7 || s.Median != 7 || s.Max != 7 {
		t.Fatalf("one value: %+v", s)
	}
	if s := Summarize(nil); s.N != 0 || !math.IsNaN(s.Median) {
		t.Fatalf("no values: %+v", s)
	}
	if s := Summarize([]float64{1, 2, 3}).Scale(2); s.Median != 4 || s.Max != 6 {
		t.Fatalf("Scale: %+v", s)
	}
}

// Interleave rotates the order of the cases from round to round and runs
// each batch at least Target long.
func TestInterleave(t *testing.T) {
	var order []string
	spin := func(d time.Duration) {
		for t0 := time.Now(); time.Since(t0) < d; {
		}
	}
	cases := []Case{
		{Name: "a", Op: func() error { order = append(order, "a"); spin(50 * time.Microsecond); return nil }},
		{Name: "b", Op: func() error { order = append(order, "b"); spin(100 * time.Microsecond); return nil }},
		{Name: "c", Op: func() error { order = append(order, "c"); spin(20 * time.Microsecond); return nil }},
	}
	out, err := Interleave(context.Background(), cases, Options{Rounds: 3, Target: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range out {
		if len(s) != 3 {
			t.Fatalf("case %d: %d samples", i, len(s))
		}
		for _, x := range s {
			if x.Wall <= 0 || (HasCPUClock && x.CPU <= 0) {
				t.Fatalf("case %d: sample %+v", i, x)
			}
		}
	}
	// Collapsed runs: the calibration (a, b, c), then rounds a b c, b c a,
	// c a b.
	var runs strings.Builder
	for i, o := range order {
		if i == 0 || order[i-1] != o {
			runs.WriteString(o)
		}
	}
	if got := runs.String(); got != "abcabcbcacab" {
		t.Errorf("batch order %q, want abc then abc bca cab", got)
	}
	med := func(s []Sample) float64 { return Summarize(Times(s)).Median }
	if b := med(out[1]) / med(out[0]); b < 1.3 || b > 3 {
		t.Errorf("b/a = %.2f, want about 2", b)
	}
	r := Ratios(out[1], out[0])
	if len(r) != 3 {
		t.Fatalf("%d ratios", len(r))
	}
}

func TestInterleaveErrors(t *testing.T) {
	if _, err := Interleave(context.Background(), nil, Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("no cases: %v", err)
	}
	boom := errors.New("boom")
	n := 0
	_, err := Interleave(context.Background(), []Case{{Name: "x", Op: func() error {
		if n++; n > 3 {
			return boom
		}
		return nil
	}}}, Options{Target: time.Second})
	if !errors.Is(err, boom) {
		t.Errorf("failing op: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Interleave(ctx, []Case{{Name: "x", Op: func() error { return nil }}}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Duration(78e-6), "78.0 µs"},
		{Duration(2.5e-9), "2.50 ns"},
		{Duration(1.234), "1.23 s"},
		{Duration(0.0123), "12.3 ms"},
		{Spread(Stats{N: 3, Min: 74e-6, Median: 78e-6, Max: 85e-6}), "78.0 µs (74.0–85.0 µs)"},
		{Spread(Stats{N: 3, Min: 900e-6, Median: 1e-3, Max: 1.2e-3}), "1.00 ms (900 µs–1.20 ms)"},
		{Spread(Stats{N: 1, Median: 1e-3}), "1.00 ms"},
		{GigaSpread(Stats{N: 2, Min: 39.8e9, Median: 43.6e9, Max: 51.1e9}), "43.6 (39.8–51.1)"},
		{SI(46155), "46.2 k"},
		{SI(8.35e6), "8.35 M"},
		{Ratio(24.83), "24.8×"},
		{Ratio(math.Inf(1)), "–"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestReport(t *testing.T) {
	r := &Report{Meta: Meta{Command: "go run ./bench/cmd/orrery-bench", CPU: "test", CPUs: 2, Go: "go1.26", OS: "linux/amd64", Load: "1 1 1", Clock: "CPU time."},
		Sections: []Section{{ID: "s", Title: "A section", Notes: []string{"A note."}, Header: []string{"a", "b|c"}, Rows: [][]string{{"1", "2"}}, Data: map[string]int{"x": 1}}},
		Gates:    []Gate{{Name: "ok", Pass: true, Detail: "fine"}, {Name: "bad", Detail: "3 < 4"}, {Name: "n/a", Skipped: true, Detail: "no AVX2"}}}
	var md strings.Builder
	if err := r.Markdown(&md, 2, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## A section\n\nA note.\n\n| a | b\\|c |\n|---|---|\n| 1 | 2 |\n", "| bad | **FAIL** | 3 < 4 |", "| n/a | skipped | no AVX2 |", "`go run ./bench/cmd/orrery-bench`"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	if f := r.Failed(); len(f) != 1 || f[0].Name != "bad" {
		t.Errorf("Failed: %+v", f)
	}
	var js strings.Builder
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil {
		t.Fatal(err)
	}
	if back.Sections[0].Title != "A section" || len(back.Gates) != 3 {
		t.Errorf("JSON round trip: %+v", back)
	}
}
