package ns3

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/orrery/orrery/internal/eval/fluid"
	"github.com/orrery/orrery/internal/eval/netsim"
)

func TestParseCCTransports(t *testing.T) {
	for _, c := range []struct {
		name string
		cc   CC
		tr   netsim.Transport
		rate bool
	}{
		{"dctcp", DCTCP, netsim.MaxMin, false},
		{"DCQCN", DCQCN, netsim.DCQCN, true},
		{"mltcp-dcqcn", MLTCPDCQCN, netsim.MLTCP, true},
		{"mltcp-reno", MLTCPReno, netsim.MaxMin, false},
	} {
		cc, err := ParseCC(c.name)
		if err != nil || cc != c.cc || cc.Transport() != c.tr || cc.RateBased() != c.rate {
			t.Errorf("%s: %v, %v (transport %v, rate based %v)", c.name, cc, err, cc.Transport(), cc.RateBased())
		}
	}
	if _, err := ParseCC("timely"); !errors.Is(err, ErrInvalid) {
		t.Errorf("timely: %v", err)
	}
}

// A DCQCN scenario carries the law's parameters scaled with the fabric:
// rates and byte counts by the scale, times as they are, Pmax over the
// scale (so a CNP interval holds as many expected marks with 1000-byte
// packets at 1 Gbps as at 50); it reads back to the same text; a bad
// parameter is rejected.
func TestScenarioDCQCN(t *testing.T) {
	_, _, sc := exported(t, snapshot(t, "fig2", 2), Unshifted)
	if sc.Scale != 1.0/50 {
		t.Fatalf("scale %v", sc.Scale)
	}
	sc.Net.CC = DCQCN
	var b bytes.Buffer
	if _, err := sc.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"\ndcqcn 100 4000 0.5 1000 50000 0.00390625 55000 55000 200000 5 800000 4e+06 2e+06 1\n",
		"\nmltcp 1 1\n",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("no %q in\n%s", want, text[:300])
		}
	}
	got, err := ReadScenario(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if _, err := got.WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != text {
		t.Fatalf("round trip changed the scenario:\n%s", again.String()[:300])
	}
	sc.Net.DCQCN = fluid.DefaultDCQCN()
	sc.Net.DCQCN.Pmax = 0
	if err := sc.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Pmax 0: %v", err)
	}
	sc.Net.DCQCN, sc.Net.MLTCP = fluid.DCQCNParams{}, netsim.MLTCPParams{Slope: -1, Intercept: 1}
	if err := sc.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("slope -1: %v", err)
	}
}

// The cross-check runs the fluid model under each congestion control's
// counterpart: max-min for the TCPs, DCQCN's law for DCQCN (whose
// overlapped Fig. 2 iterations then differ from max-min's lock step).
func TestCrossCheckFluidTransport(t *testing.T) {
	c := snapshot(t, "fig2", 6)
	for _, cc := range []CC{NewReno, DCQCN} {
		_, res, _, err := fluidRun(context.Background(), c, Unshifted, cc.Transport(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		lockStep := res.IterMs[0] == res.IterMs[6] && res.IterMs[5] == res.IterMs[11]
		if lockStep != (cc == NewReno) {
			t.Errorf("%s: fluid iterations %v", cc, res.IterMs)
		}
	}
}

// TestPacketLevelTransports is the transports' CI-sized packet-level check
// (make ns3-check; about 45 s of CPU): Fig. 2 overlapped and shifted under
// DCQCN, MLTCP's DCQCN and MLTCP's Reno, and snapshot 1 overlapped under
// DCQCN, at 1 Gbps, 4 iterations. What it asserts:
//   - the DCQCN senders never lose a packet (the deep buffers stand in for
//     PFC, which ns-3.37 lacks: the resend it would need never happens);
//   - shifted, every iteration is the job alone (within 0.5%) and nothing
//     is marked, under every transport;
//   - overlapped, the jobs are marked and no job is faster than alone;
//     DCQCN's first iterations are within 15% of the fluid DCQCN's (ns-3
//     measured 9-12% slower at this scale: its marking thresholds, scaled
//     to 1 Gbps, are 0.1 and 4 packets of 1000 bytes, where the fluid
//     model's at 50 Gbps are 5 and 200);
//   - overlapped, DCQCN and MLTCP's Reno pull Fig. 2's jobs apart, as the
//     fluid DCQCN does (the offset between their communication phases
//     grows from 0): one seed, a direction rather than a rate.
func TestPacketLevelTransports(t *testing.T) {
	prog := packetLevel(t)
	fig2 := snapshot(t, "fig2", 4)
	fig2.Variants, fig2.CCs = []Variant{Unshifted, Shifted}, []CC{DCQCN, MLTCPDCQCN, MLTCPReno}
	s1 := snapshot(t, "snapshot1", 4)
	s1.Variants, s1.CCs = []Variant{Unshifted}, []CC{DCQCN}
	runs, err := CrossCheck(context.Background(), prog, []Case{fig2, s1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, runs)
	for _, r := range runs {
		if r.CC.RateBased() && r.Drops != 0 {
			t.Errorf("%s %s %s: %d drops", r.Case, r.Variant, r.CC, r.Drops)
		}
		for _, j := range r.Jobs {
			if j.Iterations != 4 || j.PacketMs < j.AloneMs*0.999 {
				t.Errorf("%s %s %s job %d: %d iterations, %.1f ms (alone %.1f)", r.Case, r.Variant, r.CC, j.ID, j.Iterations, j.PacketMs, j.AloneMs)
			}
		}
		switch r.Variant {
		case Shifted:
			for _, j := range r.Jobs {
				if relErr(j.PacketP90, j.AloneMs) > 0.005 || relErr(j.FirstMs, j.AloneMs) > 0.005 || j.Marks != 0 {
					t.Errorf("%s shifted %s job %d: p90 %.1f, first %.1f ms (alone %.1f), %d marks", r.Case, r.CC, j.ID, j.PacketP90, j.FirstMs, j.AloneMs, j.Marks)
				}
			}
		case Unshifted:
			if r.Marks == 0 {
				t.Errorf("%s overlapped %s: no marks", r.Case, r.CC)
			}
		}
	}
	for _, c := range []struct {
		name string
		cc   CC
	}{{"fig2", DCQCN}, {"fig2", MLTCPDCQCN}, {"snapshot1", DCQCN}} {
		r := find(t, runs, c.name, Unshifted, c.cc)
		for _, j := range r.Jobs {
			if relErr(j.FirstMs, j.FluidFirstMs) > 0.15 {
				t.Errorf("%s overlapped %s job %d: first iteration %.1f ms, the fluid model's %.1f", c.name, c.cc, j.ID, j.FirstMs, j.FluidFirstMs)
			}
		}
	}
	for _, cc := range []CC{DCQCN, MLTCPReno} {
		o := find(t, runs, "fig2", Unshifted, cc).Offsets
		if len(o) != 4 || o[0] != 0 || math.Abs(o[3]) <= math.Abs(o[1]) || math.Abs(o[1]) == 0 {
			t.Errorf("fig2 overlapped %s: offsets %v ms, want them growing from 0", cc, o)
		}
	}
}
