package round

import (
	"context"
	"fmt"
	"testing"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// BenchmarkPlan times a whole re-plan from profiles: calibration-free
// prediction for every job (Dirichlet posterior over its profile), FT*
// re-estimation and the market solve, on the authors' traces with every job
// active and seeded progress.
func BenchmarkPlan(b *testing.B) {
	for _, c := range []struct {
		gpus            int
		trace, tab, cfg string
	}{
		{32, "120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "tacc_throughputs.json", "tacc_32gpus.json"},
		{256, "900_0.2_5_1000_5_15_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace", "wisr_throughputs.json", "scale_256gpus.json"},
	} {
		tj, err := trace.ParseFile(testdata("traces", c.trace))
		if err != nil {
			b.Fatal(err)
		}
		tab, err := throughput.LoadFile(testdata(c.tab))
		if err != nil {
			b.Fatal(err)
		}
		tc, err := trace.LoadConfigFile(testdata("configurations", c.cfg))
		if err != nil {
			b.Fatal(err)
		}
		st := &State{GPUs: c.gpus, Reestimate: true, Config: Config{Market: market.Config{Rounds: tc.FutureRounds,
			K: tc.K, Lambda: tc.Lambda, RhoMax: tc.RhoMax, Breakpoints: tc.LogBases}}}
		last := 0.0
		for i := range tj {
			p, err := trace.Derive(&tj[i], tab, trace.DeriveOptions{})
			if err != nil {
				b.Fatal(err)
			}
			st.Jobs = append(st.Jobs, Job{ID: tj[i].ID, GPUs: tj[i].GPUs, Submit: tj[i].Arrival,
				Progress: (i * 37) % (p.Epochs()*9/10 + 1), EpochBS: p.EpochBS, EpochDur: p.MetadataDurations(nil)})
			last = max(last, tj[i].Arrival)
		}
		st.Round = int(last/120) + 1
		b.Run(fmt.Sprintf("%dx%d", len(st.Jobs), c.gpus), func(b *testing.B) {
			var ws Workspace
			if _, err := ws.Plan(context.Background(), st); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				ws.Plan(context.Background(), st)
			}
		})
	}
}
