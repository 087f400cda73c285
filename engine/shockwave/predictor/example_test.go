package predictor_test

import (
	"fmt"

	"github.com/orrery/orrery/engine/shockwave/predictor"
)

// What the planner needs per job and per re-plan: R_j with its uncertainty,
// D̄_j, and FT*_j, from the job's profile, its progress F_j, its submit time,
// the cluster size M and the number of active jobs N.
func Example() {
	// A 100-epoch job that trains at batch size 32 (36 s per epoch) and
	// switches to 256 (31 s per epoch) at epoch 60. In practice the profile
	// comes from trace.Derive.
	bs := make([]int, 100)
	dur := make([]float64, 100)
	for e := range bs {
		bs[e], dur[e] = 32, 36
		if e >= 60 {
			bs[e], dur[e] = 256, 31
		}
	}
	var p predictor.Predictor // zero value: the authors' predictor
	job := predictor.Job{Progress: 9, EpochBS: bs, EpochDur: dur}
	est, err := p.Predict(&job)
	if err != nil {
		panic(err)
	}
	fmt.Printf("R = %.1f s (posterior %.1f ± %.1f s), D̄ = %.0f s\n",
		est.Remaining, est.Mean, est.Std(), est.MeanEpoch)

	// FT*: on every re-plan after an arrival or completion, record the
	// job's uniform-share finish estimate; read the target when planning.
	const submit, gpus = 600.0, 32
	var ft predictor.FinishSeries
	for _, r := range []struct{ round, jobs int }{{5, 40}, {9, 64}} {
		e, err := est.Finish(submit, gpus, r.jobs)
		if err != nil {
			panic(err)
		}
		if err := ft.Add(r.round, e); err != nil {
			panic(err)
		}
	}
	target, err := ft.Target(13)
	if err != nil {
		panic(err)
	}
	fmt.Printf("FT* at round 13 = %.0f s\n", target)
	// Output:
	// R = 3012.7 s (posterior 3071.5 ± 31.7 s), D̄ = 36 s
	// FT* at round 13 = 6147 s
}

// Declared modes avoid the authors' hindsight: the profile need only cover
// the epochs seen so far, and the candidate batch sizes and their epoch
// durations come from the job's adaptation rule and the throughput table.
func Example_declaredModes() {
	seen := []int{32, 32, 32, 32, 32}
	dur := []float64{36, 36, 36, 36, 36}
	job := predictor.Job{
		Epochs:   100,
		Progress: 4,
		EpochBS:  seen,
		EpochDur: dur,
		Modes:    []int{32, 64, 128, 256},
		ModeDur:  []float64{36.4, 36.5, 33.2, 31.0},
	}
	p := predictor.Predictor{Options: predictor.Options{Estimator: predictor.Posterior}}
	est, err := p.Predict(&job)
	if err != nil {
		panic(err)
	}
	fmt.Printf("R = %.0f s ± %.0f s\n", est.Remaining, est.Std())
	// Output:
	// R = 3302 s ± 31 s
}
