package trace

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/orrery/orrery/internal/eval/throughput"
)

// runs summarises a schedule as (from epoch, batch size) pairs.
func runs(bs []int) [][2]int {
	var r [][2]int
	for e, b := range bs {
		if e == 0 || b != bs[e-1] {
			r = append(r, [2]int{e, b})
		}
	}
	return r
}

func TestScheduleGNSNotesExample(t *testing.T) {
	// Notes: ResNet-18, bs0 = 32, 1 GPU: x2 from epoch 21, x4 from 31, x8 from 51.
	for _, c := range []struct {
		epochs int
		want   [][2]int
	}{
		{100, [][2]int{{0, 32}, {21, 64}, {31, 128}, {51, 256}, {99, 32}}}, // last epoch reverts (quirk)
		{40, [][2]int{{0, 32}, {21, 64}, {31, 128}, {39, 32}}},             // last epoch in phase 2
		{25, [][2]int{{0, 32}, {21, 64}}},                                  // last epoch in phase 1: no revert
		{22, [][2]int{{0, 32}, {21, 64}}},
		{21, [][2]int{{0, 32}}}, // E ≤ 21: never adapts
		{1, [][2]int{{0, 32}}},
	} {
		bs, err := Schedule(nil, ResNet18, GNS, 32, 1, c.epochs)
		if err != nil {
			t.Fatal(err)
		}
		if got := runs(bs); !slices.Equal(got, c.want) {
			t.Errorf("E=%d: %v, want %v", c.epochs, got, c.want)
		}
	}
	// The cap: LM bs0 = 5 on 1 GPU goes 10, 20, 40, then 80 (5·16 = 80).
	bs, _ := Schedule(nil, LM, GNS, 5, 1, 100)
	if got, want := runs(bs), [][2]int{{0, 5}, {31, 10}, {41, 20}, {61, 40}, {71, 80}, {99, 5}}; !slices.Equal(got, want) {
		t.Errorf("LM: %v, want %v", got, want)
	}
	// ResNet-50 bs0 = 32 on 2 GPUs: 64 from 101, 128 from 111 (32·4 = 128 = cap).
	bs, _ = Schedule(nil, ResNet50, GNS, 32, 2, 200)
	if got, want := runs(bs), [][2]int{{0, 32}, {101, 64}, {111, 128}, {199, 32}}; !slices.Equal(got, want) {
		t.Errorf("RN50: %v, want %v", got, want)
	}
	// No rule: 8 GPUs, Transformer, bs0 at the cap.
	for _, c := range []struct {
		m        Model
		bs, gpus int
	}{{ResNet18, 32, 8}, {Transformer, 16, 1}, {ResNet18, 256, 1}, {ResNet50, 16, 1}} {
		bs, _ := Schedule(nil, c.m, GNS, c.bs, c.gpus, 300)
		if len(runs(bs)) != 1 {
			t.Errorf("%v bs %d x%d adapts: %v", c.m, c.bs, c.gpus, runs(bs))
		}
	}
}

// gnsLoops is a transcription of the upstream loop structure (first phase:
// assign, then break at the last epoch; later phases: break, then assign),
// to check Schedule's interval form against it.
func gnsLoops(m Model, bs0, gpus, E int) []int {
	bs := make([]int, E)
	for e := range bs {
		bs[e] = bs0
	}
	starts, n := gnsStarts(m, bs0, gpus)
	if n > 0 && E > starts[0] && m != Transformer {
		for k := range n {
			hi := E
			if k+1 < n {
				hi = starts[k+1]
			}
			for e := starts[k]; e < hi; e++ {
				if k == 0 {
					bs[e] = bs[e] << (k + 1)
					if e+1 >= E {
						break
					}
				} else {
					if e+1 >= E {
						break
					}
					bs[e] = bs[e] << (k + 1)
				}
			}
		}
	}
	for e := range bs {
		bs[e] = min(bs[e], m.MaxBatchSize())
	}
	return bs
}

