package ns3

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/workload"
)

var update = flag.Bool("update", false, "rewrite testdata/*.scenario from the exporter")

// exported runs variant v of a case in the fluid model and exports it.
func exported(t *testing.T, c Case, v Variant) (netsim.Config, netsim.Result, Scenario) {
	t.Helper()
	cfg, res, sc, err := fluidRun(context.Background(), c, v, netsim.MaxMin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, res, sc
}

func snapshot(t *testing.T, name string, iters int) Case {
	t.Helper()
	c, err := Snapshot(name, iters)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The exported fig2 scenarios are byte for byte the golden files: the
// format the C++ program reads, with the fluid run's shifts and plans.
func TestExportGolden(t *testing.T) {
	for _, v := range Variants {
		_, _, sc := exported(t, snapshot(t, "fig2", 3), v)
		var b bytes.Buffer
		if _, err := sc.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "fig2-"+string(v)+".scenario")
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(want), b.String()); d != "" {
			t.Errorf("%s: export differs from %s (-want +got):\n%s", v, path, d)
		}
	}
}

// Scaling keeps every duration: each flow's bytes at its peak take the
// step's time alone, so a job's iteration alone is the fluid model's; links
// run at 1 Gbps; paths are the fabric's routes, ACKs on the reverse route;
// a ring hop is gated by the hop into its sender with one chunk of slack.
func TestExportScalesAndRoutes(t *testing.T) {
	for _, name := range []string{"snapshot2", "cluster"} {
		var c Case
		if name == "cluster" {
			var err error
			if c, err = Cluster("cluster", 8, []string{"VGG16", "DLRM", "GPT2", "ResNet50"}, []int{2, 3, 4}, 3, 5, 0.9, 2); err != nil {
				t.Fatal(err)
			}
		} else {
			c = snapshot(t, name, 4)
		}
		cfg, res, sc := exported(t, c, Unshifted)
		if want := 1 / 50.0; sc.Scale != want {
			t.Fatalf("%s: scale %v, want %v", name, sc.Scale, want)
		}
		for _, l := range sc.Links {
			if l.Bps != 1e9 || l.Delay != DefaultLinkDelay {
				t.Fatalf("%s: link %+v", name, l)
			}
		}
		alone := map[int]time.Duration{}
		for _, j := range res.Jobs {
			alone[j.ID] = j.Alone
		}
		for _, j := range sc.Jobs {
			checkJob(t, cfg, j, alone[j.ID])
		}
	}
}

func checkJob(t *testing.T, cfg netsim.Config, j Job, fluidAlone time.Duration) {
	t.Helper()
	top := cfg.Topology
	nodes := func(src, dst int) []int {
		p, err := top.Route(src, dst)
		if err != nil {
			t.Fatal(err)
		}
		out := []int{src}
		for _, l := range p {
			out = append(out, top.Links[l].To)
		}
		return out
	}
	for _, c := range j.Conns {
		if d := cmp.Diff(nodes(c.Src, c.Dst), c.Path); d != "" {
			t.Errorf("job %d: path %d->%d (-route +exported):\n%s", j.ID, c.Src, c.Dst, d)
		}
		if d := cmp.Diff(nodes(c.Dst, c.Src), c.Back); d != "" {
			t.Errorf("job %d: back path %d->%d (-route +exported):\n%s", j.ID, c.Dst, c.Src, d)
		}
	}
	var total time.Duration
	for _, st := range j.Steps {
		if st.Flows == nil {
			total += st.Compute
			continue
		}
		var longest time.Duration
		for _, f := range st.Flows {
			longest = max(longest, time.Duration(math.Round(float64(f.Bytes)*8/f.PeakBps*1e9)))
			if f.Prev >= 0 {
				if j.Conns[f.Prev].Dst != j.Conns[f.Conn].Src {
					t.Errorf("job %d: flow on %d gated by connection %d, which does not feed its sender", j.ID, f.Conn, f.Prev)
				}
				n := int64(len(st.Flows))
				if want := (f.Bytes + 2*(n-1) - 1) / (2 * (n - 1)); f.Slack != want {
					t.Errorf("job %d: slack %d, want %d", j.ID, f.Slack, want)
				}
			}
		}
		total += longest
	}
	// The fluid model times a job alone with its own flows contending
	// (an all-to-all across racks): never faster than the exported peaks.
	m, _ := workload.Lookup(j.Model)
	if d := (total - fluidAlone).Abs(); d > time.Duration(len(j.Steps))*time.Microsecond && (m.Parallelism == workload.DataParallel || total > fluidAlone) {
		t.Errorf("job %d (%s): exported steps take %v alone, the fluid model %v", j.ID, j.Model, total, fluidAlone)
	}
}

