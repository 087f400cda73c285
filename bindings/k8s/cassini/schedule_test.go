package cassini

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orrery/orrery/bindings/k8s/plan"
	"github.com/orrery/orrery/engine/candidate"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
)

func typesUID(job string, i int) types.UID { return types.UID(fmt.Sprintf("uid-%s-%d", job, i)) }

// testConfig is paperConfig's plugin args, resolved.
func testConfig(t *testing.T) config {
	t.Helper()
	c, err := Args{NodeGbps: 50, Tiers: []Tier{{Label: DefaultRackLabel, UplinkGbps: 50}, {Label: blockLabel, UplinkGbps: 50}}}.resolve(field.NewPath("args"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// scenario is the paper's fabric with two running jobs and four free
// nodes, one in each of racks 0, 1, 3 and 4: job "c" (up60) spans racks 0
// and 1, job "a" (up30) racks 3 and 4. A new up30 job of two pods has to
// cross racks. By topology alone racks 0+1 and 3+4 are alike (and 0+1
// comes first); only racks 3+4 let it interleave with a job it shares
// uplinks with.
type scenario struct {
	free    []int
	objects []runtime.Object
	jobs    map[string][]int // running job -> nodes
}

func newScenario() scenario {
	s := scenario{free: []int{1, 5, 13, 17}, jobs: map[string][]int{"a": {12, 16}, "c": {0, 4}}}
	for _, n := range paperNodes() {
		s.objects = append(s.objects, n)
	}
	busy := map[int]bool{}
	for _, job := range []string{"a", "c"} {
		prof := up30
		if job == "c" {
			prof = up60
		}
		for i, n := range s.jobs[job] {
			p := trainingPod(job, i, 2, prof, nodeName(n))
			s.objects = append(s.objects, p)
			busy[n] = true
		}
	}
	for i := range 24 {
		if !busy[i] && !slices.Contains(s.free, i) {
			s.objects = append(s.objects, filler(i))
		}
	}
	return s
}

// bruteForce ranks every placement of a two-pod up30 job on the free nodes
// (not only the ones the plugin pre-selects) with the running jobs, on the
// plugin's fabric model, and returns the placements' scores.
func bruteForce(t *testing.T, s scenario) map[[2]int]float64 {
	t.Helper()
	c := testConfig(t)
	f := newFabric(paperNodeList(), &c)
	pa, err := parseProfile(up30, &c)
	if err != nil {
		t.Fatal(err)
	}
	pc, _ := parseProfile(up60, &c)
	jobs := []profile.Profile{pa.p, pa.p, pc.p} // new, a, c
	var pairs [][2]int
	var cands []candidate.Candidate
	for i, x := range s.free {
		for _, y := range s.free[i+1:] {
			pairs = append(pairs, [2]int{x, y})
			cands = append(cands, candidate.Candidate{Paths: [][]int{
				f.ring([]int{x, y}, nil), f.ring(s.jobs["a"], nil), f.ring(s.jobs["c"], nil)}})
		}
	}
	r, err := candidate.Rank(context.Background(), jobs, f.links, cands, c.rank)
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]int]float64{}
	for i, o := range r.Outcomes {
		out[pairs[i]] = o.Score
	}
	return out
}

func paperNodeList() []*v1.Node { return paperNodes() }

// TestSchedulerPlacesWhereTheRankerPrefers runs real scheduling cycles: the
// scheduler places a new two-pod job where the ranker (over every possible
// placement) prefers it, writes plans whose shifts give every shared link
// the score the ranking promised, and re-plans the running job it shares
// links with.
func TestSchedulerPlacesWhereTheRankerPrefers(t *testing.T) {
	s := newScenario()
	scores := bruteForce(t, s)
	best, bestScore := [2]int{}, -1e9
	for _, pr := range [][2]int{{1, 5}, {1, 13}, {1, 17}, {5, 13}, {5, 17}, {13, 17}} {
		if scores[pr] > bestScore {
			best, bestScore = pr, scores[pr]
		}
	}
	if best != [2]int{13, 17} || !(scores[[2]int{1, 5}] < bestScore) {
		t.Fatalf("the scenario does not test the ranking: scores %v", scores)
	}

	c := newCluster(t, "", s.objects...)
	got := c.create(trainingPod("b", 0, 2, up30, ""), trainingPod("b", 1, 2, up30, ""))
	placed := []string{got["b-0"], got["b-1"]}
	slices.Sort(placed)
	if want := []string{nodeName(best[0]), nodeName(best[1])}; !slices.Equal(placed, want) {
		t.Fatalf("job b placed on %v, the ranker prefers %v (scores %v)", placed, want, scores)
	}

	// Every pod of a and b carries its job's plan; their shifts give each
	// link they share the ranked score (1: they interleave).
	plans := map[string]plan.Plan{}
	for _, name := range []string{"a-0", "a-1", "b-0", "b-1"} {
		p, err := plan.Parse([]byte(c.pod(name).Annotations[DefaultPlanAnnotation]))
		if err != nil {
			t.Fatalf("pod %s: %v", name, err)
		}
		job := name[:1]
		if q, ok := plans[job]; ok && q != p {
			t.Errorf("pods of job %s carry different plans: %+v and %+v", job, q, p)
		}
		plans[job] = p
	}
	if p, ok := c.pod("c-0").Annotations[DefaultPlanAnnotation]; ok {
		t.Errorf("job c shares no link with b, yet was re-planned: %s", p)
	}
	t.Logf("b on %v; scores %v; plans %+v", placed, scores, plans)
	checkLinks(t, testConfig(t), map[string][]int{"a": s.jobs["a"], "b": best[:]}, map[string]string{"a": up30, "b": up30}, plans, bestScore)
}

// checkLinks recomputes, from the plans' shifts alone, the score of every
// link two of jobs share, and wants it equal to want.
func checkLinks(t *testing.T, c config, jobs map[string][]int, profs map[string]string, plans map[string]plan.Plan, want float64) {
	t.Helper()
	f := newFabric(paperNodeList(), &c)
	on := map[int][]string{}
	for _, job := range sortedKeys(jobs) {
		for _, l := range f.ring(jobs[job], nil) {
			on[l] = append(on[l], job)
		}
	}
	var w link.Workspace
	shared := 0
	for _, l := range slices.Sorted(maps.Keys(on)) {
		names := on[l]
		if len(names) < 2 {
			continue
		}
		shared++
		pr := link.Problem{Capacity: f.links[l].Capacity}
		var shifts []int
		for _, job := range names {
			p, _ := parseProfile(profs[job], &c)
			pl := plans[job]
			if got, want := pl.Period, time.Duration(p.p.Period)*c.quantum.Tick; got != want {
				t.Fatalf("job %s: plan period %v, profile %v", job, got, want)
			}
			pr.Jobs = append(pr.Jobs, p.p)
			shifts = append(shifts, int(pl.Shift/c.quantum.Tick))
		}
		excess, points, err := w.Evaluate(pr, c.rank.Link, shifts)
		if err != nil {
			t.Fatal(err)
		}
		got := 1 - float64(excess)/(float64(points)*float64(pr.Capacity))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("link %s (jobs %v, shifts %v): score from the plans (-ranked +got):\n%s", f.linkName(l), names, shifts, diff)
		}
	}
	if shared == 0 {
		t.Fatal("no shared link: the check checks nothing")
	}
}
