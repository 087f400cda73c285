package workload

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

const alibaba = "../../../internal/eval/data/alibaba"

func loadTrace(t *testing.T, name string) WorkerTimes {
	t.Helper()
	f, err := os.Open(alibaba + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wt, err := ParseWorkerTimes(f)
	if err != nil {
		t.Fatal(err)
	}
	return wt
}

func TestParseWorkerTimesReal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples int
		workers []int
		last    int
	}{
		{"job_1_norm.csv", 300, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2988},
		{"job_2_norm.csv", 254, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2486},
		{"job_3_norm.csv", 249, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2481},
	} {
		wt := loadTrace(t, tc.name)
		if len(wt.Iter) != tc.samples || !slices.Equal(wt.Workers, tc.workers) || wt.Iter[0] != 1 || wt.Iter[len(wt.Iter)-1] != tc.last {
			t.Errorf("%s: %d samples of workers %v, iterations %d..%d", tc.name, len(wt.Iter), wt.Workers, wt.Iter[0], wt.Iter[len(wt.Iter)-1])
		}
	}
	// Job 1's first rows.
	wt := loadTrace(t, "job_1_norm.csv")
	if wt.Times[0][0] != 476 || wt.Times[0][9] != 436 || wt.Iter[1] != 11 {
		t.Fatalf("first sample %v", wt.Times[0])
	}
}

