package market

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// Benchmark and stress instances built from the authors' traces: every job
// of the trace is active, its progress is drawn uniformly (seeded) in
// [0, 0.9·E), R_j, D̄_j and the elapsed time come from the faithful
// predictor on the derived profile, and FT*_j is the authors' uniform-share
// estimate from the job's arrival. The round index is the first round after
// the last arrival. Larger instances than a trace repeat its jobs with new
// IDs and arrivals shifted by the trace's span.

type traceSpec struct {
	trace, table, config string
}

var specs = map[int]traceSpec{
	14:  {"120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "tacc_throughputs.json", "tacc_32gpus.json"},
	16:  {"120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "tacc_throughputs.json", "tacc_32gpus.json"},
	32:  {"120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "tacc_throughputs.json", "tacc_32gpus.json"},
	128: {"460_0.2_5_100_10_1_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "wisr_throughputs.json", "scale_128gpus.json"},
	256: {"900_0.2_5_1000_5_15_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "wisr_throughputs.json", "scale_256gpus.json"},
	512: {"900_0.2_5_1000_5_15_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "wisr_throughputs.json", "scale_256gpus.json"},
}

type loaded struct {
	jobs  []trace.Job
	profs []trace.Profile
	cfg   trace.Config
}

var (
	loadMu    sync.Mutex
	loadCache = map[traceSpec]*loaded{}
)

func testdata(name ...string) string {
	return filepath.Join(append([]string{"..", "..", "..", "internal", "eval", "data", "shockwave"}, name...)...)
}

func load(tb testing.TB, s traceSpec) *loaded {
	loadMu.Lock()
	defer loadMu.Unlock()
	if l := loadCache[s]; l != nil {
		return l
	}
	jobs, err := trace.ParseFile(testdata("traces", s.trace))
	if err != nil {
		tb.Fatalf("trace: %v", err)
	}
	tab, err := throughput.LoadFile(testdata(s.table))
	if err != nil {
		tb.Fatalf("throughput: %v", err)
	}
	profs, err := trace.DeriveAll(jobs, tab, trace.DeriveOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := trace.LoadConfigFile(testdata("configurations", s.config))
	if err != nil {
		tb.Fatal(err)
	}
	l := &loaded{jobs, profs, cfg}
	loadCache[s] = l
	return l
}

// traceProblem builds an N-job instance on M GPUs. fairScale multiplies
// every FT*_j (values above 1 make the finish-time-fair path feasible).
func traceProblem(tb testing.TB, M, N int, seed uint64, fairScale float64) *Problem {
	return traceInstance(tb, specs[M], M, N, 0, 0, seed, fairScale)
}

// traceInstance is traceProblem on the setup s with M GPUs, the trace's
// jobs from offset on, and T rounds (0: the configuration's), as
// bench/shockwave's Loaded.Problem builds it.
func traceInstance(tb testing.TB, s traceSpec, M, N, offset, T int, seed uint64, fairScale float64) *Problem {
	l := load(tb, s)
	rng := rand.New(rand.NewPCG(seed, uint64(M)))
	span := 0.0
	for _, j := range l.jobs {
		span = max(span, j.Arrival)
	}
	if T == 0 {
		T = l.cfg.FutureRounds
	}
	p := &Problem{GPUs: M, Config: Config{
		Rounds: T, K: l.cfg.K, Lambda: l.cfg.Lambda, RhoMax: l.cfg.RhoMax, Breakpoints: l.cfg.LogBases,
	}}
	var pred predictor.Predictor
	lastArrival := 0.0
	for i := 0; i < N; i++ {
		k := (offset + i) % len(l.jobs)
		tj, prof := &l.jobs[k], &l.profs[k]
		arrival := tj.Arrival + float64((offset+i)/len(l.jobs))*span
		lastArrival = max(lastArrival, arrival)
		E := prof.Epochs()
		F := int(rng.Float64() * 0.9 * float64(E))
		dur := prof.MetadataDurations(nil)
		est, err := pred.Predict(&predictor.Job{Epochs: E, Progress: F, EpochBS: prof.EpochBS, EpochDur: dur})
		if err != nil {
			tb.Fatal(err)
		}
		ft, err := est.Finish(arrival, M, N)
		if err != nil {
			tb.Fatal(err)
		}
		p.Jobs = append(p.Jobs, Job{ID: i, GPUs: tj.GPUs, Epochs: E, Progress: F,
			MeanEpoch: est.MeanEpoch, Remaining: est.Remaining, FairFinish: ft * fairScale})
	}
	p.Round = int(math.Ceil(lastArrival / DefaultRoundSeconds))
	return p
}
