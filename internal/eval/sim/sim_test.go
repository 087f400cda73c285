package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// tinyTable is a throughput table with round numbers: ResNet-18 at batch
// size 32 on one GPU runs 15.625 it/s, so an epoch (50000/32 = 1562.5
// iterations in the profile, ⌈⌉ = 1563 in the simulator) takes 100 s and a
// 120 s round runs exactly 1875 steps.
const tinyTable = `{"v100": {
 "('ResNet-18 (batch size 32)', 1)": {"null": 15.625},
 "('ResNet-18 (batch size 64)', 1)": {"null": 26},
 "('ResNet-18 (batch size 128)', 1)": {"null": 6},
 "('ResNet-18 (batch size 256)', 1)": {"null": 3.5},
 "('ResNet-18 (batch size 16)', 1)": {"null": 20},
 "('ResNet-18 (batch size 32)', 2)": {"null": 31.25},
 "('ResNet-18 (batch size 32)', 4)": {"null": 62.5},
 "('Transformer (batch size 32)', 1)": {"null": 5},
 "('LM (batch size 5)', 1)": {"null": 100},
 "('LM (batch size 80)', 1)": {"null": 20},
 "('Recommendation (batch size 512)', 1)": {"null": 200},
 "('Recommendation (batch size 8192)', 1)": {"null": 20}
}}`