// Job 1's straggler (worker 6) emerges in the middle of training: the
// synchronous job over all ten workers slows down about 2x then, while
// worker 0 alone stays within a few percent.
func TestSyncStraggler(t *testing.T) {
	wt := loadTrace(t, "job_1_norm.csv")
	all, err := wt.Sync([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2988 {
		t.Fatalf("%d iterations", len(all))
	}
	if m := median(all); math.Abs(m-1) > 0.01 {
		t.Fatalf("median %v", m)
	}
	if mx := slices.Max(all); mx < 1.8 || mx > 2.2 {
		t.Fatalf("max %v: the straggler should double the iteration", mx)
	}
	one, _ := wt.Sync([]int{0})
	if mx := slices.Max(one); mx > 1.15 {
		t.Fatalf("worker 0 alone: max %v", mx)
	}
	// A sample holds for the 10 iterations it stands for.
	if all[0] != all[9] || all[0] == 0 {
		t.Fatalf("%v", all[:11])
	}
	if _, err := wt.Sync(nil); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	if _, err := wt.Sync([]int{10}); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
}

// A missing sample keeps the worker's previous value.
func TestSyncMissing(t *testing.T) {
	wt, err := ParseWorkerTimes(strings.NewReader(",worker,gpu,time,batch_time_norm\n0,0,1,1,100\n1,1,1,1,200\n2,0,1,3,300\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(wt.Times[1][1]) {
		t.Fatalf("%v", wt.Times)
	}
	n, err := wt.Sync([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	// Samples: max(100, 200) = 200 at 1 (held 2 iterations), max(300, 200) = 300 at 3.
	want := Noise{200.0 / 250, 200.0 / 250, 300.0 / 250}
	if !slices.Equal(n, want) {
		t.Fatalf("%v, want %v", n, want)
	}
}

func TestCoVReal(t *testing.T) {
	f, err := os.Open(alibaba + "/coefficient_variation.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseCoV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Jobs) != 100 || c.Jobs[0] != "job_00" || len(c.Values[0]) != 387 {
		t.Fatalf("%d jobs, first %q with %d iterations", len(c.Jobs), c.Jobs[0], len(c.Values[0]))
	}
	if c.Values[0][0] != 0.0536543687132439 {
		t.Fatalf("first value %v", c.Values[0][0])
	}
	j, err := c.Jitter(0, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := (1 + 1.0294*0.0536543687132439) / (1 + 1.0294*median(c.Values[0]))
	if j[0] != want || math.Abs(median(j)-1) > 1e-9 {
		t.Fatalf("jitter[0] = %v, want %v; median %v", j[0], want, median(j))
	}
	// The medians ParseCoV keeps are the rows' own: a CoV without them
	// (built by hand) gives every row's jitter bit for bit.
	bare := CoV{Jobs: c.Jobs, Values: c.Values}
	for row := range c.Values {
		if c.Medians[row] != median(c.Values[row]) {
			t.Fatalf("row %d: median %v, want %v", row, c.Medians[row], median(c.Values[row]))
		}
		a, _ := c.Jitter(row, 5)
		b, _ := bare.Jitter(row, 5)
		if !slices.Equal(a, b) {
			t.Fatalf("row %d: jitter with the kept median differs", row)
		}
	}
	one, _ := c.Jitter(0, 1)
	if slices.ContainsFunc(one, func(v float64) bool { return v != 1 }) {
		t.Fatal("one worker should have no jitter")
	}
	if _, err := c.Jitter(100, 2); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
}

func TestReplay(t *testing.T) {
	r, err := LoadReplay(os.DirFS(alibaba), Both)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Traces) != 3 || len(r.CoV.Jobs) != 100 {
		t.Fatalf("%d traces, %d CoV rows", len(r.Traces), len(r.CoV.Jobs))
	}
	a, err := r.For(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.For(4, 3)
	if !slices.Equal(a, b) || len(a) == 0 {
		t.Fatal("not deterministic")
	}
	// Both = traces x jitter.
	tr, _ := Replay{Traces: r.Traces, Source: Traces}.For(4, 3)
	ji, _ := Replay{CoV: r.CoV, Source: Jitter}.For(4, 3)
	if !slices.Equal(a, tr.Mul(ji)) {
		t.Fatal("Both is not Traces x Jitter")
	}
	none, _ := Replay{Source: None}.For(4, 3)
	if none.Factor(17) != 1 {
		t.Fatal("no noise should be 1")
	}
	if _, err := LoadReplay(os.DirFS(t.TempDir()), Both); err == nil {
		t.Fatal("an empty directory loaded")
	}
	if _, err := r.For(-1, 2); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	// Offset deals job 4 what job 6 gets without it.
	shifted := r
	shifted.Offset = 2
	sa, _ := shifted.For(4, 3)
	sb, _ := r.For(6, 3)
	if !slices.Equal(sa, sb) {
		t.Fatal("Offset does not shift the dealing")
	}
	if _, err := (Replay{Offset: -1}).For(1, 1); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	for _, s := range []string{"", "both", "traces", "cov", "none"} {
		src, err := ParseSource(s)
		if err != nil || (s != "" && src.String() != s) {
			t.Errorf("ParseSource(%q) = %v, %v", s, src, err)
		}
	}
	if _, err := ParseSource("gauss"); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
}

func TestNoiseMul(t *testing.T) {
	a, b := Noise{1, 2}, Noise{3, 4, 5}
	if got := a.Mul(b); !slices.Equal(got, Noise{3, 8, 5}) {
		t.Fatalf("%v", got)
	}
	if got := Noise(nil).Mul(b); !slices.Equal(got, b) {
		t.Fatalf("%v", got)
	}
	if a.Factor(3) != 2 || Noise(nil).Factor(5) != 1 {
		t.Fatal("Factor")
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"a,b,c\n1,2,3\n",
		",worker,gpu,time,batch_time_norm\n",
		",worker,gpu,time,batch_time_norm\n0,x,1,1,100\n",
		",worker,gpu,time,batch_time_norm\n0,0,1,1,-5\n",
		",worker,gpu,time,batch_time_norm\n0,0,1,1,NaN\n",
		",worker,gpu,time,batch_time_norm\n0,0,1\n",
	} {
		if _, err := ParseWorkerTimes(strings.NewReader(in)); !errors.Is(err, ErrData) {
			t.Errorf("ParseWorkerTimes(%q): %v", in, err)
		}
	}
	for _, in := range []string{
		"",
		",0,1\n",
		",0,1\njob,,\n",
		",0,1\njob,0.1,x\n",
		",0,1\njob,,0.2\n",
		",0,1\njob,-1,0.2\n",
		",0,1\njob,inf,0.2\n",
	} {
		if _, err := ParseCoV(strings.NewReader(in)); !errors.Is(err, ErrData) {
			t.Errorf("ParseCoV(%q): %v", in, err)
		}
	}
}

func FuzzParseWorkerTimes(f *testing.F) {
	f.Add(",worker,gpu,time,batch_time_norm\n0,0,25,1,476\n1,1,25,1,509\n2,0,25,11,480\n")
	f.Add(",worker,gpu,time,batch_time_norm\n0,0,1,3,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		wt, err := ParseWorkerTimes(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrData) {
				t.Fatalf("error %v does not wrap ErrData", err)
			}
			return
		}
		all := make([]int, len(wt.Workers))
		for i := range all {
			all[i] = i
		}
		if len(wt.Iter) > 1 && wt.Iter[len(wt.Iter)-1]-wt.Iter[0] > 1<<20 {
			return // a huge span is valid but slow to expand
		}
		n, err := wt.Sync(all)
		if err != nil {
			return
		}
		for _, v := range n {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("multiplier %v", v)
			}
		}
	})
}

func FuzzParseCoV(f *testing.F) {
	f.Add(",0,1,2\njob_00,0.05,0.04,0.03\njob_01,0.1,,\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseCoV(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrData) {
				t.Fatalf("error %v does not wrap ErrData", err)
			}
			return
		}
		for row := range c.Values {
			n, err := c.Jitter(row, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range n {
				if !(v > 0) || math.IsInf(v, 0) {
					t.Fatalf("multiplier %v", v)
				}
			}
		}
	})
}

