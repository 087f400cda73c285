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
