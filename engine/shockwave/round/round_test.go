package round

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

func testdata(name ...string) string {
	return filepath.Join(append([]string{"..", "..", "..", "internal", "eval", "data", "shockwave"}, name...)...)
}

// traceJobs returns the first n jobs of the authors' 120-job trace with
// their derived profiles (whole-second durations, as JobMetaData holds
// them), and the tacc_32gpus configuration.
func traceJobs(t testing.TB, n int) ([]trace.Job, []Job, Config) {
	t.Helper()
	tjobs, err := trace.ParseFile(testdata("traces", "120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"))
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	tab, err := throughput.LoadFile(testdata("tacc_throughputs.json"))
	if err != nil {
		t.Fatalf("throughputs: %v", err)
	}
	tc, err := trace.LoadConfigFile(testdata("configurations", "tacc_32gpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	tjobs = tjobs[:n]
	jobs := make([]Job, n)
	for i := range tjobs {
		p, err := trace.Derive(&tjobs[i], tab, trace.DeriveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		jobs[i] = Job{ID: tjobs[i].ID, GPUs: tjobs[i].GPUs, Submit: tjobs[i].Arrival,
			EpochBS: p.EpochBS, EpochDur: p.MetadataDurations(nil)}
	}
	cfg := Config{Market: market.Config{Rounds: tc.FutureRounds, K: tc.K, Lambda: tc.Lambda, RhoMax: tc.RhoMax, Breakpoints: tc.LogBases}}
	return tjobs, jobs, cfg
}

// TestSchedulerSimulation drives the Scheduler through a simplified version
// of the authors' round loop on the first 40 jobs of their 120-job trace:
// arrivals are admitted at round boundaries, scheduled jobs progress by Δ
// seconds of their profiled epochs, finished jobs leave. Every round must
// fit the cluster, every job must finish, and the Scheduler must re-plan
// exactly on its triggers (arrival, completion, 8 rounds, window used up).
func TestSchedulerSimulation(t *testing.T) {
	const M, N = 32, 40
	tjobs, jobs, cfg := traceJobs(t, N)
	s, err := New(M, cfg)
	if err != nil {
		t.Fatal(err)
	}
	T := cfg.Market.Rounds
	delta := market.DefaultRoundSeconds
	done := make([]float64, N) // seconds of isolated work done
	progress := make([]int, N)
	finished := make([]bool, N)
	admitted, replans := 0, 0
	lastPlan, since, completedPrev := -1, 0, false
	for r := 0; r < 3000; r++ {
		now := float64(r) * delta
		arrived := false
		for admitted < N && tjobs[admitted].Arrival <= now {
			if err := s.Add(jobs[admitted]); err != nil {
				t.Fatal(err)
			}
			admitted++
			arrived = true
		}
		ids, err := s.Schedule(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() > 0 {
			periodic := since == 0 && r > 0
			want := lastPlan < 0 || arrived || completedPrev || periodic || r >= lastPlan+T
			got := s.LastPlan().Round == r
			if got != want {
				t.Fatalf("round %d: re-planned %v, want %v (arrival %v, completion %v, periodic %v, last plan %d)",
					r, got, want, arrived, completedPrev, periodic, lastPlan)
			}
			if got {
				lastPlan = r
				replans++
			}
		}
		used := 0
		seen := map[int]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("round %d: job %d scheduled twice", r, id)
			}
			seen[id] = true
			used += jobs[id].GPUs
		}
		if used > M {
			t.Fatalf("round %d uses %d GPUs of %d", r, used, M)
		}
		completedPrev = false
		for _, id := range ids {
			done[id] += delta
			for progress[id] < len(jobs[id].EpochDur) && sumTo(jobs[id].EpochDur, progress[id]+1) <= done[id]+1e-9 {
				progress[id]++
			}
			if progress[id] == len(jobs[id].EpochDur) {
				finished[id], completedPrev = true, true
				if err := s.Remove(id); err != nil {
					t.Fatal(err)
				}
			} else if err := s.Progress(id, progress[id]); err != nil {
				t.Fatal(err)
			}
		}
		s.EndRound()
		if since++; since >= DefaultReoptRounds {
			since = 0
		}
		if admitted == N && s.Len() == 0 {
			break
		}
	}
	for id, f := range finished {
		if !f {
			t.Fatalf("job %d did not finish (progress %d/%d)", id, progress[id], len(jobs[id].EpochDur))
		}
	}
	t.Logf("%d re-plans", replans)
}

func sumTo(d []float64, n int) float64 {
	s := 0.0
	for _, v := range d[:n] {
		s += v
	}
	return s
}

// knownJob is a job with caller-supplied predictions.
func knownJob(id, gpus, epochs int, r, d float64) Job {
	return Job{ID: id, GPUs: gpus, Epochs: epochs, Known: &Known{Remaining: r, MeanEpoch: d}}
}

// TestSchedulerTriggers checks the re-plan rule: arrivals, completions,
// every ReoptRounds rounds and leaving the window re-plan; nothing else.
func TestSchedulerTriggers(t *testing.T) {
	cfg := Config{Market: market.Config{Rounds: 5}, ReoptRounds: 3}
	s, err := New(4, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for id := 0; id < 6; id++ {
		if err := s.Add(knownJob(id, 1+id%2, 50, 3000+float64(id)*100, 60)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	planned := func() int { return s.LastPlan().Round }
	step := func(wantPlanRound int) {
		t.Helper()
		if _, err := s.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		if got := planned(); got != wantPlanRound {
			t.Fatalf("round %d: plan made in round %d, want %d", s.Round(), got, wantPlanRound)
		}
		s.EndRound()
	}
	step(0) // first schedule
	step(0)
	step(0)
	step(3) // ReoptRounds = 3
	step(3)
	if err := s.Remove(2); err != nil {
		t.Fatal(err)
	}
	step(5) // completion
	step(6) // 3 rounds since the periodic re-plan at 3
	if err := s.Add(knownJob(9, 1, 10, 500, 30)); err != nil {
		t.Fatal(err)
	}
	step(7) // arrival
	step(7)
	step(9) // periodic
	// Finish-time history: one estimate per re-estimation (arrivals and
	// completions: rounds 0, 5 and 7), none on periodic re-plans.
	j := s.jobs[s.find(0)]
	var rounds []int
	for _, p := range j.Finish {
		rounds = append(rounds, p.Round)
	}
	if !slices.Equal(rounds, []int{0, 5, 7}) {
		t.Fatalf("job 0 finish estimates made in rounds %v, want [0 5 7]", rounds)
	}
	// Errors name the method's arguments.
	wide := knownJob(10, 1, 10, 500, 30)
	wide.GPUs = 9
	late := knownJob(11, 1, 10, 500, 30)
	late.Finish = []FinishPoint{{Round: 99}}
	for _, c := range []struct {
		name  string
		err   error
		field string
		want  error
	}{
		{"duplicate add", s.Add(knownJob(9, 1, 10, 500, 30)), "j.ID", ErrDuplicate},
		{"too wide", s.Add(wide), "j.GPUs", ErrInvalid},
		{"estimate from the future", s.Add(late), "j.Finish[0].Round", ErrInvalid},
		{"unknown remove", s.Remove(42), "id", ErrUnknownID},
		{"progress past the end", s.Progress(0, 51), "epochs", ErrInvalid},
		{"sample without a dataset size", s.Observe(0, predictor.Sample{Round: 9, ItPerSec: 1, BatchSize: 32}), "id", ErrInvalid},
	} {
		var fe *FieldError
		if !errors.As(c.err, &fe) || fe.Job != -1 || fe.Field != c.field || !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v (%+v), want field %q wrapping %v", c.name, c.err, fe, c.field, c.want)
		}
	}
}

// TestSchedulerResolve: with ReoptRounds -1 the Scheduler re-plans only
// on arrivals, completions, leaving the window and Resolve (the authors'
// set_resolve), which forces a re-plan at the next Schedule even inside
// the cached window, as their class re-solves after set_resolve.
func TestSchedulerResolve(t *testing.T) {
	s, err := New(4, Config{Market: market.Config{Rounds: 5}, ReoptRounds: -1})
	if err != nil {
		t.Fatal(err)
	}
	for id := 0; id < 6; id++ {
		if err := s.Add(knownJob(id, 1+id%2, 50, 3000+float64(id)*100, 60)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	step := func(wantPlanRound int) {
		t.Helper()
		if _, err := s.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		if got := s.LastPlan().Round; got != wantPlanRound {
			t.Fatalf("round %d: plan made in round %d, want %d", s.Round(), got, wantPlanRound)
		}
		s.EndRound()
	}
	step(0)
	step(0)
	s.Resolve()
	step(2) // forced
	step(2)
	step(2)
	step(2)
	step(2)
	step(7) // past the 5-round window made in round 2: no periodic re-plan in between
	s.Resolve()
	s.Resolve() // twice is once
	step(8)
	step(8)
	// Resolve restarts the periodic count of a Scheduler that has one.
	p, _ := New(4, Config{Market: market.Config{Rounds: 9}, ReoptRounds: 3})
	for id := 0; id < 3; id++ {
		p.Add(knownJob(id, 1, 50, 3000, 60))
	}
	for r, want := range []int{0, 0, 2, 2, 2, 5} {
		if r == 2 {
			p.Resolve()
		}
		if _, err := p.Schedule(ctx); err != nil || p.LastPlan().Round != want {
			t.Fatalf("periodic: round %d: plan of round %d, want %d (%v)", r, p.LastPlan().Round, want, err)
		}
		p.EndRound()
	}
}

// profiled is a job with a profile of n epochs of 30 s at batch size 32,
// ready for calibration samples.
func profiled(id, n int) Job {
	j := Job{ID: id, GPUs: 1, SamplesPerEpoch: 50000, EpochBS: make([]int, n), EpochDur: make([]float64, n)}
	for e := range n {
		j.EpochBS[e], j.EpochDur[e] = 32, 30
	}
	return j
}

// TestSchedulerRejectsAtTheDoor: what Add and Observe admit can never make a
// later Schedule fail. A bad job or sample is refused with its field, and
// the Scheduler is exactly as it was before the call.
func TestSchedulerRejectsAtTheDoor(t *testing.T) {
	s, err := New(4, Config{Market: market.Config{Rounds: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(profiled(1, 10)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Schedule(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.EndRound()
	}
	if err := s.Observe(1, predictor.Sample{Round: 1, ItPerSec: 50, BatchSize: 32}); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*Job)) Job { j := profiled(2, 10); f(&j); return j }
	nan := math.NaN()
	for _, c := range []struct {
		name, field string
		call        func() error
	}{
		{"NaN epoch duration", "j.EpochDur[3]", func() error { return s.Add(edit(func(j *Job) { j.EpochDur[3] = nan })) }},
		{"negative epoch duration", "j.EpochDur[0]", func() error { return s.Add(edit(func(j *Job) { j.EpochDur[0] = -1 })) }},
		{"lists of different lengths", "j.EpochDur", func() error { return s.Add(edit(func(j *Job) { j.EpochDur = j.EpochDur[:7] })) }},
		{"progress past the epochs", "j.Progress", func() error { return s.Add(edit(func(j *Job) { j.Progress = 11 })) }},
		{"infinite submit time", "j.Submit", func() error { return s.Add(edit(func(j *Job) { j.Submit = math.Inf(1) })) }},
		{"NaN throughput", "sample.ItPerSec", func() error { return s.Observe(1, predictor.Sample{Round: 2, ItPerSec: nan, BatchSize: 32}) }},
		{"infinite throughput", "sample.ItPerSec", func() error { return s.Observe(1, predictor.Sample{Round: 2, ItPerSec: math.Inf(1), BatchSize: 32}) }},
		{"negative throughput", "sample.ItPerSec", func() error { return s.Observe(1, predictor.Sample{Round: 2, ItPerSec: -3, BatchSize: 32}) }},
		{"batch size 0", "sample.BatchSize", func() error { return s.Observe(1, predictor.Sample{Round: 2, ItPerSec: 5, BatchSize: 0}) }},
		{"round -5", "sample.Round", func() error { return s.Observe(1, predictor.Sample{Round: -5, ItPerSec: 5, BatchSize: 32}) }},
		{"a round not yet played", "sample.Round", func() error { return s.Observe(1, predictor.Sample{Round: 5, ItPerSec: 5, BatchSize: 32}) }},
		{"progress -1", "epochs", func() error { return s.Progress(1, -1) }},
	} {
		before := snapshot(s)
		err := c.call()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v (%+v), want field %q", c.name, err, fe, c.field)
		}
		if diff := cmp.Diff(before, snapshot(s)); diff != "" {
			t.Errorf("%s: the rejected call changed the Scheduler (-before +after):\n%s", c.name, diff)
		}
		if _, err := s.Schedule(context.Background()); err != nil {
			t.Errorf("%s: Schedule fails after the rejected call: %v", c.name, err)
		}
	}
	if _, err := New(4, Config{Momentum: 2}); err == nil {
		t.Error("New accepted a momentum of 2, which every Schedule would refuse")
	}
}

// snapshot is what a Scheduler's callers can observe of it, deeply copied:
// its round, its jobs and their histories.
func snapshot(s *Scheduler) any {
	type view struct {
		Round int
		Jobs  []Job
	}
	v := view{Round: s.round}
	for _, j := range s.jobs {
		j.EpochBS, j.EpochDur, j.ProfiledDur = slices.Clone(j.EpochBS), slices.Clone(j.EpochDur), slices.Clone(j.ProfiledDur)
		j.Timeline, j.Finish = slices.Clone(j.Timeline), slices.Clone(j.Finish)
		v.Jobs = append(v.Jobs, j)
	}
	return v
}

// TestSchedulerWindow re-plans once the cached window is used up.
func TestSchedulerWindow(t *testing.T) {
	s, _ := New(2, Config{Market: market.Config{Rounds: 2}, ReoptRounds: 100})
	s.Add(knownJob(1, 1, 100, 1e5, 100))
	s.Add(knownJob(2, 2, 100, 1e5, 100))
	for r := 0; r < 6; r++ {
		if _, err := s.Schedule(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := r - r%2; s.LastPlan().Round != want {
			t.Fatalf("round %d: plan from round %d, want %d", r, s.LastPlan().Round, want)
		}
		s.EndRound()
	}
}

// TestPlanMatchesMarket checks that Plan is the predictor followed by the
// market: the same plan as solving the market problem built by hand.
// midwayState is 30 trace jobs on 8 GPUs at round 12, part done, each with
// one earlier finish-time estimate.
func midwayState(t *testing.T) *State {
	_, jobs, cfg := traceJobs(t, 30)
	st := &State{GPUs: 8, Round: 12, Reestimate: true, Config: cfg}
	for i, j := range jobs {
		j.Progress = (i * 7) % (len(j.EpochBS) / 2)
		j.Finish = []FinishPoint{{Round: 2, Estimate: j.Submit + 4000 + float64(i)*50}}
		st.Jobs = append(st.Jobs, j)
	}
	return st
}

func TestPlanMatchesMarket(t *testing.T) {
	st := midwayState(t)
	cfg := st.Config
	res, err := Plan(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	var pred predictor.Predictor
	prob := market.Problem{GPUs: 8, Round: 12, Config: cfg.Market}
	for _, j := range st.Jobs {
		est, err := pred.Predict(&predictor.Job{Progress: j.Progress, EpochBS: j.EpochBS, EpochDur: j.EpochDur})
		if err != nil {
			t.Fatal(err)
		}
		now := j.Submit + (est.Elapsed+est.Remaining)/math.Min(1, 8.0/30)
		var fs predictor.FinishSeries
		fs.Add(2, j.Finish[0].Estimate)
		fs.Add(12, now)
		ft, _ := fs.Target(12)
		prob.Jobs = append(prob.Jobs, market.Job{ID: j.ID, GPUs: j.GPUs, Epochs: len(j.EpochBS), Progress: j.Progress,
			MeanEpoch: est.MeanEpoch, Remaining: est.Remaining, FairFinish: ft})
	}
	sol, err := market.Solve(context.Background(), &prob)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != sol.Status || res.Objective != sol.Objective || res.Relaxed != sol.Relaxed {
		t.Fatalf("Plan: %v %v %v; market: %v %v %v", res.Status, res.Relaxed, res.Objective, sol.Status, sol.Relaxed, sol.Objective)
	}
	for tt := range sol.Rounds {
		var want []int
		for _, j := range sol.Rounds[tt] {
			want = append(want, st.Jobs[j].ID)
		}
		for _, j := range sol.Backfill[tt] {
			want = append(want, st.Jobs[j].ID)
		}
		if !slices.Equal(res.Rounds[tt], want) {
			t.Fatalf("round %d: %v, want %v", tt, res.Rounds[tt], want)
		}
	}
	// Pure and deterministic: the same state plans the same, and st is intact.
	again, err := new(Workspace).Plan(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if again.Objective != res.Objective || len(st.Jobs[0].Finish) != 1 {
		t.Fatal("Plan is not deterministic or modified its state")
	}
}

// TestPredictMatchesPlan: Predict returns the predictions Plan solves with.
func TestPredictMatchesPlan(t *testing.T) {
	st := midwayState(t)
	res, err := Plan(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Predict(st)
	if err != nil {
		t.Fatal(err)
	}
	spread := false
	for i, want := range res.Jobs {
		want.Rounds, want.Epochs, want.Priority = 0, 0, 0
		if got[i] != want {
			t.Fatalf("job %d: Predict %+v, Plan %+v", i, got[i], want)
		}
		spread = spread || got[i].RemainingStd > 0
	}
	if !spread {
		t.Fatal("no job has a posterior spread: the trace jobs change batch size")
	}
}

func TestPlanAllocations(t *testing.T) {
	_, jobs, cfg := traceJobs(t, 120) // IDs past 99 once allocated in error paths
	st := &State{GPUs: 32, Round: 30, Reestimate: true, Jobs: jobs, Config: cfg}
	for i := range st.Jobs {
		st.Jobs[i].Progress = i % min(5, len(st.Jobs[i].EpochBS))
	}
	var ws Workspace
	if _, err := ws.Plan(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { ws.Plan(context.Background(), st) }); n != 0 {
		t.Fatalf("%v allocations per steady-state plan", n)
	}
}

// TestPlanBadInput: invalid input is a *FieldError naming the Go field of
// the State it came from (for a job: its index, its ID and its field),
// whichever package found it, wrapping that package's sentinel.
func TestPlanBadInput(t *testing.T) {
	base := func() *State {
		return &State{GPUs: 4, Round: 3, Jobs: []Job{
			{ID: 1, GPUs: 1, EpochBS: []int{32, 32, 64}, EpochDur: []float64{10, 10, 8}},
			{ID: 2, GPUs: 2, Epochs: 5, Known: &Known{Remaining: 100, MeanEpoch: 20}},
		}}
	}
	timeline := func(s *State) {
		s.Jobs[0].SamplesPerEpoch = 1000
		s.Jobs[0].Timeline = []predictor.Sample{{Round: 1, ItPerSec: 3, BatchSize: 32}}
	}
	cases := []struct {
		name  string
		edit  func(*State)
		job   int // −1: a field of the State
		field string
		want  error
	}{
		{"gpus", func(s *State) { s.GPUs = 0 }, -1, "GPUs", ErrInvalid},
		{"round", func(s *State) { s.Round = market.MaxRound + 1 }, -1, "Round", ErrInvalid},
		{"k", func(s *State) { s.Config.Market.K = 1e300 }, -1, "Config.Market.K", ErrInvalid},
		{"negative k", func(s *State) { s.Config.Market.K = -1 }, -1, "Config.Market.K", market.ErrInvalid},
		{"round length", func(s *State) { s.Config.Market.RoundSeconds = -1 }, -1, "Config.Market.RoundSeconds", market.ErrInvalid},
		{"round of 1e16 s", func(s *State) { s.Config.Market.RoundSeconds = 1e16 }, -1, "Config.Market.RoundSeconds", ErrInvalid},
		{"breakpoint", func(s *State) { s.Config.Market.Breakpoints = []float64{0, 2} }, -1, "Config.Market.Breakpoints[1]", market.ErrInvalid},
		{"too many GPU-rounds", func(s *State) { s.GPUs = 1 << 20 }, -1, "GPUs", market.ErrLimit},
		{"prior strength", func(s *State) { s.Config.Predictor.PriorStrength = 1e20 }, -1, "Config.Predictor.PriorStrength", predictor.ErrInvalid},
		{"reopt rounds", func(s *State) { s.Config.ReoptRounds = -2 }, -1, "Config.ReoptRounds", ErrInvalid},
		{"job wider than cluster", func(s *State) { s.Jobs[0].GPUs = 8 }, 0, "GPUs", ErrInvalid},
		{"NaN duration", func(s *State) { s.Jobs[0].EpochDur[1] = math.NaN() }, 0, "EpochDur[1]", predictor.ErrInvalid},
		{"negative duration", func(s *State) { s.Jobs[0].EpochDur[0] = -1 }, 0, "EpochDur[0]", predictor.ErrInvalid},
		{"negative duration, calibrated", func(s *State) { timeline(s); s.Jobs[0].EpochDur[1] = -1 }, 0, "EpochDur[1]", predictor.ErrInvalid},
		{"negative profiled duration", func(s *State) {
			timeline(s)
			s.Jobs[0].ProfiledDur = []float64{10, -10, 8}
		}, 0, "ProfiledDur[1]", predictor.ErrInvalid},
		{"zero profiled durations", func(s *State) { // an epoch of 0 s is no epoch
			timeline(s)
			s.Jobs[0].Timeline[0].ItPerSec = 1
			s.Jobs[0].ProfiledDur = []float64{0, 0, 0}
			s.Jobs[0].Finish = []FinishPoint{{Round: 0, Estimate: 1000}}
		}, 0, "ProfiledDur[0]", ErrInvalid},
		{"timeline", func(s *State) { timeline(s); s.Jobs[0].Timeline[0].ItPerSec = -3 }, 0, "Timeline[0].ItPerSec", ErrInvalid},
		{"timeline past the round", func(s *State) { timeline(s); s.Jobs[0].Timeline[0].Round = 9 }, 0, "Timeline[0].Round", ErrInvalid},
		{"timeline throughput", func(s *State) { timeline(s); s.Jobs[0].Timeline[0].ItPerSec = 2e12 }, 0, "Timeline[0].ItPerSec", ErrInvalid},
		{"profiled durations of another length", func(s *State) { s.Jobs[0].ProfiledDur = []float64{10, 10} }, 0, "ProfiledDur", ErrInvalid},
		{"negative dataset size", func(s *State) { s.Jobs[0].SamplesPerEpoch = -1 }, 0, "SamplesPerEpoch", ErrInvalid},
		{"epoch past the bound", func(s *State) { s.Jobs[0].EpochDur[0] = 2e15 }, 0, "EpochDur[0]", ErrInvalid},
		{"zero epochs", func(s *State) { s.Jobs[0].EpochBS, s.Jobs[0].EpochDur = nil, nil }, 0, "EpochBS", predictor.ErrNoEpochs},
		{"progress past total", func(s *State) { s.Jobs[0].Progress = 4 }, 0, "Progress", predictor.ErrProgress},
		{"unknown batch size", func(s *State) {
			s.Jobs[0].Modes, s.Jobs[0].ModeDur = []int{32}, []float64{10}
		}, 0, "EpochBS[2]", predictor.ErrUnknownBatchSize},
		{"known NaN", func(s *State) { s.Jobs[1].Known.Remaining = math.NaN() }, 1, "Known.Remaining", ErrInvalid},
		{"known progress", func(s *State) { s.Jobs[1].Progress = 6 }, 1, "Progress", market.ErrInvalid},
		{"submission past the bound", func(s *State) { s.Jobs[1].Submit = 1.7e308 }, 1, "Submit", ErrInvalid},
		{"known remaining past the bound", func(s *State) { s.Jobs[1].Known.Remaining = 1e308 }, 1, "Known.Remaining", ErrInvalid},
		{"duplicate id", func(s *State) { s.Jobs[1].ID = 1 }, 1, "ID", market.ErrInvalid},
		{"empty window", func(s *State) { s.Config.Market.Rounds = -1 }, -1, "Config.Market.Rounds", market.ErrInvalid},
		{"finish order", func(s *State) {
			s.Jobs[0].Finish = []FinishPoint{{Round: 2, Estimate: 5}, {Round: 1, Estimate: 6}}
		}, 0, "Finish[1].Round", ErrInvalid},
		{"finish in the future", func(s *State) { s.Jobs[0].Finish = []FinishPoint{{Round: 9, Estimate: 5}} }, 0, "Finish[0].Round", ErrInvalid},
		{"finish estimate not positive", func(s *State) { s.Jobs[0].Finish = []FinishPoint{{Round: 0, Estimate: -5}} }, 0, "Finish[0].Estimate", ErrInvalid},
		{"momentum", func(s *State) { s.Config.Momentum = 2 }, -1, "Config.Momentum", ErrInvalid},
		{"calibration without dataset size", func(s *State) {
			s.Jobs[0].Timeline = []predictor.Sample{{Round: 1, ItPerSec: 3, BatchSize: 32}}
		}, 0, "SamplesPerEpoch", ErrInvalid},
		// Issue 13, item 9: nonsense the planner used to accept.
		{"round of 1e-320 s", func(s *State) { s.Config.Market.RoundSeconds = 1e-320 }, -1, "Config.Market.RoundSeconds", ErrInvalid},
		{"round under a millisecond", func(s *State) { s.Config.Market.RoundSeconds = 1e-4 }, -1, "Config.Market.RoundSeconds", ErrInvalid},
		{"zero epoch", func(s *State) { s.Jobs[0].EpochDur[2] = 0 }, 0, "EpochDur[2]", ErrInvalid},
		{"negative zero epoch", func(s *State) { s.Jobs[0].EpochDur[1] = math.Copysign(0, -1) }, 0, "EpochDur[1]", ErrInvalid},
		{"subnormal epoch", func(s *State) { s.Jobs[0].EpochDur[0] = 1e-320 }, 0, "EpochDur[0]", ErrInvalid},
		{"negative submission", func(s *State) { s.Jobs[0].Submit = -1 }, 0, "Submit", ErrInvalid},
		{"known with a profile", func(s *State) {
			s.Jobs[1].EpochBS, s.Jobs[1].EpochDur = []int{8, 8, 8, 8, 8}, []float64{20, 20, 20, 20, 20}
		}, 1, "EpochDur", ErrInvalid},
		{"known with a timeline", func(s *State) {
			s.Jobs[1].SamplesPerEpoch, s.Jobs[1].Timeline = 10, []predictor.Sample{{Round: 1, ItPerSec: 3, BatchSize: 32}}
		}, 1, "Timeline", ErrInvalid},
		{"modes without their durations", func(s *State) { s.Jobs[0].Modes = []int{32, 64} }, 0, "ModeDur", ErrInvalid},
		{"subnormal mode duration", func(s *State) {
			s.Jobs[0].Modes, s.Jobs[0].ModeDur = []int{32, 64}, []float64{0, 1e-320}
		}, 0, "ModeDur[1]", ErrInvalid},
		{"jobs × rounds", func(s *State) {
			s.Config.Market.Rounds = 1000
			s.Jobs = append(s.Jobs, make([]Job, 4200)...) // refused before any of them is looked at
		}, -1, "Jobs", market.ErrLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			if _, err := Plan(context.Background(), s); err != nil {
				t.Fatalf("base state: %v", err)
			}
			c.edit(s)
			_, err := Plan(context.Background(), s)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Job != c.job || fe.Field != c.field || !errors.Is(err, c.want) {
				t.Fatalf("got %v (%+v), want job %d field %q wrapping %v", err, fe, c.job, c.field, c.want)
			}
			prefix := c.field + ": "
			if c.job >= 0 {
				prefix = fmt.Sprintf("job %d: %s", s.Jobs[c.job].ID, prefix)
				if fe.ID != s.Jobs[c.job].ID {
					t.Errorf("ID %d, want %d", fe.ID, s.Jobs[c.job].ID)
				}
			}
			// The field once: no error of this package wraps another.
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || strings.Count(msg, prefix) != 1 {
				t.Errorf("%q does not start with %q or names the field more than once", msg, prefix)
			}
			if _, perr := Predict(s); perr == nil || perr.Error() != err.Error() {
				t.Fatalf("Predict: %v, Plan: %v (they check the same)", perr, err)
			}
		})
	}
}

// The Scheduler's incremental predictions (one predictor.Tracker and
// Calibrator per job) give exactly the plan that Plan computes from
// scratch on the same state, at every re-plan of a replay in which jobs
// arrive, progress, report throughput (half the profiled rate for some, so
// that calibration rescales, and rescales again through the partial-epoch
// quirk) and leave.
func TestSchedulerMatchesPlan(t *testing.T) {
	const M, N = 16, 30
	tjobs, jobs, cfg := traceJobs(t, N)
	for i := range jobs {
		jobs[i].SamplesPerEpoch = 50000
		if i%4 == 1 {
			jobs[i].Modes = slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(jobs[i].EpochBS)))))
			jobs[i].ModeDur = make([]float64, len(jobs[i].Modes)) // 0: the profile's mean
		}
	}
	s, err := New(M, cfg)
	if err != nil {
		t.Fatal(err)
	}
	delta := market.DefaultRoundSeconds
	progress := make([]int, N)
	rescaled, replans, admitted := 0, 0, 0
	for r := 0; r < 400 && (admitted < N || s.Len() > 0); r++ {
		for admitted < N && tjobs[admitted].Arrival <= float64(r)*delta {
			if err := s.Add(jobs[admitted]); err != nil {
				t.Fatal(err)
			}
			admitted++
		}
		before := s.round
		state := State{GPUs: M, Round: s.round, Reestimate: s.reest, Jobs: cloneJobs(s.jobs), Config: cfg}
		ids, err := s.Schedule(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if pl := s.LastPlan(); pl != nil && pl.Round == before { // re-planned in this round
			want, err := Plan(context.Background(), &state)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, pl); diff != "" {
				t.Fatalf("round %d: the Scheduler's plan differs from Plan's (-Plan +Scheduler):\n%s", r, diff)
			}
			replans++
			for _, jr := range pl.Jobs {
				if jr.Calibration != 1 {
					rescaled++
				}
			}
		}
		ran := slices.Clone(ids)
		for _, id := range ran {
			j := &s.jobs[s.find(id)]
			rate := 50000 / (float64(j.EpochBS[min(j.Progress, len(j.EpochBS)-1)]) * j.ProfiledDur[min(j.Progress, len(j.EpochBS)-1)])
			if id%3 == 0 {
				rate /= 2
			}
			if err := s.Observe(id, predictor.Sample{Round: s.round + 1, ItPerSec: rate, BatchSize: j.EpochBS[min(j.Progress, len(j.EpochBS)-1)]}); err != nil {
				t.Fatal(err)
			}
			progress[id] = min(progress[id]+1+id%3, len(j.EpochBS))
			if progress[id] == len(j.EpochBS) {
				if err := s.Remove(id); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := s.Progress(id, progress[id]); err != nil {
				t.Fatal(err)
			}
		}
		s.EndRound()
	}
	if replans < 20 || rescaled < 10 {
		t.Fatalf("%d re-plans compared, %d calibrations applied: the test does not exercise the trackers", replans, rescaled)
	}
	t.Logf("%d re-plans compared, %d calibrations applied", replans, rescaled)
}

func cloneJobs(jobs []Job) []Job {
	out := slices.Clone(jobs)
	for i := range out {
		j := &out[i]
		j.EpochBS, j.EpochDur, j.ProfiledDur = slices.Clone(j.EpochBS), slices.Clone(j.EpochDur), slices.Clone(j.ProfiledDur)
		j.Timeline, j.Finish, j.Modes = slices.Clone(j.Timeline), slices.Clone(j.Finish), slices.Clone(j.Modes)
	}
	return out
}

// A Scheduler checks a job's profile in the first plan after Add and after
// a plan rescaled its durations, and trusts its own copy otherwise: the
// flag follows the rescale, and a plan after one checks the durations
// again (a rescaled duration out of its domain is refused with its field).
func TestSchedulerChecksProfilesOnce(t *testing.T) {
	s, err := New(4, Config{Market: market.Config{Rounds: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(profiled(1, 10)); err != nil {
		t.Fatal(err)
	}
	schedule := func() error { _, err := s.Schedule(context.Background()); s.EndRound(); return err }
	if err := schedule(); err != nil || !s.trk[0].checked {
		t.Fatalf("first plan: err %v, checked %v", err, s.trk[0].checked)
	}
	rescaled := false
	for r := range 6 {
		// Half the profiled throughput (50000 samples of 32 in 30 s): a
		// plan rescales the durations.
		if err := s.Observe(1, predictor.Sample{Round: r + 1, ItPerSec: 50000 / (32 * 30.0) / 2, BatchSize: 32}); err != nil {
			t.Fatal(err)
		}
		s.dirty = true
		before := slices.Clone(s.jobs[0].EpochDur)
		if err := schedule(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(before, s.jobs[0].EpochDur) {
			rescaled = true
			if s.trk[0].checked {
				t.Fatal("checked after a rescale")
			}
			break
		}
	}
	if !rescaled {
		t.Fatal("no plan rescaled the durations")
	}
	s.jobs[0].EpochDur[2] = 0 // stands for a rescale out of the domain
	s.dirty = true
	if err := schedule(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "EpochDur") {
		t.Fatalf("plan after a rescale: err %v, want the durations checked again", err)
	}
}