// Fig. 2 under CASSINI: job 1 starts 118 ms late (the smallest shift of
// the optimal range 118-150 ms: its communication starts as job 0's ends),
// and both jobs' agents hold the fluid run's 5%-padded period on the grid
// their second iterations started on; without agents the same first starts
// remain.
func TestExportShifts(t *testing.T) {
	c := snapshot(t, "fig2", 4)
	_, res, sc := exported(t, c, Cassini)
	if len(sc.Jobs) != 2 || sc.Jobs[0].Start != 0 || sc.Jobs[1].Start != 118*time.Millisecond {
		t.Fatalf("first starts %v, %v; want 0 and 118ms", sc.Jobs[0].Start, sc.Jobs[1].Start)
	}
	for _, j := range sc.Jobs {
		p := j.Plan
		if p == nil || p.Period != 282*time.Millisecond || p.CommOffset != 150*time.Millisecond || p.Shift != j.Start%p.Period {
			t.Fatalf("job %d: plan %+v", j.ID, p)
		}
	}
	if res.Agent.Agents != 2 {
		t.Fatalf("fluid run: %d agents", res.Agent.Agents)
	}
	_, _, free := exported(t, c, Shifted)
	for i, j := range free.Jobs {
		if j.Plan != nil || j.Start != sc.Jobs[i].Start {
			t.Fatalf("shifted job %d: start %v, plan %v", j.ID, j.Start, j.Plan)
		}
	}
	_, _, un := exported(t, c, Unshifted)
	for _, j := range un.Jobs {
		if j.Plan != nil || j.Start != 0 {
			t.Fatalf("unshifted job %d: start %v, plan %v", j.ID, j.Start, j.Plan)
		}
	}
}

