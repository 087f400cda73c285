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
}

func newCluster(servers, gpusPerServer int) *cluster {
	c := &cluster{free: make([]int, servers), total: servers * gpusPerServer}
	for s := range c.free {
		c.free[s] = gpusPerServer
	}
	return c
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
// (candidate c, request k: cands[c][k]): first fit over the servers in
// order, request after request, then first fit from a random starting server
// for each request, so every candidate is as rack-local as the free GPUs
// allow. The first is the scheduler's own choice. A request that even the
// first candidate cannot place is left out of every candidate: placed[k]
// is false for it.
func (c *cluster) joint(reqs []request, n int, rng *rand.Rand) (cands [][]alloc, placed []bool) {
	servers := len(c.free)
	if len(c.order) != servers {
		c.order, c.left = make([]int, servers), make([]int, servers)
	}
	order, free := c.order, c.left
	copy(free, c.free)
	for i := range order {
		order[i] = i // fillFrom only reads it
	}
	placed = make([]bool, len(reqs))
	first := make([]alloc, len(reqs))
	for k, r := range reqs {
		if a, ok := c.fillFrom(free, r, order); ok {
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
			start := rng.IntN(servers)
			for i := range order {
				order[i] = (start + i) % servers
			}
			if cand[k], ok = c.fillFrom(free, r, order); !ok {
				break
			}
		}
		if ok && !slices.ContainsFunc(cands, func(d []alloc) bool { return slices.EqualFunc(d, cand, alloc.equal) }) {
			cands = append(cands, cand)
		}
	}
	return cands, placed
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