// Gaussian jitter: mean 1 and the asked coefficient of variation, one
// deterministic series per job.
func TestGauss(t *testing.T) {
	r := Replay{Source: Gauss, CV: 0.03, Seed: 4}
	a, err := r.For(2, 3)
	if err != nil || len(a) != GaussLength {
		t.Fatalf("%d multipliers, %v", len(a), err)
	}
	var m, v float64
	for _, x := range a {
		m += x
	}
	m /= float64(len(a))
	for _, x := range a {
		v += (x - m) * (x - m)
	}
	sd := math.Sqrt(v / float64(len(a)))
	if math.Abs(m-1) > 0.002 || math.Abs(sd-0.03) > 0.002 {
		t.Fatalf("mean %v, sd %v", m, sd)
	}
	again, _ := r.For(2, 7)
	other, _ := r.For(3, 3)
	if !slices.Equal(a, again) || slices.Equal(a, other) {
		t.Fatal("a job's series depends on its ID and the seed only")
	}
	if z, _ := (Replay{Source: Gauss}).For(1, 1); z.Factor(9) != 1 {
		t.Fatal("CV 0 is no noise")
	}
	if _, err := (Replay{Source: Gauss, CV: 2}).For(1, 1); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in  string
		src Source
		cv  float64
		ok  bool
	}{{"gauss:0.05", Gauss, 0.05, true}, {"gauss:0", Gauss, 0, true}, {"both", Both, 0, true}, {"gauss:", 0, 0, false},
		{"gauss:-1", 0, 0, false}, {"gauss:NaN", 0, 0, false}, {"gauss", 0, 0, false}} {
		src, cv, err := ParseNoise(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (src != tc.src || cv != tc.cv)) {
			t.Errorf("ParseNoise(%q) = %v, %v, %v", tc.in, src, cv, err)
		}
	}
}