func TestScheduleGNSMatchesLoops(t *testing.T) {
	checked := 0
	for _, m := range Models() {
		for _, bs0 := range m.BatchSizes() {
			for _, gpus := range []int{1, 2, 4, 8} {
				for E := 1; E <= 260; E++ {
					got, err := Schedule(nil, m, GNS, bs0, gpus, E)
					if err != nil {
						t.Fatal(err)
					}
					if want := gnsLoops(m, bs0, gpus, E); !slices.Equal(got, want) {
						t.Fatalf("%v bs %d x%d E=%d:\n got %v\nwant %v", m, bs0, gpus, E, runs(got), runs(want))
					}
					checked++
				}
			}
		}
	}
	// Every adapting rule reaches its phases for E = 260: 33 rules.
	rules := 0
	for _, m := range Models() {
		for _, bs0 := range m.BatchSizes() {
			for _, gpus := range []int{1, 2, 4, 8} {
				if _, n := gnsStarts(m, bs0, gpus); n > 0 {
					rules++
				}
			}
		}
	}
	if rules != 33 {
		t.Errorf("%d GNS rules, want 33", rules)
	}
}

func TestScheduleAccordion(t *testing.T) {
	for _, c := range []struct {
		m      Model
		bs0, E int
		want   [][2]int
	}{
		// The first 30% is critical: e > 0.3·100 = 30.
		{ResNet18, 32, 100, [][2]int{{0, 32}, {31, 256}}},
		{ResNet18, 32, 300, [][2]int{{0, 32}, {91, 256}, {150, 32}, {160, 256}, {250, 32}, {260, 256}}},
		{ResNet18, 256, 10, [][2]int{{0, 256}}},
		// ResNet-18 at 16 has a 10-epoch first regime; E = 20: e > 6 and ≥ 10.
		{ResNet18, 16, 20, [][2]int{{0, 16}, {10, 256}}},
		{ResNet50, 16, 100, [][2]int{{0, 16}, {40, 128}, {60, 16}, {70, 128}, {90, 16}}},
		{LM, 5, 20, [][2]int{{0, 5}, {10, 80}}},
		{Recommendation, 2048, 100, [][2]int{{0, 2048}, {40, 8192}, {60, 2048}, {70, 8192}, {80, 2048}, {90, 8192}}},
		{Recommendation, 8192, 100, [][2]int{{0, 8192}}},
		{Transformer, 16, 100, [][2]int{{0, 16}}},
	} {
		bs, err := Schedule(nil, c.m, Accordion, c.bs0, 1, c.E)
		if err != nil {
			t.Fatal(err)
		}
		if got := runs(bs); !slices.Equal(got, c.want) {
			t.Errorf("%v bs %d E=%d: %v, want %v", c.m, c.bs0, c.E, got, c.want)
		}
	}
	// ResNet-50's regimes end at epoch 600.
	bs, _ := Schedule(nil, ResNet50, Accordion, 32, 1, 700)
	if bs[605] != 128 || bs[599] != 128 || bs[575] != 32 {
		t.Errorf("RN50 after 600: %v", runs(bs)[len(runs(bs))-3:])
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, c := range []struct {
		m            Model
		mode         Mode
		bs, gpus, ep int
		want         error
	}{
		{ResNet18, Static, 48, 1, 10, ErrBatchSize},
		{Model(9), Static, 32, 1, 10, ErrUnknownModel},
		{ResNet18, Mode(9), 32, 1, 10, ErrMode},
		{ResNet18, Static, 32, 0, 10, ErrRange},
		{ResNet18, Static, 32, 1, 0, ErrRange},
		{ResNet18, Static, 32, 1, MaxEpochs + 1, ErrRange},
	} {
		if _, err := Schedule(nil, c.m, c.mode, c.bs, c.gpus, c.ep); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestDerive(t *testing.T) {
	tab := loadTable(t, "tacc_throughputs.json")
	jobs, err := ParseFile(traceFile(t, "120_"))
	if err != nil {
		t.Fatal(err)
	}
	// Job 0: LM bs 10, GNS, 1 GPU, 134583 steps: ⌈59675/10⌉ = 5968 steps per
	// epoch, E = ⌈134583/5968⌉ = 23. Phases 10 → 20 at 11, → 40 at 21; the
	// last epoch (22) lies in the second phase and reverts to 10.
	p, err := Derive(&jobs[0], tab, DeriveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Epochs() != 23 || p.SamplesPerEpoch != 59675 || p.GPUs != 1 || p.Model != LM {
		t.Fatalf("job 0: %+v", p)
	}
	if got, want := runs(p.EpochBS), [][2]int{{0, 10}, {11, 20}, {21, 40}, {22, 10}}; !slices.Equal(got, want) {
		t.Errorf("job 0 schedule %v, want %v", got, want)
	}
	for e, b := range p.EpochBS {
		tput, _ := tab.Alone("v100", throughput.Key{Model: "LM", BatchSize: b, GPUs: 1})
		if want := 59675.0 / float64(b) / tput; p.EpochDur[e] != want {
			t.Fatalf("epoch %d: %v, want %v", e, p.EpochDur[e], want)
		}
	}
	// Cross-checked once against a Python transcription of upstream
	// generate_pickle_file: Σ d_e and Σ max(1, round(d_e)) for job 0.
	if iso := p.Isolated(); iso != 1224.7973776609238 {
		t.Errorf("job 0 isolated %v", iso)
	}
	var rounded float64
	for _, d := range p.MetadataDurations(nil) {
		rounded += d
	}
	if rounded != 1228 {
		t.Errorf("job 0 rounded durations sum %v", rounded)
	}

	// For static jobs the generator set total_steps = duration·tput, and the
	// profile rounds steps up to whole epochs, so T_iso ≈ duration. (Not
	// exactly: the steps were computed from another measurement set; the
	// gap is under 1%.)
	all, err := DeriveAll(jobs, tab, DeriveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	static := 0
	for i, j := range jobs {
		if j.Mode != Static {
			continue
		}
		static++
		d := all[i].Isolated() - j.Duration
		if math.Abs(d) > 0.01*j.Duration+all[i].EpochDur[0] {
			t.Errorf("job %d: T_iso %v vs duration %v", i, all[i].Isolated(), j.Duration)
		}
	}
	if static != 4 {
		t.Errorf("%d static jobs", static)
	}
}

func TestDeriveErrors(t *testing.T) {
	tab, err := throughput.Load(strings.NewReader(`{"v100": {
		"('Recommendation (batch size 512)', 1)": {"null": 10},
		"('ResNet-18 (batch size 32)', 1)": {"null": 0},
		"('ResNet-18 (batch size 64)', 1)": {"null": 1e300}}}`))
	if err != nil {
		t.Fatal(err)
	}
	line := "Recommendation (batch size 512)\tc\tw\t-n\t1\t1000\t%s\tstatic\t1\t-1\t100\t0"
	for _, c := range []struct {
		line string
		want []error
	}{
		// Recommendation is not distributed: no 2-GPU throughput.
		{strings.Replace(line, "%s", "2", 1), []error{ErrThroughput, throughput.ErrUnknownKey}},
		// GNS reaches 1024, which the table lacks.
		{strings.Replace(strings.Replace(line, "%s", "1", 1), "static", "gns", 1) + "", nil},
		{"ResNet-18 (batch size 32)\tc\tw\t-n\t1\t1000\t1\tstatic\t1\t-1\t100\t0", []error{ErrThroughput}},
		{"ResNet-18 (batch size 64)\tc\tw\t-n\t1\t1000\t1\tstatic\t1\t-1\t100\t0", []error{ErrThroughput}}, // above MaxThroughput
		{strings.Replace(strings.Replace(line, "%s", "1", 1), "\t1000\t", "\t999999999999\t", 1), []error{ErrRange}},
	} {
		jobs, err := Parse(strings.NewReader("\n" + c.line))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Derive(&jobs[0], tab, DeriveOptions{})
		if c.want == nil {
			// 1000 steps of 231 per epoch: 5 epochs, too few to adapt.
			if err != nil {
				t.Errorf("%q: %v", c.line, err)
			}
			continue
		}
		for _, w := range c.want {
			if !errors.Is(err, w) {
				t.Errorf("%q: %v, want %v", c.line, err, w)
			}
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 {
			t.Errorf("%q: error %v has no line 2", c.line, err)
		}
	}
	if _, err := Derive(&Job{Model: LM, BatchSize: 5, TotalSteps: 10, GPUs: 1, Mode: Static}, nil, DeriveOptions{}); !errors.Is(err, ErrThroughput) {
		t.Errorf("nil table: %v", err)
	}
	// GNS with many epochs reaches 1024 and fails.
	j := Job{Model: Recommendation, BatchSize: 512, TotalSteps: 231 * 50, GPUs: 1, Mode: GNS}
	if _, err := Derive(&j, tab, DeriveOptions{}); !errors.Is(err, ErrThroughput) || !strings.Contains(err.Error(), "batch size 1024") {
		t.Errorf("missing adapted size: %v", err)
	}
}

func TestMetadataDurations(t *testing.T) {
	p := Profile{EpochDur: []float64{0.2, 0.5, 1.5, 2.5, 3.5, 36.4, 36.5, 1e6 + 0.5}}
	got := p.MetadataDurations(make([]float64, 0, 1))
	want := []float64{1, 1, 2, 2, 4, 36, 36, 1e6}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDeclaredModes(t *testing.T) {
	for _, c := range []struct {
		m    Model
		mode Mode
		bs0  int
		want []int
	}{
		{ResNet18, Static, 32, []int{32}},
		{ResNet18, Accordion, 32, []int{32, 256}},
		{ResNet18, GNS, 32, []int{32, 64, 128, 256}},
		{ResNet18, GNS, 256, []int{256}},
		{LM, GNS, 5, []int{5, 10, 20, 40, 80}},
		{Transformer, GNS, 16, []int{16}},
		{Transformer, Accordion, 16, []int{16}},
		{Recommendation, Accordion, 8192, []int{8192}},
	} {
		if got := DeclaredModes(c.m, c.mode, c.bs0); !slices.Equal(got, c.want) {
			t.Errorf("%v %v %d: %v, want %v", c.m, c.mode, c.bs0, got, c.want)
		}
	}
	// Declared modes cover every size the authors' profiles reach.
	tab := loadTable(t, "wisr_throughputs.json")
	jobs, err := ParseFile(traceFile(t, "900_0.2_5_1000_"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		p, err := Derive(&jobs[i], tab, DeriveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		modes := DeclaredModes(jobs[i].Model, jobs[i].Mode, jobs[i].BatchSize)
		for e, b := range p.EpochBS {
			if !slices.Contains(modes, b) {
				t.Fatalf("job %d epoch %d: batch size %d not in %v", i, e, b, modes)
			}
		}
	}
}

func TestEpochs(t *testing.T) {
	for _, c := range []struct {
		m     Model
		bs    int
		steps int64
		want  int64
	}{
		{LM, 10, 134583, 23},
		{ResNet18, 32, 1563, 1},
		{ResNet18, 32, 1564, 2},
		{Transformer, 128, 79, 1}, // ⌈10000/128⌉ = 79
		{Transformer, 128, 80, 2},
		{ResNet18, 32, 0, 0},
	} {
		if got := Epochs(c.m, c.bs, c.steps); got != c.want {
			t.Errorf("%v bs %d %d steps: %d epochs, want %d", c.m, c.bs, c.steps, got, c.want)
		}
	}
	if d, err := EpochDuration(loadTable(t, "tacc_throughputs.json"), "", ResNet18, 128, 8); err != nil || math.Abs(d-4.9) > 0.05 {
		t.Errorf("RN18 bs128 x8 epoch %v %v", d, err)
	}
}

func BenchmarkDerive900(b *testing.B) {
	tab := loadTable(b, "wisr_throughputs.json")
	jobs, err := ParseFile(traceFile(b, "900_0.2_5_1000_"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DeriveAll(jobs, tab, DeriveOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
