package netsim

import (
	"math"
	"slices"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// The hold gate predicts, for the jobs sharing one link, what holding their
// planned shifts gains against letting them run free, from what CASSINI
// knows of them: their profiles (bandwidth demand per tick) and the link's
// capacity. It replays the link alone as a fluid: each job repeats its
// profile's phases, a phase with demand b and length d carries b·d at up to
// b, and the phases in flight share the capacity max-min fairly. Held, job
// j's iteration n starts when its Elastic agent says (package agent: slots
// t_j + n·T̂_j on a group clock paced by the slowest job, T̂_j its period on
// the plan's grid); free, every job starts at a random phase and runs back
// to back. Over a few unified circles this gives each job's mean
// iteration time both ways; the difference is what the shift buys it net of
// the idle time it costs.

// replaySamples is how many phase draws the free replay averages.
const replaySamples = 16

// segment is a run of ticks of equal demand in a profile.
type segment struct {
	ticks  float64
	demand float64 // units; 0 is compute
}

func segments(p profile.Profile) []segment {
	var out []segment
	for t := 0; t < p.Period; {
		u := t
		for u < p.Period && p.Demand[u] == p.Demand[t] {
			u++
		}
		out = append(out, segment{float64(u - t), float64(p.Demand[t])})
		t = u
	}
	return out
}

// replayJob is one job's state in a replay.
type replayJob struct {
	segs   []segment
	seg    int
	left   float64      // ticks (compute) or units·ticks (communication) left in seg
	wait   float64      // start of the next iteration; -1 when running
	agent  *agent.Agent // held: the job's Elastic agent
	start  float64      // of the current iteration
	iters  int          // counted iterations
	sum    float64      // their summed lengths
	comm   float64      // their summed communication time
	inComm float64      // communication time of the current iteration
	rate   float64
}

// replayLink returns each job's mean iteration time and mean communication
// time per iteration (ticks) on one link of capacity c (units): held at
// shifts on periods by Elastic agents sharing one group clock (no slack: the
// replay has no noise) when held is set, or free from the given start
// offsets, over horizon ticks (iterations starting in the first quarter are
// not counted).
func replayLink(profs []profile.Profile, periods, shifts []int, offsets []float64, c float64, held bool, horizon float64) (iter, comm []float64) {
	jobs := make([]replayJob, len(profs))
	ref := time.Unix(0, 0)
	group := agent.NewGroup(ref)
	for j, p := range profs {
		r := &jobs[j]
		r.segs = segments(p)
		r.left = r.segs[0].ticks * max(r.segs[0].demand, 1)
		if !held {
			r.wait = offsets[j]
			continue
		}
		r.agent, _ = agent.New(agent.Plan{Reference: ref, Shift: time.Duration(shifts[j]) * replayTick,
			Period: time.Duration(periods[j]) * replayTick, Group: group}, agent.Options{Margin: -1})
		r.wait = r.decide(0)
	}
	warm := horizon / 4
	now := 0.0
	var peaks []float64
	for now < horizon {
		// Rates: max-min fair shares of c among the phases in flight.
		peaks = peaks[:0]
		for j := range jobs {
			r := &jobs[j]
			r.rate = 0
			if r.wait < 0 && r.segs[r.seg].demand > 0 {
				peaks = append(peaks, r.segs[r.seg].demand)
			}
		}
		level := fairLevel(peaks, c)
		dt := horizon - now
		for j := range jobs {
			r := &jobs[j]
			switch {
			case r.wait >= 0:
				dt = min(dt, r.wait-now)
			case r.segs[r.seg].demand > 0:
				r.rate = min(r.segs[r.seg].demand, level)
				dt = min(dt, r.left/r.rate)
			default:
				dt = min(dt, r.left)
			}
		}
		dt = max(dt, 0)
		now += dt
		for j := range jobs {
			jobs[j].advance(now, dt, warm)
		}
	}
	iter, comm = make([]float64, len(jobs)), make([]float64, len(jobs))
	for j, r := range jobs {
		if r.iters > 0 {
			iter[j], comm[j] = r.sum/float64(r.iters), r.comm/float64(r.iters)
		} else { // not one iteration counted: as slow as the horizon
			iter[j], comm[j] = horizon, horizon
		}
	}
	return iter, comm
}

// replayTick is the replay's time unit: one profile tick, taken as a
// millisecond for the agents (only ratios matter).
const replayTick = time.Millisecond

// decide is when the iteration ready at now (ticks) starts: its agent's
// decision when held, now when free.
func (r *replayJob) decide(now float64) float64 {
	if r.agent == nil {
		return now
	}
	d := r.agent.Next(time.Unix(0, int64(math.Round(now*float64(replayTick)))))
	return max(float64(d.Start.UnixNano())/float64(replayTick), now)
}

// fairLevel is the max-min fair level of flows with the given peaks on a
// link of capacity c: each flow gets min(peak, level).
func fairLevel(peaks []float64, c float64) float64 {
	slices.Sort(peaks)
	left := c
	for i, p := range peaks {
		share := left / float64(len(peaks)-i)
		if p >= share {
			return share
		}
		left -= p
	}
	return math.Inf(1)
}

// advance moves r dt ticks on to now.
func (r *replayJob) advance(now, dt float64, warm float64) {
	const eps = 1e-9
	if r.wait >= 0 {
		if now+eps >= r.wait {
			r.wait = -1
			r.start = now
		}
		return
	}
	s := r.segs[r.seg]
	if s.demand > 0 {
		r.left -= float64(r.rate * dt) // rounded here: no fused multiply-add, on any host
		r.inComm += dt
	} else {
		r.left -= dt
	}
	if r.left > eps*max(s.demand, 1) {
		return
	}
	r.seg++
	if r.seg == len(r.segs) { // the iteration is over
		r.seg = 0
		next := r.decide(now)
		if r.start >= warm {
			r.iters++
			r.sum += next - r.start
			r.comm += r.inComm
		}
		r.inComm = 0
		r.wait = next
	}
	r.left = r.segs[r.seg].ticks * max(r.segs[r.seg].demand, 1)
}

// holdGain is what the jobs sharing a link gain per iteration by holding
// their planned shifts: the free replay's mean iteration time minus the held
// one, each job's in ticks, with the free replay's mean communication time
// per iteration (what an agent compares its measured communication time
// with). profs are the jobs' profiles (their own periods); periods their
// periods on the plan's grid; shifts the plan's. The free replay's phases are
// spread evenly (a Kronecker sequence: draw i puts job j at the fraction
// frac(i·α_j + 1/2) of its period, α_j = frac(j·φ), φ the golden ratio), so
// two jobs' relative phase covers its circle in even steps.
func holdGain(profs []profile.Profile, periods, shifts []int, c float64) (gain, freeComm []float64) {
	const cap = 1 << 16
	perimeter, longest := 1, 0
	for _, p := range periods {
		perimeter = min(lcm(perimeter, p), cap) // no overflow: both under 2^24
		longest = max(longest, p)
	}
	horizon := float64(max(4*perimeter, 40*longest))
	heldIter, _ := replayLink(profs, periods, shifts, nil, c, true, horizon)
	gain, freeComm = make([]float64, len(profs)), make([]float64, len(profs))
	offsets := make([]float64, len(profs))
	for i := range replaySamples {
		for j, p := range profs {
			a := frac(float64(float64(j) * math.Phi))
			offsets[j] = frac(float64(float64(i)*a)+0.5) * float64(p.Period)
		}
		it, cm := replayLink(profs, periods, shifts, offsets, c, false, horizon)
		for j := range it {
			gain[j] += float64(it[j] / replaySamples)
			freeComm[j] += float64(cm[j] / replaySamples)
		}
	}
	for j := range gain {
		gain[j] -= heldIter[j]
	}
	return gain, freeComm
}

// frac is x's fractional part, x ≥ 0.
func frac(x float64) float64 { return x - math.Floor(x) }

func lcm(a, b int) int {
	g := a
	for h := b; h != 0; {
		g, h = h, g%h
	}
	return a / g * b
}
