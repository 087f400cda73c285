package mip

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func needHiGHS(t *testing.T) {
	t.Helper()
	if !HiGHSAvailable() {
		t.Skip("no python3 with scipy.optimize.milp (Debian: apt-get install python3-scipy)")
	}
}

// HiGHS proves the knapsacks' optima, reports its bound in the model's
// sense (ObjConst added), and its solution passes the model's rows.
func TestSolveHiGHSKnapsacks(t *testing.T) {
	needHiGHS(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for k := range 2 {
		n := 6 + k
		v, w := make([]float64, n), make([]float64, n)
		sum := 0.0
		for i := range v {
			v[i], w[i] = float64(1+rng.IntN(30)), float64(1+rng.IntN(20))
			sum += w[i]
		}
		capacity := math.Floor(sum / 2)
		m := knapsack(v, w, capacity)
		m.ObjConst = 10
		res, err := SolveHiGHS(context.Background(), m, HiGHSOptions{TimeLimit: 30 * time.Second, SetRelGap: true})
		if err != nil {
			t.Fatal(err)
		}
		want := bruteKnapsack(v, w, capacity) + 10
		if res.Status != Optimal || math.Abs(res.Objective-want) > 1e-6 || math.Abs(res.Bound-want) > 1e-6 {
			t.Fatalf("knapsack %d: %v objective %v bound %v, want %v", k, res.Status, res.Objective, res.Bound, want)
		}
		if v := m.Check(res.Values, 1e-7, 1e-6); len(v) != 0 {
			t.Fatalf("knapsack %d: HiGHS's solution violates %v", k, v)
		}
	}
}

// An infeasible model is reported as such, not as an error.
func TestSolveHiGHSInfeasible(t *testing.T) {
	needHiGHS(t)
	m := &Model{}
	x := m.Add("x", Binary, 0, 1)
	m.Constrain("two", []Term{{x, 1}}, GE, 2)
	res, err := SolveHiGHS(context.Background(), m, HiGHSOptions{})
	if err != nil || res.Status != Infeasible || res.Values != nil {
		t.Fatalf("got %+v, %v", res, err)
	}
}

// WriteJSON writes the objective, integrality, bounds (infinite ones as
// strings) and the rows as CSR, merging a variable repeated in a row.
func TestWriteJSON(t *testing.T) {
	m := &Model{Maximize: true}
	a := m.Add("a", Binary, 0, 1)
	b := m.Add("b", Continuous, math.Inf(-1), 4)
	m.Obj = []Term{{a, 2}, {b, 1}, {a, 1}}
	m.Constrain("r", []Term{{a, 1}, {b, 2}, {a, 3}}, LE, 5)
	m.Constrain("s", []Term{{b, 1}}, GE, -1)
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf, 7, 0); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	want := map[string]string{
		"c": "[3 1]", "integrality": "[1 0]", "lb": "[0 -inf]", "ub": "[1 4]",
		"row_lo": "[-inf -1]", "row_hi": "[5 inf]", "indptr": "[0 2 3]", "indices": "[0 1 1]", "data": "[4 2 1]",
	}
	for k, v := range want {
		if s := fmtJSON(got[k]); s != v {
			t.Errorf("%s: %s, want %s", k, s, v)
		}
	}
	if got["maximize"] != true || got["rows"] != 2.0 || got["time_limit"] != 7.0 || got["mip_rel_gap"] != 0.0 {
		t.Errorf("header %v", got)
	}
}

func fmtJSON(v any) string {
	xs, _ := v.([]any)
	out := "["
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		switch x := x.(type) {
		case string:
			out += x
		case float64:
			b, _ := json.Marshal(x)
			out += string(b)
		}
	}
	return out + "]"
}
