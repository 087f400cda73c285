package affinity

import (
	"math/rand/v2"
	"slices"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// This file decides by brute force, sharing no code with Assign or package
// link, whether an affinity graph has one shift per job that puts every
// shared link at its own optimum.

// table is one link's optimal relative shifts: ok[key] for the shifts of
// on[1:] relative to on[0], each modulo its own period.
type table struct {
	on   []int
	mods []int
	ok   []bool
	opt  int64
}

func (tb table) key(t []int) int {
	k := 0
	for i, j := range tb.on[1:] {
		k = k*tb.mods[i] + circle.Mod(t[j]-t[tb.on[0]], tb.mods[i])
	}
	return k
}

func (tb table) holds(t []int) bool { return tb.ok[tb.key(t)] }

func lcmOf(jobs []profile.Profile, on []int) int {
	p := 1
	for _, j := range on {
		p = p / circle.GCD(p, jobs[j].Period) * jobs[j].Period
	}
	return p
}

// sampledExcess is a link's excess at the given shifts (indexed by job) over
// the 72 sample points floor(a*p/72) of its unified circle.
func sampledExcess(jobs []profile.Profile, on, shifts []int, c int32) int64 {
	p := lcmOf(jobs, on)
	var e int64
	for a := range 72 {
		x := a * p / 72
		var s int64
		for _, j := range on {
			s += int64(jobs[j].Demand[circle.Mod(x-shifts[j], jobs[j].Period)])
		}
		e += max(s-int64(c), 0)
	}
	return e
}

// odometer calls f with every vector v, v[i] in [0, mods[i]), in
// lexicographic order, until f returns false.
func odometer(mods []int, f func(v []int) bool) {
	v := make([]int, len(mods))
	for {
		if !f(v) {
			return
		}
		i := len(v) - 1
		for ; i >= 0; i-- {
			if v[i]++; v[i] < mods[i] {
				break
			}
			v[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// bruteTable builds a link's table. Exact mode: every relative shift, at
// the excess over every tick. Paper mode: the rotations the paper searches
// (on[0] at 0, job k at floor(m*p/72) ticks for 5-degree steps m within one
// of its periods), optimal at the sampled excess, and every shift vector
// equal to one of them plus a common offset (Theorem 1's Eq. 6, modulo each
// job's period).
func bruteTable(jobs []profile.Profile, on []int, c int32, mode link.Mode) table {
	tb := table{on: on}
	size := 1
	for _, j := range on[1:] {
		tb.mods = append(tb.mods, jobs[j].Period)
		size *= jobs[j].Period
	}
	tb.ok = make([]bool, size)
	shifts := make([]int, len(jobs))
	set := func(v []int) {
		for i, j := range on[1:] {
			shifts[j] = v[i]
		}
	}
	if mode == link.Exact {
		ex := make([]int64, size)
		tb.opt = -1
		i := 0
		odometer(tb.mods, func(v []int) bool {
			set(v)
			ex[i] = excessAt(jobs, on, shifts, c)
			if tb.opt < 0 || ex[i] < tb.opt {
				tb.opt = ex[i]
			}
			i++
			return true
		})
		for i, e := range ex {
			tb.ok[i] = e == tb.opt
		}
		return tb
	}
	p := lcmOf(jobs, on)
	var rot []int
	for _, j := range on[1:] {
		rot = append(rot, (72*jobs[j].Period+p-1)/p)
	}
	type cand struct {
		o []int
		e int64
	}
	var all []cand
	tb.opt = -1
	odometer(rot, func(m []int) bool {
		o := make([]int, len(m))
		for i := range m {
			o[i] = m[i] * p / 72
		}
		set(o)
		e := sampledExcess(jobs, on, shifts, c)
		all = append(all, cand{o, e})
		if tb.opt < 0 || e < tb.opt {
			tb.opt = e
		}
		return true
	})
	t0 := jobs[on[0]].Period
	for _, cd := range all {
		if cd.e != tb.opt {
			continue
		}
		for n := 0; n < p/t0; n++ {
			k := 0
			for i := range cd.o {
				k = k*tb.mods[i] + circle.Mod(cd.o[i]+n*t0, tb.mods[i])
			}
			tb.ok[k] = true
		}
	}
	return tb
}

// bruteConsistent returns the first shift vector (the lowest job of each
// connected component at 0, the others over their whole periods, in
// lexicographic order) at which every table holds, or nil.
func bruteConsistent(jobs []profile.Profile, tables []table) []int {
	n := len(jobs)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			x = parent[x]
		}
		return x
	}
	for _, tb := range tables {
		for _, j := range tb.on[1:] {
			a, b := find(j), find(tb.on[0])
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	var free []int
	var mods []int
	for j := range n {
		if find(j) != j {
			free = append(free, j)
			mods = append(mods, jobs[j].Period)
		}
	}
	t := make([]int, n)
	var found []int
	odometer(mods, func(v []int) bool {
		for i, j := range free {
			t[j] = v[i]
		}
		for _, tb := range tables {
			if !tb.holds(t) {
				return true
			}
		}
		found = slices.Clone(t)
		return false
	})
	return found
}

// cyclic is a random affinity graph with forced cycles: a random tree of
// links over the jobs, plus extra links over jobs already connected (each
// closes a cycle, or repeats a link's jobs at another capacity).
type cyclic struct {
	jobs  []profile.Profile
	links []Link
}

// randomCyclic draws one with up to maxJobs jobs whose periods are drawn
// from periods. Demands are one or two pulses or random per tick;
// capacities are 40-120% of the jobs' summed peaks, so that some links fit
// and some do not.
func randomCyclic(rng *rand.Rand, periods []int, maxJobs int) cyclic {
	var in cyclic
	nj := 3 + rng.IntN(maxJobs-2)
	for range nj {
		t := periods[rng.IntN(len(periods))]
		d := make([]int32, t)
		if rng.IntN(4) == 0 {
			for i := range d {
				if rng.IntN(2) == 0 {
					d[i] = int32(5 + rng.IntN(35))
				}
			}
		} else {
			for range 1 + rng.IntN(2) {
				start, up, bw := rng.IntN(t), 1+rng.IntN(max(t-1, 1)), int32(10+rng.IntN(30))
				for i := range up {
					d[(start+i)%t] = max(d[(start+i)%t], bw)
				}
			}
		}
		in.jobs = append(in.jobs, profile.Profile{Period: t, Demand: d})
	}
	capacity := func(on []int) int32 {
		var peaks int32
		for _, j := range on {
			peaks += in.jobs[j].Peak()
		}
		return max(1, peaks*int32(40+rng.IntN(80))/100)
	}
	add := func(on []int) {
		slices.Sort(on)
		on = slices.Compact(on)
		if len(on) > 2 && lcmOf(in.jobs, on) > 60 {
			on = on[:2]
		}
		if len(on) > 1 {
			in.links = append(in.links, Link{Jobs: on, Capacity: capacity(on)})
		}
	}
	for j := 1; j < nj; j++ {
		on := []int{rng.IntN(j), j}
		if j > 1 && rng.IntN(4) == 0 {
			on = append(on, rng.IntN(j))
		}
		add(on)
	}
	for range 1 + rng.IntN(3) {
		add(rng.Perm(nj)[:2+rng.IntN(min(3, nj-1))])
	}
	if rng.IntN(4) == 0 {
		l := in.links[rng.IntN(len(in.links))]
		add(slices.Clone(l.Jobs))
	}
	rng.Shuffle(len(in.links), func(a, b int) { in.links[a], in.links[b] = in.links[b], in.links[a] })
	return in
}
