package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/internal/eval/metrics"
	"github.com/orrery/orrery/internal/eval/sim"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

const rn18 = "ResNet-18 (batch size 32)"

// tinyTable: ResNet-18 at 32 on one GPU, 15.625 it/s (100 s epochs, 1875
// steps per 120 s round).
const tinyTable = `{"v100": {"('ResNet-18 (batch size 32)', 1)": {"null": 15.625},
 "('ResNet-18 (batch size 32)', 2)": {"null": 31.25}}}`

func line(jobType string, steps int64, gpus int, arrival float64) string {
	return fmt.Sprintf("%s\tcmd\tdir\t--steps\t0\t%d\t%d\tstatic\t1\t-1\t100\t%v", jobType, steps, gpus, arrival)
}

func tinyWorkload(t testing.TB, lines ...string) *sim.Workload {
	t.Helper()
	jobs, err := trace.Parse(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := throughput.Load(strings.NewReader(tinyTable))
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.NewWorkload(jobs, tab, sim.WorkloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustRun(t testing.TB, w *sim.Workload, p sim.Policy, o sim.Options) *sim.Result {
	t.Helper()
	res, err := sim.Run(context.Background(), w, p, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Two equal jobs on one GPU under max-min fairness (x = 1/2 each): the
// priority x/(share of time received) hands the GPU to whoever is behind.
// A job resuming after a round off books 100 s of its 120 s lease (the
// restart penalty), stays behind and keeps the GPU for a second round:
// 0 1 1 0 0 1 1 …, ties going to the earlier arrival. Without the penalty
// the jobs strictly alternate.
func TestGavelAlternates(t *testing.T) {
	w := tinyWorkload(t, line(rn18, 20*1875, 1, 0), line(rn18, 20*1875, 1, 0))
	for _, c := range []struct {
		penalty float64
		want    func(r int) int
	}{{0, func(r int) int { return (r + 1) / 2 % 2 }}, {-1, func(r int) int { return r % 2 }}} {
		p, err := New("gavel", Config{GPUs: 1})
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, w, p, sim.Options{GPUs: 1, RecordSchedule: true, RestartPenalty: c.penalty})
		for r := range 20 {
			if got := res.Schedule[r]; len(got) != 1 || got[0] != c.want(r) {
				t.Fatalf("penalty %v: round %d ran %v: %v", c.penalty, r, got, res.Schedule[:20])
			}
		}
	}
}

// Gavel recomputes its allocation at most every 1000 s. A job arriving
// after the last recomputation is absent from the allocation: it is not
// placed even though a GPU is free, until the next recomputation. Here the
// allocation is recomputed at 0 and 120 (the second arrival), job 2 is
// admitted at 600 and first runs at 1200, the first boundary 1000 s past
// 120. With recomputation whenever needed it runs at once. (Its first
// lease pays the restart penalty, 1562 steps, and the last 313 steps take
// 20.032 s.)
func TestGavelNewJobWaitsForReset(t *testing.T) {
	lines := []string{line(rn18, 100*1875, 1, 0), line(rn18, 100*1875, 1, 100), line(rn18, 1875, 1, 500)}
	w := tinyWorkload(t, lines...)
	for _, c := range []struct {
		interval float64
		start    float64
	}{{0, 1200}, {-1, 600}} {
		p, err := New("gavel", Config{GPUs: 3, Gavel: GavelOptions{ResetInterval: c.interval}})
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, w, p, sim.Options{GPUs: 3})
		j := res.Jobs[2]
		if j.Admitted != 600 || !nearly(j.Completion, c.start+120+313/15.625) {
			t.Fatalf("interval %v: admitted %v, completed %v; want a start at %v", c.interval, j.Admitted, j.Completion, c.start)
		}
	}
}

func nearly(a, b float64) bool { return near(a, b, 1e-12) }

func TestNew(t *testing.T) {
	for _, n := range append(Names(), "Gavel", "THEMIS", "ossp", "mst", "max_sum_throughput") {
		p, err := New(n, Config{GPUs: 4})
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		c, _ := Canonical(n)
		if p.Name() != c {
			t.Fatalf("%s built %s", n, p.Name())
		}
	}
	if _, err := New("fifo", Config{GPUs: 4}); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown policy: %v", err)
	}
	if _, err := New("shockwave", Config{}); err == nil {
		t.Fatal("shockwave without GPUs")
	}
}

func authorsWorkload(t testing.TB, name, table string, n int) *sim.Workload {
	t.Helper()
	w, err := sim.LoadWorkload("../../../internal/eval/data/shockwave/traces/"+name, "../../../internal/eval/data/shockwave/"+table, n, sim.WorkloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

const trace120 = "120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"

func authorsConfig(t testing.TB, name string) Config {
	t.Helper()
	tc, err := trace.LoadConfigFile("../../../internal/eval/data/shockwave/configurations/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return Config{GPUs: 32, Shockwave: ShockwaveConfig(tc, 0)}
}

// The paper's headline on the authors' 120-job trace at 32 GPUs: Shockwave
// finishes the trace about 1.3× sooner than the fair baselines (Gavel's
// max-min fairness, Themis) with a worst finish-time fairness about 2×
// better. Every policy finishes every job, and each replay is
// deterministic.
func TestAuthorsTrace120(t *testing.T) {
	n := 120
	if raceEnabled || testing.Short() {
		n = 30 // the code paths, not the paper's shape
	}
	w := authorsWorkload(t, trace120, "tacc_throughputs.json", n)
	cfg := authorsConfig(t, "tacc_32gpus.json")
	res := map[string]*sim.Result{}
	for _, name := range Names() {
		p, err := New(name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, w, p, sim.Options{GPUs: 32})
		if !r.Complete || len(r.Jobs) != n {
			t.Fatalf("%s: %d jobs finished", name, len(r.Jobs))
		}
		res[name] = r
		t.Logf("%-24s makespan %6.0f s  avg JCT %6.0f s  worst ρ %.3f  unfair %.3f  util %.3f",
			name, r.Summary.Makespan, r.Summary.AvgJCT, r.Summary.WorstFTF, r.Summary.Unfair105, r.Summary.Utilization)
	}
	if n == 120 {
		sw := res["shockwave"].Summary
		for _, fair := range []string{"max_min_fairness", "finish_time_fairness"} {
			b := res[fair].Summary
			if sw.Makespan > 0.85*b.Makespan || sw.WorstFTF > 0.75*b.WorstFTF || sw.Unfair105 > b.Unfair105 {
				t.Errorf("shockwave (makespan %.0f, worst ρ %.3f, unfair %.3f) vs %s (%.0f, %.3f, %.3f)",
					sw.Makespan, sw.WorstFTF, sw.Unfair105, fair, b.Makespan, b.WorstFTF, b.Unfair105)
			}
		}
		if st := res["shockwave"].Stats; len(st) == 0 || st[0].Name != "replans" || st[0].Value < 20 {
			t.Errorf("shockwave stats %v", st)
		}
	}
	for _, name := range []string{"shockwave", "finish_time_fairness"} {
		p, _ := New(name, cfg)
		if diff := cmp.Diff(res[name], mustRun(t, w, p, sim.Options{GPUs: 32})); diff != "" {
			t.Errorf("%s: two replays differ (-first +second):\n%s", name, diff)
		}
	}
}

// The authors' optima against their result files for the 120-job trace
// (scheduler/reproduce/pickles/tacc_32gpus, with their rescale flaw kept):
// the interior points bring Themis's and OSSP's average JCT within 1% of
// theirs (canonical: 3.6% and 6.1% off) and MST's worst ρ within 0.5%.
// What they leave (Themis's and OSSP's worst ρ) is logged, not asserted.
func TestAuthorsOptima120(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("the whole trace")
	}
	w := authorsWorkload(t, trace120, "tacc_throughputs.json", 120)
	theirs := map[string]struct{ makespan, jct, worst float64 }{
		"finish_time_fairness":    {31929, 11302, 3.438},
		"min_total_duration":      {0, 19807, 7.741},
		"max_sum_throughput_perf": {0, 0, 4.976},
	}
	off := func(a, b float64) float64 { return math.Abs(a-b) / b }
	for _, name := range []string{"finish_time_fairness", "min_total_duration", "max_sum_throughput_perf"} {
		var got [2]metrics.Summary
		for k, authors := range []bool{false, true} {
			cfg := authorsConfig(t, "tacc_32gpus.json")
			cfg.AuthorsOptima = authors
			p, err := New(name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got[k] = mustRun(t, w, p, sim.Options{GPUs: 32, AuthorsRescaleDrop: true}).Summary
			t.Logf("%-24s authors optima %-5v makespan %6.0f avg JCT %6.0f worst ρ %.3f", name, authors,
				got[k].Makespan, got[k].AvgJCT, got[k].WorstFTF)
		}
		want := theirs[name]
		if want.jct > 0 && !(off(got[1].AvgJCT, want.jct) < 0.01 && off(got[0].AvgJCT, want.jct) > 0.03) {
			t.Errorf("%s: avg JCT canonical %.0f, authors' optima %.0f, their files %.0f", name, got[0].AvgJCT, got[1].AvgJCT, want.jct)
		}
		if name == "max_sum_throughput_perf" && !(off(got[1].WorstFTF, want.worst) < 0.005) {
			t.Errorf("%s: worst ρ %.3f, their files %.3f", name, got[1].WorstFTF, want.worst)
		}
	}
}

// Gandiva-Fair on the 120-job trace at 32 GPUs is the authors' result file
// job for job, to the last bit: with their rescale flaw kept every job's
// JCT, the makespan and the average JCT are the file's. The difference seen
// without the flag (11 of 120 jobs, up to 480 s) is the flaw alone: job 35,
// which their simulator never finishes and drops after five failed leases,
// completes at the end of its lease (480 s sooner), and the ten jobs that
// then get its GPUs one round earlier or later move by 20 to 151 s; no
// tie-break or round order differs.
func TestGandivaFairMatchesAuthors120(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("the whole trace")
	}
	b, err := os.ReadFile("testdata/authors_gandiva_fair_tacc_32gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var theirs struct {
		Makespan float64   `json:"makespan_s"`
		AvgJCT   float64   `json:"avg_jct_s"`
		JCT      []float64 `json:"jct_s"`
	}
	if err := json.Unmarshal(b, &theirs); err != nil || len(theirs.JCT) != 120 {
		t.Fatalf("%v, %d jobs", err, len(theirs.JCT))
	}
	w := authorsWorkload(t, trace120, "tacc_throughputs.json", 120)
	run := func(drop bool) *sim.Result {
		p, err := New("gandiva_fair", authorsConfig(t, "tacc_32gpus.json"))
		if err != nil {
			t.Fatal(err)
		}
		return mustRun(t, w, p, sim.Options{GPUs: 32, AuthorsRescaleDrop: drop})
	}
	r := run(true)
	if r.Summary.Makespan != theirs.Makespan || r.Summary.AvgJCT != theirs.AvgJCT || len(r.Jobs) != 120 {
		t.Errorf("makespan %v avg JCT %v (%d jobs), their file %v %v", r.Summary.Makespan, r.Summary.AvgJCT, len(r.Jobs), theirs.Makespan, theirs.AvgJCT)
	}
	for _, j := range r.Jobs {
		if j.JCT != theirs.JCT[j.ID] {
			t.Errorf("job %d: JCT %v, their file %v", j.ID, j.JCT, theirs.JCT[j.ID])
		}
	}
	var moved []int
	worst := 0.0
	for _, j := range run(false).Jobs {
		if d := math.Abs(j.JCT - theirs.JCT[j.ID]); d > 1e-6 {
			moved = append(moved, j.ID)
			worst = max(worst, d)
			if d > 481 {
				t.Errorf("job %d moved by %.0f s without the flaw", j.ID, d)
			}
		}
	}
	if !slices.Contains(moved, 35) || len(moved) != 11 || math.Abs(worst-480) > 1 {
		t.Errorf("without the flaw: jobs %v moved, at most %.0f s; want 11 jobs with job 35 at 480 s", moved, worst)
	}
}

// jittered multiplies every fraction its allocator returns by a seeded
// 1 ± eps.
type jittered struct {
	Allocator
	r   *rand.Rand
	eps float64
}

func (j *jittered) Allocate(dst []float64, jobs []Demand, gpus int) error {
	if err := j.Allocator.Allocate(dst, jobs, gpus); err != nil {
		return err
	}
	for i := range dst {
		dst[i] *= 1 + j.eps*(2*j.r.Float64()-1)
	}
	return nil
}

// The Themis and OSSP replays do not depend on their allocations' last
// digits (fractions off by up to 1e-6 give the same summary), so what
// separates them from the authors' files is the point chosen, not rounding.
func TestAllocationsRobust120(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("the whole trace")
	}
	w := authorsWorkload(t, trace120, "tacc_throughputs.json", 120)
	gavel := authorsConfig(t, "tacc_32gpus.json").Gavel
	opts := sim.Options{GPUs: 32, AuthorsRescaleDrop: true}
	for _, authors := range []bool{false, true} {
		mk := []func() Allocator{
			func() Allocator { return &FinishTimeFairness{Interior: authors} },
			func() Allocator { return &MinTotalDuration{Bisect: authors, Interior: authors} },
		}
		for _, m := range mk {
			p, _ := NewGavel(m(), gavel)
			want := mustRun(t, w, p, opts).Summary
			for seed := uint64(1); seed <= 2; seed++ {
				p, _ := NewGavel(&jittered{m(), rand.New(rand.NewPCG(seed, 9)), 1e-6}, gavel)
				if diff := cmp.Diff(want, mustRun(t, w, p, opts).Summary); diff != "" {
					t.Errorf("%s (authors' optima %v), seed %d: (-exact +jittered)\n%s", p.Name(), authors, seed, diff)
				}
			}
		}
	}
}