func loadTiny(t testing.TB) *throughput.Table {
	t.Helper()
	tab, err := throughput.Load(strings.NewReader(tinyTable))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// line writes one trace line.
func line(jobType string, steps int64, gpus int, mode string, arrival float64) string {
	return fmt.Sprintf("%s\tcmd\tdir\t--steps\t0\t%d\t%d\t%s\t1\t-1\t100\t%v", jobType, steps, gpus, mode, arrival)
}

func workload(t testing.TB, lines ...string) *Workload {
	t.Helper()
	jobs, err := trace.Parse(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorkload(jobs, loadTiny(t), WorkloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// fifo runs active jobs in admission order, skipping those that do not fit,
// and records every report it gets.
type fifo struct {
	reports []Report
	admits  []Job
}

func (*fifo) Name() string { return "fifo" }
func (f *fifo) Admit(j *Job) error {
	f.admits = append(f.admits, *j)
	return nil
}
func (f *fifo) EndRound(r *Report) error {
	c := *r
	c.Leases = append([]Lease(nil), r.Leases...)
	f.reports = append(f.reports, c)
	return nil
}
func (f *fifo) Schedule(_ context.Context, s *State) ([]int, error) {
	var ids []int
	left := s.GPUs
	for _, j := range s.Jobs {
		if j.GPUs <= left {
			ids = append(ids, j.ID)
			left -= j.GPUs
		}
	}
	return ids, nil
}

func run(t testing.TB, w *Workload, p Policy, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), w, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatal("run incomplete")
	}
	return res
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

const rn18 = "ResNet-18 (batch size 32)"

// One job alone: three leases of 1875, 1875 and 939 steps; its JCT is its
// simulated work, 4689/15.625 s, against a profile time of 3·100 s.
func TestOneJobAlone(t *testing.T) {
	w := workload(t, line(rn18, 3*1563, 1, "static", 0))
	f := &fifo{}
	res := run(t, w, f, Options{GPUs: 1, RecordSchedule: true})
	j := res.Jobs[0]
	if want := 4689 / 15.625; !near(j.JCT, want) || !near(res.Summary.Makespan, want) {
		t.Fatalf("JCT %v, makespan %v, want %v", j.JCT, res.Summary.Makespan, want)
	}
	if j.Isolated != 300 || j.Leases != 3 || res.Rounds != 3 || j.Restarts != 0 {
		t.Fatalf("isolated %v, leases %d, rounds %d, restarts %d", j.Isolated, j.Leases, res.Rounds, j.Restarts)
	}
	var steps []int64
	for _, r := range f.reports {
		for _, l := range r.Leases {
			steps = append(steps, l.Steps)
		}
	}
	if diff := cmp.Diff([]int64{1875, 1875, 939}, steps); diff != "" {
		t.Fatalf("lease steps (-want +got):\n%s", diff)
	}
	// ρ = JCT / (T_iso · max(1, 1/1)).
	if !near(j.FTF, j.JCT/300) || !near(res.Summary.Utilization, 1) {
		t.Fatalf("ftf %v, utilization %v", j.FTF, res.Summary.Utilization)
	}
}

// A job arriving mid-round waits for the boundary: admission is quantized
// to rounds, JCT counts from the trace arrival.
func TestArrivalWaitsForRound(t *testing.T) {
	w := workload(t, line(rn18, 3*1563, 1, "static", 0), line(rn18, 1563, 1, "static", 10))
	f := &fifo{}
	res := run(t, w, f, Options{GPUs: 2})
	j := res.Jobs[1]
	// Admitted at 120; 1563 steps take 100.032 s (a lease shorter than
	// Δ − 5 s pays no restart penalty).
	if j.Admitted != 120 || !near(j.Completion, 120+1563/15.625) || !near(j.JCT, j.Completion-10) {
		t.Fatalf("admitted %v, completion %v, JCT %v", j.Admitted, j.Completion, j.JCT)
	}
	if f.admits[1].Admitted != 120 || f.admits[1].Arrival != 10 {
		t.Fatalf("admit view %+v", f.admits[1])
	}
}

// Two jobs on one GPU, first come first served: the second starts when the
// first ends (the round ends with its last lease), pays the 20 s restart
// penalty on its first full lease (it did not run in the previous round),
// and not after.
func TestTwoJobsOneGPU(t *testing.T) {
	lines := []string{line(rn18, 3*1563, 1, "static", 0), line(rn18, 3*1563, 1, "static", 0)}
	res := run(t, workload(t, lines...), &fifo{}, Options{GPUs: 1})
	first := 4689 / 15.625 // 300.096
	// Job 1: 1562 steps (1875·100/120, truncated) in the 120 s lease that
	// books 100 s, then 1875, then the last 1252 steps.
	second := first + 120 + 120 + 1252/15.625
	if !near(res.Jobs[0].Completion, first) || !near(res.Jobs[1].Completion, second) {
		t.Fatalf("completions %v, %v; want %v, %v", res.Jobs[0].Completion, res.Jobs[1].Completion, first, second)
	}
	if res.Jobs[1].Restarts != 1 || res.Restarts != 1 {
		t.Fatalf("restarts %d", res.Restarts)
	}
	busy := first + 100 + 120 + 1252/15.625
	if !near(res.Summary.Utilization, busy/second) {
		t.Fatalf("utilization %v, want %v", res.Summary.Utilization, busy/second)
	}
	// ρ with contention factor N/M = 2.
	if !near(res.Jobs[1].FTF, second/600) || !near(res.Summary.WorstFTF, second/600) {
		t.Fatalf("ftf %v", res.Jobs[1].FTF)
	}
	if res.Summary.Unfair105 != 0 || res.Summary.Unfair110 != 0 {
		t.Fatalf("unfair %v %v", res.Summary.Unfair105, res.Summary.Unfair110)
	}
	// Without the penalty the second job simply follows the first.
	res = run(t, workload(t, lines...), &fifo{}, Options{GPUs: 1, RestartPenalty: -1})
	if !near(res.Jobs[1].Completion, 2*first) || res.Restarts != 0 {
		t.Fatalf("without penalty: %v, restarts %d", res.Jobs[1].Completion, res.Restarts)
	}
}

// The authors' "over the deadline" hack completes a job, steps left or
// not, once its booked run time exceeds ⌊factor·T_iso⌋. In a consistent
// replay booked time tracks progress, so at the authors' factor 1.5 it only
// fires through throughput the profile does not know about; with factor
// 0.5 a lone job (T_iso = 300 s) is completed at the end of its second
// lease, 240 s > 150 s, with 939 steps left. Turned off, it runs to the end.
func TestForceComplete(t *testing.T) {
	w := workload(t, line(rn18, 3*1563, 1, "static", 0))
	res := run(t, w, &fifo{}, Options{GPUs: 1, ForceComplete: 0.5})
	if res.Forced != 1 || !res.Jobs[0].Forced || res.Jobs[0].Completion != 240 || res.Jobs[0].Leases != 2 {
		t.Fatalf("forced %d, completion %v after %d leases", res.Forced, res.Jobs[0].Completion, res.Jobs[0].Leases)
	}
	res = run(t, w, &fifo{}, Options{GPUs: 1, ForceComplete: -1})
	if res.Forced != 0 || !near(res.Jobs[0].Completion, 4689/15.625) {
		t.Fatalf("without the hack: forced %d, completion %v", res.Forced, res.Jobs[0].Completion)
	}
	res = run(t, w, &fifo{}, Options{GPUs: 1})
	if res.Forced != 0 {
		t.Fatal("the default factor fired on a consistent replay")
	}
}

// The GNS example of the notes (ResNet-18, bs0 = 32, one GPU: ×2 from epoch
// 21): after 16 leases of 1875 steps the epoch ⌈30000/1563⌉ = 20 sees
// epoch 21 doubled, so the change is requested at that boundary and applied
// at the end of the 17th lease: the 18th runs at 64 with the completed
// epochs rounded up (⌈31875/1563⌉ = 21 epochs of ⌈50000/64⌉ = 782 steps).
func TestGNSChangeAppliedAtNextLeaseEnd(t *testing.T) {
	w := workload(t, line(rn18, 60*1563, 1, "gns", 0))
	f := &fifo{}
	res := run(t, w, f, Options{GPUs: 1})
	var bs []int
	var progress []int
	for _, r := range f.reports {
		for _, l := range r.Leases {
			bs = append(bs, l.BatchSize)
			progress = append(progress, l.Progress)
		}
	}
	for i := range 17 {
		if bs[i] != 32 {
			t.Fatalf("lease %d ran at %d; want 32 (batch sizes %v)", i+1, bs[i], bs)
		}
	}
	if bs[17] != 64 {
		t.Fatalf("lease 18 ran at %d, want 64 (%v)", bs[17], bs)
	}
	if progress[16] != 21 {
		t.Fatalf("progress after lease 17: %d epochs, want 21", progress[16])
	}
	// 32 → 64 → 128 → 256, never beyond the model's cap.
	if last := res.Jobs[0].FinalBatchSize; last != 256 || res.Jobs[0].BatchChanges != 3 {
		t.Fatalf("final batch size %d after %d changes", last, res.Jobs[0].BatchChanges)
	}
	for i := 1; i < len(bs); i++ {
		if bs[i] != bs[i-1] && bs[i] != 2*bs[i-1] {
			t.Fatalf("batch sizes %v", bs)
		}
	}
}

// The authors' rescale rounds completed epochs up: ResNet-18 at bs0 = 64
// (GNS: ×2 from epoch 11) with 10611 steps has 14 epochs of 782 steps; with
// 2600-step leases it asks to double after 7800 steps (epoch 10) and
// changes at the end of the next lease, 10400 steps, inside its last epoch:
// 14·391 = 5474 steps done of a new total of ⌈10611/2⌉ = 5306. It can never
// finish under AuthorsRescaleDrop: its leases run no step, fail, and after
// five it is dropped. By default it completes at the end of that lease.
func TestRescaleOvershoot(t *testing.T) {
	w := workload(t, line("ResNet-18 (batch size 64)", 10611, 1, "gns", 0))
	res := run(t, w, &fifo{}, Options{GPUs: 1, RoundSeconds: 100, AuthorsRescaleDrop: true})
	j := res.Jobs[0]
	if !j.Dropped || j.Leases != 4+maxFailures || res.Dropped != 1 || j.Completion != 400 || j.FinalBatchSize != 128 {
		t.Fatalf("authors: %+v", j)
	}
	res = run(t, w, &fifo{}, Options{GPUs: 1, RoundSeconds: 100})
	j = res.Jobs[0]
	if j.Dropped || j.Leases != 4 || j.Completion != 400 || res.Rounds != 4 || res.Dropped != 0 {
		t.Fatalf("default: %+v, %d rounds", j, res.Rounds)
	}
}

// adaptJob builds the simulator state of one job at a given completed-step
// count and batch size.
func adaptJob(t *testing.T, jobType, mode string, steps int64, bs int, run int64) *job {
	t.Helper()
	w := workload(t, line(jobType, steps, 1, mode, 0))
	tput, _ := w.aloneThroughput(w.Jobs[0].Model, bs, 1)
	j := &job{w: w, tj: &w.Jobs[0], prof: &w.Profiles[0], bs: bs, bs0: w.Jobs[0].BatchSize,
		tput: tput, total: steps, run: run}
	return j
}

// The Accordion rules of the authors' simulator, against the notes:
// ResNet-18 keeps bs0 in [0, 10), [150, 160), [250, 260) and jumps to 256
// outside; no 30% rule; Recommendation has only its first critical regime;
// Transformer never adapts; a job starting at the maximum never changes.
func TestAccordionRules(t *testing.T) {
	per := int64(1563)
	cases := []struct {
		name       string
		jobType    string
		bs         int
		epoch      int64 // ⌈run/⌈D/bs⌉⌉
		big, small bool
	}{
		{"critical head", rn18, 32, 9, false, false},
		{"leaves head", rn18, 32, 10, true, false},
		{"no 30% rule", rn18, 32, 11, true, false},
		{"back in regime at 150", rn18, 256, 150, false, true},
		{"large outside", rn18, 256, 160, false, false},
		{"LM head", "LM (batch size 5)", 5, 10, true, false},
		{"Rec first regime only", "Recommendation (batch size 8192)", 8192, 65, false, false},
		{"Transformer never", "Transformer (batch size 32)", 32, 50, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := adaptJob(t, c.jobType, "accordion", 1_000_000, c.bs, 0)
			p := stepsPerEpoch(j.tj.Model, c.bs)
			j.run = (c.epoch-1)*p + 1 // ⌈run/p⌉ = epoch
			if c.epoch == 0 {
				j.run = 0
			}
			j.adapt()
			if j.big != c.big || j.small != c.small {
				t.Fatalf("epoch %d at %d: big %v small %v; want %v %v", j.epoch(), c.bs, j.big, j.small, c.big, c.small)
			}
		})
	}
	// Jump to 256 and back: epochs kept, completed epochs rounded up.
	j := adaptJob(t, rn18, "accordion", 300*per, 32, 10*per+5)
	j.adapt()
	j.applyChange()
	if j.bs != 256 || j.tput != 3.5 || j.run != 11*196 || ceilDiv(j.total, 196) != 300 {
		t.Fatalf("after the jump: bs %d tput %v run %d total %d", j.bs, j.tput, j.run, j.total)
	}
	j.run = 150 * 196
	j.adapt()
	if !j.small {
		t.Fatal("no request back to bs0 at epoch 150")
	}
	j.applyChange()
	if j.bs != 32 || j.run != 150*per || ceilDiv(j.total, per) != 300 {
		t.Fatalf("after the return: bs %d run %d total %d", j.bs, j.run, j.total)
	}
}

// GNS requests and their rejection: a batch size missing from the table is
// rejected (the flags are cleared and the job keeps its size), a job at
// the model's cap never asks.
func TestGNSRules(t *testing.T) {
	// LM at bs0 = 5 on one GPU doubles from epoch 31. With 31 epochs its
	// profile never doubles, but the simulator's pattern (760 epochs long)
	// asks for 10 at epoch 30, which the table lacks: rejected.
	per := stepsPerEpoch(trace.LM, 5)
	j := adaptJob(t, "LM (batch size 5)", "gns", 31*per, 5, 0)
	j.run = 29 * per // epoch 29: pattern[30] = 5, no request
	j.adapt()
	if j.big {
		t.Fatal("request before epoch 30")
	}
	j.run = 29*per + 1 // epoch 30 looks at epoch 31
	j.adapt()
	if !j.big {
		t.Fatal("no request at epoch 30")
	}
	total, run := j.total, j.run
	j.applyChange()
	if j.bs != 5 || j.big || j.total != total || j.run != run || j.changes != 0 {
		t.Fatalf("rejected change altered the job: bs %d total %d run %d", j.bs, j.total, j.run)
	}
	// At the cap: no request.
	j = adaptJob(t, rn18, "gns", 1_000_000, 256, 100*196)
	j.adapt()
	if j.big {
		t.Fatal("request at the cap")
	}
}

// The GNS pattern lookup reproduces get_gns_bs_pattern of length
// max(760, epoch+2), including the reverted last epoch, for every epoch.
func TestGNSPatternLookup(t *testing.T) {
	for _, c := range []struct {
		m      trace.Model
		bs, gp int
	}{{trace.ResNet18, 32, 1}, {trace.ResNet18, 128, 1}, {trace.LM, 5, 4}, {trace.Recommendation, 512, 1}, {trace.ResNet50, 64, 2}} {
		tj := trace.Job{Model: c.m, BatchSize: c.bs, GPUs: c.gp, Mode: trace.GNS}
		var g gnsPattern
		if err := g.build(&tj, 900); err != nil {
			t.Fatal(err)
		}
		for _, cur := range []int64{0, 10, 500, 757, 758, 759, 800, 898} {
			L := max(760, cur+2)
			want, err := trace.Schedule(nil, c.m, trace.GNS, c.bs, c.gp, int(L))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []int64{cur, cur + 1} {
				if got := g.at(e, cur); got != want[e] {
					t.Fatalf("%v bs %d ×%d: epoch %d of %d: %d, want %d", c.m, c.bs, c.gp, e, L, got, want[e])
				}
			}
		}
	}
}

// Placement keeps a job on its GPUs when it runs again (a lease
// extension) and assigns the lowest free GPUs, widest job first.
func TestPlacementExtension(t *testing.T) {
	lines := []string{line(rn18, 100*1563, 1, "static", 0), line(rn18, 100*1563, 2, "static", 0),
		line(rn18, 100*1563, 1, "static", 0)}
	w := workload(t, lines...)
	res := run(t, w, &fifo{}, Options{GPUs: 4, RecordSchedule: true})
	// The widest job is placed first each round.
	if diff := cmp.Diff([]int{1, 0, 2}, res.Schedule[0]); diff != "" {
		t.Fatalf("round 0 placement order (-want +got):\n%s", diff)
	}
	// All three run every round until the first finishes: every later
	// lease is an extension.
	if res.LeaseExtensions == 0 || res.LeaseExtensions != res.LeaseOpportunities {
		t.Fatalf("extensions %d of %d", res.LeaseExtensions, res.LeaseOpportunities)
	}
}

// Bad input: typed errors naming the job and field, never a panic.
func TestBadInput(t *testing.T) {
	tab := loadTiny(t)
	parse := func(lines ...string) []trace.Job {
		jobs, err := trace.Parse(strings.NewReader(strings.Join(lines, "\n")))
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	// Arrivals out of order.
	_, err := NewWorkload(parse(line(rn18, 10, 1, "static", 5), line(rn18, 10, 1, "static", 1)), tab, WorkloadOptions{})
	var je *JobError
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &je) || je.Line != 2 || je.Field != "arrival_s" {
		t.Fatalf("out of order: %v", err)
	}
	// A batch size the table lacks: the trace package's error with the line.
	_, err = NewWorkload(parse(line(rn18, 10, 1, "static", 0), line("ResNet-50 (batch size 32)", 10, 1, "static", 1)), tab, WorkloadOptions{})
	var pe *trace.ParseError
	if !errors.Is(err, trace.ErrThroughput) || !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("unknown configuration: %v", err)
	}
	if _, err := NewWorkload(nil, tab, WorkloadOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no jobs: %v", err)
	}
	w := workload(t, line(rn18, 10, 1, "static", 0), line("ResNet-18 (batch size 32)", 10, 4, "static", 0))
	// A job wider than the cluster.
	_, err = Run(context.Background(), w, &fifo{}, Options{GPUs: 2})
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &je) || je.Line != 2 || je.Field != "scale_factor" {
		t.Fatalf("too wide: %v", err)
	}
	for _, o := range []Options{{GPUs: 0}, {GPUs: 1, RoundSeconds: math.NaN()}, {GPUs: 1, RoundSeconds: -1},
		{GPUs: 1, ForceComplete: math.Inf(1)}, {GPUs: 1, RestartPenalty: 200}, {GPUs: 1, MaxRounds: -1}} {
		if _, err := Run(context.Background(), w, &fifo{}, o); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v: %v", o, err)
		}
	}
	// Policies that misbehave.
	for name, p := range map[string]Policy{
		"unknown job": &fixed{ids: []int{7}},
		"twice":       &fixed{ids: []int{0, 0}},
		"too many":    &fixed{ids: []int{0, 1}},
		"error":       &fixed{err: errors.New("boom")},
	} {
		if _, err := Run(context.Background(), w, p, Options{GPUs: 4}); !errors.Is(err, ErrPolicy) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// A policy that never runs anything stalls instead of looping forever.
	if _, err := Run(context.Background(), w, &fixed{}, Options{GPUs: 4, MaxRounds: 50}); !errors.Is(err, ErrStalled) {
		t.Fatalf("idle policy: %v", err)
	}
}

