package orrerywasm

import (
	"context"
	"flag"
	"runtime"
	"testing"
	"time"

	"github.com/orrery/orrery/internal/timing"
)

// Issue 29, item 2, in wazero: the module is cooperative (no preemption,
// no timer goroutine runs while a search does), so a deadline holds only
// where the engine reads the clock itself (internal/deadline). Every case
// of internal/timing answers within timing.Bound through the module, as
// the root package's TestDeadlines checks natively; see there for the
// bound and the clock (CPU time when the machine is loaded: wazero runs
// in this process).

var deadlineSweep = flag.Bool("deadline.sweep", false, "time every size at limits of 1 ms to 1 s, and log the table")

// wazeroT0 bounds t0 in wazero: the native bound's 5 times (the module
// decodes and encodes 3 to 5 times slower than native code).
var wazeroT0 = timing.Uninterrupted{Fixed: 100 * time.Millisecond, PerByte: 2 * time.Microsecond, PerJob: 50 * time.Microsecond}

func TestDeadlines(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	run := func(c timing.Case, n int) ([]timing.Run, error) {
		var out []timing.Run
		for range n {
			s, err := m.NewSession(ctx)
			if err != nil {
				return nil, err
			}
			for _, l := range c.Lines[:len(c.Lines)-1] {
				if _, err := s.Handle(ctx, l); err != nil {
					return nil, err
				}
			}
			runtime.GC()
			t0, c0 := time.Now(), timing.ProcessCPU()
			ans, err := s.Handle(ctx, c.Lines[len(c.Lines)-1])
			out = append(out, timing.Run{Wall: time.Since(t0), CPU: timing.ProcessCPU() - c0, Answer: ans})
			s.Close(ctx)
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	timing.Check(t, "wazero", timing.Select(*deadlineSweep, testing.Short(), 2), run, wazeroT0)
}
