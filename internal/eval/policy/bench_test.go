package policy

import (
	"context"
	"testing"

	"github.com/orrery/orrery/internal/eval/sim"
)

// BenchmarkReplay120 replays the authors' 120-job trace on 32 GPUs under
// each policy (one op = one whole replay; the authors' simulator takes
// about ten minutes for Shockwave, under a minute for the others).
func BenchmarkReplay120(b *testing.B) {
	w := authorsWorkload(b, trace120, "tacc_throughputs.json", 0)
	cfg := authorsConfig(b, "tacc_32gpus.json")
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, _ := New(name, cfg)
				if _, err := sim.Run(context.Background(), w, p, sim.Options{GPUs: 32}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

const trace900 = "900_0.2_5_1000_5_15_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"

// BenchmarkReplay900 replays the authors' 900-job trace on 256 GPUs under
// Shockwave (one op = one whole replay), the largest of their setups, with
// the default rescale completion and with the authors' rescale drop.
func BenchmarkReplay900(b *testing.B) {
	w := authorsWorkload(b, trace900, "wisr_throughputs.json", 0)
	cfg := authorsConfig(b, "scale_256gpus.json")
	cfg.GPUs = 256
	for _, drop := range []bool{false, true} {
		name := "default"
		if drop {
			name = "authors-rescale-drop"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, _ := New("shockwave", cfg)
				if _, err := sim.Run(context.Background(), w, p, sim.Options{GPUs: 256, AuthorsRescaleDrop: drop}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
