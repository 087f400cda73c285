package cassini

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/orrery/orrery/bindings/k8s/plan"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
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

// placement is a running job: its nodes and profile.
type placement struct {
	nodes []int
	prof  string
}

// rankAll ranks every placement of a new job of size pods with profile
// prof on the free nodes (not only the ones the plugin pre-selects) beside the
// running jobs, on the plugin's fabric model: the ranker's view of all the
// scheduler's choices. As the plugin does by default, it holds running jobs
// at the shifts of their plans (plans: job -> the plan its pods carry) and
// places the others that share a link with some placement; a job with
// neither is held at shift 0 (it ranks no differently from the plugin's
// view, which leaves such jobs out or holds them alike).
func rankAll(t *testing.T, running map[string]placement, prof string, free []int, size int, plans map[string]plan.Plan) (combos [][]int, r candidate.Ranking) {
	t.Helper()
	c := testConfig(t)
	f := newFabric(paperNodeList(), &c)
	p, err := parseProfile(prof, &c)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []profile.Profile{p.p}
	var others [][]int
	for _, k := range sortedKeys(running) {
		q, err := parseProfile(running[k].prof, &c)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, q.p)
		others = append(others, f.ring(running[k].nodes, nil))
	}
	var cands []candidate.Candidate
	combos = combinations(free, size)
	for _, nodes := range combos {
		cands = append(cands, candidate.Candidate{Paths: append([][]int{f.ring(nodes, nil)}, others...)})
	}
	opt := c.rank
	if c.incremental {
		opt.Fixed = heldShifts(running, plans, jobs, others, cands, &c)
	}
	r, err = candidate.Rank(context.Background(), jobs, f.links, cands, opt)
	if err != nil {
		t.Fatal(err)
	}
	return combos, r
}

// heldShifts is rankAll's Options.Fixed, written from the plugin's rule
// (Plugin.holds) independently: the new job free; a running job with a plan
// on the period the ranking gives it held at the plan's shift; one without
// free where its ring shares a link with some placement of the new job,
// else held at 0.
func heldShifts(running map[string]placement, plans map[string]plan.Plan, jobs []profile.Profile, others [][]int, cands []candidate.Candidate, c *config) []int {
	near := map[int]bool{}
	for _, cand := range cands {
		for _, l := range cand.Paths[0] {
			near[l] = true
		}
	}
	fixed := []int{-1}
	for k, key := range sortedKeys(running) {
		t := jobs[k+1].Period
		if pl, ok := plans[key]; ok {
			if p := int(pl.Period / c.quantum.Tick); p >= t && p < 2*t {
				fixed = append(fixed, int(pl.Shift/c.quantum.Tick))
				continue
			}
		}
		f := 0
		if slices.ContainsFunc(others[k], func(l int) bool { return near[l] }) {
			f = -1
		}
		fixed = append(fixed, f)
	}
	return fixed
}

// plans returns the plan of every running job whose pods carry one.
func (c *cluster) plans(t *testing.T, running map[string]placement) map[string]plan.Plan {
	t.Helper()
	c.settle()
	out := map[string]plan.Plan{}
	for k := range running {
		p, err := c.client.CoreV1().Pods(ns).Get(c.ctx, k+"-0", metav1.GetOptions{})
		if err != nil {
			continue // a running job of the cluster's objects, not created by name
		}
		if _, ok := p.Annotations[DefaultPlanAnnotation]; ok {
			out[k] = c.plan(t, k)
		}
	}
	return out
}

