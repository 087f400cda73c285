package mip

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// knapsack: maximize Σ v_i·x_i subject to Σ w_i·x_i ≤ cap, x binary, plus a
// continuous slack s ≤ 2 that pays 0.5 per unit, and a free variable f with
// f ≥ -3 through a row.
func knapsack(v, w []float64, capacity float64) *Model {
	m := &Model{Maximize: true}
	var row []Term
	for i := range v {
		x := m.Add("x_"+string(rune('a'+i)), Binary, 0, 1)
		row = append(row, Term{x, w[i]})
		m.Obj = append(m.Obj, Term{x, v[i]})
	}
	s := m.Add("s", Continuous, 0, 2)
	f := m.Add("f", Continuous, math.Inf(-1), math.Inf(1))
	m.Obj = append(m.Obj, Term{s, 0.5}, Term{f, -1})
	m.Constrain("cap", row, LE, capacity)
	m.Constrain("floor", []Term{{f, 1}}, GE, -3)
	return m
}

func TestCheckAndObjective(t *testing.T) {
	m := knapsack([]float64{5, 4, 3}, []float64{4, 3, 2}, 5)
	x := []float64{0, 1, 1, 2, -3} // weight 5, value 7 + 1 + 3
	if v := m.Check(x, 1e-9, 1e-9); len(v) != 0 {
		t.Fatalf("feasible point: %v", v)
	}
	if got := m.Objective(x); got != 11 {
		t.Fatalf("objective %v, want 11", got)
	}
	bad := []float64{1, 1, 0.5, 2.5, -4}
	got := map[string]string{}
	for _, v := range m.Check(bad, 1e-9, 1e-6) {
		got[v.Name] = v.What
	}
	want := map[string]string{"x_c": "integrality", "s": "bound", "cap": "row", "floor": "row"}
	if len(got) != len(want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	r := m.RoundIntegers([]float64{0.9999999, 1e-8, 0.4, 1.5, -2})
	if r[0] != 1 || r[1] != 0 || r[2] != 0 || r[3] != 1.5 {
		t.Errorf("RoundIntegers: %v", r)
	}
}

func TestWriteLP(t *testing.T) {
	m := knapsack([]float64{5, 4, 3}, []float64{4, 3, 2}, 5)
	g := m.Add("g", Integer, -2, 7)
	m.Constrain("pin", []Term{{g, 1}}, EQ, 3)
	var b strings.Builder
	if err := m.WriteLP(&b); err != nil {
		t.Fatal(err)
	}
	want := `\ 6 variables, 3 rows
Minimize
 obj: - 5 x_a - 4 x_b - 3 x_c - 0.5 s + 1 f
Subject To
 cap: + 4 x_a + 3 x_b + 2 x_c <= 5
 floor: + 1 f >= -3
 pin: + 1 g = 3
Bounds
 0 <= s <= 2
 f free
 -2 <= g <= 7
Binaries
 x_a x_b x_c
Generals
 g
End
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestValidate(t *testing.T) {
	for name, m := range map[string]*Model{
		"digit first": {Vars: []Var{{Name: "1x"}}},
		"exponent":    {Vars: []Var{{Name: "e1"}}},
		"space":       {Vars: []Var{{Name: "a b"}}},
		"duplicate":   {Vars: []Var{{Name: "a"}, {Name: "a"}}},
		"row var":     {Vars: []Var{{Name: "a"}}, Rows: []Row{{Name: "a"}}},
		"bad term":    {Vars: []Var{{Name: "a"}}, Rows: []Row{{Name: "r", Terms: []Term{{1, 1}}}}},
		"nan coef":    {Vars: []Var{{Name: "a"}}, Obj: []Term{{0, math.NaN()}}},
		"inf rhs":     {Vars: []Var{{Name: "a"}}, Rows: []Row{{Name: "r", RHS: math.Inf(1)}}},
		"bounds":      {Vars: []Var{{Name: "a", Lo: math.Inf(1)}}},
	} {
		if err := m.Validate(); !errors.Is(err, ErrModel) {
			t.Errorf("%s: %v, want ErrModel", name, err)
		}
		if err := m.WriteLP(&strings.Builder{}); !errors.Is(err, ErrModel) {
			t.Errorf("%s: WriteLP %v, want ErrModel", name, err)
		}
	}
}
