package netsim

import (
	"math/rand/v2"
	"slices"
)

// alloc is a placement: GPUs taken on each server, servers increasing.
type alloc struct {
	servers []int
	gpus    []int
}

func (a alloc) equal(b alloc) bool {
	return slices.Equal(a.servers, b.servers) && slices.Equal(a.gpus, b.gpus)
}

// cluster tracks free GPUs.
type cluster struct {
	free  []int // per server
	total int   // free GPUs
	// Scratch of joint, per server (a placement is frequent, and a
	// fresh pair of server-sized slices each time was a tenth of a
	// Clos 1000 run's CPU in a fresh process).
	order, left []int
	// rr is the servers round robin over the racks (Scattered): the first
	// server under every ToR, then the second, ...
	rr []int
}

func newCluster(servers, gpusPerServer int) *cluster {
	c := &cluster{free: make([]int, servers), total: servers * gpusPerServer}
	for s := range c.free {
		c.free[s] = gpusPerServer
	}
	return c
}

// roundRobin sets rr from each server's rack (dense indices): the first
// server of every rack in rack order, then the second, and so on.
func (c *cluster) roundRobin(rack []int) {
	var byRack [][]int
	for s, r := range rack {
		for r >= len(byRack) {
			byRack = append(byRack, nil)
		}
		byRack[r] = append(byRack[r], s)
	}
	c.rr = make([]int, 0, len(rack))
	for pos := 0; len(c.rr) < len(rack); pos++ {
		for _, srv := range byRack {
			if pos < len(srv) {
				c.rr = append(c.rr, srv[pos])
			}
		}
	}
}

func (c *cluster) take(a alloc) {
	for i, s := range a.servers {
		c.free[s] -= a.gpus[i]
		c.total -= a.gpus[i]
	}
}

func (c *cluster) release(a alloc) {
	for i, s := range a.servers {
		c.free[s] += a.gpus[i]
		c.total += a.gpus[i]
	}
}

// fill takes gpus GPUs from servers in the given order, as many as each has
// free, but at most perServer from one.
func fill(free, order []int, gpus, perServer int) alloc {
	var a alloc
	for _, s := range order {
		if gpus == 0 {
			break
		}
		if n := min(free[s], gpus, perServer); n > 0 {
			a.servers = append(a.servers, s)
			a.gpus = append(a.gpus, n)
			gpus -= n
		}
	}
	idx := make([]int, len(a.servers))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int { return a.servers[x] - a.servers[y] })
	out := alloc{servers: make([]int, len(idx)), gpus: make([]int, len(idx))}
	for i, k := range idx {
		out.servers[i], out.gpus[i] = a.servers[k], a.gpus[k]
	}
	return out
}

// request is one job to place: its GPUs, the most on one server, the fewest
// servers, and its pinned servers (nil: anywhere).
type request struct {
	gpus, perServer, minServers int
	pinned                      []int
}

// joint returns up to n distinct placements of every request together
// (candidate c, request k: cands[c][k]), each placing the requests one
// after another by the rule p. The first is the scheduler's own choice
// (its draws, if the rule draws, from own); the others are the rule's
// other choices, drawn from rng:
//
//   - Contiguous: first fit over the servers in order, then first fit from
//     a random starting server for each request, so every candidate is as
//     rack-local as the free GPUs allow.
//   - ThemisGPUs: the servers with the most free GPUs (up to what the
//     request may take from one) first, ties in a uniformly drawn order.
//   - Scattered: one GPU per server round robin over the racks (more per
//     server only if that cannot hold the request), from the first rack
//     and then from a random position of the round.
//
// A request that even the first candidate cannot place is left out of
// every candidate: placed[k] is false for it.
func (c *cluster) joint(reqs []request, n int, p Placement, own, rng *rand.Rand) (cands [][]alloc, placed []bool) {
	servers := len(c.free)
	if len(c.order) != servers {
		c.order, c.left = make([]int, servers), make([]int, servers)
	}
	free := c.left
	copy(free, c.free)
	placed = make([]bool, len(reqs))
	first := make([]alloc, len(reqs))
	for k, r := range reqs {
		if a, ok := c.byRule(free, r, p, 0, own); ok {
			first[k], placed[k] = a, true
		}
	}
	cands = [][]alloc{first}
	for try := 0; len(cands) < n && try < 4*n; try++ {
		copy(free, c.free)
		cand := make([]alloc, len(reqs))
		ok := true
		for k, r := range reqs {
			if !placed[k] {
				continue
			}
			if cand[k], ok = c.byRule(free, r, p, 1+try, rng); !ok {
				break
			}
		}
		if ok && !slices.ContainsFunc(cands, func(d []alloc) bool { return slices.EqualFunc(d, cand, alloc.equal) }) {
			cands = append(cands, cand)
		}
	}
	return cands, placed
}

// byRule places r on the free GPUs (taking them from free) by the rule p:
// its own choice for the scheduler's candidate (try 0), else another drawn
// from rng; or reports false (free unchanged) if they do not hold it.
func (c *cluster) byRule(free []int, r request, p Placement, try int, rng *rand.Rand) (alloc, bool) {
	order := c.order
	servers := len(order)
	switch p {
	case ThemisGPUs:
		// The draw covers the servers with a free GPU only (the others
		// cannot be taken), then the most GPUs first: fewest machines.
		order = order[:0]
		for s, f := range free {
			if f > 0 {
				order = append(order, s)
			}
		}
		rng.Shuffle(len(order), func(i, k int) { order[i], order[k] = order[k], order[i] })
		per := r.perServer
		slices.SortStableFunc(order, func(a, b int) int { return min(free[b], per) - min(free[a], per) })
	case Scattered:
		start := 0
		if try > 0 {
			start = rng.IntN(servers)
		}
		for i := range order {
			order[i] = c.rr[(start+i)%servers]
		}
		if r.pinned == nil && r.perServer > 1 {
			spread := r
			spread.perServer = 1
			if a, ok := c.fillFrom(free, spread, order); ok {
				return a, true
			}
		}
	default: // Contiguous
		start := 0
		if try > 0 {
			start = rng.IntN(servers)
		}
		for i := range order {
			order[i] = (start + i) % servers
		}
	}
	return c.fillFrom(free, r, order)
}

// fillFrom places r on the free GPUs (taking them from free), in the given
// server order, or reports false (free unchanged) if they do not hold it.
func (c *cluster) fillFrom(free []int, r request, order []int) (alloc, bool) {
	var a alloc
	if r.pinned != nil {
		srv := slices.Clone(r.pinned)
		slices.Sort(srv)
		a = alloc{servers: srv, gpus: make([]int, len(srv))}
		for i, s := range srv {
			a.gpus[i] = r.gpus / len(srv)
			if i < r.gpus%len(srv) {
				a.gpus[i]++
			}
			if free[s] < a.gpus[i] {
				return alloc{}, false
			}
		}
	} else {
		a = fill(free, order, r.gpus, r.perServer)
		if sum(a.gpus) < r.gpus || len(a.servers) < r.minServers {
			return alloc{}, false
		}
	}
	for i, s := range a.servers {
		free[s] -= a.gpus[i]
	}
	return a, true
}
