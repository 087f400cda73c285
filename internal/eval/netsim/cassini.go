package netsim

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// planned is the outcome of the chosen candidate, over the jobs in ranking
// order: the running jobs by arrival, then the new one.
type planned struct {
	order []*jobRun
	out   candidate.Outcome
	// periods and shifts are each job's, in ticks: the outcome's on its
	// grid, unless the hold gate locked a link's jobs to other periods.
	periods, shifts []int
}

// group is a shared link of the current plan, for drift sampling.
type group struct {
	jobs     []*jobRun
	padded   []profile.Profile // the jobs' demands on the link, padded to their planned periods
	shifts   []int             // the jobs' planned shifts, ticks
	capacity int32
	planned  float64 // the planned score
}

func (s *sim) linkOptions(round bool) link.Options {
	c := s.cfg.Cassini
	return link.Options{Mode: c.Mode, Budget: c.Budget, Circle: circle.Options{MaxPerimeter: c.MaxPerimeter, Round: round}}
}

// units converts a capacity in Gbps to the profiles' demand units.
func (s *sim) units(gbps float64) int32 {
	return int32(min(s.quantum.Units(gbps*profile.Gbps), math.MaxInt32))
}

// rank ranks the joint candidates cands for the jobs js (cands[c][k] places
// js[k]), as CASSINI's Algorithm 2, with the running jobs whose shifts a
// candidate can touch: every job in a connected component of the running
// jobs' affinity graph (jobs linked by the links they share) that crosses a
// link some candidate uses. The other components keep their shifts; their
// links are the same in every candidate. A job's profile depends on its
// servers (it is timed alone on them), so candidates that give the new jobs
// the same profiles are ranked together and the best of all wins (ties: the
// earlier candidate).
func (s *sim) rank(js []*jobRun, cands [][]alloc) (int, *planned, error) {
	ls := make([][]layout, len(cands))
	touched := map[int]bool{}
	for c, cand := range cands {
		for k, a := range cand {
			l, err := s.layout(js[k].model, js[k].job.Batch, a.servers)
			if err != nil {
				return 0, nil, fmt.Errorf("job %d: %w", js[k].job.ID, err)
			}
			ls[c] = append(ls[c], l)
			for _, li := range l.links {
				touched[li] = true
			}
		}
	}
	order := append(s.neighbours(touched), js...)
	n := len(order) - len(js)
	links := make([]candidate.Link, len(s.topo.Links))
	for i, l := range s.topo.Links {
		links[i] = candidate.Link{Capacity: s.units(l.Gbps)}
	}
	opt := candidate.Options{
		Link:      s.linkOptions(!s.cfg.Cassini.ExactPeriods),
		Loops:     s.cfg.Cassini.Loops,
		Aggregate: s.cfg.Cassini.Aggregate,
		Workers:   s.cfg.Cassini.Workers,
	}
	profiles := make([]profile.Profile, len(order))
	paths := make([][][]int, len(cands))
	perLink := make([][][]profile.Profile, len(cands))
	for c := range cands {
		paths[c] = make([][]int, len(order))
		perLink[c] = make([][]profile.Profile, len(order))
		for i, r := range order[:n] {
			profiles[i], paths[c][i], perLink[c][i] = r.prof, r.links, r.linkProf
		}
		for k, l := range ls[c] {
			paths[c][n+k], perLink[c][n+k] = l.links, l.linkProf
		}
	}
	sameProfiles := func(c, d int) bool {
		return slices.EqualFunc(ls[c], ls[d], func(a, b layout) bool { return slices.Equal(a.prof.Demand, b.prof.Demand) })
	}
	best, score := -1, math.Inf(-1)
	var out candidate.Outcome
	done := make([]bool, len(cands))
	for c := range cands {
		if done[c] {
			continue
		}
		var idx []int
		var group []candidate.Candidate
		for d := c; d < len(cands); d++ {
			if !done[d] && sameProfiles(c, d) {
				done[d] = true
				idx = append(idx, d)
				group = append(group, candidate.Candidate{Paths: paths[d], Profiles: perLink[d]})
			}
		}
		for k, l := range ls[c] {
			profiles[n+k] = l.prof
		}
		r, err := s.ranker.Rank(s.ctx, profiles, links, group, opt)
		if err != nil {
			return 0, nil, fmt.Errorf("jobs %v: ranking: %w", ids(js), err)
		}
		for gi, o := range r.Outcomes {
			if o.Status == candidate.Discarded {
				continue
			}
			v := o.Score
			if s.cfg.Cassini.Rank == RankDelay {
				v = -delay(o, ls[idx[gi]], js)
			}
			if v > score || (v == score && idx[gi] < best) {
				best, score, out = idx[gi], v, o
			}
		}
	}
	s.res.Rank.Rankings++
	if best < 0 {
		s.res.Rank.AllDiscarded++
		return 0, nil, nil
	}
	s.res.Rank.MeanBest += out.Score // summed here, divided in result
	s.countSharing(order[n:], n, out, paths[best], perLink[best])
	if out.Grid > 1 {
		s.res.Rank.Rounded++
	}
	if s.cfg.Policy == CassiniPlacement || s.cfg.Cassini.NoShifts {
		return best, nil, nil
	}
	// The plan's profiles are the ranked ones; the new jobs' are their
	// chosen candidate's.
	return best, &planned{order: order, out: out}, nil
}