// A CASSINI run with netsim's default Elastic agents exports their plans:
// one group for Fig. 2's two jobs, each plan with the run's slack and free
// communication time; a job whose agent gave its shift up is exported
// without one, and NoAgents exports none. The Cassini variant's fluid run
// has Pad agents.
func TestExportElastic(t *testing.T) {
	cfg, res, sc := exported(t, snapshot(t, "fig2", 4), Elastic)
	if cfg.Agent.Mode != agent.Elastic || res.Agent.Agents != 2 {
		t.Fatalf("elastic run: %v mode, %d agents", cfg.Agent.Mode, res.Agent.Agents)
	}
	for k, j := range sc.Jobs {
		jr := res.Jobs[k]
		if j.Plan == nil || j.Group != 1 || j.Plan.Group != nil || j.Plan.Slack != jr.Slack || j.Plan.FreeComm != jr.FreeComm || jr.FreeComm <= 0 || j.Plan.Period != jr.Period {
			t.Errorf("job %d: plan %+v group %d, want the run's %+v in group 1", j.ID, j.Plan, j.Group, jr)
		}
	}
	gaveUp := res
	gaveUp.Jobs = slices.Clone(res.Jobs)
	gaveUp.Jobs[1].Released = true
	if sc, err := Export(cfg, gaveUp, ExportOptions{}); err != nil || sc.Jobs[0].Plan == nil || sc.Jobs[1].Plan != nil {
		t.Errorf("job 1 gave up: err %v, plans %v and %v", err, sc.Jobs[0].Plan, sc.Jobs[1].Plan)
	}
	none, err := Export(cfg, res, ExportOptions{NoAgents: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range none.Jobs {
		if j.Plan != nil {
			t.Errorf("job %d: a plan with NoAgents", j.ID)
		}
	}
	if got, _, _ := exported(t, snapshot(t, "fig2", 4), Cassini); got.Agent.Mode != agent.Pad {
		t.Errorf("the zero Options' fluid run has %v agents, want pad", got.Agent.Mode)
	}
}

// The shifted variant's fluid run is the jobs free-running from CASSINI's
// first starts: on Fig. 2 it keeps the interleaving exactly, at the
// uncontended iteration, with no traffic above capacity.
func TestShiftedFluid(t *testing.T) {
	_, res, _ := exported(t, snapshot(t, "fig2", 6), Shifted)
	for _, x := range res.IterMs {
		if math.Abs(x-268) > 1e-5 {
			t.Fatalf("iterations %v, want 268 ms each", res.IterMs)
		}
	}
	if res.ExcessGbit != 0 {
		t.Fatalf("excess %v Gbit", res.ExcessGbit)
	}
}

// A scenario reads back as written (plans come back empty, Scale as 0).
func TestReadRoundTrip(t *testing.T) {
	c, err := Cluster("cluster", 8, []string{"VGG16", "DLRM", "GPT2", "GPT3"}, []int{2, 4}, 3, 5, 0.9, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Variants {
		_, _, sc := exported(t, c, v)
		sc.Net = Net{CC: NewReno, SACK: true, Stop: time.Second}
		sc.Jobs[0].Noise = []float64{1.25, 0.5}
		var b bytes.Buffer
		if _, err := sc.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		got, err := ReadScenario(&b)
		if err != nil {
			t.Fatal(err)
		}
		want := sc
		want.Scale = 0
		want.Net = sc.Net.normalize()
		want.Jobs = slices.Clone(sc.Jobs)
		for i := range want.Jobs {
			want.Jobs[i].Model, want.Jobs[i].Servers = "", nil
			if want.Jobs[i].Plan != nil {
				want.Jobs[i].Plan = &agent.Plan{}
			}
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s: round trip (-want +got):\n%s", v, d)
		}
	}
}

// Malformed scenarios are rejected with ErrInvalid, naming the problem.
func TestValidate(t *testing.T) {
	_, _, base := exported(t, snapshot(t, "snapshot1", 2), Cassini)
	cases := map[string]func(s *Scenario){
		"no jobs":          func(s *Scenario) { s.Jobs = nil },
		"link to nowhere":  func(s *Scenario) { s.Links[0].B = s.Nodes },
		"zero rate":        func(s *Scenario) { s.Links[1].Bps = 0 },
		"double link":      func(s *Scenario) { s.Links = append(s.Links, Link{A: s.Links[0].B, B: s.Links[0].A, Bps: 1}) },
		"server two links": func(s *Scenario) { s.Links = append(s.Links, Link{A: 0, B: s.Nodes - 1, Bps: 1}) },
		"repeated id":      func(s *Scenario) { s.Jobs[1].ID = s.Jobs[0].ID },
		"no iterations":    func(s *Scenario) { s.Jobs[0].Iterations = 0 },
		"broken path":      func(s *Scenario) { s.Jobs[0].Conns[0].Path = s.Jobs[0].Conns[0].Path[1:] },
		"path off links":   func(s *Scenario) { s.Jobs[0].Conns[0].Path[2] = 0 },
		"flow conn":        func(s *Scenario) { s.Jobs[0].Steps[1].Flows[0].Conn = 9 },
		"conn twice":       func(s *Scenario) { s.Jobs[0].Steps[1].Flows[1].Conn = s.Jobs[0].Steps[1].Flows[0].Conn },
		"zero bytes":       func(s *Scenario) { s.Jobs[0].Steps[1].Flows[0].Bytes = 0 },
		"infinite peak":    func(s *Scenario) { s.Jobs[0].Steps[1].Flows[0].PeakBps = math.Inf(1) },
		"empty comm":       func(s *Scenario) { s.Jobs[0].Steps[1].Flows = []Flow{} },
		"negative compute": func(s *Scenario) { s.Jobs[0].Steps[0].Compute = -1 },
		"bad noise":        func(s *Scenario) { s.Jobs[0].Noise = []float64{1, 0} },
		"unknown cc":       func(s *Scenario) { s.Net.CC = "bbr" },
		"delack past rto":  func(s *Scenario) { s.Net.DelAckTimeout = 10 * time.Millisecond },
	}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range cases {
		s := clone(base)
		mutate(&s)
		err := s.Validate()
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
			continue
		}
		if _, werr := s.WriteTo(&bytes.Buffer{}); !errors.Is(werr, ErrInvalid) {
			t.Errorf("%s: WriteTo wrote an invalid scenario", name)
		}
	}
}

// clone deep-copies what TestValidate mutates.
func clone(s Scenario) Scenario {
	s.Links = slices.Clone(s.Links)
	s.Jobs = slices.Clone(s.Jobs)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Conns = slices.Clone(j.Conns)
		for k := range j.Conns {
			j.Conns[k].Path = slices.Clone(j.Conns[k].Path)
		}
		j.Steps = slices.Clone(j.Steps)
		for k := range j.Steps {
			if j.Steps[k].Flows != nil {
				j.Steps[k].Flows = slices.Clone(j.Steps[k].Flows)
			}
		}
	}
	return s
}

// The fluid replay of an exported scenario, with fair shares, is the fluid
// simulation it was exported from: the same iteration times, agents
// included, on snapshots and a cluster trace (which nets the export's
// routes, byte counts and plans against netsim's own).
func TestFluidReplayIsNetsim(t *testing.T) {
	cl, err := Cluster("cluster", 10, []string{"VGG16", "DLRM", "GPT2", "ResNet50", "GPT3"}, []int{2, 3, 4}, 3, 6, 0.9, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Snapshots 3 and 4 have Elastic agents whose group runs off their
	// period (the slots follow the pace); their Pad agents, late past the
	// threshold at every slot, are not exported (held).
	s3, s4 := snapshot(t, "snapshot3", 8), snapshot(t, "snapshot4", 8)
	s3.Variants, s4.Variants = []Variant{Elastic}, []Variant{Elastic}
	for _, c := range []Case{snapshot(t, "fig2", 6), snapshot(t, "snapshot2", 6), s3, s4, cl} {
		variants := c.Variants
		if variants == nil {
			variants = append(Variants, Elastic)
		}
		for _, v := range variants {
			_, res, sc := exported(t, c, v)
			out, err := Fluid(context.Background(), sc, FluidOptions{Agent: agentOptions(v, agent.Options{})})
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			for _, j := range res.Jobs {
				want := res.IterMs[k : k+j.Iterations]
				k += j.Iterations
				if d := cmp.Diff(want, out.IterMs(j.ID), cmpRel); d != "" {
					t.Errorf("%s %s job %d (%s on %v): iterations (-netsim +replay):\n%s", c.Name, v, j.ID, j.Model, j.Servers, d)
				}
			}
		}
	}
}

// cmpRel equates numbers within a millionth: the export rounds byte counts.
var cmpRel = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) })

