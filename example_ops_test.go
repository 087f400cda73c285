package orrery_test

import (
	"context"
	"fmt"
	"math"

	"github.com/orrery/orrery"
)

// Three jobs on 2 GPUs, planned over a window of 4 two-minute rounds: the
// plan says which jobs run in each round. Optional configuration fields
// are pointers, so absent means the authors' default; new(4) (Go 1.26)
// writes one inline.
func ExamplePlan() {
	job := func(id int, epochS float64) orrery.ShockwaveJob {
		return orrery.ShockwaveJob{ID: id, GPUs: 1, EpochBS: []int{32, 32, 64}, EpochDurS: []float64{epochS, epochS, epochS / 2}}
	}
	resp, err := orrery.Plan(context.Background(), orrery.ShockwavePlanRequest{
		GPUs:   2,
		Config: orrery.ShockwaveConfig{Rounds: new(4)},
		Jobs:   []orrery.ShockwaveJob{job(1, 120), job(2, 300), job(3, 60)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, resp.Window, "rounds:", resp.Rounds)
	for _, j := range resp.Jobs {
		fmt.Printf("job %d: %d rounds, %.0f s remaining\n", j.ID, j.Rounds, j.RemainingS)
	}
	// Output:
	// optimal 4 rounds: [[2 3] [1 2] [1 2] [1 2]]
	// job 1: 3 rounds, 172 s remaining
	// job 2: 4 rounds, 431 s remaining
	// job 3: 1 rounds, 86 s remaining
}

// The prediction of a job's remaining runtime after 1 of its 3 epochs
// (100, 100 and 50 s; 150 s remain), under each estimator: the authors'
// formula (the default), the Dirichlet posterior's mean, and the oracle
// that reads the whole profile. With only three epochs the authors' prior,
// as strong as the whole job, pulls its estimate far down.
func ExamplePredict() {
	for _, est := range []string{"faithful", "posterior", "oracle"} {
		resp, err := orrery.Predict(context.Background(), orrery.ShockwavePredictRequest{
			GPUs:   1,
			Config: orrery.ShockwaveConfig{Estimator: est},
			Jobs:   []orrery.ShockwaveJob{{ID: 1, GPUs: 1, Progress: 1, EpochBS: []int{32, 32, 64}, EpochDurS: []float64{100, 100, 50}}},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		p := resp.Jobs[0]
		fmt.Printf("%s: %.0f s remaining (std %.0f s)\n", est, p.RemainingS, p.RemainingStdS)
	}
	// Output:
	// faithful: 55 s remaining (std 23 s)
	// posterior: 185 s remaining (std 23 s)
	// oracle: 150 s remaining (std 23 s)
}

// A job's iteration found in a bandwidth record: 40 Gbps for 30 ms of every
// 100 ms, read every 10 ms for two seconds.
func ExampleProfile() {
	gbps := make([]float64, 200)
	for i := range gbps {
		if i%10 < 3 {
			gbps[i] = 40
		}
	}
	resp, err := orrery.Profile(context.Background(), orrery.ProfileRequest{
		Job: orrery.JobSpec{ID: "vgg", Series: &orrery.SeriesSpec{IntervalMs: 10, Gbps: gbps}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("period %.0f ms, peak %.0f Gbps, mean %.0f Gbps\n", resp.PeriodMs, resp.PeakGbps, math.Round(resp.MeanGbps))
	// Output: period 100 ms, peak 40 Gbps, mean 12 Gbps
}

// Call runs an operation on JSON bytes: what a host without Go types sends.
func ExampleCall() {
	out, err := orrery.Call(context.Background(), "cassini.link",
		[]byte(`{"capacity_gbps": 50, "jobs": [
			{"id": "a", "phases": [{"ms": 30, "gbps": 40}, {"ms": 42}]},
			{"id": "b", "phases": [{"ms": 30, "gbps": 40}, {"ms": 42}]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"score":1,"unshifted_score":0.75,"bound":1,"status":"optimal","mode":"exact","excess_gbit":0,"perimeter_ms":72,"points":72,"shifts_ms":{"a":0,"b":30},"rotations_deg":{"a":0,"b":150},"periods_ms":{"a":72,"b":72},"comm_offsets_ms":{"a":0,"b":0},"centred_shifts_ms":{"a":0,"b":36},"shift_room_ms":{"a":{"early_ms":6,"late_ms":6},"b":{"early_ms":6,"late_ms":6}},"evaluations":5184}
}

// Handle runs one envelope and answers one; a refusal is an envelope too,
// naming the field.
func ExampleHandle() {
	env := []byte(`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 30, "gbps": -1}]}]}}`)
	fmt.Println(string(orrery.Handle(context.Background(), env)))
	// Output:
	// {"version":1,"op":"cassini.link","error":{"code":"invalid_argument","field":"jobs[0].phases[0].gbps","message":"phase 0: bandwidth is negative, NaN or infinite"}}
}

// A Session keeps the stateful operations' objects by handle: a scheduler
// is opened, fed and asked for a round through JSON alone.
func ExampleSession() {
	ctx := context.Background()
	s := orrery.NewSession()
	defer s.Close()
	for _, c := range []struct{ op, req string }{
		{"shockwave.scheduler.new", `{"gpus": 1}`},
		{"shockwave.scheduler.add", `{"handle": 1, "job": {"id": "train-a", "gpus": 1, "submit_s": 0, "progress": 0, "epoch_bs": [32, 32], "epoch_dur_s": [60, 60]}}`},
		{"shockwave.scheduler.schedule", `{"handle": 1}`},
	} {
		out, err := s.Call(ctx, c.op, []byte(c.req))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", c.op, out)
	}
	// Output:
	// shockwave.scheduler.new: {"handle":1}
	// shockwave.scheduler.add: {"round":0,"active":1}
	// shockwave.scheduler.schedule: {"round":0,"jobs":["train-a"]}
}
