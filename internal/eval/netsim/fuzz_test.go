package netsim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// FuzzRun simulates small arbitrary traces: a simulation either fails with
// a typed error or completes every job with its iterations.
func FuzzRun(f *testing.F) {
	f.Add([]byte{2, 1, 3, 2, 0, 5, 1, 0, 2, 1, 3, 2, 9})
	f.Add([]byte{0, 12, 4, 0, 1, 0, 0})
	f.Add([]byte{3, 9, 255, 3, 7, 2, 4, 255})
	f.Add([]byte{129, 1, 3, 2, 0, 5, 4, 9, 2, 1, 3, 2, 9}) // DCQCN
	f.Add([]byte{130, 2, 7, 1, 0, 5, 4, 4, 2, 1, 3, 2, 9}) // MLTCP
	models := workload.Models()
	tp := topology.Paper()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		cfg := Config{Topology: tp, Policy: Policy(data[0] % 5), Scheduler: Scheduler(data[1] % 4), Seed: uint64(data[1]), Pinned: map[int][]int{}}
		switch data[1] % 3 {
		case 0:
			cfg.Cassini.Hold, cfg.Cassini.MinScore = HoldScore, -1
		case 1:
			cfg.Cassini.Hold, cfg.Cassini.Rank, cfg.Lease = HoldAll, RankScore, time.Duration(data[0])*time.Second
		}
		if data[0] >= 128 { // DCQCN or MLTCP
			cfg.Transport = Transport(1 + data[0]%2)
		}
		data = data[2:]
		for len(data) >= 4 && len(cfg.Jobs) < 6 {
			m := models[int(data[0])%len(models)]
			bs := m.BatchChoices()
			j := workload.Job{ID: len(cfg.Jobs), Model: m.Name, GPUs: int(data[1]%26) + 1, Batch: bs[int(data[2])%len(bs)],
				Iterations: int(data[3]%4) + 1, Arrival: time.Duration(data[2]) * 50 * time.Millisecond}
			if data[3] == 255 {
				j.Batch = 1 // invalid for most models
			}
			if data[0] >= 200 && j.GPUs >= 2 {
				cfg.Pinned[j.ID] = []int{int(data[1]) % 24, int(data[2]) % 24}
			}
			cfg.Jobs = append(cfg.Jobs, j)
			data = data[4:]
		}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, workload.ErrInvalid) && !errors.Is(err, workload.ErrUnknownModel) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if r.Status != Complete {
			t.Fatalf("status %v", r.Status)
		}
		for i, j := range r.Jobs {
			if j.Iterations != cfg.Jobs[j.ID].Iterations || j.End < j.Start {
				t.Fatalf("job %d: %+v", i, j)
			}
		}
	})
}
