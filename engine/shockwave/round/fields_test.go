package round

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/orrery/orrery/engine/shockwave/predictor"
)

// errorSource says how a package builds its *FieldError values: the
// constructors and the position of their field-name argument, and the
// functions allowed to build a FieldError directly.
type errorSource struct {
	dir      string
	ctors    map[string]int
	literals map[string]bool
	index    int // the position of the constructors' element-index argument, or −1
}

// named is a field name passed to a constructor.
type named struct {
	ctor, name string
	indexed    bool // an element index may come with it
	at         token.Position
}

// fieldNames lists every field name src's package passes to its error
// constructors. A name that is not a string literal fails the test (except
// where a constructor forwards its own argument), and so does a FieldError
// built outside the functions src allows: then the list would be
// incomplete.
func fieldNames(t *testing.T, src errorSource) []named {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(src.dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []named
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn := fd.Name.Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if id, ok := n.Type.(*ast.Ident); ok && id.Name == "FieldError" && !src.literals[fn] {
						t.Errorf("%s: %s builds a FieldError itself; use a constructor", fset.Position(n.Pos()), fn)
					}
				case *ast.CallExpr:
					var name string
					switch f := n.Fun.(type) {
					case *ast.Ident:
						name = f.Name
					case *ast.SelectorExpr:
						name = f.Sel.Name
					}
					i, ok := src.ctors[name]
					if !ok || i >= len(n.Args) {
						return true
					}
					if lit, ok := n.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						out = append(out, named{ctor: name, name: s, indexed: src.index >= 0 && !isMinusOne(n.Args[src.index]),
							at: fset.Position(lit.Pos())})
					} else if _, forwards := src.ctors[fn]; !forwards {
						t.Errorf("%s: %s passes a field name to %s that is not a string literal", fset.Position(n.Pos()), fn, name)
					}
				}
				return true
			})
		}
	}
	return out
}

func isMinusOne(e ast.Expr) bool {
	u, ok := e.(*ast.UnaryExpr)
	if !ok || u.Op != token.SUB {
		return false
	}
	lit, ok := u.X.(*ast.BasicLit)
	return ok && lit.Value == "1"
}

// resolve checks that path names a field of t: exported field names, each
// optionally followed by "[]" or "[n]" on a slice.
func resolve(t reflect.Type, path string) error {
	for seg := range strings.SplitSeq(path, ".") {
		name, idx, _ := strings.Cut(seg, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return &resolveError{path, seg, "is not in a struct"}
		}
		f, ok := t.FieldByName(name)
		if !ok || !f.IsExported() {
			return &resolveError{path, seg, "is not a field of " + t.String()}
		}
		t = f.Type
		if idx == "" {
			continue
		}
		for _, ix := range strings.Split("["+idx, "[")[1:] {
			n := strings.TrimSuffix(ix, "]")
			if !strings.HasSuffix(ix, "]") || strings.Trim(n, "0123456789") != "" {
				return &resolveError{path, seg, "has a malformed index"}
			}
			if t.Kind() != reflect.Slice {
				return &resolveError{path, seg, "indexes a " + t.Kind().String()}
			}
			t = t.Elem()
		}
	}
	return nil
}

type resolveError struct{ path, seg, why string }

func (e *resolveError) Error() string { return e.path + ": " + e.seg + " " + e.why }

