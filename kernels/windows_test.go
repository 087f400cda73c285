package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// naiveWindows is Windows by its definition: every residue of every run
// at every shift.
func naiveWindows(out []int64, x0 int64, psi []int64, runs []Run, from0 int) {
	m := len(psi)
	for s := range out {
		out[s] += x0
		for _, r := range runs {
			for c := int(r.Start); c < int(r.Start+r.Len); c++ {
				out[s] += r.N * psi[(c+from0+s)%m]
			}
		}
	}
}

// windowsCase is one drawn input of Windows.
type windowsCase struct {
	psi   []int64
	runs  []Run
	from0 int
	x0    int64
	out   []int64 // what out holds before the call
}

// drawWindows draws a circle of 1 to 80 residues, psi mixed in sign and
// size, up to 6 runs anywhere on it (so that windows wrap, and from0 moves
// their starts past m), and as many shifts as the circle allows.
func drawWindows(rng *rand.Rand) windowsCase {
	m := 1 + rng.IntN(80)
	wc := windowsCase{psi: make([]int64, m), from0: rng.IntN(m)}
	for i := range wc.psi {
		switch rng.IntN(3) {
		case 0:
			wc.psi[i] = rng.Int64N(1 << 25)
		case 1:
			wc.psi[i] = -rng.Int64N(1 << 40)
		}
	}
	for range rng.IntN(7) {
		wc.runs = append(wc.runs, Run{Start: rng.Int32N(int32(m)), Len: rng.Int32N(int32(m) + 1), N: rng.Int64N(1<<20) - 1<<10})
	}
	k := rng.IntN(m + 1)
	if rng.IntN(2) == 0 {
		k = rng.IntN(m - wc.from0 + 1) // the link search's: no shift past m
	}
	if rng.IntN(2) == 0 {
		wc.x0 = rng.Int64N(1<<45) - 1<<44
	}
	wc.out = make([]int64, k)
	for s := range wc.out {
		wc.out[s] = rng.Int64N(1<<50) - 1<<49
	}
	return wc
}

// TestWindows checks Windows through the public API on every path, and
// the generic loop, against the definition, on random circles whose runs
// wrap, with from0 > 0 and every count of shifts to m; that it adds to
// out (leaving what lies past it) and reads nothing of pre but what it
// wrote.
func TestWindows(t *testing.T) {
	check := func(t *testing.T, name string, f func(out []int64, x0 int64, psi []int64, runs []Run, from0 int, pre []int64)) {
		rng := rand.New(rand.NewPCG(51, 52))
		for it := range 5000 {
			wc := drawWindows(rng)
			want := slices.Clone(wc.out)
			naiveWindows(want, wc.x0, wc.psi, wc.runs, wc.from0)
			pre := make([]int64, WindowsScratch(len(wc.psi)))
			for i := range pre {
				pre[i] = rng.Int64() // whatever the scratch held before
			}
			buf := append(slices.Clone(wc.out), 77) // past out: untouched
			f(buf[:len(wc.out)], wc.x0, wc.psi, wc.runs, wc.from0, pre)
			if d := cmp.Diff(append(want, 77), buf); d != "" {
				t.Fatalf("%s #%d (m=%d, from0=%d, runs %v): out (-want +got)\n%s", name, it, len(wc.psi), wc.from0, wc.runs, d)
			}
		}
	}
	t.Run("generic", func(t *testing.T) { check(t, "generic", windowsGeneric) })
	forEachPath(t, func(t *testing.T) { check(t, "public API", Windows) })
}

// TestWindowsWorked pins one case worked by hand: psi = 1, 2, 3, 4 on a
// circle of 4, a run of 3 residues from 2 counted twice and one of 1 from
// 0 counted -1, two shifts from 3, x0 = 1000. At shift 3 the first run
// covers residues 1, 2, 3 (9) and the second residue 3 (4): 2*9 - 4 = 14;
// at shift 4 = 0 residues 2, 3, 0 (8) and 0 (1): 16 - 1 = 15. With no
// runs only x0 is added.
func TestWindowsWorked(t *testing.T) {
	out := []int64{100, 200}
	Windows(out, 1000, []int64{1, 2, 3, 4}, []Run{{2, 3, 2}, {0, 1, -1}}, 3, make([]int64, WindowsScratch(4)))
	if d := cmp.Diff([]int64{1114, 1215}, out); d != "" {
		t.Fatalf("Windows (-want +got)\n%s", d)
	}
	Windows(out, -1, []int64{1, 2, 3, 4}, nil, 3, make([]int64, WindowsScratch(4)))
	if d := cmp.Diff([]int64{1113, 1214}, out); d != "" {
		t.Fatalf("Windows without runs (-want +got)\n%s", d)
	}
}

// TestRunLayout checks the 16-byte layout of Run the windows import reads.
func TestRunLayout(t *testing.T) {
	var r Run
	if unsafe.Sizeof(r) != 16 || unsafe.Offsetof(r.Len) != 4 || unsafe.Offsetof(r.N) != 8 || unsafe.Alignof(r) != 8 {
		t.Fatalf("Run: size %d, Len at %d, N at %d, align %d; the import reads 16 bytes (Start 0, Len 4, N 8), 8-aligned",
			unsafe.Sizeof(r), unsafe.Offsetof(r.Len), unsafe.Offsetof(r.N), unsafe.Alignof(r))
	}
}

