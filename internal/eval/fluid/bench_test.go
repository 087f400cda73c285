package fluid

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkRates(b *testing.B) {
	for _, size := range []struct{ links, flows int }{{48, 16}, {48, 64}, {400, 256}} {
		b.Run(fmt.Sprintf("links=%d/flows=%d", size.links, size.flows), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(7, 8))
			capacity, flows := randomProblem(rng, size.links, size.flows)
			var s Solver
			r, _ := s.Rates(nil, capacity, flows)
			b.ReportAllocs()
			for b.Loop() {
				r, _ = s.Rates(r, capacity, flows)
			}
		})
	}
}
