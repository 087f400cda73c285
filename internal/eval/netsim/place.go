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
	taken []int // scratch of fill: GPUs taken per server
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
func (c *cluster) fill(order []int, gpus, perServer int) alloc {
	if len(c.taken) != len(c.free) {
		c.taken = make([]int, len(c.free))
	}
	var a alloc
	for _, s := range order {
		if gpus == 0 {
			break
		}
		if n := min(c.free[s], gpus, perServer); n > 0 {
			c.taken[s] = n
			a.servers = append(a.servers, s)
			gpus -= n
		}
	}
	slices.Sort(a.servers)
	a.gpus = make([]int, len(a.servers))
	for i, s := range a.servers {
		a.gpus[i], c.taken[s] = c.taken[s], 0
	}
	return a
}

// candidates returns up to n distinct placements of gpus GPUs, at most
// perServer on one server (a placement may come out short when too few
// servers have free GPUs): first fit over the servers in order, then first
// fit from random starting servers, so every candidate is as rack-local as
// the free GPUs allow. The first is the baseline scheduler's choice.
func (c *cluster) candidates(gpus, perServer, n int, rng *rand.Rand) []alloc {
	servers := len(c.free)
	order := make([]int, servers)
	for i := range order {
		order[i] = i
	}
	out := []alloc{c.fill(order, gpus, perServer)}
	for try := 0; len(out) < n && try < 4*n; try++ {
		start := rng.IntN(servers)
		for i := range order {
			order[i] = (start + i) % servers
		}
		a := c.fill(order, gpus, perServer)
		if !slices.ContainsFunc(out, a.equal) {
			out = append(out, a)
		}
	}
	return out
}

// pinned returns the placement of gpus GPUs spread evenly over servers, or
// false if they do not have the GPUs free.
func (c *cluster) pinned(servers []int, gpus int) (alloc, bool) {
	srv := slices.Clone(servers)
	slices.Sort(srv)
	a := alloc{servers: srv, gpus: make([]int, len(srv))}
	for i, s := range srv {
		a.gpus[i] = gpus / len(srv)
		if i < gpus%len(srv) {
			a.gpus[i]++
		}
		if c.free[s] < a.gpus[i] {
			return alloc{}, false
		}
	}
	return a, true
}
