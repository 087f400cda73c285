package abi

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// The Go structs have the layout the package doc (and the C header)
// promise, and Encode/Decode agree with it.
func TestLayout(t *testing.T) {
	var o LinkOptions
	var r LinkResult
	if unsafe.Sizeof(o) != LinkOptionsSize || unsafe.Sizeof(r) != LinkResultSize {
		t.Fatalf("sizes %d, %d", unsafe.Sizeof(o), unsafe.Sizeof(r))
	}
	offsets := map[string][2]uintptr{
		"Mode": {unsafe.Offsetof(o.Mode), 0}, "MaxPerimeter": {unsafe.Offsetof(o.MaxPerimeter), 4},
		"RoundPeriods": {unsafe.Offsetof(o.RoundPeriods), 8}, "Restarts": {unsafe.Offsetof(o.Restarts), 12},
		"Budget": {unsafe.Offsetof(o.Budget), 16}, "Seed": {unsafe.Offsetof(o.Seed), 24},
		"Status": {unsafe.Offsetof(r.Status), 0}, "Points": {unsafe.Offsetof(r.Points), 4},
		"Perimeter": {unsafe.Offsetof(r.Perimeter), 8}, "Grid": {unsafe.Offsetof(r.Grid), 12},
		"Excess": {unsafe.Offsetof(r.Excess), 16}, "Evaluations": {unsafe.Offsetof(r.Evaluations), 24},
		"Score": {unsafe.Offsetof(r.Score), 32}, "Bound": {unsafe.Offsetof(r.Bound), 40},
		"Unshifted": {unsafe.Offsetof(r.Unshifted), 48}, "Message": {unsafe.Offsetof(r.Message), 56},
	}
	for name, o := range offsets {
		if o[0] != o[1] {
			t.Errorf("%s at offset %d, want %d", name, o[0], o[1])
		}
	}
	// Encode writes what a little-endian host reads through the struct.
	o = LinkOptions{Mode: 1, MaxPerimeter: -2, RoundPeriods: 1, Restarts: 9, Budget: -5, Seed: math.MaxUint64 - 1}
	buf := make([]byte, LinkOptionsSize)
	o.Encode(buf)
	if got := *(*LinkOptions)(unsafe.Pointer(&buf[0])); got != o && binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		t.Errorf("Encode: %+v, want %+v", got, o)
	}
	r = LinkResult{Status: 1, Points: 72, Perimeter: -3, Grid: 5, Excess: -7, Evaluations: 1 << 40, Score: 0.5, Bound: math.Inf(-1), Unshifted: -0.25}
	r.setMessage("hello")
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&r)), LinkResultSize)
	var d LinkResult
	d.Decode(mem)
	if d != r {
		t.Errorf("Decode: %+v, want %+v", d, r)
	}
	if d.Text() != "hello" {
		t.Errorf("Text = %q", d.Text())
	}
	r.setMessage(strings.Repeat("x", 500))
	if n := len(r.Text()); n != len(r.Message)-1 {
		t.Errorf("a long message keeps %d bytes, want %d", n, len(r.Message)-1)
	}
}

func flat(jobs []profile.Profile) (periods, demand []int32) {
	for _, j := range jobs {
		periods = append(periods, int32(j.Period))
		demand = append(demand, j.Demand...)
	}
	return periods, demand
}

func randomJobs(r *rand.Rand, k int) []profile.Profile {
	jobs := make([]profile.Profile, k)
	for j := range jobs {
		t := 4 + r.IntN(40)
		d := make([]int32, t)
		for i := range d {
			if r.IntN(3) == 0 {
				d[i] = int32(r.IntN(30))
			}
		}
		jobs[j] = profile.Profile{Period: t, Demand: d}
	}
	return jobs
}