// delay is RankDelay's cost of a candidate: the delay its shared links
// predict, every job on a link delayed by the link's mean excess over its
// capacity (1 - score of its iteration time, as two fully overlapped jobs
// are), plus what each placed job loses alone on its servers (an
// all-to-all across racks contends with itself).
func delay(o candidate.Outcome, ls []layout, js []*jobRun) float64 {
	var d float64
	for _, l := range o.Links {
		d += float64(float64(len(l.Jobs)) * (1 - l.Score)) // rounded here: no fused multiply-add
	}
	for k, l := range ls {
		d += float64(l.alone)/float64(js[k].nominal) - 1
	}
	return d
}

func ids(js []*jobRun) []int {
	out := make([]int, len(js))
	for k, j := range js {
		out[k] = j.job.ID
	}
	return out
}

// neighbours returns, by arrival, the running jobs in the connected
// components (of the graph linking jobs that share a link) that cross a
// touched link.
func (s *sim) neighbours(touched map[int]bool) []*jobRun {
	k := len(s.running)
	parent, find := disjointSets(k)
	first := map[int]int{} // link -> first running job on it
	for i, r := range s.running {
		for _, li := range r.links {
			if f, ok := first[li]; ok {
				parent[find(i)] = find(f)
			} else {
				first[li] = i
			}
		}
	}
	hit := map[int]bool{}
	for li := range touched {
		if f, ok := first[li]; ok {
			hit[find(f)] = true
		}
	}
	var out []*jobRun
	for i, r := range s.running {
		if hit[find(i)] {
			out = append(out, r)
		}
	}
	return out
}

func roundUp(t, g int) int { return (t + g - 1) / g * g }

func mod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// sameSlots reports whether two plans put iterations at the same instants.
func sameSlots(a, b agent.Plan) bool {
	if a.Period != b.Period || a.CommOffset != b.CommOffset {
		return false
	}
	d := b.Reference.Sub(a.Reference) + b.Shift - a.Shift
	return mod(int64(d), int64(a.Period)) == 0
}

