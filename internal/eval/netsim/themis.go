package netsim

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/orrery/orrery/internal/eval/workload"
)

// Themis as its paper describes it (Mahajan et al., "Themis: Fair and
// Efficient GPU Cluster Scheduling", NSDI '20), the CASSINI paper's
// baseline: Config.Auction AuctionPaper with Config.Placement ThemisGPUs.
//
// What the CASSINI paper says of its Themis (§5.1, verbatim): "The bidding
// period (epoch) is set to 10 mins. Jobs participate in an auction where
// they send bid values for different GPU allocations. An assignment of GPU
// servers is valid until the period of lease time. When the lease time
// expires, the job gives up the server, and a new auction is conducted for
// all the released servers. When a job arrives, its initial number of
// requested workers is randomly selected between 1 to 12 GPUs. As the
// experiment progresses, the number of workers is automatically tuned
// based on Themis's finish-time-fairness metric."
//
// The mechanism, from the Themis paper (§3.3, its Pseudocode 1, the
// finish-time fair policy), as implemented here:
//
//  1. Whenever GPUs are free (a job arrives or finishes, a lease ends) the
//     arbiter sorts the apps by their finish-time fairness ρ = T_sh/T_id
//     (the time the app will have taken in the shared cluster over the
//     time it would take alone on a 1/N share, N the apps contending)
//     and offers the GPUs to the 1-f fraction worst off (f the fairness
//     knob, 0.8 by default).
//  2. Those apps bid ρ as a function of the GPUs they would get; the
//     arbiter computes the proportional-fair allocation (maximizing the
//     product of 1/ρ) and gives each app c_i of it, c_i the product of
//     the others' 1/ρ with app i present over the same without it (the
//     partial allocation mechanism; 1-c_i is its hidden payment).
//  3. The leftover GPUs (the hidden payments and what nobody took) go to
//     the other apps at random.
//
// An app's bid depends on its GPUs only through their number and how many
// machines they span (Themis's placement sensitivity: a job whose GPUs
// share a machine communicates without the network); it knows nothing of
// links or of other jobs' traffic. So the GPUs themselves are chosen by
// that rule alone (ThemisGPUs): the fewest machines, and among equally
// consolidated choices, which Themis values the same, a uniform draw.
//
// Where the papers leave a detail open, the choice made here:
//
//   - A job trains its iterations (the CASSINI paper: 200 to 1000) at a
//     fixed global batch, its requested GPUs G times its batch per GPU b:
//     on g GPUs each takes G·b/g (rounded), so g is at most G (Themis's
//     job_demand_max) and at least what Table 3's largest batch per GPU
//     allows (memory) and the model's fewest servers. Fewer workers
//     compute longer iterations and send less per ring hop.
//   - A bid's iteration time at g GPUs is the model's uncontended one at g
//     servers and its batch there, times the job's measured slowdown (its
//     iterations' mean over their uncontended times); T_id is as the
//     greedy auction's (its iterations at its requested count, on
//     max(1, N·G/C) times its share).
//   - An app left without GPUs waits at least a lease: its ρ with none is
//     that wait plus its remaining time at its requested count.
//   - GPUs are indivisible: c_i times the proportional-fair count is
//     rounded down (to none below the model's fewest servers); the
//     proportional-fair allocation breaks ties toward more GPUs for the
//     worse-off app.
//   - The auction is among the apps that hold no unexpired lease (the
//     waiting and those whose lease ended): an app under lease keeps its
//     GPUs and does not bid. The 1-f fraction is rounded up, so at least
//     one app bids.
//   - At random: the other apps in a uniformly drawn order, each taking
//     its requested count, or what is left if that is at least its fewest.
//   - A job whose lease ended gives its GPUs up (its iteration in progress
//     is lost, as at a preemption) and, if it wins, is placed again by the
//     rule: a move.

