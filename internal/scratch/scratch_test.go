package scratch

import "testing"

// Resize reuses the array when it can, and keeps what the array held.
func TestResize(t *testing.T) {
	s := make([]int, 3, 8)
	copy(s, []int{1, 2, 3})
	r := Resize(s, 6)
	if len(r) != 6 || &r[0] != &s[0] || r[0] != 1 || r[2] != 3 {
		t.Fatalf("within capacity: %v (cap %d)", r, cap(r))
	}
	g := Resize(s, 20)
	if len(g) != 20 || cap(g) < 20 || g[1] != 2 || g[19] != 0 {
		t.Fatalf("grown: %v", g)
	}
	if n := Resize([]float64(nil), 0); len(n) != 0 {
		t.Fatalf("zero length: %v", n)
	}
	if a := testing.AllocsPerRun(100, func() { _ = Resize(s, 8) }); a != 0 {
		t.Fatalf("%v allocations within capacity", a)
	}
}