// apply installs the chosen candidate's time shifts: the jobs of the links
// that hold (see Hold) get an agent holding their shift on their period on
// the plan's grid, one group clock per connected component of those links;
// the others run free.
func (s *sim) apply(newJobs []*jobRun, p *planned) error {
	o, order := p.out, p.order
	grid := max(o.Grid, 1)
	p.periods, p.shifts = make([]int, len(order)), make([]int, len(order))
	for m, r := range order {
		p.periods[m] = roundUp(r.prof.Period, grid)
		p.shifts[m] = o.Shifts[m] % p.periods[m]
	}
	hold, freeComm, err := s.holding(p)
	if err != nil {
		return err
	}
	if s.cfg.Cassini.NoGiveUp {
		clear(freeComm) // an agent without the free estimate never gives up
	}
	slack := make([]time.Duration, len(order))
	if !s.cfg.Cassini.NoSlack && s.cfg.Agent.Mode == agent.Elastic { // only Elastic agents use a slack
		s.slacks(p, hold, slack)
	}
	in := make([]bool, len(order))
	for _, members := range components(len(order), o.Links, hold) {
		for _, m := range members {
			in[m] = true
		}
		if err := s.install(newJobs, p, members, freeComm, slack); err != nil {
			return err
		}
	}
	for m, r := range order {
		if !in[m] {
			r.leave() // shares no held link any more: free to run
		}
	}
	s.trackDrift(p, hold)
	return nil
}

// countSharing adds the newly placed jobs (order[n:], as the chosen
// candidate has them) to RankStats.Placed, and those of them that share a
// binding link (the peaks of its jobs exceed its capacity) with another job
// to RankStats.Sharing: the jobs whose iteration times a shift can change.
func (s *sim) countSharing(placed []*jobRun, n int, out candidate.Outcome, paths [][]int, perLink [][]profile.Profile) {
	s.res.Rank.Placed += len(placed)
	shares := make([]bool, len(placed))
	for _, ls := range out.Links {
		if len(ls.Jobs) < 2 {
			continue
		}
		var peaks int64
		for _, m := range ls.Jobs {
			if x, ok := slices.BinarySearch(paths[m], ls.Link); ok && x < len(perLink[m]) {
				peaks += int64(perLink[m][x].Peak())
			}
		}
		if peaks <= int64(s.units(s.topo.Links[ls.Link].Gbps)) {
			continue
		}
		for _, m := range ls.Jobs {
			if m >= n {
				shares[m-n] = true
			}
		}
	}
	for _, b := range shares {
		if b {
			s.res.Rank.Sharing++
		}
	}
}

// slacks centres each held job's shift in the range its held links
// tolerate and sets its slack (agent.Plan.Slack): how far its shift may then
// grow before a link's excess passes the plan's (link.Centre, which every
// host of the engine gets through cassini.link and cassini.rank). The
// search's tie-break puts a shift at the edge of its optimal range (two
// interleaved all-reduces back to back, the gap all after one of them),
// which leaves one job no slack at all; centred, each gets half the gap. A
// link whose jobs' periods are not commensurate pins them: no slack and no
// move (see commensurate).
func (s *sim) slacks(p *planned, hold []bool, slack []time.Duration) {
	var shared []link.Shared
	for i, ls := range p.out.Links {
		if !hold[i] {
			continue
		}
		l := link.Shared{Jobs: ls.Jobs, Pinned: !commensurate(p.periods, ls.Jobs)}
		l.Problem.Capacity = s.units(s.topo.Links[ls.Link].Gbps)
		for _, j := range ls.Jobs {
			l.Problem.Jobs = append(l.Problem.Jobs, pad(p.order[j].demandOn(ls.Link), p.periods[j]))
		}
		shared = append(shared, l)
	}
	if len(shared) == 0 {
		return
	}
	shifts := slices.Clone(p.shifts)
	opt := s.linkOptions(false)
	opt.Budget = -1 // the walk was never bounded here
	rooms, err := link.Centre(s.ctx, shared, p.periods, shifts, nil, opt)
	if err != nil {
		return // no slack: every lateness corrected, as without
	}
	copy(p.shifts, shifts)
	for m, r := range rooms {
		slack[m] = time.Duration(r.Late) * s.cfg.Cassini.Tick
	}
}

// commensurate reports whether the periods of jobs have a unified circle of
// at most maxCircle of the longest: a relative phase that repeats within a
// few iterations, which a slack can describe (and which tolerance can scan
// cheaply, each step re-scoring the whole circle).
func commensurate(periods, jobs []int) bool {
	l, longest := 1, 1
	for _, j := range jobs {
		l, longest = lcm(l, periods[j]), max(longest, periods[j])
		if l > maxCircle*longest {
			return false
		}
	}
	return true
}

