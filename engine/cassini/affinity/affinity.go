package affinity

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/link"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// Policy decides what happens to loops in the affinity graph.
type Policy int

const (
	Resolve    Policy = iota // merge same-job links; accept consistent cycles, reject the rest (default)
	Paper                    // reject any loop, as the paper's Algorithm 2
	Reoptimize               // like Resolve, but keep inconsistent cycles at a lower score
)

func (p Policy) String() string {
	switch p {
	case Resolve:
		return "resolve"
	case Paper:
		return "paper"
	case Reoptimize:
		return "reoptimize"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy parses "resolve", "paper" or "reoptimize"; "" is Resolve.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", "resolve":
		return Resolve, nil
	case "paper":
		return Paper, nil
	case "reoptimize":
		return Reoptimize, nil
	}
	return 0, fmt.Errorf("%w: loop policy %q (want resolve, paper or reoptimize)", ErrInvalid, s)
}

// Sentinel errors. ErrLoop and ErrInconsistent reject a placement; the
// others are bad input.
var (
	ErrLoop         = errors.New("affinity: the affinity graph has a loop")
	ErrInconsistent = errors.New("affinity: a loop's link shifts are inconsistent")
	ErrInvalid      = errors.New("affinity: invalid graph")
)

// LoopError is the loop that rejects a placement under the Paper policy.
type LoopError struct {
	Job, Link int // the edge that closes the loop (Link indexes Build's links)
}

func (e *LoopError) Error() string {
	return fmt.Sprintf("affinity: the affinity graph has a loop: job %d and link %d close it", e.Job, e.Link)
}

func (e *LoopError) Unwrap() error { return ErrLoop }

// InconsistentError rejects a placement whose affinity graph has a cycle
// that no assignment of job shifts keeps at every link's own optimum. It
// names the first link, in Algorithm 1's walk, that loses score when the
// cycle's links are re-optimized one after another around the jobs already
// placed.
type InconsistentError struct {
	Jobs    []int // the jobs of that link
	Link    int   // that link (indexing Graph.Links)
	Excess  int64 // its excess with the shifts the rest of the graph sets
	Optimum int64 // its excess at its own optimum

	// Status is Optimal when the search proved that no consistent
	// assignment exists, or Budget or TimeLimit when it stopped (at
	// Options.Budget or the context's end) before finding one.
	Status link.Status
}

func (e *InconsistentError) Error() string {
	why := "a loop's link shifts are inconsistent"
	if e.Status != link.Optimal {
		why = fmt.Sprintf("no consistent shifts found for a loop before the search stopped (%v)", e.Status)
	}
	return fmt.Sprintf("affinity: %s: jobs %v on link %d: excess %d with the shifts the other links set, %d at the link's own optimum", why, e.Jobs, e.Link, e.Excess, e.Optimum)
}

func (e *InconsistentError) Unwrap() error { return ErrInconsistent }

// Link is a link that carries more than one job.
type Link struct {
	Jobs     []int // job indices, strictly increasing, at least two
	Capacity int32 // in demand units
	// Profiles optionally gives the jobs' demand on this link, in Jobs
	// order, each on its job's period (a job's traffic differs from link to
	// link: an all-to-all puts more on a rack's uplink than on a server's
	// link). nil means the jobs' own profiles.
	Profiles []profile.Profile
}

// Group is a vertex of the merged graph: links that carry the same jobs with
// the same demands.
type Group struct {
	Jobs     []int             // job indices, strictly increasing
	Capacity int32             // the smallest capacity among Links: the one optimized
	Links    []int             // indices of the member links, increasing
	Profiles []profile.Profile // the links' Profiles (nil: the jobs' own)
}

// profile returns the demand of the group's i-th job, whose own profile is
// own.
func (g Group) profile(i int, own profile.Profile) profile.Profile {
	if g.Profiles != nil {
		return g.Profiles[i]
	}
	return own
}

func sameDemand(a, b []profile.Profile) bool {
	return slices.EqualFunc(a, b, func(x, y profile.Profile) bool {
		return x.Period == y.Period && slices.Equal(x.Demand, y.Demand)
	})
}

