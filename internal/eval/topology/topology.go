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
//
// # Routing
//
// Routes are computed from the fabric's structure, not from a table: a
// server's position (pod, ToR, index under the ToR) gives every shortest
// path to another server, so a [Topology] holds only its nodes and links
// (memory linear in the fabric: about 75 bytes per node and directed link,
// names included; 26 MB for 100,000 servers) and [Topology.Route] costs O(1) per hop. A route
// goes up to the lowest switch level the two servers share and back down:
// under one ToR, server-ToR-server (2 hops); within a pod, through one of
// the pod's aggregation switches (4 hops); across pods, through an
// aggregation switch, a core and an aggregation switch of the other pod (6
// hops).
//
// Where several next hops are equally short, the choice is ECMP's: a hash of
// the pair picks one, so the same pair always takes the same path and
// different pairs spread over the equal-cost paths. The rule, exactly: the
// seed is the 64-bit FNV-1a hash of the decimal text "src>dst" (e.g.
// "0>12"); at each hop the equal-cost next hops are taken in link order (the
// order of [Topology.Links], that is aggregation switches and cores by
// index) and the one at position seed mod their number is chosen; after
// every hop, with one choice or several, the seed becomes
// seed*0x9e3779b97f4a7c15 + 1 (mod 2^64). This is the rule the package
// applied with a breadth-first search over the whole fabric before it
// routed by structure; the paths are the same, hop for hop.
package topology

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// ErrInvalid reports an impossible topology or an unknown server.
var ErrInvalid = errors.New("topology: invalid")

// MaxServers is the most servers [New] builds a fabric of.
const MaxServers = 1 << 20

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
//
// A Topology made by [New] or [Paper] routes by its structure. One built by
// hand (its fields are exported) has no structure to route by: its Route
// and Ring return ErrInvalid.
type Topology struct {
	// Name is how the fabric was asked for: "paper", the "clos:..." text
	// [Parse] read, or "" for one built by [New] or by hand.
	Name    string
	Servers int
	Nodes   []Node
	Links   []Link
	clos    *layout // nil for a hand-built topology
}

// layout is where New put every node and link of a Clos fabric, so that
// indices follow from positions.
//
// Nodes: servers [0, S), cores [S, S+C), then one block per pod of its A
// aggregation switches followed by its R ToRs. Links, two per physical link
// (the second the reverse of the first), in one block per pod: first every
// aggregation switch's links to every core (agg a, core c: pair a*C+c), then
// one block per ToR: its K servers' links (server k: pair k; the
// server-to-ToR direction first), then its links to the pod's aggregation
// switches (agg a: pair K+a; the ToR-to-agg direction first).
type layout struct {
	k, r, a, c int // servers per ToR, ToRs per pod, aggs per pod, cores
	podLinks   int // directed links per pod block
	torLinks   int // directed links per ToR block
}

// Paper returns the CASSINI testbed's fabric.
func Paper() *Topology {
	t, err := New(Spec{Pods: 2, ToRsPerPod: 3, ServersPerToR: 4, AggsPerPod: 2, Cores: 3, ServerGbps: 50, ToRGbps: 50, AggGbps: 50})
	if err != nil {
		panic(err) // a constant spec
	}
	t.Name = "paper"
	return t
}