// maxCircle bounds the unified circle commensurate accepts, in longest
// periods.
const maxCircle = 4

// binding reports whether the peaks of a link's jobs together exceed its
// capacity: otherwise every relative phase fits and holding one would only
// cost idle time.
func (s *sim) binding(order []*jobRun, ls candidate.LinkScore) bool {
	var peaks int64
	for _, m := range ls.Jobs {
		peaks += int64(order[m].demandOn(ls.Link).Peak())
	}
	return peaks > int64(s.units(s.topo.Links[ls.Link].Gbps))
}

// holding decides, per shared link of o, whether its jobs hold their
// shifts, and per job what its communication is expected to take if it ran
// free (HoldGain; 0 otherwise).
func (s *sim) holding(p *planned) ([]bool, []time.Duration, error) {
	order, o := p.order, p.out
	hold := make([]bool, len(o.Links))
	freeComm := make([]time.Duration, len(order))
	switch s.cfg.Cassini.Hold {
	case HoldAll:
		for i := range hold {
			hold[i] = true
		}
	case HoldScore:
		minScore := s.cfg.Cassini.minScore()
		ok := make([]bool, len(order))
		for _, ls := range o.Links {
			for _, m := range ls.Jobs {
				ok[m] = ok[m] || s.binding(order, ls)
			}
		}
		for _, ls := range o.Links {
			if s.binding(order, ls) && ls.Score < minScore {
				for _, m := range ls.Jobs {
					ok[m] = false
				}
			}
		}
		for i, ls := range o.Links {
			hold[i] = s.binding(order, ls) && !slices.ContainsFunc(ls.Jobs, func(m int) bool { return !ok[m] })
		}
	case HoldGain:
		s.holdGain(p, hold, freeComm)
	}
	return hold, freeComm, nil
}

// holdGain is the HoldGain gate: a binding link holds when the replay
// predicts every job on it gains at least MinGain of its period. A link
// whose jobs share no other binding link and that does not pass on the
// plan's grid (periods rounded to a grid whose LCM fits the cap often
// stand in a ratio like 27:28, under which the jobs sweep through every
// relative phase anyway) is tried again with its jobs locked to
// harmonic periods (see harmonic) and re-optimized there.
func (s *sim) holdGain(p *planned, hold []bool, freeComm []time.Duration) {
	order, o := p.order, p.out
	type replayed struct {
		gain, freeComm  []float64
		periods, shifts []int // a harmonic lock, or nil
	}
	seen := map[string]replayed{}      // links with the same jobs and demands replay alike
	on := make([]int, len(order))      // binding links per job
	locked := make([]bool, len(order)) // jobs given harmonic periods
	for _, ls := range o.Links {
		if s.binding(order, ls) {
			for _, m := range ls.Jobs {
				on[m]++
			}
		}
	}
	for i, ls := range o.Links {
		if !s.binding(order, ls) || slices.ContainsFunc(ls.Jobs, func(m int) bool { return order[m].released }) {
			continue
		}
		key := s.replayKey(order, ls)
		rp, ok := seen[key]
		if !ok {
			rp.gain, rp.freeComm = s.replayGain(order, p.periods, p.shifts, ls)
			alone := !slices.ContainsFunc(ls.Jobs, func(m int) bool { return on[m] != s.linksOf(order, o, ls.Jobs) })
			if !s.gains(order, ls.Jobs, rp.gain) && alone {
				if per, sh, ok := s.harmonic(order, ls); ok {
					g, fc := s.replayGain(order, per, sh, ls)
					if s.gains(order, ls.Jobs, g) {
						rp = replayed{g, fc, per, sh}
					}
				}
			}
			seen[key] = rp
		}
		if hold[i] = s.gains(order, ls.Jobs, rp.gain); !hold[i] {
			continue
		}
		if rp.periods != nil && slices.ContainsFunc(ls.Jobs, func(m int) bool {
			return locked[m] && (p.periods[m] != rp.periods[m] || p.shifts[m] != rp.shifts[m])
		}) {
			hold[i] = false // the same jobs locked otherwise on a link of other demands
			continue
		}
		for k, m := range ls.Jobs {
			freeComm[m] = max(freeComm[m], time.Duration(math.Round(rp.freeComm[k]))*s.cfg.Cassini.Tick)
			if rp.periods != nil {
				p.periods[m], p.shifts[m], locked[m] = rp.periods[m], rp.shifts[m], true
			}
		}
	}
}

