package affinity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/circle"
	"github.com/orrery/orrery/engine/link"
	"github.com/orrery/orrery/engine/profile"
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

// InconsistentError is a cycle whose shifts cost a link some of its score.
type InconsistentError struct {
	Jobs    []int // the jobs of the link that closes the cycle
	Link    int   // that link (indexing Graph.Links)
	Excess  int64 // its excess with the shifts the rest of the graph sets
	Optimum int64 // its excess at its own optimum
}

func (e *InconsistentError) Error() string {
	return fmt.Sprintf("affinity: a loop's link shifts are inconsistent: jobs %v on link %d: excess %d with the shifts the other links set, %d at the link's own optimum", e.Jobs, e.Link, e.Excess, e.Optimum)
}

func (e *InconsistentError) Unwrap() error { return ErrInconsistent }

// Link is a link that carries more than one job.
type Link struct {
	Jobs     []int // job indices, strictly increasing, at least two
	Capacity int32 // in demand units
}

// Group is a vertex of the merged graph: links that carry the same jobs.
type Group struct {
	Jobs     []int // job indices, strictly increasing
	Capacity int32 // the smallest capacity among Links: the one optimized
	Links    []int // indices of the member links, increasing
}

// Graph is an affinity graph after merging.
type Graph struct {
	Groups []Group
	Links  []Link
	Jobs   int // number of jobs (indices are below it)
}

// Build validates links and merges those that carry the same jobs. Under the
// Paper policy it returns ErrLoop if the unmerged graph has a loop.
func Build(jobs int, links []Link, policy Policy) (Graph, error) {
	for i, l := range links {
		if len(l.Jobs) < 2 {
			return Graph{}, fmt.Errorf("%w: link %d carries %d jobs, want two or more", ErrInvalid, i, len(l.Jobs))
		}
		for k, j := range l.Jobs {
			if j < 0 || j >= jobs || (k > 0 && j <= l.Jobs[k-1]) {
				return Graph{}, fmt.Errorf("%w: link %d: job indices %v must be increasing and below %d", ErrInvalid, i, l.Jobs, jobs)
			}
		}
		if l.Capacity < 1 {
			return Graph{}, fmt.Errorf("%w: link %d: capacity %d", ErrInvalid, i, l.Capacity)
		}
	}
	if policy == Paper {
		if err := loopFree(jobs, links); err != nil {
			return Graph{}, err
		}
	}
	g := Graph{Links: links, Jobs: jobs}
	order := make([]int, len(links))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return slices.Compare(links[a].Jobs, links[b].Jobs) })
	for _, i := range order {
		l := links[i]
		if n := len(g.Groups); n > 0 && slices.Equal(g.Groups[n-1].Jobs, l.Jobs) {
			last := &g.Groups[n-1]
			last.Links = append(last.Links, i)
			last.Capacity = min(last.Capacity, l.Capacity)
			continue
		}
		g.Groups = append(g.Groups, Group{Jobs: l.Jobs, Capacity: l.Capacity, Links: []int{i}})
	}
	// Process groups in the order of their first link, as given.
	slices.SortFunc(g.Groups, func(a, b Group) int { return cmp.Compare(a.Links[0], b.Links[0]) })
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

// Optimum is a group's own optimization: the shifts of its jobs (in the
// group's job order) and their excess at the group's capacity.
type Optimum struct {
	Shifts []int
	Excess int64
}

// Outcome is what a group's links score under the final job shifts.
type Outcome struct {
	Excess      []int64 // per member link (in Group.Links order), at the final shifts
	Scores      []float64
	Points      int
	Constrained bool // the group closed a cycle and was re-optimized around fixed jobs
	Degraded    bool // the constrained optimum was worse than the group's own (Reoptimize only)
	Status      link.Status
}

// Assignment is the result of Algorithm 1.
type Assignment struct {
	Shifts   []int     // per job, in ticks; 0 for jobs outside the graph
	Outcomes []Outcome // per group
}

