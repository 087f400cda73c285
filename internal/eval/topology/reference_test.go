package topology

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
)

// bfsRouter is how the package routed before it routed by structure, kept
// as the reference the structural routes must equal hop for hop: every
// node's hop distance to every server by a breadth-first search (a servers
// x nodes table, quadratic memory), then from src, among the outgoing links
// (in link order) that get one hop closer to dst, the one at position seed
// mod their number, the seed starting as FNV-1a of "src>dst" and advanced
// after every hop.
type bfsRouter struct {
	t    *Topology
	out  [][]int
	dist [][]int32
}

func newBFSRouter(t *Topology) *bfsRouter {
	b := &bfsRouter{t: t, out: make([][]int, len(t.Nodes))}
	in := make([][]int, len(t.Nodes))
	for i, l := range t.Links {
		b.out[l.From] = append(b.out[l.From], i)
		in[l.To] = append(in[l.To], i)
	}
	b.dist = make([][]int32, t.Servers)
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
				if u := t.Links[li].From; d[u] < 0 {
					d[u] = d[v] + 1
					queue = append(queue, u)
				}
			}
		}
		b.dist[s] = d
	}
	return b
}

func (b *bfsRouter) route(src, dst int) []int {
	d := b.dist[dst]
	h := fnv.New64a()
	fmt.Fprintf(h, "%d>%d", src, dst)
	seed := h.Sum64()
	var path, next []int
	for v := src; v != dst; {
		next = next[:0]
		for _, li := range b.out[v] {
			if d[b.t.Links[li].To] == d[v]-1 {
				next = append(next, li)
			}
		}
		li := next[int(seed%uint64(len(next)))]
		seed = seed*0x9e3779b97f4a7c15 + 1
		path = append(path, li)
		v = b.t.Links[li].To
	}
	return path
}

// testSpecs are small fabrics of every shape: two-tier, three-tier, one of
// everything, more aggregation switches than ToRs, a single pod with
// cores.
var testSpecs = []Spec{
	{Pods: 2, ToRsPerPod: 3, ServersPerToR: 4, AggsPerPod: 2, Cores: 3}, // the paper's
	{Pods: 1, ToRsPerPod: 4, ServersPerToR: 8, AggsPerPod: 2},
	{Pods: 1, ToRsPerPod: 1, ServersPerToR: 1, AggsPerPod: 1},
	{Pods: 1, ToRsPerPod: 1, ServersPerToR: 3, AggsPerPod: 2, Cores: 2},
	{Pods: 1, ToRsPerPod: 3, ServersPerToR: 2, AggsPerPod: 3, Cores: 2},
	{Pods: 3, ToRsPerPod: 1, ServersPerToR: 2, AggsPerPod: 1, Cores: 1},
	{Pods: 3, ToRsPerPod: 2, ServersPerToR: 3, AggsPerPod: 5, Cores: 7},
	{Pods: 4, ToRsPerPod: 4, ServersPerToR: 8, AggsPerPod: 4, Cores: 4}, // netsim's Clos benchmark
	{Pods: 5, ToRsPerPod: 3, ServersPerToR: 2, AggsPerPod: 4, Cores: 8},
}

func newSpec(t *testing.T, s Spec) *Topology {
	t.Helper()
	s.ServerGbps, s.ToRGbps, s.AggGbps = 50, 100, 100
	tp, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// Structural routing gives the BFS router's paths, for every pair of
// servers on small fabrics of every shape (the paper's among them).
func TestRoutesMatchBFS(t *testing.T) {
	for _, s := range testSpecs {
		tp := newSpec(t, s)
		ref := newBFSRouter(tp)
		for src := range tp.Servers {
			for dst := range tp.Servers {
				got, err := tp.Route(src, dst)
				if err != nil {
					t.Fatal(err)
				}
				if want := ref.route(src, dst); !slices.Equal(got, want) {
					t.Fatalf("%+v: %d -> %d: structural %v, BFS %v", s, src, dst, got, want)
				}
			}
		}
	}
	// The paper's fabric exactly as Paper builds it.
	tp, ref := Paper(), newBFSRouter(Paper())
	for src := range tp.Servers {
		for dst := range tp.Servers {
			if got, _ := tp.Route(src, dst); !slices.Equal(got, ref.route(src, dst)) {
				t.Fatalf("paper: %d -> %d differs", src, dst)
			}
		}
	}
}

// On the benchmark's 1000-server Clos, random pairs route as the BFS did
// (a full table is 1000 x 1153 entries: a sample suffices).
func TestRoutesMatchBFSClos(t *testing.T) {
	tp := newSpec(t, Spec{Pods: 5, ToRsPerPod: 25, ServersPerToR: 8, AggsPerPod: 4, Cores: 8})
	ref := newBFSRouter(tp)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		src, dst := rng.IntN(tp.Servers), rng.IntN(tp.Servers)
		got, _ := tp.Route(src, dst)
		if want := ref.route(src, dst); !slices.Equal(got, want) {
			t.Fatalf("%d -> %d: structural %v, BFS %v", src, dst, got, want)
		}
	}
}
