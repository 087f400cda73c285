package bench_test

import (
	"context"
	"fmt"

	"github.com/orrery/orrery/internal/bench"
)

func ExampleSummarize() {
	s := bench.Summarize([]float64{3e-6, 1e-6, 2e-6, 9e-6, 2e-6})
	fmt.Println(s.N, bench.Spread(s))
	// Output: 5 2.00 µs (1.00–9.00 µs)
}

// Two cases measured in interleaved rounds; the gate is the median of the
// per-round ratios, not a time.
func ExampleInterleave() {
	sum := 0
	work := func(n int) func() error {
		return func() error {
			for i := range n {
				sum += i
			}
			return nil
		}
	}
	cases := []bench.Case{{Name: "short", Op: work(1000)}, {Name: "long", Op: work(4000)}}
	out, err := bench.Interleave(context.Background(), cases, bench.Options{Rounds: 5})
	if err != nil {
		panic(err)
	}
	r := bench.Summarize(bench.Ratios(out[1], out[0]))
	fmt.Println(len(out[0]), r.Median > 2)
	// Output: 5 true
}
