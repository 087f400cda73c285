package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/orrery/orrery"
)

// byteReader hands out the fuzzer's bytes one at a time, then zeros.
type byteReader []byte

func (r *byteReader) next() int {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return int(b)
}

// tinyLink is a small cassini.link request together with the per-tick
// demand it means (1 ms ticks, 1 Gbps units), derived without the engine.
type tinyLink struct {
	req      orrery.LinkRequest
	demand   [][]int64
	capacity int64
	paper    bool
}

// decodeTinyLink builds a valid request from bytes:
//
//	b0: bit 0 adds a third job, bit 1 selects paper mode
//	b1: capacity 1 + b1%60 Gbps
//	per job: a period byte (2 + b%71 ms with two jobs, 2 + b%11 with three),
//	a layout byte (bits 0-1: phases - 1; bit 2: give period_ms; bit 3: send
//	samples instead of phases), then per phase but the last a duration byte
//	(b % (what is left + 1) ms) and for every phase a bandwidth byte
//	(b%41 Gbps); the last phase takes the rest of the period.
func decodeTinyLink(data []byte) tinyLink {
	r := byteReader(data)
	flags := r.next()
	k := 2 + flags&1
	tl := tinyLink{paper: flags&2 != 0, capacity: int64(1 + r.next()%60)}
	tl.req.CapacityGbps = float64(tl.capacity)
	tl.req.UnitMbps = 1000
	if tl.paper {
		tl.req.Mode = "paper"
	}
	for j := range k {
		maxT := 71
		if k == 3 {
			maxT = 11
		}
		period := 2 + r.next()%maxT
		layout := r.next()
		nph := 1 + layout&3
		d := make([]int64, period)
		spec := orrery.JobSpec{ID: fmt.Sprintf("j%d", j)}
		t := 0
		for p := range nph {
			dur := period - t
			if p < nph-1 {
				dur = r.next() % (period - t + 1)
			}
			gbps := r.next() % 41
			for i := t; i < t+dur; i++ {
				d[i] = int64(gbps)
			}
			spec.Phases = append(spec.Phases, orrery.PhaseSpec{Ms: float64(dur), Gbps: float64(gbps)})
			t += dur
		}
		if layout&4 != 0 {
			pm := float64(period)
			spec.PeriodMs = &pm
		}
		if layout&8 != 0 {
			s := &orrery.SamplesSpec{IntervalMs: 1}
			for _, v := range d {
				s.Gbps = append(s.Gbps, float64(v))
			}
			spec.Phases, spec.Samples = nil, s
		}
		tl.req.Jobs = append(tl.req.Jobs, spec)
		tl.demand = append(tl.demand, d)
	}
	return tl
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// brute returns the excess of the unshifted jobs, the smallest excess over
// every shift vector (job 0 fixed at 0), and the lexicographically smallest
// shifts that reach it, by enumeration. Exact mode scores every tick of the
// unified circle and tries every shift in [0, T_j); paper mode scores the
// 72 ticks floor(a*p/72) and tries the shifts floor(m*p/72) with m*p < 72*T_j.
func (tl tinyLink) brute() (unshifted, best int64, shifts []int, perimeter int) {
	p := 1
	for _, d := range tl.demand {
		p = p / gcd(p, len(d)) * len(d)
	}
	var points []int
	if tl.paper {
		for a := range 72 {
			points = append(points, a*p/72)
		}
	} else {
		for a := range p {
			points = append(points, a)
		}
	}
	excess := func(s []int) int64 {
		var e int64
		for _, x := range points {
			var sum int64
			for j, d := range tl.demand {
				T := len(d)
				sum += d[((x-s[j])%T+T)%T]
			}
			e += max(sum-tl.capacity, 0)
		}
		return e
	}
	k := len(tl.demand)
	cur := make([]int, k)
	unshifted = excess(cur)
	best = math.MaxInt64
	var rec func(j int)
	rec = func(j int) {
		if j == k {
			if e := excess(cur); e < best {
				best, shifts = e, slices.Clone(cur)
			}
			return
		}
		T := len(tl.demand[j])
		for m := 0; ; m++ {
			if j == 0 && m > 0 {
				break
			}
			s := m
			if tl.paper {
				if m*p >= 72*T {
					break
				}
				s = m * p / 72
			} else if m >= T {
				break
			}
			cur[j] = s
			rec(j + 1)
		}
	}
	rec(0)
	return unshifted, best, shifts, p
}

func FuzzLinkRequest(f *testing.F) {
	// Vector D: two 72 ms jobs, 30 ms at 40 Gbps, on 50 Gbps.
	f.Add([]byte{0, 49, 70, 1, 30, 40, 0, 70, 1, 30, 40, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		tl := decodeTinyLink(data)
		req, err := json.Marshal(tl.req)
		if err != nil {
			t.Fatal(err)
		}
		out, err := orrery.Call(context.Background(), "cassini.link", req)
		if err != nil {
			t.Fatalf("a valid request failed: %s: %v", req, err)
		}
		var r orrery.LinkResponse
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		unshifted, best, shifts, p := tl.brute()
		points := p
		if tl.paper {
			points = 72
		}
		score := func(e int64) float64 { return 1 - float64(e)/(float64(points)*float64(tl.capacity)) }
		if r.Status != "optimal" || r.Score != score(best) || r.Bound != r.Score || r.UnshiftedScore != score(unshifted) {
			t.Fatalf("%s\ngot %s\nbrute force: excess %d (score %v), unshifted %d (%v), shifts %v", req, out, best, score(best), unshifted, score(unshifted), shifts)
		}
		if r.PerimeterMs != float64(p) || r.Points != points {
			t.Fatalf("%s\ngot %s\nwant perimeter %d, %d points", req, out, p, points)
		}
		for j, s := range shifts {
			id := tl.req.Jobs[j].ID
			if r.ShiftsMs[id] != float64(s) || r.PeriodsMs[id] != float64(len(tl.demand[j])) {
				t.Fatalf("%s\ngot %s\nbrute force shifts %v", req, out, shifts)
			}
		}
		if !tl.paper && r.ExcessGbit != float64(best)*1e9*1e-3/1e9 {
			t.Fatalf("%s\ngot excess %v Gbit, brute force %d Gbps-ms", req, r.ExcessGbit, best)
		}
	})
}