// minGPUs is the fewest GPUs j runs on: its model's fewest servers, one
// GPU each, and enough that its batch per GPU stays within Table 3's
// (pinned: its own count).
func (s *sim) minGPUs(j *jobRun) int {
	if s.cfg.Pinned[j.job.ID] != nil {
		return j.job.GPUs
	}
	global := j.job.GPUs * j.job.Batch
	fit := (global + j.model.Batch[1] - 1) / j.model.Batch[1]
	return min(max(1, j.model.MinServers, fit), j.job.GPUs)
}

// batchAt is j's batch per GPU on g GPUs: its global batch shared out,
// within Table 3's range.
func batchAt(j *jobRun, g int) int {
	b := int(math.Round(float64(j.job.GPUs*j.job.Batch) / float64(g)))
	return min(max(b, j.model.Batch[0]), j.model.Batch[1])
}

// nominalAt is j's uncontended iteration time on g GPUs (as many servers
// as the packing gives, at its batch there), cached.
func (s *sim) nominalAt(j *jobRun, g int) time.Duration {
	for len(j.nominals) <= g {
		j.nominals = append(j.nominals, 0)
	}
	if d := j.nominals[g]; d > 0 {
		return d
	}
	steps, err := j.model.Iteration(batchAt(j, g), workload.Servers(g, s.cfg.GPUsPerServer))
	d := time.Microsecond
	if err == nil {
		d = max(workload.Period(steps), time.Microsecond)
	}
	j.nominals[g] = d
	return d
}

// resize sets j's worker count (and its batch per GPU).
func (s *sim) resize(j *jobRun, g int) {
	if g == j.gpus {
		return
	}
	j.gpus, j.batch = g, batchAt(j, g)
	j.nominal = s.nominalAt(j, g)
}

// rhoAt is j's finish-time fairness as it bids for g GPUs (0: none, so a
// lease's wait), n apps contending.
func (s *sim) rhoAt(j *jobRun, g, n int) float64 {
	elapsed := float64(s.now - int64(j.job.Arrival))
	share := max(1, float64(n*j.job.GPUs)/float64(s.topo.Servers*s.cfg.GPUsPerServer))
	ideal := float64(j.job.Iterations) * float64(s.nominalAt(j, j.job.GPUs)) * share
	if g == 0 {
		return (elapsed + float64(s.cfg.lease()) + s.remainingAt(j, j.job.GPUs)) / ideal
	}
	return (elapsed + s.remainingAt(j, g)) / ideal
}

// remainingAt is the time j's remaining work takes on g GPUs at its
// measured slowdown.
func (s *sim) remainingAt(j *jobRun, g int) float64 {
	slow := 1.0
	if j.aloneSum > 0 {
		slow = j.iterSum / j.aloneSum
	}
	return float64(j.job.Iterations-j.iter) * float64(s.nominalAt(j, g)) * slow
}

// themisAuction is Themis's auction at the current instant (see above). It
// returns the winners to place, worker counts set, in the order they are
// placed: the auction's, by decreasing ρ, then the leftover's draw.
// Bidders whose lease ended have given their GPUs up; those that lost are
// preempted.
func (s *sim) themisAuction() []*jobRun {
	active, bidders, pool := s.leaseBidders()
	if len(bidders) == 0 {
		return nil
	}
	n := len(active)
	rho := make(map[*jobRun]float64, len(bidders))
	for _, j := range bidders {
		rho[j] = s.rhoAt(j, j.gpus, n)
	}
	slices.SortStableFunc(bidders, func(a, b *jobRun) int { return cmp.Compare(rho[b], rho[a]) })
	f := max(s.cfg.Fairness, 0)
	k := max(1, int(math.Ceil(float64((1-f)*float64(len(bidders)))-1e-9)))
	k = min(k, len(bidders))
	grant := s.partialAllocation(bidders[:k], pool, n)
	left := pool
	for _, g := range grant {
		left -= g
	}
	rest := slices.Clone(bidders[k:])
	s.arng.Shuffle(len(rest), func(a, b int) { rest[a], rest[b] = rest[b], rest[a] })
	for _, j := range rest {
		g := min(j.job.GPUs, left)
		if g < s.minGPUs(j) {
			g = 0
		}
		grant = append(grant, g)
		left -= g
	}
	order := append(slices.Clip(bidders[:k]), rest...)
	var start []*jobRun
	for i, j := range order {
		if j.st != queued {
			s.stop(j) // its lease ended: its GPUs go back to the auction
			if grant[i] == 0 {
				j.preemptions++
			} else {
				j.moves++
			}
		}
		if grant[i] > 0 {
			s.resize(j, grant[i])
			start = append(start, j)
		}
	}
	return start
}