// combinations returns every size-subset of s, in lexicographic order.
func combinations(s []int, size int) [][]int {
	if size == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for i := range s {
		for _, rest := range combinations(s[i+1:], size-1) {
			out = append(out, append([]int{s[i]}, rest...))
		}
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
	running := map[string]placement{"a": {s.jobs["a"], up30}, "c": {s.jobs["c"], up60}}
	pairs, r := rankAll(t, running, up30, s.free, 2, nil)
	if best := pairs[r.Best]; !slices.Equal(best, []int{13, 17}) || !(r.Outcomes[0].Score < r.Outcomes[r.Best].Score) {
		t.Fatalf("the scenario does not test the ranking: best %v, outcomes %+v", best, r.Outcomes)
	}
	c := newCluster(t, "", s.objects...)
	c.arrive(t, running, "b", up30, 2, s.free, pairs, r)
	c.settle()
	if p, ok := c.pod("c-0").Annotations[DefaultPlanAnnotation]; ok {
		t.Errorf("job c shares no link with b, yet was re-planned: %s", p)
	}
}

// arrive submits a job of size pods and checks the scheduler placed it
// where the ranking r of every placement (combos) prefers, and that the plans on
// the pods give each link of the placement the ranked score. It adds the
// job to running.
func (c *cluster) arrive(t *testing.T, running map[string]placement, job, prof string, size int, free []int, combos [][]int, r candidate.Ranking) {
	t.Helper()
	keys := append([]string{job}, sortedKeys(running)...) // the ranking's job order
	var pods []*v1.Pod
	for i := range size {
		pods = append(pods, trainingPod(job, i, size, prof, ""))
	}
	got := c.create(pods...)
	var nodes []int
	for _, name := range got {
		nodes = append(nodes, nodeIndex(t, name))
	}
	slices.Sort(nodes)
	chosen := slices.IndexFunc(combos, func(x []int) bool { return slices.Equal(x, nodes) })
	if chosen < 0 {
		t.Fatalf("job %s placed on %v, not two of the free nodes %v", job, nodes, free)
	}
	o, best := r.Outcomes[chosen], r.Outcomes[r.Best]
	if o.Score != best.Score {
		t.Fatalf("job %s placed on %v scoring %v; the ranker prefers %v scoring %v", job, nodes, o.Score, combos[r.Best], best.Score)
	}
	running[job] = placement{nodes, prof}
	t.Logf("job %s on %v: score %v (best of %d placements %v)", job, nodes, o.Score, len(combos), best.Score)

	// The plans reproduce the ranked score of every link the job shares.
	cfg := testConfig(t)
	f := newFabric(paperNodeList(), &cfg)
	var w link.Workspace
	for _, ls := range o.Links {
		if !slices.Contains(ls.Jobs, 0) {
			continue
		}
		pr := link.Problem{Capacity: f.links[ls.Link].Capacity}
		var shifts []int
		for _, j := range ls.Jobs {
			k := keys[j]
			p, _ := parseProfile(running[k].prof, &cfg)
			pl := c.plan(t, k)
			pr.Jobs = append(pr.Jobs, p.p)
			shifts = append(shifts, int(pl.Shift/cfg.quantum.Tick))
			if want := time.Duration(roundUp(p.p.Period, max(o.Grid, 1))) * cfg.quantum.Tick; pl.Period != want {
				t.Errorf("job %s: plan period %v, want %v", k, pl.Period, want)
			}
		}
		excess, points, err := w.Evaluate(pr, cfg.rank.Link, shifts)
		if err != nil {
			t.Fatal(err)
		}
		got := 1 - float64(excess)/(float64(points)*float64(pr.Capacity))
		if diff := cmp.Diff(ls.Score, got); diff != "" {
			t.Errorf("link %s (jobs %v, shifts %v): score from the plans (-ranked +got):\n%s", f.linkName(ls.Link), ls.Jobs, shifts, diff)
		}
	}
}

// plan returns the plan every pod of job carries (they must agree), once
// the plugin has written every plan it has to.
func (c *cluster) plan(t *testing.T, job string) plan.Plan {
	t.Helper()
	c.settle()
	var out *plan.Plan
	for i := 0; ; i++ {
		p, err := c.client.CoreV1().Pods(ns).Get(c.ctx, fmt.Sprintf("%s-%d", job, i), metav1.GetOptions{})
		if err != nil {
			break
		}
		q, err := plan.Parse([]byte(p.Annotations[DefaultPlanAnnotation]))
		if err != nil {
			t.Fatalf("pod %s: %v", p.Name, err)
		}
		if out != nil && *out != q {
			t.Fatalf("pods of job %s carry different plans: %+v and %+v", job, *out, q)
		}
		out = &q
	}
	if out == nil {
		t.Fatalf("job %s has no pods", job)
	}
	return *out
}

func nodeIndex(t *testing.T, name string) int {
	var i int
	if _, err := fmt.Sscanf(name, "node-%d", &i); err != nil {
		t.Fatal(err)
	}
	return i
}

// TestSchedulerJobsArrive: jobs of three pods with different profiles and
// periods arrive one after another on the paper's fabric with two free
// nodes per rack, so each must cross racks; each lands where the ranker,
// over every placement of the nodes then free, prefers it, and the plans on
// all pods reproduce its links' ranked scores. The running jobs that have
// plans keep them (the plugin's default incremental ranking holds them).
func TestSchedulerJobsArrive(t *testing.T) {
	running := map[string]placement{"a": {[]int{12, 16}, up30}, "c": {[]int{0, 4}, up60}}
	var objs []runtime.Object
	for _, n := range paperNodes() {
		objs = append(objs, n)
	}
	var free []int
	for i := range 24 {
		switch {
		case i%4 == 1 || i%4 == 2:
			free = append(free, i)
		case i == 0 || i == 4:
			objs = append(objs, trainingPod("c", i/4, 2, up60, nodeName(i)))
		case i == 12 || i == 16:
			objs = append(objs, trainingPod("a", (i-12)/4, 2, up30, nodeName(i)))
		default:
			objs = append(objs, filler(i))
		}
	}
	c := newCluster(t, "", objs...)
	for _, j := range []struct{ name, prof string }{{"b", up30}, {"d", up60}, {"e", p60}, {"f", up30}} {
		before := c.plans(t, running)
		combos, r := rankAll(t, running, j.prof, free, 3, before)
		c.arrive(t, running, j.name, j.prof, 3, free, combos, r)
		// Running jobs are held at their plans: none is rewritten.
		after := c.plans(t, running)
		for k, pl := range before {
			if diff := cmp.Diff(pl, after[k]); diff != "" {
				t.Errorf("job %s arriving rewrote job %s's plan (-before +after):\n%s", j.name, k, diff)
			}
		}
		free = slices.DeleteFunc(free, func(x int) bool { return slices.Contains(running[j.name].nodes, x) })
	}
}

// p60 has another period: 60 ms against the others' 72 (unified circle
// 360 ms).
const p60 = `{"period_ms":60,"phases":[{"ms":20,"gbps":40},{"ms":40,"gbps":0}]}`

// TestSchedulerBindFailure: the binding of the job's second pod fails once;
// the scheduler unreserves it (the plugin drops what its Reserve recorded)
// and retries. The job still ends where the ranker prefers, with plans that
// reproduce the ranked scores, and the plugin holds no reservation after.
func TestSchedulerBindFailure(t *testing.T) {
	s := newScenario()
	running := map[string]placement{"a": {s.jobs["a"], up30}, "c": {s.jobs["c"], up60}}
	pairs, r := rankAll(t, running, up30, s.free, 2, nil)
	c := newCluster(t, "", s.objects...)
	c.failBind["b-1"] = 1
	c.arrive(t, running, "b", up30, 2, s.free, pairs, r)
	c.mu.Lock()
	left := c.failBind["b-1"]
	c.mu.Unlock()
	if left != 0 {
		t.Fatal("the binding did not fail: the test tests nothing")
	}
	err := wait.PollUntilContextTimeout(c.ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(c.plugin.led.reservations()) == 0, nil
	})
	if err != nil {
		t.Errorf("reservations left after binding: %+v", c.plugin.led.reservations())
	}
}

// TestSchedulerNeutral: pods the plugin cannot rank (no profile; a time
// budget too small to rank in) are scheduled all the same, without a plan.
func TestSchedulerNeutral(t *testing.T) {
	for _, tc := range []struct{ name, extra, prof string }{
		{"no profile", "", ""},
		{"budget", "      timeBudget: 1ns", up30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario()
			c := newCluster(t, tc.extra, s.objects...)
			got := c.create(trainingPod("b", 0, 2, tc.prof, ""), trainingPod("b", 1, 2, tc.prof, ""))
			c.settle()
			for name := range got {
				if p, ok := c.pod(name).Annotations[DefaultPlanAnnotation]; ok {
					t.Errorf("pod %s has a plan: %s", name, p)
				}
			}
			for _, name := range []string{"a-0", "a-1", "c-0", "c-1"} {
				if p, ok := c.pod(name).Annotations[DefaultPlanAnnotation]; ok {
					t.Errorf("running pod %s was re-planned: %s", name, p)
				}
			}
		})
	}
}
