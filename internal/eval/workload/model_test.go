package workload

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

func steps(t *testing.T, name string, batch, servers int) []Step {
	t.Helper()
	m, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Iteration(batch, servers)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func prof(t *testing.T, name string, batch, servers int) profile.Profile {
	t.Helper()
	p, err := Profile(steps(t, name, batch, servers), profile.Quantum{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTable3(t *testing.T) {
	ms := Models()
	if len(ms) != 13 {
		t.Fatalf("%d models", len(ms))
	}
	dp := 0
	for _, m := range ms {
		if m.Parallelism == DataParallel {
			dp++
		}
		if m.Note == "" || m.RefBatch < m.Batch[0] || m.RefBatch > m.Batch[1] {
			t.Errorf("%s: note %q, reference batch %d outside %v", m.Name, m.Note, m.RefBatch, m.Batch)
		}
		// Every model runs at every batch choice on its reference servers,
		// with no communication step faster than line rate (50 Gbps).
		for _, b := range m.BatchChoices() {
			st, err := m.Iteration(b, m.RefServers)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range st {
				if s.Bandwidth > 50e9 || s.Peak > 50e9 {
					t.Errorf("%s: step %+v faster than a 50 Gbps NIC", m.Name, s)
				}
			}
		}
	}
	if dp != 9 {
		t.Fatalf("%d data-parallel models, Table 3 has 9", dp)
	}
	if _, err := Lookup("AlexNet"); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("unknown model: %v", err)
	}
	// Models returns copies.
	ms[0].Phases[0].Duration = 0
	if Models()[0].Phases[0].Duration == 0 {
		t.Fatal("Models shares its phases with the caller")
	}
}

// Fig. 3: VGG16 has a 255 ms iteration, 141 ms of it without traffic.
func TestVGG16Fact(t *testing.T) {
	st := steps(t, "VGG16", 1400, 2)
	if p := Period(st); p != 255*time.Millisecond {
		t.Fatalf("period %v", p)
	}
	if st[0].Compute != 141*time.Millisecond || CommOffset(st) != 141*time.Millisecond {
		t.Fatalf("compute %v, communication at %v", st[0].Compute, CommOffset(st))
	}
	p := prof(t, "VGG16", 1400, 2)
	if p.Period != 255 || p.Demand[140] != 0 || p.Demand[141] == 0 {
		t.Fatalf("profile period %d, demand around 141: %v", p.Period, p.Demand[139:143])
	}
}

// A data-parallel all-reduce moves 2(n-1)/n times the gradient over every
// hop of the ring, at the same rate: the phase grows with n.
func TestRingBytes(t *testing.T) {
	m, _ := Lookup("VGG16")
	g := m.GradientBits()
	if g != 528*(1<<20)*8 {
		t.Fatalf("gradient %v bits", g)
	}
	var rate float64
	for _, n := range []int{2, 3, 4, 8, 12} {
		st := steps(t, "VGG16", 1400, n)
		want := 2 * float64(n-1) / float64(n) * g
		if math.Abs(st[1].Bits-want) > 1e-6*want {
			t.Errorf("n=%d: %v bits per hop, want %v", n, st[1].Bits, want)
		}
		if rate == 0 {
			rate = st[1].Peak
		}
		if st[1].Peak != rate || st[1].Bandwidth != rate {
			t.Errorf("n=%d: peak %v, bandwidth %v, want %v", n, st[1].Peak, st[1].Bandwidth, rate)
		}
	}
	// One server: no network traffic.
	st := steps(t, "VGG16", 1400, 1)
	if st[1].Bits != 0 || st[1].Bandwidth != 0 || st[1].Alone() != 0 || CommOffset(st) != -1 {
		t.Fatalf("one server: %+v", st[1])
	}
}

// An all-to-all spreads a server's rate over its n-1 destinations: the
// phase takes its reference length at the reference size.
func TestAllToAll(t *testing.T) {
	st := steps(t, "DLRM", 512, 4)
	a := st[1]
	if a.Pattern != AllToAll || a.Peak != 40e9/3 || a.Bandwidth != 40e9 {
		t.Fatalf("%+v", a)
	}
	if d := a.Alone(); d != 25*time.Millisecond {
		t.Fatalf("alone %v", d)
	}
}

func TestBatchScaling(t *testing.T) {
	lo := steps(t, "VGG16", 512, 2)
	ref := steps(t, "VGG16", 1400, 2)
	want := time.Duration(math.Round(float64(141*time.Millisecond) * (0.2 + 0.8*512.0/1400)))
	if lo[0].Compute != want || !reflect.DeepEqual(lo[1], ref[1]) {
		t.Fatalf("batch 512: %+v, want compute %v and the same all-reduce", lo, want)
	}
	m, _ := Lookup("VGG16")
	if _, err := m.Iteration(100, 2); !errors.Is(err, ErrInvalid) {
		t.Fatalf("batch outside Table 3: %v", err)
	}
	g, _ := Lookup("GPT3")
	if _, err := g.Iteration(32, 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("model parallel on one server: %v", err)
	}
}

func search(t *testing.T, jobs ...profile.Profile) link.Result {
	t.Helper()
	var w link.Workspace
	r, err := w.Search(context.Background(), link.Problem{Jobs: jobs, Capacity: 50_000}, link.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func score(t *testing.T, shift int, jobs ...profile.Profile) float64 {
	t.Helper()
	var w link.Workspace
	excess, points, err := w.Evaluate(link.Problem{Jobs: jobs, Capacity: 50_000}, link.Options{}, []int{0, shift})
	if err != nil {
		t.Fatal(err)
	}
	return 1 - float64(excess)/float64(points)/50_000
}

// The paper's interleaving facts on a 50 Gbps link.
func TestInterleavingFacts(t *testing.T) {
	vgg19 := prof(t, "VGG19", 1400, 2)
	if s := score(t, 0, vgg19, vgg19); s >= 0.9 {
		t.Errorf("two VGG19 unshifted score %v: they should collide", s)
	}
	if s := score(t, 120, vgg19, vgg19); s != 1 {
		t.Errorf("two VGG19 with a 120 ms shift: score %v, want 1 (Fig. 2)", s)
	}
	wrn, vgg16 := prof(t, "WideResNet101", 800, 2), prof(t, "VGG16", 1400, 2)
	if s := score(t, 150, wrn, vgg16); s != 1 {
		t.Errorf("WideResNet101 + VGG16 delayed 150 ms: score %v, want 1 (Table 2 snapshot 1)", s)
	}
	if r := search(t, wrn, vgg16); r.Score != 1 || r.Unshifted >= 1 {
		t.Errorf("WideResNet101 + VGG16: %+v", r)
	}
	if r := search(t, prof(t, "BERT", 8, 2), vgg19); r.Score >= 0.99 {
		t.Errorf("BERT + VGG19: best score %v, the paper: no shift interleaves them", r.Score)
	}
	rob := prof(t, "RoBERTa", 12, 2)
	if r := search(t, rob, rob); math.Abs(r.Score-0.8) > 0.02 {
		t.Errorf("two RoBERTa: best score %v, Table 2 snapshot 4: 0.8", r.Score)
	}
}

// The Fig. 1 periods of the model-parallel models.
func TestModelParallelPeriods(t *testing.T) {
	for _, tc := range []struct {
		name    string
		servers int
		period  time.Duration
		phases  int
	}{
		{"GPT1", 4, 200 * time.Millisecond, 2},
		{"GPT2", 2, 200 * time.Millisecond, 7},
		{"GPT3", 2, 500 * time.Millisecond, 3},
		{"DLRM", 4, 125 * time.Millisecond, 5},
	} {
		m, _ := Lookup(tc.name)
		st := steps(t, tc.name, m.RefBatch, tc.servers)
		if p := Period(st); p != tc.period || len(st) != tc.phases {
			t.Errorf("%s: period %v with %d phases, want %v with %d", tc.name, p, len(st), tc.period, tc.phases)
		}
	}
}

// GPT-3 on 8 servers runs its hybrid layout: six Up phases of tensor
// all-reduces (pairs), pipeline sends (stage to stage) and a data-parallel
// all-reduce (replicas), about 3 s; on 2 servers its tensor-parallel one.
func TestGPT3Hybrid(t *testing.T) {
	st := steps(t, "GPT3", 32, 8)
	var comm []Step
	for _, s := range st {
		if s.Pattern != Compute {
			comm = append(comm, s)
		}
	}
	if len(comm) != 6 {
		t.Fatalf("%d communication phases, want 6", len(comm))
	}
	want := map[Pattern][][]int{
		Ring:  {{0, 1}, {2, 3}, {4, 5}, {6, 7}},
		Chain: {{0, 2}, {1, 3}, {4, 6}, {5, 7}},
	}
	for i, s := range comm[:5] {
		if !reflect.DeepEqual(s.Groups, want[s.Pattern]) {
			t.Errorf("phase %d (%v): groups %v", i, s.Pattern, s.Groups)
		}
	}
	if dp := comm[5]; dp.Pattern != Ring || !reflect.DeepEqual(dp.Groups, [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}) {
		t.Errorf("data-parallel phase %+v", dp)
	}
	if p := Period(st); p < 2800*time.Millisecond || p > 3100*time.Millisecond {
		t.Errorf("iteration %v, the paper's ~3 s", p)
	}
	// 12 servers: three replicas, a longer data-parallel ring.
	st12 := steps(t, "GPT3", 32, 12)
	if g := st12[len(st12)-1].Groups; len(g) != 4 || len(g[0]) != 3 {
		t.Errorf("12 servers: data groups %v", g)
	}
	// 2 and 6 servers: the tensor-parallel layout over all servers.
	for _, n := range []int{2, 6} {
		if s := steps(t, "GPT3", 32, n); len(s) != 3 || s[0].Groups != nil {
			t.Errorf("%d servers: %+v", n, s)
		}
	}
}