// TestWindowsPanics checks the documented panics.
func TestWindowsPanics(t *testing.T) {
	psi := []int64{1, 2, 3}
	pre := make([]int64, WindowsScratch(3))
	for name, f := range map[string]func(){
		"empty psi":      func() { Windows(nil, 0, nil, nil, 0, pre) },
		"scratch":        func() { Windows(nil, 0, psi, nil, 0, pre[:6]) },
		"from0":          func() { Windows(nil, 0, psi, nil, 3, pre) },
		"negative from0": func() { Windows(nil, 0, psi, nil, -1, pre) },
		"shifts":         func() { Windows(make([]int64, 4), 0, psi, nil, 0, pre) },
		"start":          func() { Windows(nil, 0, psi, []Run{{3, 1, 1}}, 0, pre) },
		"negative start": func() { Windows(nil, 0, psi, []Run{{-1, 1, 1}}, 0, pre) },
		"length":         func() { Windows(nil, 0, psi, []Run{{0, 4, 1}}, 0, pre) },
		"negative len":   func() { Windows(nil, 0, psi, []Run{{0, -1, 1}}, 0, pre) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestWindowsZeroAllocs proves Windows allocates nothing, on every path.
func TestWindowsZeroAllocs(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		psi := make([]int64, 500)
		for i := range psi {
			psi[i] = int64(i%7) - 3
		}
		runs := []Run{{10, 40, 3}, {490, 30, 1}, {200, 1, 5}}
		out, pre := make([]int64, 300), make([]int64, WindowsScratch(500))
		if a := testing.AllocsPerRun(20, func() { Windows(out, 7, psi, runs, 150, pre) }); a != 0 {
			t.Errorf("Windows: %v allocs", a)
		}
	})
}

// FuzzWindows compares Windows on the current path, and the generic loop,
// with the definition on inputs built from the fuzzer's bytes: the circle
// from mRaw, then per run three bytes (start, length, count), then psi,
// two bytes a residue; x0 as drawn.
func FuzzWindows(f *testing.F) {
	f.Add([]byte{2, 3, 2, 0, 1, 255, 1, 0, 2, 0, 3, 0, 4, 0}, uint8(4), uint8(3), uint8(2), uint8(2), int64(1000))
	f.Add(make([]byte, 64), uint8(0), uint8(0), uint8(0), uint8(0), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, mRaw, fromRaw, kRaw, nRuns uint8, x0 int64) {
		m := 1 + int(mRaw%64)
		from0, k := int(fromRaw)%m, int(kRaw)%(m+1)
		runs := make([]Run, 0, nRuns%8)
		for range nRuns % 8 {
			if len(data) < 3 {
				break
			}
			runs = append(runs, Run{Start: int32(data[0]) % int32(m), Len: int32(data[1]) % int32(m+1), N: int64(int8(data[2]))})
			data = data[3:]
		}
		psi := make([]int64, m)
		for i := range psi {
			if len(data) >= 2 {
				psi[i] = int64(int16(uint16(data[0]) | uint16(data[1])<<8))
				data = data[2:]
			}
		}
		want := make([]int64, k)
		naiveWindows(want, x0, psi, runs, from0)
		pre := make([]int64, WindowsScratch(m))
		got := make([]int64, k)
		Windows(got, x0, psi, runs, from0, pre)
		if !slices.Equal(got, want) {
			t.Fatalf("Windows (%s) m=%d from0=%d runs %v: %v, want %v", Implementation(), m, from0, runs, got, want)
		}
		clear(got)
		windowsGeneric(got, x0, psi, runs, from0, pre)
		if !slices.Equal(got, want) {
			t.Fatalf("windowsGeneric m=%d from0=%d runs %v: %v, want %v", m, from0, runs, got, want)
		}
	})
}

// BenchmarkWindows times a window scan on each path (forcing the generic
// loop under the host shows what the import saves): a circle of 720
// residues, 240 shifts from 300 and one or eight runs (the link search's
// run scan has about one per demand on the 12-job ranking), and a call
// with nothing to do, the cost of the call itself.
func BenchmarkWindows(b *testing.B) {
	psi := make([]int64, 720)
	for i := range psi {
		psi[i] = int64(i%13) - 6
	}
	out, pre := make([]int64, 240), make([]int64, WindowsScratch(len(psi)))
	runs := []Run{{500, 300, 2}, {10, 40, 3}, {200, 1, 5}, {600, 119, 1}, {0, 720, 1}, {333, 333, 4}, {700, 19, 7}, {90, 90, 9}}
	for _, tc := range []struct {
		name  string
		runs  []Run
		out   []int64
		psi   []int64
		from0 int
	}{
		{"m=720/runs=1", runs[:1], out, psi, 300},
		{"m=720/runs=8", runs, out, psi, 300},
		{"empty", nil, nil, psi[:1], 0},
	} {
		for _, im := range impls() {
			if !im.path {
				continue
			}
			b.Run(tc.name+"/"+im.name, func(b *testing.B) {
				if !im.ok {
					b.Skipf("%s: not supported by this CPU", im.name)
				}
				defer forcePath(im.name)()
				b.ReportAllocs()
				for b.Loop() {
					Windows(tc.out, 7, tc.psi, tc.runs, tc.from0, pre)
				}
			})
		}
	}
}
