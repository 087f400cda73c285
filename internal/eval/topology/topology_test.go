package topology

import (
	"errors"
	"runtime"
	"slices"
	"testing"
)

func TestPaperCounts(t *testing.T) {
	tp := Paper()
	if tp.Servers != 24 || tp.Switches() != 13 || len(tp.Links) != 2*48 {
		t.Fatalf("%d servers, %d switches, %d directed links; want 24, 13, 96", tp.Servers, tp.Switches(), len(tp.Links))
	}
	// 2:1 oversubscription at every ToR: 4 x 50 Gbps down, 2 x 50 up.
	for i, n := range tp.Nodes {
		if n.Level != 1 {
			continue
		}
		var down, up float64
		for _, l := range tp.Links {
			if l.From == i {
				if tp.Nodes[l.To].Level == 0 {
					down += l.Gbps
				} else {
					up += l.Gbps
				}
			}
		}
		if down != 2*up {
			t.Errorf("%s: %v Gbps down, %v up", n.Name, down, up)
		}
	}
}

func TestRoutes(t *testing.T) {
	tp := Paper()
	for _, tc := range []struct{ src, dst, hops int }{
		{0, 1, 2},  // same ToR
		{0, 4, 4},  // same pod (servers 0-11), via an aggregation switch
		{0, 12, 6}, // across pods, via a core
		{0, 23, 6}, //
		{5, 5, 0},  // itself
	} {
		p, err := tp.Route(tc.src, tc.dst)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != tc.hops {
			t.Errorf("%d -> %d: %d hops, want %d", tc.src, tc.dst, len(p), tc.hops)
		}
		v := tc.src
		for _, li := range p {
			if tp.Links[li].From != v {
				t.Fatalf("%d -> %d: path %v is not connected", tc.src, tc.dst, p)
			}
			v = tp.Links[li].To
		}
		if v != tc.dst {
			t.Fatalf("%d -> %d: path ends at %d", tc.src, tc.dst, v)
		}
		q, _ := tp.Route(tc.src, tc.dst)
		if !slices.Equal(p, q) {
			t.Fatalf("routing is not deterministic")
		}
	}
	if _, err := tp.Route(0, 24); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown server: %v", err)
	}
}