// New builds the fabric of spec. Its memory and time are linear in its
// links; it holds no routing table.
func New(s Spec) (*Topology, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	ly := &layout{k: s.ServersPerToR, r: s.ToRsPerPod, a: s.AggsPerPod, c: s.Cores}
	ly.torLinks = 2 * (ly.k + ly.a)
	ly.podLinks = 2*ly.a*ly.c + ly.r*ly.torLinks
	servers := s.Pods * ly.r * ly.k
	t := &Topology{Servers: servers, clos: ly,
		Nodes: make([]Node, 0, servers+s.Cores+s.Pods*(ly.a+ly.r)),
		Links: make([]Link, 0, s.Pods*ly.podLinks)}
	names := newText(cap(t.Nodes), 8)
	add := func(prefix string, i, level int) int {
		names.add(prefix, i)
		t.Nodes = append(t.Nodes, Node{Level: level})
		return len(t.Nodes) - 1
	}
	for i := range servers {
		add("s", i, 0)
	}
	connect := func(a, b int, gbps float64) {
		t.Links = append(t.Links, Link{From: a, To: b, Gbps: gbps}, Link{From: b, To: a, Gbps: gbps})
	}
	cores := make([]int, s.Cores)
	for c := range cores {
		cores[c] = add("core", c, 3)
	}
	aggs := make([]int, ly.a)
	for p := range s.Pods {
		for a := range aggs {
			aggs[a] = add("agg", p*ly.a+a, 2)
			for _, c := range cores {
				connect(aggs[a], c, s.AggGbps)
			}
		}
		for r := range ly.r {
			tor := p*ly.r + r
			node := add("tor", tor, 1)
			for k := range ly.k {
				connect(tor*ly.k+k, node, s.ServerGbps)
			}
			for _, agg := range aggs {
				connect(node, agg, s.ToRGbps)
			}
		}
	}
	names.each(func(i int, name string) { t.Nodes[i].Name = name })
	ids := newText(len(t.Links), 2*len(names.b)/max(len(names.ends), 1)+1)
	for _, l := range t.Links {
		ids.link(t.Nodes[l.From].Name, t.Nodes[l.To].Name)
	}
	ids.each(func(i int, id string) { t.Links[i].ID = id })
	return t, nil
}

// text builds many short strings in one allocation: a fabric of 100,000
// servers has 350,000 names and link IDs.
type text struct {
	b    []byte
	ends []int32
}

// newText makes room for n strings of about size bytes.
func newText(n, size int) *text {
	return &text{b: make([]byte, 0, n*size), ends: make([]int32, 0, n)}
}

func (x *text) add(prefix string, i int) {
	x.b = strconv.AppendInt(append(x.b, prefix...), int64(i), 10)
	x.ends = append(x.ends, int32(len(x.b)))
}

func (x *text) link(from, to string) {
	x.b = append(append(append(x.b, from...), '>'), to...)
	x.ends = append(x.ends, int32(len(x.b)))
}

// each calls f with every string added, in order; they share one backing
// array.
func (x *text) each(f func(i int, s string)) {
	all := string(x.b)
	start := int32(0)
	for i, end := range x.ends {
		f(i, all[start:end])
		start = end
	}
}

func (s Spec) validate() error {
	if s.Pods < 1 || s.ToRsPerPod < 1 || s.ServersPerToR < 1 || s.AggsPerPod < 1 || s.Cores < 0 {
		return fmt.Errorf("%w: every count must be positive: %+v", ErrInvalid, s)
	}
	if s.Cores == 0 && s.Pods != 1 {
		return fmt.Errorf("%w: a two-tier fabric (no cores) has one pod, not %d", ErrInvalid, s.Pods)
	}
	if !(s.ServerGbps > 0) || !(s.ToRGbps > 0) || (s.Cores > 0 && !(s.AggGbps > 0)) {
		return fmt.Errorf("%w: link speeds must be positive: %+v", ErrInvalid, s)
	}
	// Bound each count before multiplying, so that the products cannot
	// overflow.
	if s.Pods > MaxServers || s.ToRsPerPod > MaxServers || s.ServersPerToR > MaxServers ||
		s.Pods*s.ToRsPerPod > MaxServers || s.Pods*s.ToRsPerPod*s.ServersPerToR > MaxServers {
		return fmt.Errorf("%w: more than %d servers: %+v", ErrInvalid, MaxServers, s)
	}
	// Switch links grow as ToRs x aggregation switches and pods x
	// aggregation switches x cores: bound them as the servers are.
	if s.AggsPerPod > MaxServers || s.Cores > MaxServers ||
		s.Pods*s.ToRsPerPod*s.AggsPerPod > 4*MaxServers || s.Pods*s.AggsPerPod*s.Cores > 4*MaxServers {
		return fmt.Errorf("%w: more than %d switch links: %+v", ErrInvalid, 8*MaxServers, s)
	}
	return nil
}

// ecmpStep advances the ECMP seed after a hop.
const ecmpStep = 0x9e3779b97f4a7c15

