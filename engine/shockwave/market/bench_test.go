package market

import (
	"context"
	"fmt"
	"testing"
)

var benchSizes = []struct{ N, M int }{{120, 32}, {460, 128}, {900, 256}, {2000, 512}}

// BenchmarkSolve plans one round for the trace-built instances: "relaxed"
// uses the authors' FT* (the fair program is infeasible, as it mostly is in
// their runs), "fair" scales FT* so the finish-time-fair path is taken.
func BenchmarkSolve(b *testing.B) {
	for _, sz := range benchSizes {
		for _, path := range []struct {
			name  string
			scale float64
		}{{"relaxed", 1}, {"fair", 4}} {
			b.Run(fmt.Sprintf("%dx%d/%s", sz.N, sz.M, path.name), func(b *testing.B) {
				p := traceProblem(b, sz.M, sz.N, 1, path.scale)
				ws := NewWorkspace()
				sol, err := ws.Solve(context.Background(), p)
				if err != nil {
					b.Fatal(err)
				}
				nodes := sol.Nodes
				b.ReportAllocs()
				for b.Loop() {
					ws.Solve(context.Background(), p)
				}
				b.ReportMetric(float64(nodes), "nodes") // after the loop, which resets the metrics
			})
		}
	}
}
