package orrery_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/link"
)

// TestCentredShiftsScoreTheShifts: for every golden cassini.link request
// whose periods are not rounded, the centred shifts score exactly what the
// edge shifts do (the link's excess), every shift within a job's room does
// too, and a step past it does worse (where the room stops short of half
// the period).
func TestCentredShiftsScoreTheShifts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "link_*.json"))
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Request orrery.LinkRequest `json:"request"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		req := env.Request
		if req.RoundPeriods {
			continue
		}
		resp, err := orrery.Link(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		pr, opt, err := req.Problem()
		if err != nil {
			t.Fatal(err)
		}
		tick := req.TickMs
		if tick == 0 {
			tick = 1
		}
		ticks := func(ms float64) int { return int(math.Round(ms / tick)) }
		var w link.Workspace
		excess := func(shifts []int) int64 {
			e, _, err := w.Evaluate(pr, opt, shifts)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		edge, centred := make([]int, len(req.Jobs)), make([]int, len(req.Jobs))
		for i, j := range req.Jobs {
			edge[i], centred[i] = ticks(resp.ShiftsMs[j.ID]), ticks(resp.CentredShiftsMs[j.ID])
		}
		base := excess(edge)
		if got := excess(centred); got != base {
			t.Errorf("%s: centred %v excess %d, edge %v %d", f, centred, got, edge, base)
		}
		for i, j := range req.Jobs {
			room, ok := resp.ShiftRoomMs[j.ID]
			if !ok {
				t.Fatalf("%s: no room for %q", f, j.ID)
			}
			period := ticks(resp.PeriodsMs[j.ID])
			sh := append([]int(nil), centred...)
			for _, side := range []struct {
				dir, n int
			}{{1, ticks(room.LateMs)}, {-1, ticks(room.EarlyMs)}} {
				for d := 1; d <= side.n+1; d++ {
					sh[i] = centred[i] + side.dir*d
					e := excess(sh)
					if d <= side.n && e != base {
						t.Errorf("%s job %q: shift %d within its room scores %d, not %d", f, j.ID, sh[i], e, base)
					}
					if d == side.n+1 && side.n < (period-1)/2 && e <= base {
						t.Errorf("%s job %q: shift %d just past its room scores %d, not worse than %d", f, j.ID, sh[i], e, base)
					}
				}
			}
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("checked %d golden links", checked)
	}
}
