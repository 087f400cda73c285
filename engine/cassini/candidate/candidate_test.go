package candidate

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

func randomProfile(rng *rand.Rand) profile.Profile {
	t := []int{6, 8, 12, 24}[rng.IntN(4)]
	d := make([]int32, t)
	start, n, bw := rng.IntN(t), 1+rng.IntN(t*2/3), int32(5+rng.IntN(30))
	for i := range n {
		d[(start+i)%t] = bw
	}
	return profile.Profile{Period: t, Demand: d}
}

type instance struct {
	jobs  []profile.Profile
	links []Link
	cands []Candidate
}

func randomInstance(rng *rand.Rand) instance {
	in := instance{}
	nj, nl := 3+rng.IntN(5), 3+rng.IntN(6)
	for range nj {
		in.jobs = append(in.jobs, randomProfile(rng))
	}
	for range nl {
		in.links = append(in.links, Link{Capacity: int32([]int{30, 40, 60}[rng.IntN(3)])})
	}
	for range 1 + rng.IntN(6) {
		var c Candidate
		for range nj {
			path := rng.Perm(nl)[:1+rng.IntN(3)]
			slices.Sort(path)
			c.Paths = append(c.Paths, path)
		}
		in.cands = append(in.cands, c)
	}
	return in
}

// excessAt computes a link's excess on its unified circle from the jobs'
// final shifts, independently of the engine.
func excessAt(jobs []profile.Profile, on []int, shifts []int, c int32) int64 {
	p := 1
	for _, j := range on {
		p = p / circle.GCD(p, jobs[j].Period) * jobs[j].Period
	}
	var e int64
	for a := range p {
		var s int64
		for _, j := range on {
			t := jobs[j].Period
			s += int64(jobs[j].Demand[((a-shifts[j])%t+t)%t])
		}
		e += max(s-int64(c), 0)
	}
	return e
}

// TestAffinityProperty: on random placements, every shared link's score
// recomputed from the final per-job shifts is the reported one, and under
// the Resolve policy it is the link's own optimum (for the smallest capacity
// among links carrying the same jobs, the one optimized).
func TestAffinityProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	var w link.Workspace
	kept, keptPaper, total := 0, 0, 0
	for it := range 300 {
		in := randomInstance(rng)
		for _, policy := range []affinity.Policy{affinity.Resolve, affinity.Reoptimize, affinity.Paper} {
			r, err := Rank(context.Background(), in.jobs, in.links, in.cands, Options{Loops: policy})
			if err != nil {
				t.Fatalf("case %d %v: %v", it, policy, err)
			}
			for c, o := range r.Outcomes {
				if policy == affinity.Resolve {
					total++
				}
				if o.Err != nil {
					if policy == affinity.Reoptimize {
						t.Fatalf("case %d candidate %d: reoptimize discarded: %v", it, c, o.Err)
					}
					continue
				}
				switch policy {
				case affinity.Resolve:
					kept++
				case affinity.Paper:
					keptPaper++
				}
				minCap := map[string]int32{}
				for _, ls := range o.Links {
					key := jobsKey(ls.Jobs)
					if c, ok := minCap[key]; !ok || in.links[ls.Link].Capacity < c {
						minCap[key] = in.links[ls.Link].Capacity
					}
				}
				for _, ls := range o.Links {
					capa := in.links[ls.Link].Capacity
					if got := excessAt(in.jobs, ls.Jobs, o.Shifts, capa); got != ls.Excess {
						t.Fatalf("case %d %v candidate %d link %d: reported excess %d, shifts %v give %d", it, policy, c, ls.Link, ls.Excess, o.Shifts, got)
					}
					if policy == affinity.Reoptimize || capa != minCap[jobsKey(ls.Jobs)] {
						continue
					}
					ps := make([]profile.Profile, len(ls.Jobs))
					for i, j := range ls.Jobs {
						ps[i] = in.jobs[j]
					}
					own, err := w.Search(context.Background(), link.Problem{Jobs: ps, Capacity: capa}, link.Options{}, nil)
					if err != nil {
						t.Fatal(err)
					}
					if own.Excess != ls.Excess {
						t.Fatalf("case %d %v candidate %d link %d: excess %d after Algorithm 1, the link's own optimum is %d", it, policy, c, ls.Link, ls.Excess, own.Excess)
					}
				}
			}
		}
	}
	if keptPaper > kept {
		t.Fatalf("the paper's policy kept %d candidates, Resolve %d", keptPaper, kept)
	}
	t.Logf("%d candidates: Resolve kept %d, the paper's loop rule %d", total, kept, keptPaper)
}

