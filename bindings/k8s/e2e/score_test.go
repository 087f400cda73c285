package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/k8s/plan"
	"github.com/orrery/orrery/engine/cassini/link"
)

// running is a training job as its bound pods show it.
type running struct {
	key   string   // namespace/job
	prof  string   // the profile annotation
	nodes []string // its pods' nodes
	racks []string // their racks, sorted, distinct
	text  string   // the plan annotation its pods carry ("" none)
	plan  plan.Plan
}

// demand is the profile's bandwidth in each millisecond of its period.
func demand(prof string) ([]float64, error) {
	var js orrery.JobSpec
	if err := json.Unmarshal([]byte(prof), &js); err != nil {
		return nil, err
	}
	var d []float64
	for _, ph := range js.Phases {
		ms := int(ph.Ms)
		if float64(ms) != ph.Ms {
			return nil, fmt.Errorf("phase of %v ms: the test expands whole milliseconds only", ph.Ms)
		}
		for range ms {
			d = append(d, ph.Gbps)
		}
	}
	return d, nil
}

// shifted is a job's demand over its plan's period (the profile padded
// with silence to it), delayed by the plan's shift: what the job sends at
// each millisecond after the reference, modulo the period.
func shifted(prof string, p *plan.Plan) ([]float64, error) {
	d, err := demand(prof)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return d, nil
	}
	period, shift := int(p.Period/time.Millisecond), int(p.Shift/time.Millisecond)
	if period < len(d) || p.Period%time.Millisecond != 0 || p.Shift%time.Millisecond != 0 {
		return nil, fmt.Errorf("plan %+v is not on the profile's millisecond grid", *p)
	}
	out := make([]float64, period)
	for t := range period {
		if s := ((t-shift)%period + period) % period; s < len(d) {
			out[t] = d[s]
		}
	}
	return out, nil
}

// linkScore is the score of jobs (their shifted demands) on a link of
// capacity gbps at their plans' shifts: the root package's Link on the
// shifted profiles, whose unshifted score is the score with every job at
// shift 0 of its shifted profile, on the 1 ms, 1 Mbps grid the plugin
// quantizes on.
func linkScore(ctx context.Context, gbps float64, demands [][]float64) (float64, error) {
	req := orrery.LinkRequest{CapacityGbps: gbps, SearchSpec: orrery.SearchSpec{TickMs: 1, UnitMbps: 1, Budget: 1}}
	for i, d := range demands {
		req.Jobs = append(req.Jobs, orrery.JobSpec{ID: strconv.Itoa(i), Samples: &orrery.SamplesSpec{IntervalMs: 1, Gbps: d}})
	}
	resp, err := orrery.Link(ctx, req)
	if err != nil {
		return 0, err
	}
	return resp.UnshiftedScore, nil
}

// fabricLink is a directed link of the test's fabric: a node's NIC or a
// rack's uplink bundle, each up (out of it) or down.
type fabricLink struct {
	kind string // "nic" or "rack"
	name string // node or rack
	up   bool
}

// links is the set of links a ring all-reduce over the job's nodes
// crosses: every node's NIC both ways (a ring of two or more nodes), and,
// when it spans racks, each rack's uplink both ways (the ring visits each
// rack's nodes in a row, so it leaves and enters every rack once).
func (j *running) links() []fabricLink {
	nodes := slices.Clone(j.nodes)
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	if len(nodes) < 2 {
		return nil
	}
	var out []fabricLink
	for _, n := range nodes {
		out = append(out, fabricLink{"nic", n, true}, fabricLink{"nic", n, false})
	}
	if len(j.racks) > 1 {
		for _, r := range j.racks {
			out = append(out, fabricLink{"rack", r, true}, fabricLink{"rack", r, false})
		}
	}
	return out
}

