// Package topology describes data-center fabrics for CASSINI: servers,
// switches and directed links, with deterministic shortest-path routing and
// the links a ring all-reduce crosses.
//
// [Paper] is the CASSINI testbed's fabric: 24 single-GPU servers, 13 logical
// switches and 48 bidirectional 50 Gbps links, 2:1 oversubscribed at the
// ToRs. The paper's Fig. 10 is not in its text; this layout matches its
// counts: 2 pods of 3 ToRs (4 servers each) and 2 aggregation switches, every
// ToR linked to both aggregation switches of its pod, every aggregation
// switch to each of 3 cores. [New] builds larger two- and three-tier Clos
// fabrics from a [Spec].
//
// Every physical link is two directed links, one per direction: a ring
// all-reduce loads each direction separately, and so does CASSINI.
package topology

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
)

// ErrInvalid reports an impossible topology or an unknown server.
var ErrInvalid = errors.New("topology: invalid")

// Spec describes a Clos fabric. With Cores == 0 it is two-tier: one pod
// whose aggregation switches act as spines, every ToR (leaf) linked to every
// spine. Otherwise it is three-tier: every ToR linked to every aggregation
// switch of its pod, every aggregation switch to every core.
type Spec struct {
	Pods          int     // pods; must be 1 when Cores == 0
	ToRsPerPod    int     // ToR (leaf) switches per pod
	ServersPerToR int     // servers under each ToR
	AggsPerPod    int     // aggregation switches per pod (spines, two-tier)
	Cores         int     // core switches; 0 for two-tier
	ServerGbps    float64 // server-ToR links
	ToRGbps       float64 // ToR-aggregation links
	AggGbps       float64 // aggregation-core links
}

// Node is a server or a switch.
type Node struct {
	Name  string
	Level int // 0 server, 1 ToR, 2 aggregation, 3 core
}

// Link is one direction of a physical link.
type Link struct {
	ID       string // "from>to"
	From, To int    // node indices
	Gbps     float64
}

// Topology is an immutable fabric, safe for concurrent use. Nodes
// [0, Servers) are the servers.
type Topology struct {
	Servers int
	Nodes   []Node
	Links   []Link
	out     [][]int   // node -> outgoing link indices, in link order
	dist    [][]int32 // server -> hop distance of every node to it
}

// Paper returns the CASSINI testbed's fabric.
func Paper() *Topology {
	t, err := New(Spec{Pods: 2, ToRsPerPod: 3, ServersPerToR: 4, AggsPerPod: 2, Cores: 3, ServerGbps: 50, ToRGbps: 50, AggGbps: 50})
	if err != nil {
		panic(err) // a constant spec
	}
	return t
}

// New builds the fabric of spec.
func New(s Spec) (*Topology, error) {
	if s.Pods < 1 || s.ToRsPerPod < 1 || s.ServersPerToR < 1 || s.AggsPerPod < 1 || s.Cores < 0 {
		return nil, fmt.Errorf("%w: every count must be positive: %+v", ErrInvalid, s)
	}
	if s.Cores == 0 && s.Pods != 1 {
		return nil, fmt.Errorf("%w: a two-tier fabric (no cores) has one pod, not %d", ErrInvalid, s.Pods)
	}
	if !(s.ServerGbps > 0) || !(s.ToRGbps > 0) || (s.Cores > 0 && !(s.AggGbps > 0)) {
		return nil, fmt.Errorf("%w: link speeds must be positive: %+v", ErrInvalid, s)
	}
	servers := s.Pods * s.ToRsPerPod * s.ServersPerToR
	if servers > 1<<20 {
		return nil, fmt.Errorf("%w: %d servers", ErrInvalid, servers)
	}
	t := &Topology{Servers: servers}
	for i := range servers {
		t.Nodes = append(t.Nodes, Node{fmt.Sprintf("s%d", i), 0})
	}
	add := func(name string, level int) int {
		t.Nodes = append(t.Nodes, Node{name, level})
		return len(t.Nodes) - 1
	}
	connect := func(a, b int, gbps float64) {
		t.Links = append(t.Links,
			Link{t.Nodes[a].Name + ">" + t.Nodes[b].Name, a, b, gbps},
			Link{t.Nodes[b].Name + ">" + t.Nodes[a].Name, b, a, gbps})
	}
	var cores []int
	for c := range s.Cores {
		cores = append(cores, add(fmt.Sprintf("core%d", c), 3))
	}
	for p := range s.Pods {
		var aggs []int
		for a := range s.AggsPerPod {
			agg := add(fmt.Sprintf("agg%d", p*s.AggsPerPod+a), 2)
			aggs = append(aggs, agg)
			for _, c := range cores {
				connect(agg, c, s.AggGbps)
			}
		}
		for r := range s.ToRsPerPod {
			tor := p*s.ToRsPerPod + r
			node := add(fmt.Sprintf("tor%d", tor), 1)
			for k := range s.ServersPerToR {
				connect(tor*s.ServersPerToR+k, node, s.ServerGbps)
			}
			for _, agg := range aggs {
				connect(node, agg, s.ToRGbps)
			}
		}
	}
	t.index()
	return t, nil
}