// gains reports whether every job of a link gains at least MinGain of its
// period.
func (s *sim) gains(order []*jobRun, jobs []int, gain []float64) bool {
	for k, m := range jobs {
		if gain[k] < s.cfg.Cassini.minGain()*float64(order[m].prof.Period) {
			return false
		}
	}
	return true
}

// linksOf counts the binding links of o that carry exactly the given jobs.
func (s *sim) linksOf(order []*jobRun, o candidate.Outcome, jobs []int) int {
	n := 0
	for _, ls := range o.Links {
		if slices.Equal(ls.Jobs, jobs) && s.binding(order, ls) {
			n++
		}
	}
	return n
}

// replayKey names a link's replay problem: its jobs, their demands on it
// and its capacity.
func (s *sim) replayKey(order []*jobRun, ls candidate.LinkScore) string {
	var b strings.Builder
	fmt.Fprint(&b, ls.Jobs, s.units(s.topo.Links[ls.Link].Gbps))
	for _, m := range ls.Jobs {
		fmt.Fprint(&b, order[m].demandOn(ls.Link).Demand)
	}
	return b.String()
}

// harmonic locks the jobs of one link to periods B/k_j, k_j = ⌊B/T_j⌋ with
// B the longest period (raised to a multiple of every k_j): their unified
// circle is B, each repeats k_j times on it, and the lock costs each job
// only the stretch from T_j to B/k_j (the group clock then runs at the
// slowest job's pace). It re-optimizes the link's shifts on those periods
// and returns per-job periods and shifts (indexed like order; only the
// link's jobs set), or false when the lock would stretch the longest period
// past 5% or the circle past the cap.
func (s *sim) harmonic(order []*jobRun, ls candidate.LinkScore) ([]int, []int, bool) {
	longest := 0
	for _, m := range ls.Jobs {
		longest = max(longest, order[m].prof.Period)
	}
	ks := make([]int, len(ls.Jobs))
	l := 1
	for k, m := range ls.Jobs {
		ks[k] = longest / order[m].prof.Period
		l = lcm(l, ks[k])
	}
	b := roundUp(longest, l)
	if float64(b) > 1.05*float64(longest) || b > s.cfg.Cassini.MaxPerimeter {
		return nil, nil, false
	}
	profs := make([]profile.Profile, len(ls.Jobs))
	periods, shifts := make([]int, len(order)), make([]int, len(order))
	for k, m := range ls.Jobs {
		periods[m] = b / ks[k]
		profs[k] = pad(order[m].demandOn(ls.Link), periods[m])
	}
	res, err := s.lw.Search(s.ctx, link.Problem{Jobs: profs, Capacity: s.units(s.topo.Links[ls.Link].Gbps)}, s.linkOptions(false), nil)
	if err != nil {
		return nil, nil, false // a cell limit or the like: keep the plan's grid
	}
	for k, m := range ls.Jobs {
		shifts[m] = res.Shifts[k] % periods[m]
	}
	return periods, shifts, true
}

