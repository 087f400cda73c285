package orrerywasm_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/orrery/orrery"
	orrerywasm "github.com/orrery/orrery/bindings/go"
)

// TestBindingsCoverOps fails when a binding lacks an operation of the
// registry: this Go binding (a typed method named as the front door's
// function), the JavaScript module and its TypeScript declarations (the
// method in lowerCamelCase), and the Python package (in snake_case), each
// calling the op by its name.
func TestBindingsCoverOps(t *testing.T) {
	js := read(t, "../js/orrery.js")
	dts := read(t, "../js/orrery.d.ts")
	py := read(t, "../python/orrery/_common.py")
	module := reflect.TypeFor[*orrerywasm.Module]()
	for _, op := range orrery.Ops() {
		if _, ok := module.MethodByName(op.Func); !ok {
			t.Errorf("Go binding: no method Module.%s for %q", op.Func, op.Name)
		}
		jsName := lowerFirst(op.Func)
		if !regexp.MustCompile(`(?m)^\s+` + jsName + `\([^)]*\)\s*\{\s*\n\s*return this\.call\('` + regexp.QuoteMeta(op.Name) + `'`).MatchString(js) {
			t.Errorf("JavaScript binding: no method %s calling %q in orrery.js", jsName, op.Name)
		}
		if !regexp.MustCompile(`(?m)^\s+` + jsName + `\(`).MatchString(dts) {
			t.Errorf("JavaScript binding: no declaration of %s in orrery.d.ts", jsName)
		}
		pyName := snake(op.Func)
		if !regexp.MustCompile(`(?s)def ` + pyName + `\(self[^)]*\):.*?return self\.call\("` + regexp.QuoteMeta(op.Name) + `"`).MatchString(py) {
			t.Errorf("Python binding: no method %s calling %q in orrery/_common.py", pyName, op.Name)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lowerFirst(s string) string {
	return strings.ToLower(s[:1]) + s[1:]
}

// snake turns "EndRound" into "end_round".
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
