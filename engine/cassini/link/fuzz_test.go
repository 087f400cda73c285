package link

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// fuzzProblem builds a small link from bytes: b0 picks 2 to 4 jobs and
// which are fixed, b1 the capacity; per job a period byte (from periods
// that share, nest and are coprime), a layout byte (runs of demand, noise,
// or a pattern repeating within the period) and demand bytes.
func fuzzProblem(data []byte) Problem {
	r := byteReader(data)
	flags := r.next()
	k := 2 + flags%3
	pool := []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 18, 20}
	if k == 4 {
		pool = pool[:10]
	}
	pr := Problem{Capacity: int32(1 + r.next()%60)}
	for range k {
		t := pool[r.next()%len(pool)]
		layout := r.next()
		d := make([]int32, t)
		switch layout % 3 {
		case 0: // runs
			for i := 0; i < t; {
				n, v := 1+r.next()%t, int32(r.next()%41)
				for ; n > 0 && i < t; n, i = n-1, i+1 {
					d[i] = v
				}
			}
		case 1: // noise
			for i := range d {
				d[i] = int32(r.next() % 41)
			}
		default: // a pattern that repeats within the period
			p := 1 + layout/3%t
			for t%p != 0 {
				p--
			}
			for i := range p {
				d[i] = int32(r.next() % 41)
			}
			for i := p; i < t; i++ {
				d[i] = d[i-p]
			}
		}
		pr.Jobs = append(pr.Jobs, profile.Profile{Period: t, Demand: d})
	}
	if flags&8 != 0 {
		pr.Fixed = make([]int, k)
		for j := range pr.Fixed {
			pr.Fixed[j] = -1
			if b := r.next(); b%2 == 1 {
				pr.Fixed[j] = b / 2
			}
		}
	}
	return pr
}

// byteReader hands out bytes, then zeros.
type byteReader []byte

func (r *byteReader) next() int {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return int(b)
}

// FuzzLayouts checks every way the search may lay a link out (the cost
// model's choice, the shared circle, the dense circle, and today's search)
// against brute force over the materialized unified circle.
func FuzzLayouts(f *testing.F) {
	f.Add([]byte{0, 49, 8, 0, 30, 40, 42, 0, 8, 0, 30, 40, 42, 0})     // vector D-like
	f.Add([]byte{1, 20, 5, 1, 3, 9, 27, 9, 2, 3, 4, 11, 6, 0})         // three jobs, noise
	f.Add([]byte{2, 35, 12, 5, 4, 7, 2, 1, 9, 3, 8, 6, 13, 2})         // four, repeating patterns
	f.Add([]byte{9, 17, 3, 0, 1, 20, 7, 1, 2, 3, 4, 5, 6, 7, 8, 3, 5}) // fixed jobs
	f.Fuzz(func(t *testing.T, data []byte) {
		pr := fuzzProblem(data)
		wantE, wantS := bruteTiles(pr.Jobs, pr.Capacity, pr.Fixed)
		for j, jb := range pr.Jobs {
			wantS[j] %= jb.Period
		}
		for _, l := range []struct {
			layout int
			opt    Options
		}{{0, Options{}}, {layoutShared, Options{}}, {layoutDense, Options{}}, {0, Options{Materialize: true}}} {
			w := Workspace{layout: l.layout}
			res, err := w.Search(context.Background(), pr, l.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]any{wantE, wantS, Optimal}, []any{res.Excess, res.Shifts, res.Status}); d != "" {
				t.Fatalf("%+v layout %d %+v: (-brute +search)\n%s", pr, l.layout, l.opt, d)
			}
		}
	})
}