// replayGain is holdGain for one shared link, the jobs on periods and
// shifts (indexed like order).
func (s *sim) replayGain(order []*jobRun, periods, shifts []int, ls candidate.LinkScore) (gain, freeComm []float64) {
	profs := make([]profile.Profile, len(ls.Jobs))
	per := make([]int, len(ls.Jobs))
	sh := make([]int, len(ls.Jobs))
	for k, m := range ls.Jobs {
		profs[k] = order[m].demandOn(ls.Link)
		per[k], sh[k] = periods[m], shifts[m]
	}
	c := s.units(s.topo.Links[ls.Link].Gbps)
	// The replay is a function of what the key holds (demands in the link's
	// job order, periods, shifts, capacity); the same links come back at
	// every re-plan of their component, and replaying them again was a
	// third of a Clos cassini run.
	key := binary.AppendVarint(s.replayBuf[:0], int64(c))
	for k, p := range profs {
		key = binary.AppendVarint(key, int64(per[k]))
		key = binary.AppendVarint(key, int64(sh[k]))
		key = binary.AppendVarint(key, int64(len(p.Demand)))
		for _, d := range p.Demand {
			key = binary.AppendVarint(key, int64(d))
		}
	}
	s.replayBuf = key
	if r, ok := s.replays[string(key)]; ok {
		return slices.Clone(r.gain), slices.Clone(r.freeComm)
	}
	gain, freeComm = holdGain(profs, per, sh, float64(c))
	if s.replays == nil || len(s.replays) >= maxReplays {
		s.replays = map[string]linkReplay{} // bounded: start anew
	}
	s.replays[string(key)] = linkReplay{slices.Clone(gain), slices.Clone(freeComm)}
	return gain, freeComm
}

// linkReplay is a link's memoized hold-gate replay.
type linkReplay struct{ gain, freeComm []float64 }

// maxReplays bounds the replay memo.
const maxReplays = 1 << 14

// components returns the connected components of the held links' jobs, each
// in increasing order, in the order of their smallest job.
func components(jobs int, links []candidate.LinkScore, hold []bool) [][]int {
	parent, find := disjointSets(jobs)
	in := make([]bool, jobs)
	for i, ls := range links {
		if !hold[i] {
			continue
		}
		for _, m := range ls.Jobs {
			in[m] = true
			parent[find(m)] = find(ls.Jobs[0])
		}
	}
	var out [][]int
	index := map[int]int{}
	for m := range jobs {
		if !in[m] {
			continue
		}
		r := find(m)
		k, ok := index[r]
		if !ok {
			k = len(out)
			index[r] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], m)
	}
	return out
}

// install gives the members of one component their agents. Within it the
// shifts are relative, so its reference instant is chosen where it delays
// the running jobs least.
func (s *sim) install(newJobs []*jobRun, p *planned, members []int, freeComm, slack []time.Duration) error {
	order := p.order
	isNew := func(r *jobRun) bool { return slices.Contains(newJobs, r) }
	tick := int64(s.cfg.Cassini.Tick)
	period := func(m int) int64 { return int64(p.periods[m]) * tick }
	shift := func(m int) int64 { return int64(p.shifts[m]) * tick }
	// Reference: among the instants that keep one running job where it
	// is, the one that delays the running jobs least in total.
	anchor := func(r *jobRun) int64 {
		if r.st == waiting {
			return r.until
		}
		return r.iterStart
	}
	ref, bestCost := s.now, int64(math.MaxInt64)
	for _, c := range members {
		if isNew(order[c]) {
			continue
		}
		cand := anchor(order[c]) - shift(c)
		var cost int64
		for _, m := range members {
			if !isNew(order[m]) {
				cost += mod(cand+shift(m)-anchor(order[m]), period(m))
			}
		}
		if cost < bestCost {
			ref, bestCost = cand, cost
		}
	}
	plans := make([]agent.Plan, len(members))
	same := true
	var group *agent.Group
	for k, m := range members {
		r := order[m]
		plans[k] = agent.Plan{Reference: simTime(ref), Shift: time.Duration(shift(m)), Period: time.Duration(period(m)),
			CommOffset: max(r.commOff, 0), FreeComm: freeComm[m], Slack: slack[m]}
		if r.agent == nil || !sameSlots(r.agent.Plan(), plans[k]) || plans[k].FreeComm != r.agent.Plan().FreeComm ||
			plans[k].Slack != r.agent.Plan().Slack {
			same = false
		} else if g := r.agent.Plan().Group; k == 0 {
			group = g
		} else if g != group {
			same = false
		}
	}
	if same && (group == nil || group.Members() == len(members)) {
		return nil // nothing changes for this component
	}
	if s.cfg.Agent.Mode == agent.Elastic {
		group = agent.NewGroup(simTime(ref))
	}
	for k, m := range members {
		r := order[m]
		plans[k].Group = group
		if group != nil && s.cfg.Cassini.PlanClock {
			plans[k].Group = agent.NewPlanGroup(simTime(ref)) // each its own: nothing shared but the plan
		}
		r.driftOK = false
		if r.agent != nil {
			if err := r.agent.SetPlan(plans[k]); err != nil {
				return fmt.Errorf("job %d: %w", r.job.ID, err)
			}
			continue
		}
		a, err := agent.New(plans[k], s.cfg.Agent)
		if err != nil {
			return fmt.Errorf("job %d: %w", r.job.ID, err)
		}
		r.agent = a
		r.agents = append(r.agents, a)
		s.agents = append(s.agents, a)
	}
	return nil
}

