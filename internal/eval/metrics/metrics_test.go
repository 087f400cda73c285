package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// A hand-computed run: M = 2 GPUs, N_trace = 4, so the static contention
// factor is 2.
//
//	job  arrival  completion  JCT  T_iso  ρ = JCT/(2·T_iso)  mean active  ρ^Themis
//	0    0        100         100  40     1.25               3 (1.5)      100/60 = 1.667
//	1    10       210         200  100    1.0                2 (1)        200/100 = 2
//	2    20       60          40   20     1.0                4 (2)        40/40 = 1
//	3    50       250         200  93     1.0753             1 (1)        200/93 = 2.1505
//
// Makespan 250, average JCT 135, busy GPU-seconds 80+200+40+120 = 440 out
// of 2·250: utilization 0.88.
func handRun() []Job {
	return []Job{
		{ID: 0, Arrival: 0, Completion: 100, Isolated: 40, GPUSeconds: 80, MeanActive: 3},
		{ID: 1, Arrival: 10, Completion: 210, Isolated: 100, GPUSeconds: 200, MeanActive: 2},
		{ID: 2, Arrival: 20, Completion: 60, Isolated: 20, GPUSeconds: 40, MeanActive: 4},
		{ID: 3, Arrival: 50, Completion: 250, Isolated: 93, GPUSeconds: 120, MeanActive: 1},
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

func TestHandComputed(t *testing.T) {
	jobs := handRun()
	c := Cluster{GPUs: 2}
	if v, err := Makespan(jobs); err != nil || v != 250 {
		t.Errorf("makespan %v %v", v, err)
	}
	if v, err := AvgJCT(jobs); err != nil || v != 135 {
		t.Errorf("avg JCT %v %v", v, err)
	}
	if v, err := JCT(jobs[2]); err != nil || v != 40 {
		t.Errorf("JCT %v %v", v, err)
	}
	rhos, err := FTFs(nil, jobs, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.25, 1, 1, 200.0 / 186}
	for i := range want {
		if !near(rhos[i], want[i]) {
			t.Errorf("ρ_%d = %v, want %v", i, rhos[i], want[i])
		}
		if r, err := FTF(jobs[i], 4, 2); err != nil || r != rhos[i] {
			t.Errorf("FTF(%d) = %v %v", i, r, err)
		}
	}
	themis := []float64{100.0 / 60, 2, 1, 200.0 / 93}
	for i := range themis {
		if r, err := FTFThemis(jobs[i], 2); err != nil || !near(r, themis[i]) {
			t.Errorf("ρ^Themis_%d = %v %v, want %v", i, r, err, themis[i])
		}
	}
	if f := UnfairFraction(rhos, UnfairThreshold); f != 0.5 {
		t.Errorf("unfair > 1.05: %v", f)
	}
	if f := UnfairFraction(rhos, UnfairThresholdAlt); f != 0.25 {
		t.Errorf("unfair > 1.1: %v", f)
	}
	if u, err := Utilization(jobs, 2); err != nil || !near(u, 0.88) {
		t.Errorf("utilization %v %v", u, err)
	}
	s, err := Summarize(jobs, c)
	if err != nil {
		t.Fatal(err)
	}
	ws := Summary{Jobs: 4, Makespan: 250, AvgJCT: 135, WorstFTF: 1.25, Unfair105: 0.5, Unfair110: 0.25,
		WorstFTFThemis: 200.0 / 93, HasThemis: true, Utilization: 0.88}
	if s.Jobs != ws.Jobs || s.Makespan != ws.Makespan || s.AvgJCT != ws.AvgJCT || s.WorstFTF != ws.WorstFTF ||
		s.Unfair105 != ws.Unfair105 || s.Unfair110 != ws.Unfair110 || !near(s.WorstFTFThemis, ws.WorstFTFThemis) ||
		!s.HasThemis || !near(s.Utilization, ws.Utilization) {
		t.Errorf("summary\n got %+v\nwant %+v", s, ws)
	}

	// N_trace below M: the contention factor is clamped to 1, ρ = JCT/T_iso.
	if r, err := FTF(jobs[0], 1, 2); err != nil || r != 2.5 {
		t.Errorf("clamped ρ = %v %v", r, err)
	}
	// TraceJobs overrides the record count: 8 jobs on 2 GPUs halves ρ.
	s8, _ := Summarize(jobs, Cluster{GPUs: 2, TraceJobs: 8})
	if s8.WorstFTF != 0.625 || s8.Unfair105 != 0 {
		t.Errorf("N_trace = 8: %+v", s8)
	}
	// Without MeanActive the Themis figure is absent.
	jobs[1].MeanActive = 0
	if s, _ := Summarize(jobs, c); s.HasThemis || s.WorstFTFThemis != 0 {
		t.Errorf("partial Themis: %+v", s)
	}
	if _, err := FTFThemis(jobs[1], 2); !errors.Is(err, ErrInvalid) {
		t.Errorf("Themis without MeanActive: %v", err)
	}
}

func TestErrors(t *testing.T) {
	good := handRun()
	for _, c := range []struct {
		name  string
		edit  func(*Job)
		field string
	}{
		{"early completion", func(j *Job) { j.Completion = j.Arrival - 1 }, "Completion"},
		{"NaN arrival", func(j *Job) { j.Arrival = math.NaN() }, "Arrival"},
		{"inf completion", func(j *Job) { j.Completion = math.Inf(1) }, "Completion"},
		{"zero T_iso", func(j *Job) { j.Isolated = 0 }, "Isolated"},
		{"NaN T_iso", func(j *Job) { j.Isolated = math.NaN() }, "Isolated"},
		{"negative busy", func(j *Job) { j.GPUSeconds = -1 }, "GPUSeconds"},
		{"negative active", func(j *Job) { j.MeanActive = -1 }, "MeanActive"},
	} {
		jobs := handRun()
		c.edit(&jobs[2])
		_, err := Summarize(jobs, Cluster{GPUs: 2})
		var je *JobError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &je) || je.Index != 2 || je.ID != 2 || je.Field != c.field {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "job 2 (ID 2) "+c.field) {
			t.Errorf("%s: message %q", c.name, err)
		}
	}
	if _, err := Summarize(nil, Cluster{GPUs: 2}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	if _, err := Summarize(good, Cluster{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no GPUs: %v", err)
	}
	if _, err := Summarize(good, Cluster{GPUs: 2, TraceJobs: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative N: %v", err)
	}
	if _, err := FTF(good[0], 0, 2); !errors.Is(err, ErrInvalid) {
		t.Errorf("FTF N = 0: %v", err)
	}
	// More busy GPU-seconds than the cluster had.
	jobs := handRun()
	jobs[0].GPUSeconds = 1000
	if _, err := Utilization(jobs, 2); !errors.Is(err, ErrInvalid) {
		t.Errorf("utilization > 1: %v", err)
	}
}

func TestMeanActive(t *testing.T) {
	counts := []int{4, 6, 5, 3}
	for _, c := range []struct {
		start, end int
		want       float64
	}{{0, 4, 4.5}, {1, 3, 5.5}, {2, 2, 5}, {3, 4, 3}} {
		if v, err := MeanActive(counts, c.start, c.end); err != nil || v != c.want {
			t.Errorf("[%d,%d) = %v %v, want %v", c.start, c.end, v, err, c.want)
		}
	}
	for _, r := range [][2]int{{-1, 2}, {3, 2}, {0, 5}, {4, 4}} {
		if _, err := MeanActive(counts, r[0], r[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("[%d,%d): %v", r[0], r[1], err)
		}
	}
	if _, err := MeanActive([]int{1, -1}, 0, 2); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative count: %v", err)
	}
}

func TestZeroMakespan(t *testing.T) {
	jobs := []Job{{Arrival: 5, Completion: 5, Isolated: 1}}
	s, err := Summarize(jobs, Cluster{GPUs: 1})
	if err != nil || s.Makespan != 0 || s.Utilization != 0 || s.WorstFTF != 0 {
		t.Errorf("%+v %v", s, err)
	}
}

func BenchmarkSummarize900(b *testing.B) {
	jobs := make([]Job, 900)
	for i := range jobs {
		jobs[i] = Job{ID: i, Arrival: float64(5 * i), Completion: float64(5*i + 3600 + i%97), Isolated: 1800, GPUSeconds: 1800, MeanActive: 300}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summarize(jobs, Cluster{GPUs: 256}); err != nil {
			b.Fatal(err)
		}
	}
}
