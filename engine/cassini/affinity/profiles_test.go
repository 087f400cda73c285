package affinity

import (
	"context"
	"errors"
	"testing"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// Links of the same jobs merge only when the jobs demand the same there;
// Assign scores each group at its own demands and rejects demands of
// another period.
func TestPerLinkProfiles(t *testing.T) {
	own := profile.Profile{Period: 4, Demand: []int32{30, 30, 30, 0}}
	half := profile.Profile{Period: 4, Demand: []int32{15, 15, 15, 0}}
	links := []Link{
		{Jobs: []int{0, 1}, Capacity: 40},
		{Jobs: []int{0, 1}, Capacity: 40, Profiles: []profile.Profile{half, half}},
		{Jobs: []int{0, 1}, Capacity: 50, Profiles: []profile.Profile{half, half}},
	}
	g, err := Build(2, links, Resolve)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Groups) != 2 || len(g.Groups[0].Links) != 1 || len(g.Groups[1].Links) != 2 || g.Groups[1].Profiles == nil {
		t.Fatalf("groups %+v", g.Groups)
	}
	var w link.Workspace
	jobs := []profile.Profile{own, own}
	opts := make([]Optimum, len(g.Groups))
	for i, gr := range g.Groups {
		ps := []profile.Profile{gr.profile(0, own), gr.profile(1, own)}
		res, err := w.Search(context.Background(), link.Problem{Jobs: ps, Capacity: gr.Capacity}, link.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts[i] = Optimum{Shifts: res.Shifts, Excess: res.Excess}
	}
	a, err := Assign(context.Background(), &w, g, jobs, opts, link.Options{}, Resolve)
	if err != nil {
		t.Fatal(err)
	}
	if s := a.Outcomes[0].Scores[0]; s >= 1 {
		t.Errorf("own demands on 40: score %v", s)
	}
	for _, s := range a.Outcomes[1].Scores {
		if s != 1 {
			t.Errorf("half the demand fits 40 and 50 at any shift: score %v", s)
		}
	}
	g.Groups[1].Profiles = []profile.Profile{half, {Period: 3, Demand: []int32{1, 1, 1}}}
	if _, err := Assign(context.Background(), &w, g, jobs, opts, link.Options{}, Resolve); !errors.Is(err, ErrInvalid) {
		t.Errorf("a demand of another period: %v", err)
	}
	if _, err := Build(2, []Link{{Jobs: []int{0, 1}, Capacity: 40, Profiles: []profile.Profile{half}}}, Resolve); !errors.Is(err, ErrInvalid) {
		t.Errorf("one profile for two jobs: %v", err)
	}
}
