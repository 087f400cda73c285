package affinity

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

func idle(t int) profile.Profile { return profile.Profile{Period: t, Demand: make([]int32, t)} }

// TestBFSVector is the brief's BFS vector: chain j1 -l1- j2 -l2- j3 with
// periods 40/60/30 and per-link shifts t^l1 = (10, 0), t^l2 = (20, 5).
func TestBFSVector(t *testing.T) {
	jobs := []profile.Profile{idle(40), idle(60), idle(30)}
	g, err := Build(3, []Link{{Jobs: []int{0, 1}, Capacity: 10}, {Jobs: []int{1, 2}, Capacity: 10}}, Paper)
	if err != nil {
		t.Fatal(err)
	}
	var w link.Workspace
	a, err := Assign(context.Background(), &w, g, jobs, []Optimum{{Shifts: []int{10, 0}}, {Shifts: []int{20, 5}}}, link.Options{}, Paper)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 50, 5}; !slices.Equal(a.Shifts, want) {
		t.Fatalf("shifts %v, want %v", a.Shifts, want)
	}
}

// TestLoopVector: two jobs sharing two links form a loop. The paper's policy
// discards it; merging the links removes it.
func TestLoopVector(t *testing.T) {
	links := []Link{{Jobs: []int{0, 1}, Capacity: 50}, {Jobs: []int{0, 1}, Capacity: 50}}
	if _, err := Build(2, links, Paper); !errors.Is(err, ErrLoop) {
		t.Fatalf("paper policy: err = %v, want ErrLoop", err)
	}
	g, err := Build(2, links, Resolve)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Groups) != 1 || !slices.Equal(g.Groups[0].Links, []int{0, 1}) {
		t.Fatalf("groups %+v, want one group of both links", g.Groups)
	}
}

func TestBuildRejectsBadLinks(t *testing.T) {
	for _, links := range [][]Link{
		{{Jobs: []int{0}, Capacity: 1}},
		{{Jobs: []int{1, 0}, Capacity: 1}},
		{{Jobs: []int{0, 0}, Capacity: 1}},
		{{Jobs: []int{0, 5}, Capacity: 1}},
		{{Jobs: []int{0, 1}, Capacity: 0}},
	} {
		if _, err := Build(3, links, Resolve); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err = %v, want ErrInvalid", links, err)
		}
	}
}
