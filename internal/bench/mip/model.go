package mip

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Type is a variable's domain.
type Type uint8

const (
	Continuous Type = iota
	Binary          // integer in [0, 1]
	Integer
)

// Sense is a row's relation: Σ a_i·x_i (sense) RHS.
type Sense uint8

const (
	LE Sense = iota // ≤
	GE              // ≥
	EQ              // =
)

func (s Sense) String() string {
	switch s {
	case LE:
		return "<="
	case GE:
		return ">="
	}
	return "="
}

// Var is a variable. Lo may be -Inf and Hi +Inf.
type Var struct {
	Name   string
	Type   Type
	Lo, Hi float64
}

// Term is Coef·x[Var].
type Term struct {
	Var  int
	Coef float64
}

// Row is a linear constraint.
type Row struct {
	Name  string
	Terms []Term
	Sense Sense
	RHS   float64
}

// Model is a mixed-integer linear program.
type Model struct {
	Maximize bool
	Vars     []Var
	Rows     []Row
	Obj      []Term
	ObjConst float64 // added to the objective; not written to LP files
}

// ErrModel reports a malformed model: a bad name, a term naming no
// variable, an infinite coefficient.
var ErrModel = errors.New("mip: malformed model")

// Add appends a variable and returns its index.
func (m *Model) Add(name string, t Type, lo, hi float64) int {
	if t == Binary {
		lo, hi = max(lo, 0), min(hi, 1)
	}
	m.Vars = append(m.Vars, Var{Name: name, Type: t, Lo: lo, Hi: hi})
	return len(m.Vars) - 1
}

// Constrain appends a row.
func (m *Model) Constrain(name string, terms []Term, s Sense, rhs float64) {
	m.Rows = append(m.Rows, Row{Name: name, Terms: terms, Sense: s, RHS: rhs})
}

// Validate checks names (non-empty, unique, LP-safe), term indices and
// that every number is finite (bounds may be infinite).
func (m *Model) Validate() error {
	seen := make(map[string]bool, len(m.Vars)+len(m.Rows))
	name := func(kind, n string) error {
		if !lpName(n) {
			return fmt.Errorf("%w: %s name %q (want a letter or _ first, then letters, digits, _ or .)", ErrModel, kind, n)
		}
		if seen[n] {
			return fmt.Errorf("%w: duplicate name %q", ErrModel, n)
		}
		seen[n] = true
		return nil
	}
	terms := func(where string, ts []Term) error {
		for _, t := range ts {
			if t.Var < 0 || t.Var >= len(m.Vars) {
				return fmt.Errorf("%w: %s: term on variable %d of %d", ErrModel, where, t.Var, len(m.Vars))
			}
			if math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
				return fmt.Errorf("%w: %s: coefficient %v of %s", ErrModel, where, t.Coef, m.Vars[t.Var].Name)
			}
		}
		return nil
	}
	for _, v := range m.Vars {
		if err := name("variable", v.Name); err != nil {
			return err
		}
		if math.IsNaN(v.Lo) || math.IsNaN(v.Hi) || math.IsInf(v.Lo, 1) || math.IsInf(v.Hi, -1) {
			return fmt.Errorf("%w: bounds [%v, %v] of %s", ErrModel, v.Lo, v.Hi, v.Name)
		}
	}
	for _, r := range m.Rows {
		if err := name("row", r.Name); err != nil {
			return err
		}
		if err := terms(r.Name, r.Terms); err != nil {
			return err
		}
		if math.IsNaN(r.RHS) || math.IsInf(r.RHS, 0) {
			return fmt.Errorf("%w: %s: right-hand side %v", ErrModel, r.Name, r.RHS)
		}
	}
	return terms("objective", m.Obj)
}

// lpName reports whether s is safe as an LP-format name: a letter or _
// first (never e/E, which readers may take for an exponent), then letters,
// digits, _ or '.', at most 255 bytes.
func lpName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i, c := range []byte(s) {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		switch {
		case i == 0 && (!letter || c == 'e' || c == 'E'):
			return false
		case !letter && !(c >= '0' && c <= '9') && c != '.':
			return false
		}
	}
	return true
}

// Objective returns the objective at x (one value per variable).
func (m *Model) Objective(x []float64) float64 {
	return m.ObjConst + dot(m.Obj, x)
}

func dot(ts []Term, x []float64) float64 {
	s := 0.0
	for _, t := range ts {
		s += t.Coef * x[t.Var]
	}
	return s
}

// Violation is one bound, integrality requirement or row that an
// assignment breaks, by how much.
type Violation struct {
	Name   string  // the variable or row
	What   string  // "bound", "integrality" or "row"
	Amount float64 // how far outside
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s violated by %.3g", v.What, v.Name, v.Amount)
}

