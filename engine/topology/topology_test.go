package topology

import (
	"errors"
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
}

func TestNewRejects(t *testing.T) {
	for _, s := range []Spec{
		{},
		{Pods: 2, ToRsPerPod: 1, ServersPerToR: 1, AggsPerPod: 1, ServerGbps: 1, ToRGbps: 1},
		{Pods: 1, ToRsPerPod: 1, ServersPerToR: 1, AggsPerPod: 1, ServerGbps: 0, ToRGbps: 1},
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