// groupScore recomputes job key's plan score from the annotations: the
// mean score, at the plans' shifts, of the links shared by two or more
// jobs among the jobs connected to key through shared links (1 if none),
// summed in the plugin's link order (NICs, then racks by label, up before
// down). Jobs without a plan count at shift 0, as the plugin holds them.
func groupScore(ctx context.Context, jobs map[string]*running, key string) (float64, error) {
	on := map[fabricLink][]string{}
	for _, k := range sortedKeys(jobs) {
		for _, l := range jobs[k].links() {
			on[l] = append(on[l], k)
		}
	}
	parent := map[string]string{}
	var find func(string) string
	find = func(k string) string {
		if p, ok := parent[k]; ok && p != k {
			r := find(p)
			parent[k] = r
			return r
		}
		return k
	}
	var shared []fabricLink
	for l, ks := range on {
		if len(ks) < 2 {
			continue
		}
		shared = append(shared, l)
		for _, k := range ks[1:] {
			parent[find(k)] = find(ks[0])
		}
	}
	slices.SortFunc(shared, func(a, b fabricLink) int {
		switch {
		case a.kind != b.kind:
			if a.kind == "nic" {
				return -1
			}
			return 1
		case a.name != b.name:
			if a.name < b.name {
				return -1
			}
			return 1
		case a.up != b.up:
			if a.up {
				return -1
			}
			return 1
		}
		return 0
	})
	sum, n := 0.0, 0
	for _, l := range shared {
		if find(on[l][0]) != find(key) {
			continue
		}
		var ds [][]float64
		for _, k := range on[l] {
			j := jobs[k]
			var p *plan.Plan
			if j.text != "" {
				p = &j.plan
			}
			d, err := shifted(j.prof, p)
			if err != nil {
				return 0, fmt.Errorf("job %s: %w", k, err)
			}
			ds = append(ds, d)
		}
		gbps := float64(uplinkGbps)
		if l.kind == "nic" {
			gbps = nicGbps
		}
		s, err := linkScore(ctx, gbps, ds)
		if err != nil {
			return 0, fmt.Errorf("link %v: %w", l, err)
		}
		sum += s
		n++
	}
	if n == 0 {
		return 1, nil
	}
	return sum / float64(n), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestShiftConvention checks the test's own arithmetic against the link
// search's: a job's demand delayed by its shift (shifted) and scored at
// shift 0 by the root package's Link gives the score link.Workspace.
// Evaluate gives the unshifted profiles at those shifts. It needs no
// control plane.
func TestShiftConvention(t *testing.T) {
	ctx := context.Background()
	profs := []string{p255, p300, p400}
	shifts := []time.Duration{17 * time.Millisecond, 123 * time.Millisecond, 251 * time.Millisecond}
	var ds [][]float64
	req := orrery.LinkRequest{CapacityGbps: uplinkGbps, SearchSpec: orrery.SearchSpec{TickMs: 1, UnitMbps: 1}}
	for i, prof := range profs {
		var js orrery.JobSpec
		if err := json.Unmarshal([]byte(prof), &js); err != nil {
			t.Fatal(err)
		}
		js.ID = strconv.Itoa(i)
		req.Jobs = append(req.Jobs, js)
		d, _ := demand(prof)
		p := plan.Plan{Period: time.Duration(len(d)) * time.Millisecond, Shift: shifts[i]}
		s, err := shifted(prof, &p)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, s)
	}
	got, err := linkScore(ctx, uplinkGbps, ds)
	if err != nil {
		t.Fatal(err)
	}
	pr, opt, err := req.Problem()
	if err != nil {
		t.Fatal(err)
	}
	var w link.Workspace
	ticks := []int{17, 123, 251}
	excess, points, err := w.Evaluate(pr, opt, ticks)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 - float64(excess)/(float64(points)*float64(pr.Capacity))
	if got != want || points != 20400 {
		t.Fatalf("Link on the shifted profiles: %v; Evaluate at the shifts: %v on %d points (want 20400)", got, want, points)
	}
	if got == 1 {
		t.Fatal("the jobs never contend: the test tests nothing")
	}
}