func jobsKey(js []int) string {
	b := make([]byte, 0, 4*len(js))
	for _, j := range js {
		b = append(b, byte(j), ',')
	}
	return string(b)
}

// TestPaperPolicyAgreesOnLoopFree: where the paper keeps a candidate, Resolve
// gives the same shifts and score.
func TestPaperPolicyAgreesOnLoopFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for it := range 200 {
		in := randomInstance(rng)
		paper, err := Rank(context.Background(), in.jobs, in.links, in.cands, Options{Loops: affinity.Paper})
		if err != nil {
			t.Fatal(err)
		}
		ours, err := Rank(context.Background(), in.jobs, in.links, in.cands, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for c, o := range paper.Outcomes {
			if o.Err != nil {
				continue
			}
			if diff := cmp.Diff(o, ours.Outcomes[c]); diff != "" {
				t.Fatalf("case %d candidate %d: (-paper +resolve):\n%s", it, c, diff)
			}
		}
	}
}

// TestDeterministicAcrossWorkers: the ranking does not depend on the pool.
func TestDeterministicAcrossWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		in := randomInstance(rng)
		one, err := Rank(context.Background(), in.jobs, in.links, in.cands, Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		four, err := Rank(context.Background(), in.jobs, in.links, in.cands, Options{Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(one, four); diff != "" {
			t.Fatalf("(-1 worker +4 workers):\n%s", diff)
		}
	}
}

func TestRankOrderAndMemo(t *testing.T) {
	pulse := func(up int) profile.Profile {
		d := make([]int32, 72)
		for i := range up {
			d[i] = 40
		}
		return profile.Profile{Period: 72, Demand: d}
	}
	// Jobs 0 and 1 interleave perfectly (vector D); jobs 0 and 2 cannot (E-like).
	jobs := []profile.Profile{pulse(30), pulse(30), pulse(45)}
	links := []Link{{50}, {50}, {50}}
	cands := []Candidate{
		{Paths: [][]int{{0}, {1}, {0}}},       // 0 and 2 share link 0
		{Paths: [][]int{{0}, {0}, {2}}},       // 0 and 1 share link 0
		{Paths: [][]int{{0, 1}, {0, 1}, {2}}}, // 0 and 1 share two links: a merged loop
		{Paths: [][]int{{0}, {1}, {2}}},       // nothing shared
	}
	r, err := Rank(context.Background(), jobs, links, cands, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Order, []int{1, 2, 3, 0}) || r.Best != 1 {
		t.Fatalf("order %v best %d, want [1 2 3 0] best 1; outcomes %+v", r.Order, r.Best, r.Outcomes)
	}
	if r.Searches != 2 {
		t.Fatalf("%d distinct link searches, want 2 (jobs {0,1} and {0,2} at 50)", r.Searches)
	}
	if s := r.Outcomes[1].Shifts; !slices.Equal(s, []int{0, 30, 0}) {
		t.Fatalf("best shifts %v, want [0 30 0]", s)
	}
	paper, err := Rank(context.Background(), jobs, links, cands, Options{Loops: affinity.Paper})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(paper.Outcomes[2].Err, affinity.ErrLoop) {
		t.Fatalf("paper policy kept the loop: %+v", paper.Outcomes[2])
	}
}

func TestRankBadInput(t *testing.T) {
	ok := []profile.Profile{{Period: 2, Demand: []int32{1, 0}}}
	for _, tc := range []struct {
		links []Link
		cands []Candidate
	}{
		{[]Link{{0}}, []Candidate{{}}},
		{[]Link{{5}}, nil},
		{[]Link{{5}}, []Candidate{{Paths: [][]int{{1}}}}},
		{[]Link{{5}}, []Candidate{{Paths: [][]int{{0, 0}}}}},
		{[]Link{{5}}, []Candidate{{Paths: [][]int{{0}, {0}}}}},
	} {
		if _, err := Rank(context.Background(), ok, tc.links, tc.cands, Options{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err = %v, want ErrInvalid", tc, err)
		}
	}
}

// TestDiscardedStatus: a candidate the paper's loop rule rules out says so
// in its status, with no score, and is not in the order; a kept one never
// says discarded.
func TestDiscardedStatus(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	discarded := 0
	for it := range 200 {
		in := randomInstance(rng)
		r, err := Rank(context.Background(), in.jobs, in.links, in.cands, Options{Loops: affinity.Paper})
		if err != nil {
			t.Fatal(err)
		}
		for c, o := range r.Outcomes {
			kept := slices.Contains(r.Order, c)
			if (o.Err != nil) != (o.Status == Discarded) || kept == (o.Err != nil) {
				t.Fatalf("case %d candidate %d: status %v, err %v, kept %v", it, c, o.Status, o.Err, kept)
			}
			if o.Status == Discarded {
				discarded++
				if o.Score != 0 {
					t.Fatalf("case %d candidate %d: discarded with score %v", it, c, o.Score)
				}
			}
		}
	}
	if discarded == 0 {
		t.Fatal("no candidate was discarded: the test checks nothing")
	}
}

// A job's demand can differ from link to link (Candidate.Profiles): two
// jobs that overflow a link at their own profiles fit it at their demands
// there, and links of the same jobs with different demands are optimized
// apart.
func TestPerLinkProfiles(t *testing.T) {
	own := profile.Profile{Period: 4, Demand: []int32{30, 30, 30, 0}}
	half := profile.Profile{Period: 4, Demand: []int32{15, 15, 15, 0}}
	jobs := []profile.Profile{own, own}
	links := []Link{{Capacity: 40}, {Capacity: 40}}
	both := [][]int{{0, 1}, {0, 1}}
	plain, err := Rank(context.Background(), jobs, links, []Candidate{{Paths: both}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Link 1 carries half of each job's traffic: it fits at any shift.
	per := [][]profile.Profile{{{}, half}, {{}, half}}
	r, err := Rank(context.Background(), jobs, links, []Candidate{{Paths: both, Profiles: per}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	po, ro := plain.Outcomes[0], r.Outcomes[0]
	if len(po.Links) != 2 || po.Links[1].Score >= 1 || ro.Links[0].Score != po.Links[0].Score || ro.Links[1].Score != 1 {
		t.Fatalf("own profiles: %+v; per link: %+v", po.Links, ro.Links)
	}
	if r.Searches != 2 || plain.Searches != 1 {
		t.Fatalf("searches: %d with per-link demands (want 2), %d without (want 1)", r.Searches, plain.Searches)
	}
	for _, bad := range [][][]profile.Profile{
		{{half}}, // one profile for two links
		{{{}, {Period: 3, Demand: []int32{1, 1, 1}}}}, // another period
		{{{}, half}, {{}, half}, {{}, half}},          // more jobs than paths
	} {
		if _, err := Rank(context.Background(), jobs, links, []Candidate{{Paths: both, Profiles: bad}}, Options{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: err %v", bad, err)
		}
	}
}

// Per-link demands on periods rounded to a common grid: the links' and the
// groups' demands are padded alike (Assign checks they agree).
// Per-link demands are checked once per ranking for each storage they
// share, and again in the next: a demand its caller corrupts between two
// rankings on one Workspace is refused, and one equal in content to its
// job's own profile but stored apart still counts as the job's own.
func TestPerLinkProfilesCheckedPerRanking(t *testing.T) {
	own := profile.Profile{Period: 4, Demand: []int32{30, 30, 30, 0}}
	half := profile.Profile{Period: 4, Demand: []int32{15, 15, 15, 0}}
	copyOwn := profile.Profile{Period: 4, Demand: slices.Clone(own.Demand)}
	jobs := []profile.Profile{own, own}
	links := []Link{{Capacity: 40}, {Capacity: 40}}
	both := [][]int{{0, 1}, {0, 1}}
	per := [][]profile.Profile{{copyOwn, half}, {copyOwn, half}}
	cands := []Candidate{{Paths: both, Profiles: per}, {Paths: both, Profiles: per}}
	var ws Workspace
	r, err := ws.Rank(context.Background(), jobs, links, cands, Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Rank(context.Background(), jobs, links, []Candidate{{Paths: both, Profiles: [][]profile.Profile{{{}, half}, {{}, half}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain.Outcomes[0].Links, r.Outcomes[1].Links); diff != "" {
		t.Fatalf("a copy of the job's own demand ranks otherwise than the job's own (-own +copy):\n%s", diff)
	}
	half.Demand[1] = -1 // the caller's storage, changed between rankings
	if _, err := ws.Rank(context.Background(), jobs, links, cands, Options{}); !errors.Is(err, ErrInvalid) || !errors.Is(err, profile.ErrInvalidBandwidth) {
		t.Fatalf("a demand corrupted after the first ranking: err %v", err)
	}
}

func TestPerLinkProfilesRounded(t *testing.T) {
	// Periods 12 and 18 share a circle of 6 ticks, past the cap of 4: the
	// candidate rounds them (coprime periods would share one tick and need
	// no rounding).
	pulse := func(period, up int, v int32) profile.Profile {
		d := make([]int32, period)
		for i := range up {
			d[i] = v
		}
		return profile.Profile{Period: period, Demand: d}
	}
	a, b := pulse(12, 5, 30), pulse(18, 7, 30)
	ha, hb := pulse(12, 5, 15), pulse(18, 7, 15)
	opt := Options{Link: link.Options{Circle: circle.Options{MaxPerimeter: 4, Round: true}}}
	cand := Candidate{Paths: [][]int{{0, 1}, {0, 1}}, Profiles: [][]profile.Profile{{{}, ha}, {{}, hb}}}
	r, err := Rank(context.Background(), []profile.Profile{a, b}, []Link{{Capacity: 40}, {Capacity: 40}}, []Candidate{cand}, opt)
	if err != nil {
		t.Fatal(err)
	}
	o := r.Outcomes[0]
	if o.Err != nil || o.Grid < 2 || len(o.Links) != 2 || o.Links[1].Score != 1 {
		t.Fatalf("%+v", o)
	}
}

// TestRankTimeLimitBeforeSearch: a context that ends before a link search
// has laid out its circle discards the candidates that need it (their
// reason wraps link.ErrTimeLimit) instead of failing the ranking.
func TestRankTimeLimitBeforeSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	noisy := func(n int) profile.Profile {
		d := make([]int32, n)
		for i := range d {
			d[i] = int32(rng.IntN(100))
		}
		return profile.Profile{Period: n, Demand: d}
	}
	jobs := []profile.Profile{noisy(1 << 19), noisy(1 << 19), noisy(1 << 19)}
	links := []Link{{Capacity: 150}, {Capacity: 150}}
	cands := []Candidate{{Paths: [][]int{{0}, {0}, {0}}}, {Paths: [][]int{{1}, nil, {1}}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rk, err := Rank(ctx, jobs, links, cands, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for c, o := range rk.Outcomes {
		if !errors.Is(o.Err, link.ErrTimeLimit) || o.Status != Discarded {
			t.Errorf("candidate %d: %+v, want discarded by the time limit", c, o)
		}
	}
	if rk.Best != -1 {
		t.Errorf("best %d", rk.Best)
	}
}
