package trace_test

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"

	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/internal/eval/data"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// open reads one of the authors' files from the copy inside the binary.
func open(name string) io.Reader {
	b, err := fs.ReadFile(data.Shockwave, name)
	if err != nil {
		panic(err)
	}
	return bytes.NewReader(b)
}

// From the authors' files (the copy inside the binary, package data) to the
// predictor's inputs: parse the 120-job trace,
// derive one job's profile, and predict its remaining runtime after 30
// epochs, with the authors' (hindsight) modes and with declared ones.
func Example() {
	s32, _ := trace.SetupFor(32)
	jobs, err := trace.Parse(open("traces/" + s32.Trace))
	if err != nil {
		panic(err)
	}
	tab, err := throughput.Load(open(s32.Table))
	if err != nil {
		panic(err)
	}
	cfg, err := trace.LoadConfig(open("configurations/" + s32.Config))
	if err != nil {
		panic(err)
	}
	j := &jobs[1]
	prof, err := trace.Derive(j, tab, trace.DeriveOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("job %d: %s, %d GPU, %s, %d epochs, T_iso = %.0f s\n",
		j.ID, j.JobType, j.GPUs, j.Mode, prof.Epochs(), prof.Isolated())
	fmt.Printf("planner: T = %d rounds, k = %g, lambda = %g\n", cfg.FutureRounds, cfg.K, cfg.Lambda)

	// The authors' predictor works on whole-second durations.
	pj := predictor.Job{Progress: 30, EpochBS: prof.EpochBS, EpochDur: prof.MetadataDurations(nil)}
	var p predictor.Predictor
	est, err := p.Predict(&pj)
	if err != nil {
		panic(err)
	}
	fmt.Printf("hindsight modes: R = %.0f s\n", est.Remaining)

	// Without hindsight: modes from the adaptation rule, durations from the
	// throughput table.
	pj.Modes = trace.DeclaredModes(j.Model, j.Mode, j.BatchSize)
	pj.ModeDur = make([]float64, len(pj.Modes))
	for i, b := range pj.Modes {
		if pj.ModeDur[i], err = trace.EpochDuration(tab, "", j.Model, b, j.GPUs); err != nil {
			panic(err)
		}
	}
	est, err = p.Predict(&pj)
	if err != nil {
		panic(err)
	}
	fmt.Printf("declared modes %v: R = %.0f s\n", pj.Modes, est.Remaining)
	// Output:
	// job 1: ResNet-18 (batch size 32), 1 GPU, accordion, 92 epochs, T_iso = 2996 s
	// planner: T = 20 rounds, k = 0.001, lambda = 12
	// hindsight modes: R = 2028 s
	// declared modes [32 256]: R = 2034 s
}