// ecmpSeed is the 64-bit FNV-1a hash of the decimal text "src>dst".
func ecmpSeed(src, dst int) uint64 {
	h := uint64(14695981039346656037)
	var buf [2*20 + 1]byte
	b := strconv.AppendInt(buf[:0], int64(src), 10)
	b = append(b, '>')
	b = strconv.AppendInt(b, int64(dst), 10)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// Route returns the links from server src to server dst along a shortest
// path, choosing among equal-cost next hops by a hash of (src, dst), as ECMP
// does, so the same pair always takes the same path (see the package doc for
// the rule). A server's route to itself is empty: traffic between GPUs of one
// server crosses no network link.
func (t *Topology) Route(src, dst int) ([]int, error) {
	if err := t.check(src, dst); err != nil {
		return nil, err
	}
	if src == dst {
		return nil, nil
	}
	return t.clos.route(nil, src, dst), nil
}

// AppendRoute appends to path the links of [Topology.Route] from src to dst
// and returns the extended slice: with room in path it allocates nothing.
func (t *Topology) AppendRoute(path []int, src, dst int) ([]int, error) {
	if err := t.check(src, dst); err != nil {
		return path, err
	}
	return t.clos.route(path, src, dst), nil
}

func (t *Topology) check(src, dst int) error {
	if src < 0 || src >= t.Servers || dst < 0 || dst >= t.Servers {
		return fmt.Errorf("%w: route %d -> %d with %d servers", ErrInvalid, src, dst, t.Servers)
	}
	if t.clos == nil {
		return fmt.Errorf("%w: route %d -> %d: a hand-built topology has no structure to route by (use New)", ErrInvalid, src, dst)
	}
	return nil
}

// route appends the route from src to dst (valid servers) to path.
func (ly *layout) route(path []int, src, dst int) []int {
	if src == dst {
		return path
	}
	ts, td := src/ly.k, dst/ly.k // ToRs, numbered across pods
	seed := ecmpSeed(src, dst)
	path = append(path, ly.server(src, true)) // the only way up
	seed = seed*ecmpStep + 1
	if ts == td {
		return append(path, ly.server(dst, false))
	}
	a := int(seed % uint64(ly.a))
	seed = seed*ecmpStep + 1
	path = append(path, ly.torAgg(ts, a, true))
	if ps, pd := ts/ly.r, td/ly.r; ps != pd {
		c := int(seed % uint64(ly.c))
		seed = seed*ecmpStep + 1
		path = append(path, ly.aggCore(ps, a, c, true))
		a = int(seed % uint64(ly.a))
		path = append(path, ly.aggCore(pd, a, c, false))
	}
	// Down from the aggregation switch: one way to the ToR, one to dst.
	return append(path, ly.torAgg(td, a, false), ly.server(dst, false))
}

// server is the link from server s to its ToR (up) or back.
func (ly *layout) server(s int, up bool) int {
	tor := s / ly.k
	return ly.tor(tor) + 2*(s%ly.k) + down(up)
}

// torAgg is the link from ToR tor (numbered across pods) to aggregation
// switch a of its pod (up) or back.
func (ly *layout) torAgg(tor, a int, up bool) int {
	return ly.tor(tor) + 2*(ly.k+a) + down(up)
}

// aggCore is the link from aggregation switch a of pod p to core c (up) or
// back.
func (ly *layout) aggCore(p, a, c int, up bool) int {
	return p*ly.podLinks + 2*(a*ly.c+c) + down(up)
}

// tor is the first link of ToR tor's block.
func (ly *layout) tor(tor int) int {
	p, r := tor/ly.r, tor%ly.r
	return p*ly.podLinks + 2*ly.a*ly.c + r*ly.torLinks
}

func down(up bool) int {
	if up {
		return 0
	}
	return 1
}

// Ring returns the links a ring all-reduce over servers crosses (each
// server sends to the next, the last to the first), sorted and without
// repeats. One server, or none, crosses no link, and neither does a hop
// between two GPUs of one server (a server listed twice in a row).
func (t *Topology) Ring(servers []int) ([]int, error) {
	if len(servers) < 2 {
		return nil, nil
	}
	var links []int
	for i, s := range servers {
		var err error
		if links, err = t.AppendRoute(links, s, servers[(i+1)%len(servers)]); err != nil {
			return nil, err
		}
	}
	if len(links) == 0 {
		return nil, nil
	}
	slices.Sort(links)
	return slices.Compact(links), nil
}

// Switches returns the number of switches.
func (t *Topology) Switches() int { return len(t.Nodes) - t.Servers }
