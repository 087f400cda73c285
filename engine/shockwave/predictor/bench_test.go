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
	// The planner's steady state: one Tracker per job, each advanced to a
	// new progress every re-plan (the Predict of /900 does the same work
	// from scratch).
	b.Run("900/tracker", func(b *testing.B) {
		trk := make([]Tracker, len(jobs))
		for i := range jobs {
			if err := trk[i].Reset(&jobs[i], Options{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		step := 0
		for b.Loop() {
			step++
			for i := range jobs {
				F := (jobs[i].Progress + step) % (len(jobs[i].EpochBS) + 1)
				if _, err := trk[i].Estimate(F); err != nil {
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

// BenchmarkCalibrate: one job's calibration check after each new sample, as
// a planner does: Calibrate over the whole timeline and profile (/full)
// against the incremental Calibrator (/incremental), 200 samples on a
// 1 222-epoch profile per op.
func BenchmarkCalibrate(b *testing.B) {
	rng := rand.New(rand.NewPCG(21, 22))
	pre := randomJobE(rng, 1222).EpochDur
	samples := make([]Sample, 200)
	for i := range samples {
		samples[i] = Sample{Round: 2*i + 1, ItPerSec: 20 + rng.Float64(), BatchSize: 64}
	}
	cur := make([]float64, len(pre))
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(cur, pre)
			for n := 1; n <= len(samples); n++ {
				if _, _, err := Calibrate(cur, pre, 50000, samples[:n], CalibrateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("incremental", func(b *testing.B) {
		var c Calibrator
		b.ReportAllocs()
		for b.Loop() {
			copy(cur, pre)
			if err := c.Reset(pre, 50000, CalibrateOptions{}); err != nil {
				b.Fatal(err)
			}
			for _, s := range samples {
				if err := c.Observe(s); err != nil {
					b.Fatal(err)
				}
				f, ok, err := c.Factor(cur)
				if err != nil {
					b.Fatal(err)
				}
				if ok {
					for e := range cur {
						cur[e] = pre[e] * f
					}
				}
			}
		}
	})
}