// Graph is an affinity graph after merging.
type Graph struct {
	Groups []Group
	Links  []Link
	Jobs   int // number of jobs (indices are below it)
}

// check is Build's validation of links: at least two jobs each, in
// increasing order and below jobs, a positive capacity, a profile per job
// when profiles are given, and no loop under the Paper policy.
func check(jobs int, links []Link, policy Policy) error {
	for i, l := range links {
		if len(l.Jobs) < 2 {
			return fmt.Errorf("%w: link %d carries %d jobs, want two or more", ErrInvalid, i, len(l.Jobs))
		}
		for k, j := range l.Jobs {
			if j < 0 || j >= jobs || (k > 0 && j <= l.Jobs[k-1]) {
				return fmt.Errorf("%w: link %d: job indices %v must be increasing and below %d", ErrInvalid, i, l.Jobs, jobs)
			}
		}
		if l.Capacity < 1 {
			return fmt.Errorf("%w: link %d: capacity %d", ErrInvalid, i, l.Capacity)
		}
		if l.Profiles != nil && len(l.Profiles) != len(l.Jobs) {
			return fmt.Errorf("%w: link %d: %d profiles for %d jobs", ErrInvalid, i, len(l.Profiles), len(l.Jobs))
		}
	}
	if policy == Paper {
		return loopFree(jobs, links)
	}
	return nil
}

// Build validates links and merges those that carry the same jobs. Under the
// Paper policy it returns ErrLoop if the unmerged graph has a loop.
func Build(jobs int, links []Link, policy Policy) (Graph, error) {
	if err := check(jobs, links, policy); err != nil {
		return Graph{}, err
	}
	g := Graph{Links: links, Jobs: jobs}
	// Links with the same jobs are adjacent in order, each run by link
	// index; each joins the group of its run with the same demands, if
	// any, else opens one.
	order := make([]int, len(links))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := slices.Compare(links[a].Jobs, links[b].Jobs); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	group := make([]int, len(links)) // link -> its group, numbered as opened
	var first []int                  // group -> its first link
	run := 0                         // the first group of the current run
	for x, i := range order {
		l := links[i]
		if x == 0 || !slices.Equal(links[order[x-1]].Jobs, l.Jobs) {
			run = len(first)
		}
		k := len(first) - 1
		for ; k >= run && !sameDemand(links[first[k]].Profiles, l.Profiles); k-- {
		}
		if k < run {
			k = len(first)
			first = append(first, i)
		}
		group[i] = k
	}
	// Groups in the order of their first link, as given; each group's
	// links increasing, sliced out of one array.
	rank := make([]int, len(first)) // opened group -> its place
	size := make([]int, len(first)+1)
	n := 0
	for i, k := range group {
		if first[k] == i {
			rank[k] = n
			n++
		}
		size[rank[k]+1]++
	}
	for r := range len(first) {
		size[r+1] += size[r]
	}
	if len(first) == 0 {
		return g, nil
	}
	flat := make([]int, len(links))
	g.Groups = make([]Group, len(first))
	for i, k := range group {
		gr := &g.Groups[rank[k]]
		if gr.Links == nil {
			at := size[rank[k]]
			gr.Jobs, gr.Capacity, gr.Links, gr.Profiles = links[i].Jobs, links[i].Capacity, flat[at:at:size[rank[k]+1]], links[i].Profiles
		}
		gr.Links = append(gr.Links, i)
		gr.Capacity = min(gr.Capacity, links[i].Capacity)
	}
	return g, nil
}

// loopFree reports ErrLoop, naming the edge that closes the first loop, if
// the bipartite job/link graph has a cycle.
func loopFree(jobs int, links []Link) error {
	parent := make([]int, jobs+len(links))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i, l := range links {
		v := jobs + i
		for _, j := range l.Jobs {
			a, b := find(j), find(v)
			if a == b {
				return &LoopError{Job: j, Link: i}
			}
			parent[a] = b
		}
	}
	return nil
}