// trackDrift replaces the drift-sampling groups of the ranked jobs with
// the held links of the new plan.
func (s *sim) trackDrift(p *planned, hold []bool) {
	order, o := p.order, p.out
	s.groups = slices.DeleteFunc(s.groups, func(g group) bool {
		return slices.ContainsFunc(g.jobs, func(r *jobRun) bool { return slices.Contains(order, r) })
	})
	for i, ls := range o.Links {
		if !hold[i] {
			continue
		}
		g := group{capacity: s.units(s.topo.Links[ls.Link].Gbps), planned: ls.Score, shifts: make([]int, len(ls.Jobs))}
		for k, m := range ls.Jobs {
			g.shifts[k] = p.shifts[m]
		}
		for _, m := range ls.Jobs {
			g.jobs = append(g.jobs, order[m])
		}
		if slices.ContainsFunc(s.groups, func(h group) bool { return h.capacity == g.capacity && slices.Equal(h.jobs, g.jobs) }) {
			continue
		}
		for _, m := range ls.Jobs {
			g.padded = append(g.padded, pad(order[m].demandOn(ls.Link), p.periods[m]))
		}
		// The planned score at these periods and shifts (a harmonic lock
		// is not the ranking's).
		if e, points, err := s.lw.Evaluate(link.Problem{Jobs: g.padded, Capacity: g.capacity}, s.linkOptions(false), g.shifts); err == nil {
			g.planned = 1 - float64(e)/(float64(points)*float64(g.capacity))
		}
		s.groups = append(s.groups, g)
	}
	if s.nextSample <= s.now {
		s.nextSample = s.now + int64(s.cfg.SampleEvery)
	}
}

// pad extends p with idle ticks to period ticks.
func pad(p profile.Profile, period int) profile.Profile {
	if period == p.Period {
		return p
	}
	d := make([]int32, period)
	copy(d, p.Demand)
	return profile.Profile{Period: period, Demand: d}
}

// sampleDrift scores each shared link at the jobs' actual phase positions:
// each job's planned shift plus the phase error of its last communication
// start under the current plan.
func (s *sim) sampleDrift() error {
	tick := int64(s.cfg.Cassini.Tick)
	var shifts []int
	kept := s.groups[:0]
	for _, g := range s.groups {
		live := true
		for _, j := range g.jobs {
			live = live && j.st != done && j.agent != nil
		}
		if !live {
			continue
		}
		kept = append(kept, g)
		measured := true
		shifts = shifts[:0]
		for _, j := range g.jobs {
			measured = measured && j.driftOK
			pos := int64(j.agent.Plan().Shift) + int64(j.drift)
			shifts = append(shifts, int(math.Round(float64(pos)/float64(tick))))
		}
		if !measured {
			continue
		}
		excess, points, err := s.lw.Evaluate(link.Problem{Jobs: g.padded, Capacity: g.capacity}, s.linkOptions(false), shifts)
		if err != nil {
			return fmt.Errorf("drift sample: %w", err)
		}
		d := &s.res.Drift
		d.Samples++
		d.Planned += g.planned
		d.Realized += 1 - float64(excess)/(float64(points)*float64(g.capacity))
	}
	s.groups = kept
	return nil
}