// On random problems, modes, options and fixed shifts, the flat search
// returns exactly what link.Workspace.Search returns.
func TestSearchMatchesLink(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var s Searcher
	for it := range 300 {
		k := 1 + r.IntN(4)
		jobs := randomJobs(r, k)
		o := LinkOptions{Mode: int32(r.IntN(2)), Restarts: int32(r.IntN(3)), Seed: r.Uint64()}
		if r.IntN(4) == 0 {
			o.Budget = int64(r.IntN(5000))
		}
		if r.IntN(4) == 0 {
			o.MaxPerimeter, o.RoundPeriods = 200, 1
		}
		var fixed []int32
		var nfixed []int
		if r.IntN(3) == 0 {
			for range k {
				v := int32(r.IntN(60)) - 20
				fixed = append(fixed, v)
				nfixed = append(nfixed, int(v))
			}
		}
		capacity := int32(10 + r.IntN(40))
		lo, _, err := o.linkOptions()
		if err != nil {
			t.Fatal(err)
		}
		var w link.Workspace
		want, werr := w.Search(context.Background(), link.Problem{Jobs: jobs, Capacity: capacity, Fixed: nfixed}, lo, nil)

		periods, demand := flat(jobs)
		shifts := make([]int32, k)
		var res LinkResult
		code := s.Search(periods, demand, capacity, fixed, &o, shifts, &res)
		if werr != nil {
			if code == OK {
				t.Fatalf("%d: native error %v, flat OK", it, werr)
			}
			continue
		}
		if code != OK {
			t.Fatalf("%d: flat %v: %s", it, code, res.Text())
		}
		got := LinkResult{Status: int32(want.Status), Points: int32(want.Points), Perimeter: int32(want.Circle.Perimeter),
			Grid: int32(want.Circle.Grid), Excess: want.Excess, Evaluations: want.Evaluated,
			Score: want.Score, Bound: want.Bound, Unshifted: want.Unshifted}
		if res != got {
			t.Fatalf("%d: flat %+v\nnative %+v", it, res, got)
		}
		for j := range k {
			if int(shifts[j]) != want.Shifts[j] {
				t.Fatalf("%d: shifts %v, native %v", it, shifts, want.Shifts)
			}
		}
	}
}

func TestSearchErrors(t *testing.T) {
	jobs := []profile.Profile{{Period: 4, Demand: []int32{3, 3, 0, 0}}, {Period: 4, Demand: []int32{3, 3, 0, 0}}}
	periods, demand := flat(jobs)
	var s Searcher
	for _, c := range []struct {
		name     string
		periods  []int32
		demand   []int32
		capacity int32
		fixed    []int32
		opt      LinkOptions
		shifts   int
		want     Code
		msg      string
	}{
		{"no jobs", nil, nil, 4, nil, LinkOptions{}, 0, Invalid, "no jobs"},
		{"zero period", []int32{0, 4}, demand[:4], 4, nil, LinkOptions{}, 2, Invalid, "period is zero"},
		{"long period", []int32{1 << 25, 4}, demand, 4, nil, LinkOptions{}, 2, Limit, "too many ticks"},
		{"short demand", periods, demand[:7], 4, nil, LinkOptions{}, 2, Invalid, "7 demands"},
		{"negative demand", periods, []int32{3, -3, 0, 0, 3, 3, 0, 0}, 4, nil, LinkOptions{}, 2, Invalid, "negative"},
		{"zero capacity", periods, demand, 0, nil, LinkOptions{}, 2, Invalid, "capacity"},
		{"bad mode", periods, demand, 4, nil, LinkOptions{Mode: 2}, 2, Invalid, "mode 2"},
		{"bad round", periods, demand, 4, nil, LinkOptions{RoundPeriods: 2}, 2, Invalid, "round_periods"},
		{"bad cap", periods, demand, 4, nil, LinkOptions{MaxPerimeter: 1<<24 + 1}, 2, Invalid, "max_perimeter"},
		{"bad restarts", periods, demand, 4, nil, LinkOptions{Restarts: -1}, 2, Invalid, "restarts"},
		{"fixed length", periods, demand, 4, []int32{0}, LinkOptions{}, 2, Invalid, "fixed"},
		{"shifts length", periods, demand, 4, nil, LinkOptions{}, 1, Invalid, "shifts"},
		// 6, 10 and 15 share lcm(2, 3, 5) = 30 residues.
		{"perimeter", []int32{6, 10, 15}, make([]int32, 31), 4, nil, LinkOptions{MaxPerimeter: 20}, 3, Limit, "perimeter"},
		{"demand sum", periods, []int32{1 << 23, 0, 0, 0, 1 << 23, 0, 0, 0}, 4, nil, LinkOptions{}, 2, Limit, "demand"},
	} {
		var res LinkResult
		code := s.Search(c.periods, c.demand, c.capacity, c.fixed, &c.opt, make([]int32, c.shifts), &res)
		if code != c.want || !strings.Contains(res.Text(), c.msg) {
			t.Errorf("%s: %v %q, want %v containing %q", c.name, code, res.Text(), c.want, c.msg)
		}
	}
}