// index builds adjacency and every node's distance to every server.
func (t *Topology) index() {
	t.out = make([][]int, len(t.Nodes))
	in := make([][]int, len(t.Nodes))
	for i, l := range t.Links {
		t.out[l.From] = append(t.out[l.From], i)
		in[l.To] = append(in[l.To], i)
	}
	t.dist = make([][]int32, t.Servers)
	queue := make([]int, 0, len(t.Nodes))
	for s := range t.Servers {
		d := make([]int32, len(t.Nodes))
		for i := range d {
			d[i] = -1
		}
		d[s] = 0
		queue = append(queue[:0], s)
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, li := range in[v] {
				u := t.Links[li].From
				if d[u] < 0 {
					d[u] = d[v] + 1
					queue = append(queue, u)
				}
			}
		}
		t.dist[s] = d
	}
}

// Route returns the links from server src to server dst along a shortest
// path, choosing among equal-cost next hops by a hash of (src, dst), as ECMP
// does, so the same pair always takes the same path.
func (t *Topology) Route(src, dst int) ([]int, error) {
	if src < 0 || src >= t.Servers || dst < 0 || dst >= t.Servers || len(t.dist) != t.Servers { // a hand-built Topology has no routing index
		return nil, fmt.Errorf("%w: route %d -> %d with %d servers", ErrInvalid, src, dst, t.Servers)
	}
	d := t.dist[dst]
	if d[src] < 0 {
		return nil, fmt.Errorf("%w: server %d cannot reach server %d", ErrInvalid, src, dst)
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d>%d", src, dst)
	seed := h.Sum64()
	var path []int
	var next []int
	for v := src; v != dst; {
		next = next[:0]
		for _, li := range t.out[v] {
			if d[t.Links[li].To] == d[v]-1 {
				next = append(next, li)
			}
		}
		li := next[int(seed%uint64(len(next)))]
		seed = seed*0x9e3779b97f4a7c15 + 1
		path = append(path, li)
		v = t.Links[li].To
	}
	return path, nil
}

// Ring returns the links a ring all-reduce over servers crosses (each
// server sends to the next, the last to the first), sorted and without
// repeats. One server, or none, crosses no link.
func (t *Topology) Ring(servers []int) ([]int, error) {
	if len(servers) < 2 {
		return nil, nil
	}
	var links []int
	for i, s := range servers {
		p, err := t.Route(s, servers[(i+1)%len(servers)])
		if err != nil {
			return nil, err
		}
		links = append(links, p...)
	}
	slices.Sort(links)
	return slices.Compact(links), nil
}

// Switches returns the number of switches.
func (t *Topology) Switches() int { return len(t.Nodes) - t.Servers }