// fixed returns the same answer every round.
type fixed struct {
	fifo
	ids []int
	err error
}

func (f *fixed) Schedule(context.Context, *State) ([]int, error) { return f.ids, f.err }

// Canceling returns the jobs finished so far with ErrCanceled.
func TestCancel(t *testing.T) {
	w := workload(t, line(rn18, 1563, 1, "static", 0), line(rn18, 100*1563, 1, "static", 0))
	ctx, cancel := context.WithCancel(context.Background())
	p := &cancelAt{round: 5, cancel: cancel}
	res, err := Run(ctx, w, p, Options{GPUs: 1})
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if res == nil || res.Complete || len(res.Jobs) != 1 || res.Jobs[0].ID != 0 {
		t.Fatalf("partial result %+v", res)
	}
}

type cancelAt struct {
	fifo
	round  int
	cancel func()
}

func (c *cancelAt) Schedule(ctx context.Context, s *State) ([]int, error) {
	if s.Round == c.round {
		c.cancel()
	}
	return c.fifo.Schedule(ctx, s)
}

func authorsWorkload(t testing.TB, name, table string) *Workload {
	t.Helper()
	w, err := LoadWorkload("../../../internal/eval/data/shockwave/traces/"+name, "../../../internal/eval/data/shockwave/"+table, 0, WorkloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

const trace120 = "120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"

// ledger wraps a policy and checks every round it sees: the schedule fits
// and names active jobs once, the leases' booked time adds up.
type ledger struct {
	Policy
	t      testing.TB
	gpus   int
	booked map[int]float64
	leases map[int]int
	active map[int]int // ID → GPUs
}

func (l *ledger) Admit(j *Job) error {
	l.active[j.ID] = j.GPUs
	if j.StepsRun != 0 || j.TotalSteps != j.Trace.TotalSteps || j.BatchSize != j.Trace.BatchSize {
		l.t.Errorf("job %d admitted with state %+v", j.ID, j)
	}
	return l.Policy.Admit(j)
}

func (l *ledger) EndRound(r *Report) error {
	for _, ls := range r.Leases {
		g, ok := l.active[ls.ID]
		if !ok {
			l.t.Errorf("lease of inactive job %d", ls.ID)
		}
		if ls.Exec < 0 || ls.Exec > 120+1e-9 {
			l.t.Errorf("job %d booked %v s in one round", ls.ID, ls.Exec)
		}
		l.booked[ls.ID] += ls.Exec * float64(g)
		l.leases[ls.ID]++
		if ls.Finished {
			delete(l.active, ls.ID)
		}
	}
	return l.Policy.EndRound(r)
}

func (l *ledger) Schedule(ctx context.Context, s *State) ([]int, error) {
	if len(s.Jobs) != len(l.active) {
		l.t.Errorf("round %d: %d active jobs, ledger has %d", s.Round, len(s.Jobs), len(l.active))
	}
	for _, j := range s.Jobs {
		if j.StepsRun < 0 || j.Progress < 0 || j.Progress > j.Profile.Epochs() || j.Throughput <= 0 {
			l.t.Errorf("round %d: job %d in state %+v", s.Round, j.ID, j)
		}
	}
	ids, err := l.Policy.Schedule(ctx, s)
	used := 0
	for _, id := range ids {
		used += l.active[id]
	}
	if used > l.gpus {
		l.t.Errorf("round %d uses %d GPUs", s.Round, used)
	}
	return ids, err
}

// On the authors' 120-job trace: every job finishes once, the schedule
// always fits, the booked GPU time of every job is the sum of its leases,
// the cluster is never booked beyond M·makespan, and the replay is
// deterministic.
func TestAuthorsTraceConservation(t *testing.T) {
	w := authorsWorkload(t, trace120, "tacc_throughputs.json")
	l := &ledger{Policy: &fifo{}, t: t, gpus: 32, booked: map[int]float64{}, leases: map[int]int{}, active: map[int]int{}}
	res := run(t, w, l, Options{GPUs: 32, RecordSchedule: true})
	if len(res.Jobs) != 120 || len(l.active) != 0 {
		t.Fatalf("%d jobs finished, %d still active", len(res.Jobs), len(l.active))
	}
	var busy float64
	for i, j := range res.Jobs {
		if j.ID != i || j.Completion < j.Admitted || j.Admitted < j.Arrival || j.JCT != j.Completion-j.Arrival {
			t.Fatalf("job record %+v", j)
		}
		if !near(j.GPUSeconds, l.booked[j.ID]) || j.Leases != l.leases[j.ID] {
			t.Fatalf("job %d: booked %v in %d leases, ledger %v in %d", j.ID, j.GPUSeconds, j.Leases, l.booked[j.ID], l.leases[j.ID])
		}
		busy += j.GPUSeconds
	}
	if busy > 32*res.Summary.Makespan || !near(res.Summary.Utilization, busy/(32*res.Summary.Makespan)) {
		t.Fatalf("busy %v GPU-s over makespan %v", busy, res.Summary.Makespan)
	}
	if len(res.Schedule) != res.Rounds || res.BatchChanges == 0 || res.Restarts == 0 {
		t.Fatalf("rounds %d/%d, changes %d, restarts %d", len(res.Schedule), res.Rounds, res.BatchChanges, res.Restarts)
	}
	again := run(t, w, &fifo{}, Options{GPUs: 32, RecordSchedule: true})
	if diff := cmp.Diff(res, again); diff != "" {
		t.Fatalf("two replays differ (-first +second):\n%s", diff)
	}
}

// LoadWorkload takes the first n jobs and names the file it cannot read.
func TestLoadWorkload(t *testing.T) {
	w, err := LoadWorkload("../../../internal/eval/data/shockwave/traces/"+trace120, "../../../internal/eval/data/shockwave/tacc_throughputs.json", 7, WorkloadOptions{})
	if err != nil || len(w.Jobs) != 7 || len(w.Profiles) != 7 {
		t.Fatalf("%v, %d jobs", err, len(w.Jobs))
	}
	if _, err := LoadWorkload("no/such.trace", "../../../internal/eval/data/shockwave/tacc_throughputs.json", 0, WorkloadOptions{}); err == nil || !strings.Contains(err.Error(), "no/such.trace") {
		t.Fatalf("missing trace: %v", err)
	}
}