// partialAllocation returns the GPUs each of js (in order) gets from pool
// by the partial allocation mechanism: c_i times its proportional-fair
// count, rounded down.
func (s *sim) partialAllocation(js []*jobRun, pool, n int) []int {
	u := make([][]float64, len(js)) // u[i][g] = log(1/ρ_i(g)); NaN where g is not an option
	lo := make([]int, len(js))
	for i, j := range js {
		lo[i] = s.minGPUs(j)
		u[i] = make([]float64, j.job.GPUs+1)
		for g := range u[i] {
			if g == 0 || g >= lo[i] {
				u[i][g] = -math.Log(s.rhoAt(j, g, n))
			} else {
				u[i][g] = math.NaN()
			}
		}
	}
	return partial(u, lo, pool)
}

// partial is the partial allocation mechanism on the apps' log(1/ρ) bids
// u (u[i][g], NaN where g is not an option; lo[i] the fewest GPUs app i
// runs on): each app's proportional-fair count times c_i, the others'
// product of 1/ρ with it over the best they make without it, rounded
// down (below lo[i]: none).
func partial(u [][]float64, lo []int, pool int) []int {
	pf, _ := proportionalFair(u, pool, -1)
	out := slices.Clone(pf)
	if len(u) < 2 {
		return out
	}
	for i := range u {
		if pf[i] == 0 {
			continue
		}
		var others float64
		for m := range u {
			if m != i {
				others += u[m][pf[m]]
			}
		}
		_, without := proportionalFair(u, pool, i)
		c := min(math.Exp(others-without), 1)
		g := int(math.Floor(float64(c*float64(pf[i])) + 1e-9))
		if g < lo[i] {
			g = 0
		}
		out[i] = g
	}
	return out
}

// proportionalFair maximizes the sum of u[i][g_i] (log 1/ρ) over the
// worker counts g_i (options: the indices of u[i] whose value is not
// NaN), their sum at most pool, app skip left out (0 GPUs, not counted;
// -1 for none). It returns the counts and the maximum; ties go to more
// GPUs for the earlier app.
func proportionalFair(u [][]float64, pool, skip int) ([]int, float64) {
	// best[i][r]: the most apps i.. can make of r GPUs; pick[i][r] its
	// count for app i.
	best := make([][]float64, len(u)+1)
	pick := make([][]int, len(u))
	best[len(u)] = make([]float64, pool+1)
	for i := len(u) - 1; i >= 0; i-- {
		best[i] = make([]float64, pool+1)
		pick[i] = make([]int, pool+1)
		for r := 0; r <= pool; r++ {
			if i == skip {
				best[i][r] = best[i+1][r]
				continue
			}
			v, at := math.Inf(-1), 0
			for g := min(len(u[i])-1, r); g >= 0; g-- {
				if math.IsNaN(u[i][g]) {
					continue
				}
				if x := u[i][g] + best[i+1][r-g]; x > v {
					v, at = x, g
				}
			}
			best[i][r], pick[i][r] = v, at
		}
	}
	counts := make([]int, len(u))
	r := pool
	for i := range u {
		if i == skip {
			continue
		}
		counts[i] = pick[i][r]
		r -= counts[i]
	}
	return counts, best[0][pool]
}