// FuzzParseNoise: any string either parses to a known source (Gauss with a
// CV in [0, 1]) or is ErrInvalid; a parsed Gauss spec round-trips.
func FuzzParseNoise(f *testing.F) {
	for _, s := range []string{"", "both", "traces", "cov", "none", "gauss:0.03", "gauss:1e-9", "gauss:", "gauss:NaN", "gauss:-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		src, cv, err := ParseNoise(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		switch {
		case src == Gauss && !(cv >= 0 && cv <= 1):
			t.Fatalf("%q: CV %v", s, cv)
		case src != Gauss && (cv != 0 || src < Both || src > None):
			t.Fatalf("%q: source %v, CV %v", s, src, cv)
		}
		if src == Gauss {
			if _, err := (Replay{Source: src, CV: cv}).For(0, 1); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
		}
	})
}

// TestDealerAsFor checks that a Dealer deals every job, bit for bit, the
// multipliers Replay.For gives it, with the same errors, for every source,
// with offsets, on the real release and on small hand-made series whose
// periods differ (so the product's wrap is exercised), jobs asking in any
// order so that cached worker-trace series are reused.
func TestDealerAsFor(t *testing.T) {
	real, err := LoadReplay(os.DirFS(alibaba), Both)
	if err != nil {
		t.Fatal(err)
	}
	small := Replay{
		Traces: []WorkerTimes{
			{Workers: []int{0, 1, 2}, Iter: []int{0, 2, 3}, Times: [][]float64{{1, 2, math.NaN()}, {3, 1, 2}, {2, 2, 5}}},
			{Workers: []int{4}, Iter: []int{0}, Times: [][]float64{{7}}},
		},
		CoV: CoV{Values: [][]float64{{0.1, 0.3}, {0.2, 0.5, 0.1, 0.4, 0.7, 0.2, 0.3}}}, // no Medians: computed
	}
	noTrace := small
	noTrace.Traces = []WorkerTimes{{Workers: []int{0}, Iter: []int{0}, Times: [][]float64{{math.NaN()}}}} // no samples: an error
	var cases []Replay
	for _, base := range []Replay{real, small, noTrace} {
		for _, src := range []Source{Both, Traces, Jitter, None} {
			for _, off := range []int{0, 7} {
				r := base
				r.Source, r.Offset = src, off
				cases = append(cases, r)
			}
		}
	}
	cases = append(cases, Replay{Source: Gauss, CV: 0.2, Seed: 3}, Replay{Source: Gauss}, Replay{Source: Both, Offset: -1})
	for c, r := range cases {
		d := r.Dealer()
		for _, id := range []int{5, 0, 1, 2, 31, 5, 61, 3, -1} { // 5, 31 and 61 share windows
			for _, n := range []int{0, 1, 2, 3, 10, 12} {
				want, werr := r.For(id, n)
				got, gerr := d.For(id, n)
				if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
					t.Fatalf("case %d, job %d on %d: errors %v and %v", c, id, n, werr, gerr)
				}
				if werr != nil {
					continue
				}
				for i := range 3*len(want) + 20 {
					if w, g := want.Factor(i), got.Factor(i); math.Float64bits(w) != math.Float64bits(g) {
						t.Fatalf("case %d, job %d on %d, iteration %d: For %v, Dealer %v", c, id, n, i, w, g)
					}
				}
			}
		}
	}
}

// median selects what sorting gives: odd and even lengths, ties, runs.
func TestMedianSelects(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 3000 {
		v := make([]float64, 1+rng.IntN(40))
		for k := range v {
			switch i % 3 {
			case 0:
				v[k] = float64(rng.IntN(5)) // many ties
			case 1:
				v[k] = rng.NormFloat64()
			default:
				v[k] = float64(k / 3) // sorted runs
			}
		}
		if i%2 == 0 {
			slices.Reverse(v)
		}
		s := slices.Clone(v)
		slices.Sort(s)
		want := s[len(s)/2]
		if len(s)%2 == 0 {
			want = (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		in := slices.Clone(v)
		if got := median(v); math.Float64bits(got) != math.Float64bits(want) || !slices.Equal(in, v) {
			t.Fatalf("median(%v) = %v, want %v (input kept: %v)", in, got, want, slices.Equal(in, v))
		}
	}
}