// Assign runs the breadth-first walk over g. jobs holds every job's profile
// (already on a common period grid), opt each group's own optimum. The
// search options are those the optima were found with; w is scratch space.
func Assign(ctx context.Context, w *link.Workspace, g Graph, jobs []profile.Profile, opt []Optimum, lopt link.Options, policy Policy) (Assignment, error) {
	if len(jobs) != g.Jobs || len(opt) != len(g.Groups) {
		return Assignment{}, fmt.Errorf("%w: %d profiles and %d optima for %d jobs and %d groups", ErrInvalid, len(jobs), len(opt), g.Jobs, len(g.Groups))
	}
	for j, p := range jobs {
		if err := p.Validate(); err != nil {
			return Assignment{}, fmt.Errorf("%w: job %d: %w", ErrInvalid, j, err)
		}
	}
	for gi, gr := range g.Groups {
		if len(opt[gi].Shifts) != len(gr.Jobs) {
			return Assignment{}, fmt.Errorf("%w: group %d has %d jobs, its optimum %d shifts", ErrInvalid, gi, len(gr.Jobs), len(opt[gi].Shifts))
		}
		for _, j := range gr.Jobs {
			if j < 0 || j >= g.Jobs {
				return Assignment{}, fmt.Errorf("%w: group %d: job %d of %d", ErrInvalid, gi, j, g.Jobs)
			}
		}
	}
	shift := make([]int, g.Jobs)
	assigned := make([]bool, g.Jobs)
	byJob := make([][]int, g.Jobs)
	for gi, gr := range g.Groups {
		for _, j := range gr.Jobs {
			byJob[j] = append(byJob[j], gi)
		}
	}
	done := make([]bool, len(g.Groups))
	known := make([]int64, len(g.Groups)) // excess at the group's capacity under the final shifts
	out := Assignment{Shifts: shift, Outcomes: make([]Outcome, len(g.Groups))}
	var queue []int
	var profiles []profile.Profile
	var fixed, buf []int
	for root := range g.Jobs {
		if assigned[root] || len(byJob[root]) == 0 {
			continue
		}
		assigned[root] = true // reference job of its component: shift 0
		queue = append(queue[:0], root)
		for len(queue) > 0 {
			j := queue[0]
			queue = queue[1:]
			for _, gi := range byJob[j] {
				if done[gi] {
					continue
				}
				done[gi] = true
				gr, o := g.Groups[gi], opt[gi]
				profiles = profiles[:0]
				fixed = fixed[:0]
				nfixed := 0
				for _, k := range gr.Jobs {
					profiles = append(profiles, jobs[k])
					if assigned[k] {
						fixed = append(fixed, shift[k])
						nfixed++
					} else {
						fixed = append(fixed, -1)
					}
				}
				pos := slices.Index(gr.Jobs, j)
				oc := &out.Outcomes[gi]
				oc.Status = link.Optimal
				known[gi] = o.Excess
				if nfixed == 1 {
					// Algorithm 1, line 17.
					for i, k := range gr.Jobs {
						if k != j {
							shift[k] = circle.Mod(shift[j]-o.Shifts[pos]+o.Shifts[i], jobs[k].Period)
							assigned[k] = true
							queue = append(queue, k)
						}
					}
				} else {
					// The group closes a cycle: hold the jobs that have
					// shifts, optimize the rest around them.
					oc.Constrained = true
					res, err := w.Search(ctx, link.Problem{Jobs: profiles, Capacity: gr.Capacity, Fixed: fixed}, lopt, buf)
					if err != nil {
						return Assignment{}, err
					}
					buf = res.Shifts
					oc.Status = res.Status
					known[gi] = res.Excess
					if res.Excess > o.Excess {
						if policy != Reoptimize {
							return Assignment{}, &InconsistentError{Jobs: gr.Jobs, Link: gr.Links[0], Excess: res.Excess, Optimum: o.Excess}
						}
						oc.Degraded = true
					}
					for i, k := range gr.Jobs {
						if !assigned[k] {
							shift[k] = circle.Mod(res.Shifts[i], jobs[k].Period)
							assigned[k] = true
							queue = append(queue, k)
						}
					}
				}
			}
		}
	}
	// Score every member link at the final shifts. At the group's own
	// capacity the excess is already known: the optimum's, moved by whole
	// periods, or the constrained search's. Other capacities are evaluated.
	for gi, gr := range g.Groups {
		profiles = profiles[:0]
		fixed = fixed[:0]
		for _, k := range gr.Jobs {
			profiles = append(profiles, jobs[k])
			fixed = append(fixed, shift[k])
		}
		oc := &out.Outcomes[gi]
		oc.Points = points(jobs, gr.Jobs, lopt.Mode)
		for _, li := range gr.Links {
			c := g.Links[li].Capacity
			e := known[gi]
			if c != gr.Capacity {
				var err error
				if e, _, err = w.Evaluate(link.Problem{Jobs: profiles, Capacity: c}, lopt, fixed); err != nil {
					return Assignment{}, err
				}
			}
			oc.Excess = append(oc.Excess, e)
			oc.Scores = append(oc.Scores, 1-float64(e)/(float64(oc.Points)*float64(c)))
		}
	}
	return out, nil
}

// points returns |A| of a link carrying jobs: its unified perimeter in Exact
// mode, 72 in Paper mode. The jobs' periods are known to unify.
func points(jobs []profile.Profile, on []int, mode link.Mode) int {
	if mode == link.Paper {
		return link.PaperAngles
	}
	p := 1
	for _, j := range on {
		p = p / circle.GCD(p, jobs[j].Period) * jobs[j].Period
	}
	return p
}