// TestFieldNames walks every field name the engine can report below the
// root package, the literals this package, package market and package
// predictor pass to their error constructors, and checks that each names a
// field of the State: this package's directly (or of a Job), the others'
// after fromMarket and fromPredictor, in every case those distinguish.
// With the root package's test of its JSON table over every State field,
// no error of Plan or Predict lacks its JSON path.
func TestFieldNames(t *testing.T) {
	state, job := reflect.TypeFor[State](), reflect.TypeFor[Job]()

	own := fieldNames(t, errorSource{dir: ".",
		ctors:    map[string]int{"invalid": 0, "jobInvalid": 2, "jobInvalidAt": 2, "argErr": 0},
		literals: map[string]bool{"invalid": true, "argErr": true, "jobErr": true, "fromPredictor": true, "fromMarket": true},
		index:    -1})
	counts := map[string]int{}
	for _, n := range own {
		counts[n.ctor]++
		switch n.ctor {
		case "invalid":
			if err := resolve(state, n.name); err != nil {
				t.Errorf("%s: %v", n.at, err)
			}
		case "jobInvalid", "jobInvalidAt":
			if err := resolve(job, n.name); err != nil {
				t.Errorf("%s: %v", n.at, err)
			}
		}
	}

	// The contexts fromMarket and fromPredictor tell apart.
	var jobs []*Job
	for _, known := range []*Known{nil, {}, {FairFinish: 1}} {
		for _, profiled := range [][]float64{nil, {1}} {
			for _, epochs := range []int{0, 3} {
				jobs = append(jobs, &Job{Known: known, ProfiledDur: profiled, Epochs: epochs})
			}
		}
	}
	mk := fieldNames(t, errorSource{dir: filepath.Join("..", "market"),
		ctors:    map[string]int{"invalid": 0, "invalidAt": 0, "tooLarge": 0, "jobInvalid": 1, "orDefault": 0},
		literals: map[string]bool{"invalid": true, "invalidAt": true, "tooLarge": true, "jobInvalid": true},
		index:    -1})
	for _, n := range mk {
		counts["market."+n.ctor]++
		if n.ctor != "jobInvalid" {
			if err := resolve(state, marketField(n.name)); err != nil {
				t.Errorf("%s: market's %q: %v", n.at, n.name, err)
			}
			continue
		}
		for _, j := range jobs {
			for _, cal := range []float64{1, 2} {
				if err := resolve(job, marketJobField(j, &JobResult{Calibration: cal}, n.name)); err != nil {
					t.Errorf("%s: market's %q: %v", n.at, n.name, err)
				}
			}
		}
	}

	pr := fieldNames(t, errorSource{dir: filepath.Join("..", "predictor"),
		ctors: map[string]int{"fieldErr": 0}, literals: map[string]bool{"fieldErr": true}, index: 1})
	for _, n := range pr {
		counts["predictor"]++
		index := -1
		if n.indexed {
			index = 1
		}
		pe := &predictor.FieldError{Field: n.name, Index: index}
		for _, j := range jobs {
			for _, k := range []int{-1, 0} {
				f, ofJob := predictorField(j, k, pe)
				root := state
				if ofJob {
					root = job
				}
				if err := resolve(root, f); err != nil {
					t.Errorf("%s: predictor's %q (k %d, index %d): %v", n.at, n.name, k, index, err)
				}
			}
		}
	}
	// A walk that finds little has stopped seeing the constructors.
	for c, least := range map[string]int{"invalid": 6, "jobInvalid": 8, "jobInvalidAt": 2, "argErr": 5,
		"market.invalid": 8, "market.invalidAt": 4, "market.tooLarge": 4, "market.jobInvalid": 7, "market.orDefault": 6,
		"predictor": 40} {
		if counts[c] < least {
			t.Errorf("%d names passed to %s, want at least %d: %v", counts[c], c, least, counts)
		}
	}
	t.Logf("names per constructor: %v", counts)
}

// TestResolve: the check above rejects what is not a field.
func TestResolve(t *testing.T) {
	state := reflect.TypeFor[State]()
	for path, ok := range map[string]bool{
		"GPUs": true, "Jobs[3].EpochDur[2]": true, "Jobs[].Known.MeanEpoch": true, "Config.Market.Breakpoints[1]": true,
		"Jobs.EpochDur": false, "GPUs[1]": false, "Jobs[1].Nope": false, "Config.Market.RoundS": false,
		"Jobs[x]": false, "jobs": false, "unmapped market Foo": false,
	} {
		if err := resolve(state, path); (err == nil) != ok {
			t.Errorf("resolve(%q) = %v, want ok %v", path, err, ok)
		}
	}
}