// result assembles the outcome.
func (s *sim) result() Result {
	s.pstats.close(s.now)
	r := s.res
	r.Scheduler = s.cfg.Scheduler
	r.End = time.Duration(s.now)
	r.Placement = s.pstats.PlacementStats
	s.syncAll()
	sent := s.sentBits
	for _, j := range s.comm {
		if j == nil {
			continue
		}
		for i := range j.flows {
			if f := &j.flows[i]; !f.done {
				sent = addShares(sent, f.sent, f.n)
			}
		}
	}
	r.SentGbit = sent / 1e9
	r.ExcessGbit = s.excessBits / 1e9
	groups := map[*agent.Group]int{} // numbered in the order of the jobs
	for _, j := range s.jobs {
		jr := JobResult{ID: j.job.ID, Model: j.job.Model, GPUs: j.job.GPUs, Arrival: j.job.Arrival, Alone: j.alone,
			Iterations: len(j.iterMs)}
		if j.first >= 0 {
			jr.Servers = j.place.servers
			jr.Start = time.Duration(j.first)
		}
		jr.SentGbit, jr.MarkedGbit, jr.Preemptions, jr.Moves = j.sentBits/1e9, j.markedBits/1e9, j.preemptions, j.moves
		r.Placement.Moves += j.moves
		if j.st == done {
			jr.End = time.Duration(j.end)
		}
		for _, a := range j.agents {
			st, pl := a.Stats(), a.Plan()
			jr.Adjustments += st.Adjustments
			jr.Plans += 1 + int(st.Replans)
			jr.Decisions += st.Iterations
			jr.Released = jr.Released || st.Released
			jr.Period, jr.Slack, jr.FreeComm, jr.Group = pl.Period, pl.Slack, pl.FreeComm, 0
			jr.Reference, jr.Shift = time.Duration(pl.Reference.UnixNano()), pl.Shift
			if pl.Group != nil {
				if groups[pl.Group] == 0 {
					groups[pl.Group] = len(groups) + 1
				}
				jr.Group = groups[pl.Group]
			}
		}
		if len(j.iterMs) > 0 {
			var t float64
			for _, x := range j.iterMs {
				t += x
			}
			jr.MeanIter = time.Duration(math.Round(t / float64(len(j.iterMs)) * 1e6))
		}
		r.Jobs = append(r.Jobs, jr)
		r.IterMs = append(r.IterMs, j.iterMs...)
		r.AloneMs = append(r.AloneMs, j.iterAlone...)
	}
	if r.Rank.Rankings > r.Rank.AllDiscarded {
		r.Rank.MeanBest /= float64(r.Rank.Rankings - r.Rank.AllDiscarded)
	}
	a := &r.Agent
	a.Agents = len(s.agents)
	var abs float64
	for _, ag := range s.agents {
		st := ag.Stats()
		a.Adjustments += st.Adjustments
		a.Replans += st.Replans
		a.JobMinutes += st.Span.Minutes()
		a.Padding += st.Padding
		a.AdjustDelay += st.AdjustDelay
		a.Slides += st.Slides
		a.Saved += st.Saved
		a.Samples += st.Samples
		a.Over += st.Over
		abs += float64(float64(st.MeanAbs) * float64(st.Samples))
	}
	if a.JobMinutes > 0 {
		a.PerMinute = float64(a.Adjustments) / a.JobMinutes
	}
	if a.Samples > 0 {
		a.MeanAbs = time.Duration(math.Round(abs / float64(a.Samples)))
	}
	if d := &r.Drift; d.Samples > 0 {
		d.Planned /= float64(d.Samples)
		d.Realized /= float64(d.Samples)
		d.Lost = d.Planned - d.Realized
	}
	return r
}

// disjointSets returns n singleton sets as a parent array (join two sets with
// parent[find(a)] = find(b)) and its find, which halves paths as it goes.
func disjointSets(n int) ([]int, func(int) int) {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	return parent, func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
}