// Check returns what x violates: a bound or row by more than
// tol·(1 + |bound or right-hand side|), an integer variable farther than
// intTol from an integer. It panics if len(x) != len(m.Vars).
func (m *Model) Check(x []float64, tol, intTol float64) []Violation {
	if len(x) != len(m.Vars) {
		panic("mip: Check with a wrong number of values")
	}
	var out []Violation
	for i, v := range m.Vars {
		switch xi := x[i]; {
		case math.IsNaN(xi):
			out = append(out, Violation{v.Name, "bound", math.Inf(1)})
		case xi < v.Lo-tol*(1+math.Abs(v.Lo)):
			out = append(out, Violation{v.Name, "bound", v.Lo - xi})
		case xi > v.Hi+tol*(1+math.Abs(v.Hi)):
			out = append(out, Violation{v.Name, "bound", xi - v.Hi})
		}
		if v.Type != Continuous {
			if d := math.Abs(x[i] - math.Round(x[i])); d > intTol {
				out = append(out, Violation{v.Name, "integrality", d})
			}
		}
	}
	for _, r := range m.Rows {
		lhs := dot(r.Terms, x)
		lim := tol * (1 + math.Abs(r.RHS))
		var d float64
		switch r.Sense {
		case LE:
			d = lhs - r.RHS
		case GE:
			d = r.RHS - lhs
		case EQ:
			d = math.Abs(lhs - r.RHS)
		}
		if d > lim || math.IsNaN(d) {
			out = append(out, Violation{r.Name, "row", d})
		}
	}
	return out
}

// RoundIntegers returns a copy of x with every binary and integer variable
// rounded to the nearest integer, as a solver's integer tolerance leaves
// values like 0.9999999.
func (m *Model) RoundIntegers(x []float64) []float64 {
	y := append([]float64(nil), x...)
	for i, v := range m.Vars {
		if v.Type != Continuous {
			y[i] = math.Round(y[i])
		}
	}
	return y
}

// WriteLP writes m in the CPLEX LP format. A maximization is written as
// the minimization of the negated objective (some readers ignore
// "Maximize"), so a solver's objective for the file is −Objective; ObjConst
// is left out.
func (m *Model) WriteLP(w io.Writer) error {
	if err := m.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	sign := 1.0
	if m.Maximize {
		sign = -1
	}
	fmt.Fprintf(bw, "\\ %d variables, %d rows\nMinimize\n obj:", len(m.Vars), len(m.Rows))
	obj := make([]Term, len(m.Obj))
	for i, t := range m.Obj {
		obj[i] = Term{t.Var, sign * t.Coef}
	}
	if len(obj) == 0 && len(m.Vars) > 0 {
		obj = []Term{{0, 0}}
	}
	m.writeTerms(bw, obj)
	bw.WriteString("\nSubject To\n")
	for _, r := range m.Rows {
		fmt.Fprintf(bw, " %s:", r.Name)
		ts := r.Terms
		if len(ts) == 0 {
			ts = []Term{{0, 0}}
		}
		m.writeTerms(bw, ts)
		fmt.Fprintf(bw, " %s %s\n", r.Sense, num(r.RHS))
	}
	bw.WriteString("Bounds\n")
	var bins, ints []string
	for _, v := range m.Vars {
		switch v.Type {
		case Binary:
			bins = append(bins, v.Name)
			if v.Lo == 0 && v.Hi == 1 {
				continue
			}
		case Integer:
			ints = append(ints, v.Name)
		}
		switch {
		case v.Lo == 0 && math.IsInf(v.Hi, 1):
		case math.IsInf(v.Lo, -1) && math.IsInf(v.Hi, 1):
			fmt.Fprintf(bw, " %s free\n", v.Name)
		case v.Lo == v.Hi:
			fmt.Fprintf(bw, " %s = %s\n", v.Name, num(v.Lo))
		default:
			fmt.Fprintf(bw, " %s <= %s <= %s\n", bound(v.Lo), v.Name, bound(v.Hi))
		}
	}
	section := func(title string, names []string) {
		if len(names) == 0 {
			return
		}
		fmt.Fprintf(bw, "%s\n", title)
		for i := 0; i < len(names); i += 8 {
			fmt.Fprintf(bw, " %s\n", strings.Join(names[i:min(i+8, len(names))], " "))
		}
	}
	section("Binaries", bins)
	section("Generals", ints)
	bw.WriteString("End\n")
	return bw.Flush()
}

// writeTerms writes " + 3 x - 2.5 y", eight terms a line.
func (m *Model) writeTerms(w *bufio.Writer, ts []Term) {
	for i, t := range ts {
		if i > 0 && i%8 == 0 {
			w.WriteString("\n  ")
		}
		op, c := "+", t.Coef
		if c < 0 || (c == 0 && math.Signbit(c)) {
			op, c = "-", -c
		}
		fmt.Fprintf(w, " %s %s %s", op, num(c), m.Vars[t.Var].Name)
	}
}

// num formats a finite number exactly (shortest round-trip form).
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func bound(x float64) string {
	switch {
	case math.IsInf(x, -1):
		return "-inf"
	case math.IsInf(x, 1):
		return "+inf"
	}
	return num(x)
}