// With fair shares the fluid model keeps a half-overlapped Fig. 2 where it
// starts (59 ms apart, 301 ms iterations); weighing the incumbent moves the
// newcomer back in their first overlap and, Cold, lets them share fairly
// from there on (DCTCP's calibration: 101 ms apart for good); weighed every
// time (Cubic's), the newcomer is pushed until the phases just touch.
func TestFluidIncumbent(t *testing.T) {
	c := snapshot(t, "fig2", 10)
	_, _, sc, err := fluidRun(context.Background(), c, Half, netsim.MaxMin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	offsets := func(o FluidOptions) []float64 {
		out, err := Fluid(context.Background(), sc, o)
		if err != nil {
			t.Fatal(err)
		}
		a, b := out.Job(0), out.Job(1)
		var v []float64
		for k := range a {
			v = append(v, math.Round(float64(b[k].Comm-a[k].Comm)/1e6))
		}
		return v
	}
	for _, tc := range []struct {
		name string
		opt  FluidOptions
		want []float64
	}{
		{"fair", FluidOptions{}, []float64{59, 59, 59, 59, 59, 59, 59, 59, 59, 59}},
		{"dctcp", Calibrated(DCTCP), []float64{59, 101, 101, 101, 101, 101, 101, 101, 101, 101}},
		{"newreno", Calibrated(NewReno), []float64{59, 88, 88, 88, 88, 88, 88, 88, 88, 88}},
		{"cubic", Calibrated(Cubic), []float64{59, 101, 113, 117, 118, 118, 118, 118, 118, 118}},
	} {
		if d := cmp.Diff(tc.want, offsets(tc.opt)); d != "" {
			t.Errorf("%s: offsets (-want +got):\n%s", tc.name, d)
		}
	}
	if _, err := Fluid(context.Background(), sc, FluidOptions{Incumbent: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative weight: %v", err)
	}
}

// Uncoupled rings export independent hops.
func TestExportUncoupled(t *testing.T) {
	cfg, res, _ := exported(t, snapshot(t, "snapshot1", 2), Unshifted)
	sc, err := Export(cfg, res, ExportOptions{Uncoupled: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range sc.Jobs {
		for _, st := range j.Steps {
			for _, f := range st.Flows {
				if f.Prev != -1 || f.Slack != 0 {
					t.Fatalf("job %d: flow %+v is gated", j.ID, f)
				}
			}
		}
	}
}
