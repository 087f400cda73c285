package orrery_test

import (
	"context"
	"flag"
	"runtime"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/timing"
)

// Issue 29, item 2: a time limit holds over the whole call. Natively
// (here), in wazero (bindings/go) and in node (bindings/crosscheck), every
// case of internal/timing (rankings, plans and a scheduler's re-plans of
// growing size) answers within timing.Bound: 1.2 × its limit, plus twice
// t0, the time of the same call at a 1 µs limit (what no limit can
// interrupt: reading the request, a first answer, writing the answer),
// plus 2 ms; and t0 itself is within a bound per byte of the request (and
// per job of a scheduler), so that a limit ignored altogether fails.
//
// The machine is shared: load only ever adds time, so the fastest of a
// few runs (3, and 4 more when none is within the bound) estimates the
// call's own time, and a call that overran its limit would overrun it on
// every run. When the machine is loaded past its CPUs (timing.Loaded),
// wall time measures the other processes as much as the call: the check
// is then on the call's CPU time (the process's; rankings run one
// worker), which a call that ignored its limit spends all the same. The
// default runs limits of 1 and 10 ms on the smaller sizes;
// -deadline.sweep runs 1 ms to 1 s on every size and logs the table of
// docs/reliability.md.

var deadlineSweep = flag.Bool("deadline.sweep", false, "time every size at limits of 1 ms to 1 s, and log the table")

// nativeT0 bounds t0 natively: 20 ms, 400 ns a byte (decoding a rank's
// maps runs at about 50 ns a byte on an idle core; the machine's load
// multiplies wall times), 10 µs a job of a scheduler.
var nativeT0 = timing.Uninterrupted{Fixed: 20 * time.Millisecond, PerByte: 400 * time.Nanosecond, PerJob: 10 * time.Microsecond}

// nativeRuns runs a case n times on fresh Sessions.
func nativeRuns(c timing.Case, n int) ([]timing.Run, error) {
	var out []timing.Run
	for range n {
		s := orrery.NewSession()
		for _, l := range c.Lines[:len(c.Lines)-1] {
			s.Handle(context.Background(), l)
		}
		runtime.GC() // not in the timed call
		t0, c0 := time.Now(), timing.ProcessCPU()
		ans := s.Handle(context.Background(), c.Lines[len(c.Lines)-1])
		out = append(out, timing.Run{Wall: time.Since(t0), CPU: timing.ProcessCPU() - c0, Answer: ans})
		s.Close()
	}
	return out, nil
}

func TestDeadlines(t *testing.T) {
	timing.Check(t, "natively", timing.Select(*deadlineSweep, testing.Short(), 3), nativeRuns, nativeT0)
}
