package agent_test

import (
	"context"
	"fmt"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
)

// virtual is a clock whose Sleep advances time instantly.
type virtual struct{ now time.Time }

func (v *virtual) Now() time.Time { return v.now }
func (v *virtual) Sleep(_ context.Context, d time.Duration) error {
	v.now = v.now.Add(d)
	return nil
}

// Pad mode: a training loop with a 150 ms time shift on a 255 ms period (the
// VGG16 of the paper's Fig. 3, shifted as in its Table 2). Its iterations
// take 250 ms until a straggler makes one take 270 ms: the next iteration is
// 15 ms late, more than 5% of 255 ms, so it waits for the following slot.
func Example_pad() {
	r := time.Date(2024, 4, 16, 9, 0, 0, 0, time.UTC)
	clk := &virtual{now: r}
	a, err := agent.New(agent.Plan{Reference: r, Shift: 150 * time.Millisecond, Period: 255 * time.Millisecond,
		CommOffset: 141 * time.Millisecond}, agent.Options{Mode: agent.Pad, Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for i, work := range []time.Duration{250, 250, 270, 250} {
		d, _ := a.Wait(ctx)
		fmt.Printf("iteration %d starts at %v (waited %v, adjusted %v)\n", i, clk.now.Sub(r), d.Delay, d.Adjusted)
		clk.now = clk.now.Add(work * time.Millisecond)
	}
	s := a.Stats()
	fmt.Printf("%d adjustment, %v padding\n", s.Adjustments, s.Padding)
	// Output:
	// iteration 0 starts at 150ms (waited 150ms, adjusted false)
	// iteration 1 starts at 405ms (waited 5ms, adjusted false)
	// iteration 2 starts at 660ms (waited 5ms, adjusted false)
	// iteration 3 starts at 1.17s (waited 240ms, adjusted true)
	// 1 adjustment, 160ms padding
}

// Elastic mode: two jobs of a 100 ms period interleaved half a period apart
// share a group clock. Job 1 runs 10% slow; job 0 waits for it, and the
// second job keeps starting 55 ms (half of the stretched 110 ms period)
// after the first.
func Example() {
	r := time.Date(2024, 4, 16, 9, 0, 0, 0, time.UTC)
	g := agent.NewGroup(r)
	a0, _ := agent.New(agent.Plan{Reference: r, Period: 100 * time.Millisecond, Group: g}, agent.Options{})
	a1, _ := agent.New(agent.Plan{Reference: r, Shift: 50 * time.Millisecond, Period: 100 * time.Millisecond, Group: g}, agent.Options{})
	ready0, ready1 := r, r
	for i := range 6 {
		d0 := a0.Next(ready0)
		d1 := a1.Next(ready1)
		if i >= 4 {
			fmt.Printf("iteration %d: job 0 at %v, job 1 at %v\n", i, d0.Start.Sub(r), d1.Start.Sub(r))
		}
		ready0 = d0.Start.Add(100 * time.Millisecond)
		ready1 = d1.Start.Add(110 * time.Millisecond)
	}
	fmt.Printf("scale %.2f, %d adjustments\n", g.Scale(), a0.Stats().Adjustments+a1.Stats().Adjustments)
	// Output:
	// iteration 4: job 0 at 435ms, job 1 at 490ms
	// iteration 5: job 0 at 545ms, job 1 at 600ms
	// scale 1.10, 0 adjustments
}
