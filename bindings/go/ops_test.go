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
// function: Module.Link for "Link", Scheduler.Add for "Scheduler.Add"),
// the JavaScript module and its TypeScript declarations (the method in
// lowerCamelCase, in the class of that name), and the Python package (in
// snake_case), each calling the op by its name.
func TestBindingsCoverOps(t *testing.T) {
	js := read(t, "../js/orrery.js")
	dts := read(t, "../js/orrery.d.ts")
	py := read(t, "../python/orrery/_common.py")
	types := map[string]reflect.Type{
		"":          reflect.TypeFor[*orrerywasm.Module](),
		"Scheduler": reflect.TypeFor[*orrerywasm.Scheduler](),
		"Agent":     reflect.TypeFor[*orrerywasm.Agent](),
	}
	for _, op := range orrery.Ops() {
		class, method, ok := strings.Cut(op.Func, ".")
		if !ok {
			class, method = "", op.Func
		}
		goType, known := types[class]
		if !known {
			t.Errorf("Go binding: no type for %s (%q)", class, op.Name)
		} else if _, ok := goType.MethodByName(method); !ok {
			t.Errorf("Go binding: no method %s.%s for %q", goType.Elem().Name(), method, op.Name)
		}
		jsClass, pyClass := class, class
		if class == "" {
			jsClass, pyClass = "Orrery", "Engine"
		}
		calls := `this\.#?call\('` + regexp.QuoteMeta(op.Name) + `'`
		jsName := lowerFirst(method)
		if !regexp.MustCompile(`(?m)^\s+` + jsName + `\([^)]*\)\s*\{[^}]*?` + calls).MatchString(classBody(js, "class "+jsClass+" ")) {
			t.Errorf("JavaScript binding: no method %s.%s calling %q in orrery.js", jsClass, jsName, op.Name)
		}
		if !regexp.MustCompile(`(?m)^\s+` + jsName + `\(`).MatchString(classBody(dts, "class "+jsClass+" ")) {
			t.Errorf("JavaScript binding: no declaration of %s.%s in orrery.d.ts", jsClass, jsName)
		}
		pyName := snake(method)
		pyCalls := `self\._?call\("` + regexp.QuoteMeta(op.Name) + `"`
		if !regexp.MustCompile(`(?s)def ` + pyName + `\(self[^)]*\)(\s*->\s*[^:]+)?:.*?` + pyCalls).MatchString(pyClassBody(py, pyClass, pyName)) {
			t.Errorf("Python binding: no method %s.%s calling %q in orrery/_common.py", pyClass, pyName, op.Name)
		}
	}
}

// classBody returns the text of the class that starts with head ("class
// Scheduler ") up to the first line that closes a block at column 0.
func classBody(src, head string) string {
	i := strings.Index(src, head)
	if i < 0 {
		return ""
	}
	body := src[i:]
	if j := strings.Index(body, "\n}"); j >= 0 {
		body = body[:j]
	}
	return body
}

// pyClassBody returns the text of Python class name up to the next
// top-level statement, from its method def onwards (so that the call
// found is that method's, not a later one's).
func pyClassBody(src, name, method string) string {
	i := strings.Index(src, "\nclass "+name)
	if i < 0 {
		return ""
	}
	body := src[i+1:]
	if j := regexp.MustCompile(`\n\S`).FindStringIndex(body[1:]); j != nil {
		body = body[:j[0]+1]
	}
	k := strings.Index(body, "def "+method+"(")
	if k < 0 {
		return ""
	}
	body = body[k:]
	if j := strings.Index(body[1:], "\n    def "); j >= 0 {
		body = body[:j+1]
	}
	return body
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
