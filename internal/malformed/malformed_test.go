package malformed

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const env = `{"request":{"jobs":[{"id":"a","period":3},{"id":"b","period":4}],"budget":7},"op":"cassini.link"}`

func TestPathsAndEncode(t *testing.T) {
	root, err := Parse([]byte(env))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".op", ".request", ".request.budget", ".request.jobs", ".request.jobs[0]", ".request.jobs[0].id", ".request.jobs[0].period"}
	if diff := cmp.Diff(want, root.Paths()); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	// Keys come out sorted, numbers as written, and a path not in the
	// tree changes nothing.
	canon := `{"op":"cassini.link","request":{"budget":7,"jobs":[{"id":"a","period":3},{"id":"b","period":4}]}}`
	if got := string(root.Encode("-", "0")); got != canon {
		t.Errorf("Encode(-) = %s, want %s", got, canon)
	}
	got := string(root.Encode(".request.jobs[0].period", `"x"`))
	if w := `{"op":"cassini.link","request":{"budget":7,"jobs":[{"id":"a","period":"x"},{"id":"b","period":4}]}}`; got != w {
		t.Errorf("Encode(period) = %s, want %s", got, w)
	}
	if got := string(root.Encode(".request", `NaN`)); got != `{"op":"cassini.link","request":NaN}` {
		t.Errorf("Encode(request) = %s", got)
	}
}

func TestDamaged(t *testing.T) {
	d := Damaged([]byte(env))
	if len(d) != 9 {
		t.Fatalf("%d damages, want 9", len(d))
	}
	for k, b := range d {
		if bytes.Equal(b, []byte(env)) {
			t.Errorf("damage %d is the envelope itself", k)
		}
		// All but the duplicated key (4), the second request (5) and the
		// long id (8, on a request without one) are not JSON at all.
		if valid := json.Valid(b); valid != (k == 4 || k == 5 || k == 8) {
			t.Errorf("damage %d: json.Valid = %v: %.80s", k, valid, b)
		}
	}
	if n := len(d[8]); n < 3<<20 {
		t.Errorf("the long-string damage is %d bytes, want over 3 MiB", n)
	}
}

// Each op's field is mutated once over the corpus, with every bad value;
// every file gets its damages; a session mutates each of its op's fields
// once, on the first line that has it.
func TestCases(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.json", " "+env+"\n")
	write("b.json", `{"op":"cassini.link","request":{"budget":1,"extra":true}}`)
	write("s.jsonl", `{"op":"x","request":{"n":1}}`+"\n\n"+`{"op":"x","request":{"n":2,"m":[1]}}`+"\n")
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 2 || len(c.Sessions) != 1 || len(c.Sessions[0].Lines) != 2 {
		t.Fatalf("corpus %+v", c)
	}
	nb := len(BadValues())
	count := func(seq func(func(Case, error) bool)) (n int, names []string) {
		for mc, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			n++
			names = append(names, mc.Name)
		}
		return n, names
	}
	// a.json: 7 paths; b.json: only .request.extra is new.
	n, names := count(c.Cases())
	if want := (7+1)*nb + 2*9; n != want {
		t.Errorf("%d file cases, want %d", n, want)
	}
	if _, again := count(c.Cases()); !cmp.Equal(names, again) {
		t.Error("two runs of Cases differ")
	}
	// Line 0: .op .request .request.n; line 1: .request.m, .request.m[0].
	var lines []int
	for mc, err := range c.Sessions[0].Cases() {
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, mc.Line)
	}
	if len(lines) != 5*nb || lines[3*nb-1] != 0 || lines[3*nb] != 1 {
		t.Errorf("session cases on lines %v", lines)
	}
}

func TestCasesStopsOnBadJSON(t *testing.T) {
	c := Corpus{Files: []File{{"bad.json", []byte(`{`)}}}
	for _, err := range c.Cases() {
		if err == nil {
			t.Fatal("a case from a file that is not JSON")
		}
	}
}
