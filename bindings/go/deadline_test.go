package orrerywasm

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orrery/orrery"
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
	limits, rank, plan, sched := []float64{1, 10}, timing.RankSizes[:2], timing.PlanSizes[:2], timing.SchedSizes[:2]
	if *deadlineSweep {
		limits, rank, plan, sched = []float64{1, 10, 100, 1000}, timing.RankSizes, timing.PlanSizes, timing.SchedSizes
	}
	if testing.Short() {
		limits = limits[:1]
	}
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
	loaded, load := timing.Loaded(runtime.NumCPU())
	results, err := timing.Measure(timing.Cases(limits, rank, plan, sched), run, loaded)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		var a struct {
			Error *orrery.Error `json:"error"`
		}
		if err := json.Unmarshal(r.Answer, &a); err != nil {
			t.Fatalf("%s: %v", r.Case.Name, err)
		}
		if a.Error != nil && (a.Error.Code != orrery.CodeLimit || !strings.Contains(a.Error.Field, "time_limit_ms")) {
			t.Errorf("%s: %+v", r.Case.Name, a.Error)
		}
		if !r.OK() {
			t.Errorf("%s: the fastest run took %v, above the bound %v (t0 %v)", r.Case.Name, r.Best, r.Bound, r.T0)
		}
		if b := wazeroT0.Of(timing.WithLimit(r.Case, timing.Tiny)); r.T0 > b {
			t.Errorf("%s: t0 %v, above %v", r.Case.Name, r.T0, b)
		}
	}
	clock := "wall time"
	if loaded {
		clock = fmt.Sprintf("CPU time (load %.1f on %d CPUs)", load, runtime.NumCPU())
	}
	t.Logf("wazero, %s:\n%s", clock, timing.Table(results))
}
