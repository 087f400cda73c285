package predictor

import (
	"math/rand/v2"
	"testing"
)

// benchJobs is a synthetic 900-job workload shaped like the authors'
// 900-job trace (mean 1 222 epochs, up to about 21 000; 1 to 5 modes).
func benchJobs(n int) []Job {
	rng := rand.New(rand.NewPCG(11, 13))
	jobs := make([]Job, n)
	for i := range jobs {
		E := 20 + int(rng.ExpFloat64()*1200)
		E = min(E, 21000)
		j := randomJobE(rng, E)
		j.Progress = rng.IntN(E)
		jobs[i] = j
	}
	return jobs
}

func randomJobE(rng *rand.Rand, E int) Job {
	sizes := []int{16, 32, 64, 128, 256}
	modes := 1 + rng.IntN(len(sizes))
	bs := make([]int, 0, E)
	d := make([]float64, 0, E)
	for k := 0; len(bs) < E; k++ {
		b := sizes[min(k, modes-1)]
		dur := float64(10 + rng.IntN(90))
		for range min(E/modes+1, E-len(bs)) {
			bs = append(bs, b)
			d = append(d, dur)
		}
	}
	return Job{EpochBS: bs, EpochDur: d}
}

// BenchmarkPredict/one: one 1 222-epoch job with 4 modes, half done.
// BenchmarkPredict/900: all 900 jobs of a trace-shaped workload, as the
// planner does on every re-plan. BenchmarkPredict/reference-900: the same
// jobs through a step-by-step transcription of the authors' function (maps
// and loops, allocating), the baseline for the ratio.
func BenchmarkPredict(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	one := randomJobE(rng, 1222)
	one.Progress = 611
	jobs := benchJobs(900)
	b.Run("one", func(b *testing.B) {
		var p Predictor
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Predict(&one); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, est := range []Estimator{Faithful, Posterior} {
		b.Run("900/"+est.String(), func(b *testing.B) {
			p := Predictor{Options: Options{Estimator: est}}
			b.ReportAllocs()
			for b.Loop() {
				for i := range jobs {
					if _, err := p.Predict(&jobs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.Run("900/declared", func(b *testing.B) {
		decl := make([]Job, len(jobs))
		for i, j := range jobs {
			F := j.Progress
			decl[i] = Job{Epochs: len(j.EpochBS), Progress: F, EpochBS: j.EpochBS[:F+1], EpochDur: j.EpochDur[:F+1],
				Modes: []int{16, 32, 64, 128, 256}, ModeDur: []float64{50, 45, 40, 35, 30}}
		}
		var p Predictor
		b.ReportAllocs()
		for b.Loop() {
			for i := range decl {
				if _, err := p.Predict(&decl[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("reference-900", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, j := range jobs {
				_ = refFaithful(len(j.EpochBS), j.Progress, j.EpochBS, j.EpochDur)
			}
		}
	})
}

func BenchmarkFinishTarget(b *testing.B) {
	var s FinishSeries
	for r := range 100 {
		_ = s.Add(3*r, float64(1000+r))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Target(400); err != nil {
			b.Fatal(err)
		}
	}
}
