// Command orrery-bench is orrery's benchmark suite: the kernels on every
// path, the link search against the brute force a user would write, the
// ranking of placement candidates, the Shockwave planner against COIN-OR
// CBC on the authors' own program and against HiGHS on wide-job families,
// and the native engine against its
// WebAssembly module (wazero, node).
//
//	go run ./bench/cmd/orrery-bench            # the full suite (make bench)
//	go run ./bench/cmd/orrery-bench -smoke     # the CI subset and its gates
//
// It writes report.md (tables and gates), readme.md (docs/performance.md's
// performance section: the same tables) and report.json (every number)
// into -out, prints report.md, and exits with status 1 if a gate fails. Every figure is a median over interleaved rounds with its
// spread, timed on CPU clocks (see package bench).
//
// CBC is optional: the planner section needs the cbc binary on PATH
// (bench/install-cbc.sh installs Debian's coinor-cbc); without it, that
// comparison is reported as skipped, except under -require-cbc. Likewise
// the families section needs SciPy's milp (bench/install-highs.sh,
// -require-highs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/kernels"
)

// config is the parsed command line.
type config struct {
	root       string // repository root
	out        string
	smoke      bool
	rounds     int
	target     time.Duration
	cbcTime    time.Duration
	requireCBC bool
	// requireHiGHS fails the planner section without SciPy's milp (CI).
	requireHiGHS bool
	keepLP       bool
	sections     map[string]bool
}

// sectionOrder lists the sections in report order.
var sectionOrder = []struct {
	name string
	run  func(context.Context, *config) ([]bench.Section, []bench.Gate, error)
}{
	{"kernels", kernelSection},
	{"link", linkSection},
	{"rank", rankSection},
	{"fluid", fluidSection},
	{"planner", plannerSection},
	{"families", familySection},
	{"wasm", wasmSection},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == workerArg {
		os.Exit(kernelWorker())
	}
	if len(os.Args) > 1 && os.Args[1] == scaleWorkerArg {
		os.Exit(scaleWorker())
	}
	if len(os.Args) > 1 && os.Args[1] == simWorkerArg {
		os.Exit(simWorker())
	}
	os.Exit(run())
}

func run() int {
	var cfg config
	var only string
	flag.StringVar(&cfg.root, "root", "", "repository root (default: found from the working directory)")
	flag.StringVar(&cfg.out, "out", "out/bench", "directory for report.md, report.json (and LP files with -keep-lp)")
	flag.BoolVar(&cfg.smoke, "smoke", false, "the CI subset: small instances, fewer rounds, the gates")
	flag.IntVar(&cfg.rounds, "rounds", 0, "rounds (repetitions) per figure; 0 means 7, or 5 with -smoke")
	flag.DurationVar(&cfg.target, "batch", 0, "least CPU time of one timed batch; 0 means 20ms, or 10ms with -smoke")
	flag.DurationVar(&cfg.cbcTime, "cbc-time", 60*time.Second, "CBC's time limit per solve")
	flag.BoolVar(&cfg.requireCBC, "require-cbc", false, "fail if cbc is not installed (CI)")
	flag.BoolVar(&cfg.requireHiGHS, "require-highs", false, "fail if SciPy's milp (HiGHS) is not installed (CI)")
	flag.BoolVar(&cfg.keepLP, "keep-lp", false, "keep the LP files, CBC logs and solutions under -out/lp")
	flag.StringVar(&only, "only", "", "comma-separated sections to run: kernels,link,rank,fluid,planner,families,wasm (default all)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "orrery-bench: unexpected argument %q\n", flag.Arg(0))
		return 2
	}
	if cfg.rounds <= 0 {
		cfg.rounds = 7
		if cfg.smoke {
			cfg.rounds = 5
		}
	}
	if cfg.target <= 0 {
		cfg.target = 20 * time.Millisecond
		if cfg.smoke {
			cfg.target = 10 * time.Millisecond
		}
	}
	cfg.sections = map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.sections[s] = true
		}
	}
	for s := range cfg.sections {
		known := false
		for _, o := range sectionOrder {
			known = known || o.name == s
		}
		if !known {
			fmt.Fprintf(os.Stderr, "orrery-bench: unknown section %q\n", s)
			return 2
		}
	}
	if cfg.root == "" {
		r, err := findRoot()
		if err != nil {
			fmt.Fprintf(os.Stderr, "orrery-bench: %v (run it inside the repository, or pass -root)\n", err)
			return 2
		}
		cfg.root = r
	}
	if !filepath.IsAbs(cfg.out) {
		cfg.out = filepath.Join(cfg.root, cfg.out)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	rep := &bench.Report{Meta: meta(&cfg)}
	start := time.Now()
	for _, s := range sectionOrder {
		if len(cfg.sections) > 0 && !cfg.sections[s.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "orrery-bench: %s...\n", s.name)
		t0 := time.Now()
		secs, gates, err := s.run(ctx, &cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "orrery-bench: %s: %v\n", s.name, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "orrery-bench: %s done in %s\n", s.name, time.Since(t0).Round(time.Millisecond))
		rep.Sections = append(rep.Sections, secs...)
		rep.Gates = append(rep.Gates, gates...)
	}
	rep.Meta.Duration = time.Since(start).Seconds()
	if err := write(rep, cfg.out); err != nil {
		fmt.Fprintf(os.Stderr, "orrery-bench: %v\n", err)
		return 1
	}
	rep.Markdown(os.Stdout, 3, true)
	if f := rep.Failed(); len(f) > 0 {
		for _, g := range f {
			fmt.Fprintf(os.Stderr, "orrery-bench: gate failed: %s: %s\n", g.Name, g.Detail)
		}
		return 1
	}
	return 0
}

func write(rep *bench.Report, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md strings.Builder
	if err := rep.Markdown(&md, 3, true); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	// docs/performance.md: the same tables, no gates.
	var readme strings.Builder
	readme.WriteString("## Performance\n\nReproduce with `make bench` (it installs COIN-OR CBC through apt when `cbc` is missing, then runs the suite below; `make bench-smoke` is the CI subset with its gates). The tables are the suite's own report (out/bench/readme.md; every number is in out/bench/report.json).\n\n")
	if err := rep.Markdown(&readme, 3, false); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "readme.md"), []byte(readme.String()), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "report.json"))
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func meta(cfg *config) bench.Meta {
	args := strings.Join(os.Args[1:], " ")
	cmd := "go run ./bench/cmd/orrery-bench"
	if args != "" {
		cmd += " " + args
	}
	clock := "Times are CPU time of the measuring process (medians over interleaved rounds, min–max in brackets), which a busy neighbour inflates far less than wall time."
	if !bench.HasCPUClock {
		clock = "Times are wall time (no CPU clock on this system)."
	}
	return bench.Meta{
		Command: cmd, Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		CPU: cpuModel(), CPUs: runtime.NumCPU(), Load: loadAvg(), Kernels: kernels.Implementation(),
		Clock: clock, Start: time.Now().UTC().Truncate(time.Second), Rounds: cfg.rounds, ShortMode: cfg.smoke,
	}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// findRoot walks up from the working directory to the module root.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/orrery/orrery\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of github.com/orrery/orrery above the working directory")
		}
		dir = parent
	}
}