func TestRing(t *testing.T) {
	tp := Paper()
	l, err := tp.Ring([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 4 { // s0>tor0, tor0>s1, s1>tor0, tor0>s0
		t.Fatalf("ring of two servers under one ToR crosses %d links, want 4", len(l))
	}
	if l, _ := tp.Ring([]int{3}); l != nil {
		t.Fatalf("a one-server job crosses %v", l)
	}
	// GPUs of one server talk over no network link: a ring over two
	// servers with two GPUs each crosses what the ring over the servers
	// does, and a ring within one server crosses nothing.
	multi, err := tp.Ring([]int{0, 0, 1, 1})
	if err != nil || !slices.Equal(multi, l) {
		t.Fatalf("ring over GPUs 0,0,1,1: %v %v, want %v", multi, err, l)
	}
	if l, err := tp.Ring([]int{5, 5, 5}); l != nil || err != nil {
		t.Fatalf("a ring within one server crosses %v (%v)", l, err)
	}
}

// Every route is a connected walk from src to dst whose links go up to the
// lowest level the servers share and back down.
func TestRouteShape(t *testing.T) {
	for _, s := range testSpecs {
		tp := newSpec(t, s)
		for src := range tp.Servers {
			for dst := range tp.Servers {
				p, _ := tp.AppendRoute(nil, src, dst)
				v := src
				for i, li := range p {
					l := tp.Links[li]
					if l.From != v {
						t.Fatalf("%+v: %d -> %d: path %v is not connected", s, src, dst, p)
					}
					up := tp.Nodes[l.To].Level > tp.Nodes[l.From].Level
					if up != (i < len(p)/2) {
						t.Fatalf("%+v: %d -> %d: hop %d of %v goes the wrong way", s, src, dst, i, p)
					}
					v = l.To
				}
				if v != dst {
					t.Fatalf("%d -> %d ends at %d", src, dst, v)
				}
			}
		}
	}
}

func TestAppendRouteNoAllocs(t *testing.T) {
	tp := Paper()
	buf := make([]int, 0, 6)
	if a := testing.AllocsPerRun(100, func() { buf, _ = tp.AppendRoute(buf[:0], 0, 23) }); a != 0 {
		t.Fatalf("%v allocations per route", a)
	}
	if len(buf) != 6 {
		t.Fatalf("route %v", buf)
	}
}

// A topology built by hand has no structure: routing it is an error, not a
// panic.
func TestHandBuilt(t *testing.T) {
	tp := &Topology{Servers: 2, Nodes: []Node{{Name: "s0"}, {Name: "s1"}},
		Links: []Link{{ID: "s0>s1", From: 0, To: 1, Gbps: 50}, {ID: "s1>s0", From: 1, To: 0, Gbps: 50}}}
	if _, err := tp.Route(0, 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Route: %v", err)
	}
	if _, err := tp.Ring([]int{0, 1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Ring: %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	for _, s := range []Spec{
		{},
		{Pods: 2, ToRsPerPod: 1, ServersPerToR: 1, AggsPerPod: 1, ServerGbps: 1, ToRGbps: 1},
		{Pods: 1, ToRsPerPod: 1, ServersPerToR: 1, AggsPerPod: 1, ServerGbps: 0, ToRGbps: 1},
		{Pods: 1, ToRsPerPod: 1, ServersPerToR: 1, AggsPerPod: 1, Cores: 1, ServerGbps: 1, ToRGbps: 1}, // no AggGbps
		{Pods: 1 << 11, ToRsPerPod: 1 << 10, ServersPerToR: 1, AggsPerPod: 1, Cores: 1, ServerGbps: 1, ToRGbps: 1, AggGbps: 1},
		{Pods: 1 << 40, ToRsPerPod: 1 << 40, ServersPerToR: 1 << 40, AggsPerPod: 1, Cores: 1, ServerGbps: 1, ToRGbps: 1, AggGbps: 1}, // the product overflows
		{Pods: 1, ToRsPerPod: 1, ServersPerToR: 1, AggsPerPod: 1 << 23, Cores: 1, ServerGbps: 1, ToRGbps: 1, AggGbps: 1},
	} {
		if _, err := New(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", s, err)
		}
	}
	tp, err := New(Spec{Pods: 1, ToRsPerPod: 4, ServersPerToR: 8, AggsPerPod: 2, ServerGbps: 100, ToRGbps: 200})
	if err != nil || tp.Servers != 32 || tp.Switches() != 6 {
		t.Fatalf("leaf-spine: %v %+v", err, tp)
	}
}

// New's memory is linear in the fabric: a 100,000-server Clos (the issue's
// 100,000 GPUs at one per server) allocates a few hundred bytes per node
// and link, where a servers x nodes distance table alone took 44 GB.
func TestNewMemoryLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-server fabric")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tp, err := New(Spec{Pods: 40, ToRsPerPod: 50, ServersPerToR: 50, AggsPerPod: 8, Cores: 32, ServerGbps: 400, ToRGbps: 400, AggGbps: 400})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(tp.Nodes)+len(tp.Links))
	t.Logf("%d servers, %d nodes, %d directed links: %.0f bytes allocated per node or link", tp.Servers, len(tp.Nodes), len(tp.Links), per)
	if tp.Servers != 100000 || per > 200 {
		t.Fatalf("%d servers: %.0f bytes per node or link", tp.Servers, per)
	}
	p, err := tp.Route(0, tp.Servers-1)
	if err != nil || len(p) != 6 {
		t.Fatalf("route across the fabric: %v %v", p, err)
	}
}
