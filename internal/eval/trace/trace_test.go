package trace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orrery/orrery/internal/eval/throughput"
)

const dataDir = "../../../internal/eval/data/shockwave/"

func traceFile(t testing.TB, prefix string) string {
	t.Helper()
	m, err := filepath.Glob(dataDir + "traces/" + prefix + "*.trace")
	if err != nil || len(m) != 1 {
		t.Fatalf("trace %s: %v %v", prefix, m, err)
	}
	return m[0]
}

func loadTable(t testing.TB, name string) *throughput.Table {
	t.Helper()
	tab, err := throughput.LoadFile(dataDir + name)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestParseAuthorsTraces(t *testing.T) {
	for _, c := range []struct {
		prefix string
		jobs   int
	}{
		{"120_", 120}, {"220_", 220}, {"460_", 460}, {"900_0.2_5_1000_", 900}, {"900_0.2_5_100_", 900},
	} {
		jobs, err := ParseFile(traceFile(t, c.prefix))
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != c.jobs {
			t.Errorf("%s: %d jobs, want %d", c.prefix, len(jobs), c.jobs)
		}
		for i, j := range jobs {
			if j.ID != i || j.Line != i+1 {
				t.Fatalf("%s: job %d has ID %d line %d", c.prefix, i, j.ID, j.Line)
			}
			if i > 0 && j.Arrival < jobs[i-1].Arrival {
				t.Errorf("%s: arrivals out of order at line %d", c.prefix, j.Line)
			}
		}
	}
	// The notes: 120 jobs, GPUs 92/20/8/0, gns 57, accordion 59, static 4,
	// last arrival 5011 s.
	jobs, err := ParseFile(traceFile(t, "120_"))
	if err != nil {
		t.Fatal(err)
	}
	gpus := map[int]int{}
	modes := map[Mode]int{}
	for _, j := range jobs {
		gpus[j.GPUs]++
		modes[j.Mode]++
	}
	if gpus[1] != 92 || gpus[2] != 20 || gpus[4] != 8 || gpus[8] != 0 {
		t.Errorf("GPU mix %v", gpus)
	}
	if modes[GNS] != 57 || modes[Accordion] != 59 || modes[Static] != 4 {
		t.Errorf("mode mix %v", modes)
	}
	if last := jobs[len(jobs)-1].Arrival; last != 5011 {
		t.Errorf("last arrival %v", last)
	}
	first := jobs[0]
	want := Job{
		ID: 0, Line: 1, JobType: "LM (batch size 10)", Model: LM, BatchSize: 10,
		Command:    "python3 main.py --cuda --data %s/wikitext2 --batch_size 10",
		WorkingDir: "language_modeling", NumStepsArg: "--steps", NeedsDataDir: true,
		TotalSteps: 134583, GPUs: 1, Mode: GNS, Priority: 1, SLO: -1, Duration: 1418, Arrival: 0,
	}
	if first != want {
		t.Errorf("first job\n got %+v\nwant %+v", first, want)
	}
}

func TestParseErrors(t *testing.T) {
	good := "ResNet-18 (batch size 32)\tpython3 main.py\timage_classification/cifar10\t--num_steps\t1\t143450\t1\taccordion\t1\t-1.000000\t3338\t55"
	if _, err := ParseLine(good); err != nil {
		t.Fatalf("good line: %v", err)
	}
	set := func(i int, v string) string {
		f := strings.Split(good, "\t")
		f[i] = v
		return strings.Join(f, "\t")
	}
	for _, c := range []struct {
		line  string
		field string
		want  error
	}{
		{"a\tb", "", ErrFieldCount},
		{good + "\t", "", ErrFieldCount},
		{set(0, "ResNet-34 (batch size 32)"), "job_type", ErrUnknownModel},
		{set(0, "A3C"), "job_type", ErrUnknownModel},
		{set(0, "ResNet-18"), "job_type", ErrSyntax},
		{set(0, "ResNet-18 (batch size 48)"), "job_type", ErrBatchSize},
		{set(0, "Recommendation (batch size 32)"), "job_type", ErrBatchSize},
		{set(0, "ResNet-18 (batch size 032)"), "job_type", ErrSyntax},
		{set(0, "ResNet-18 (batch size 32"), "job_type", ErrSyntax},
		{set(4, "2"), "needs_data_dir", ErrSyntax},
		{set(5, "1.5"), "total_steps", ErrSyntax},
		{set(5, "0"), "total_steps", ErrRange},
		{set(5, "-3"), "total_steps", ErrRange},
		{set(6, "0"), "scale_factor", ErrRange},
		{set(6, "two"), "scale_factor", ErrSyntax},
		{set(6, "4096"), "scale_factor", ErrRange},
		{set(7, "pollux"), "mode", ErrMode},
		{set(8, "nan"), "priority_weight", ErrRange},
		{set(8, "0"), "priority_weight", ErrRange},
		{set(8, "1e-7"), "priority_weight", ErrRange},
		{set(8, "1e300"), "priority_weight", ErrRange},
		{set(9, "x"), "SLO", ErrSyntax},
		{set(10, "3338.5"), "duration_s", ErrSyntax},
		{set(10, "-1"), "duration_s", ErrRange},
		{set(11, "inf"), "arrival_s", ErrRange},
		{set(11, "-5"), "arrival_s", ErrRange},
		{set(11, ""), "arrival_s", ErrSyntax},
	} {
		// Through Parse, so the line number is checked too.
		_, err := Parse(strings.NewReader(good + "\n\n" + c.line + "\n"))
		if !errors.Is(err, c.want) {
			t.Errorf("%q: err %v, want %v", c.line, err, c.want)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || pe.Field != c.field {
			t.Errorf("%q: error %v does not locate line 3 field %q", c.line, err, c.field)
		}
		if c.field != "" && !strings.Contains(err.Error(), "line 3 field "+c.field) {
			t.Errorf("message %q", err)
		}
	}
	// CRLF and a missing final newline are fine.
	jobs, err := Parse(strings.NewReader(good + "\r\n" + good))
	if err != nil || len(jobs) != 2 || jobs[1].Arrival != 55 {
		t.Errorf("CRLF: %v %v", jobs, err)
	}
	// An over-long line is reported, not buffered without bound.
	_, err = Parse(strings.NewReader(good + "\n" + strings.Repeat("x", maxLine+1)))
	var pe *ParseError
	if !errors.Is(err, ErrSyntax) || !errors.As(err, &pe) || pe.Line != 2 {
		t.Errorf("long line: %v", err)
	}
}

func TestConfigs(t *testing.T) {
	for _, c := range []struct {
		name      string
		k, lambda float64
	}{
		{"tacc_32gpus", 1e-3, 12}, {"scale_64gpus", 1e1, 5}, {"scale_128gpus", 1e-3, 15}, {"scale_256gpus", 1e5, 5},
	} {
		cfg, err := LoadConfigFile(dataDir + "configurations/" + c.name + ".json")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.FutureRounds != 20 || cfg.K != c.k || cfg.Lambda != c.lambda || cfg.RhoMax != 1 ||
			len(cfg.LogBases) != 6 || cfg.LogBases[1] != 0.2 || cfg.SolverRelGap != 1e-3 ||
			cfg.SolverThreads != 24 || cfg.SolverTimeout != 15 || cfg.GPURAM != 16 {
			t.Errorf("%s: %+v", c.name, cfg)
		}
	}
	good := `{"future_rounds": 20, "k": 1e-3, "lambda": 12.0, "rhomax": 1.0, "log_approximation_bases": [0.0, 0.5, 1.0], "gpu_ram": 16, "solver_rel_gap": 1e-3, "solver_num_threads": 24, "solver_timeout": 15}`
	if _, err := LoadConfig(strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, in, mention string }{
		{"syntax", `{`, ""},
		{"unknown field", strings.Replace(good, `"k"`, `"kk": 1, "k"`, 1), "kk"},
		{"missing", strings.Replace(good, `"lambda": 12.0,`, ``, 1), "lambda"},
		{"k zero", strings.Replace(good, `1e-3, "lambda"`, `0, "lambda"`, 1), "k"},
		{"rounds", strings.Replace(good, `20`, `0`, 1), "future_rounds"},
		{"bases start", strings.Replace(good, `[0.0, 0.5, 1.0]`, `[0.1, 0.5, 1.0]`, 1), "log_approximation_bases"},
		{"bases order", strings.Replace(good, `[0.0, 0.5, 1.0]`, `[0.0, 0.5, 0.5]`, 1), "element 2"},
		{"bases range", strings.Replace(good, `[0.0, 0.5, 1.0]`, `[0.0, 0.5, 1.5]`, 1), "element 2"},
		{"wrong type", strings.Replace(good, `20`, `"20"`, 1), "future_rounds"},
	} {
		_, err := LoadConfig(strings.NewReader(c.in))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func BenchmarkParse900(b *testing.B) {
	path := traceFile(b, "900_0.2_5_1000_")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