// Exact searches past MaxSearchCells are refused before the workspace is
// built; paper mode does not tile the circle and is not limited. Periods
// 239·241, 239·243 and 241·243 share all 13,996,737 ticks of their circle
// (under the 2^24 cap), and three jobs on it pass 2^25 cells.
func TestSearchCells(t *testing.T) {
	periods := []int32{239 * 241, 239 * 243, 241 * 243}
	demand := make([]int32, 239*241+239*243+241*243)
	demand[0], demand[239*241], demand[239*241+239*243] = 1, 1, 1 // a pulse each: nothing folds
	var s Searcher
	var res LinkResult
	opt := LinkOptions{MaxPerimeter: 1 << 24}
	if code := s.Search(periods, demand, 5, nil, &opt, make([]int32, 3), &res); code != Limit || !strings.Contains(res.Text(), "cells") {
		t.Errorf("exact: %v %q, want a Limit naming the cells", code, res.Text())
	}
	opt.Mode = 1
	if code := s.Search(periods, demand, 5, nil, &opt, make([]int32, 3), &res); code != OK {
		t.Errorf("paper: %v %q", code, res.Text())
	}
}

// A warm Searcher allocates nothing.
func TestSearchAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	jobs := randomJobs(r, 3)
	periods, demand := flat(jobs)
	shifts := make([]int32, 3)
	var s Searcher
	var res LinkResult
	fixed := []int32{-1, 5, -1}
	run := func() {
		if code := s.Search(periods, demand, 20, fixed, nil, shifts, &res); code != OK {
			t.Fatal(code, res.Text())
		}
	}
	run()
	if n := testing.AllocsPerRun(50, run); n != 0 {
		t.Errorf("%v allocations per warm search, want 0", n)
	}
}

func TestSearchReleasesCallerMemory(t *testing.T) {
	var s Searcher
	var res LinkResult
	s.Search([]int32{2}, []int32{1, 1}, 5, nil, nil, make([]int32, 1), &res)
	for _, j := range s.jobs {
		if j.Demand != nil {
			t.Fatal("the searcher keeps a reference to the caller's demand")
		}
	}
}

func TestDemandLen(t *testing.T) {
	for _, c := range []struct {
		periods []int32
		want    int
	}{
		{nil, 0},
		{[]int32{255, 181}, 436},
		{[]int32{255, 0}, -1},
		{[]int32{-3, 10}, -1},
		{[]int32{profile.MaxPeriodTicks, 1}, profile.MaxPeriodTicks + 1},
		{[]int32{profile.MaxPeriodTicks + 1}, -1},
	} {
		if got := DemandLen(c.periods); got != c.want {
			t.Errorf("DemandLen(%v) = %d, want %d", c.periods, got, c.want)
		}
	}
}
