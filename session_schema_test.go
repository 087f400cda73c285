package orrery

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSessionResponses: every answer of the corpus decodes strictly (no
// key the type lacks) into the response type its op declares, so the
// schema generated from those types describes what the ops answer.
func TestSessionResponses(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.json*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := NewSession()
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !strings.HasSuffix(f, ".jsonl") {
				line = string(b)
			}
			var r struct {
				Op       string          `json:"op"`
				Response json.RawMessage `json:"response"`
			}
			if json.Unmarshal(s.Handle(context.Background(), []byte(line)), &r) != nil || r.Response == nil {
				continue
			}
			o, ok := lookup(r.Op)
			if !ok {
				t.Fatalf("%s: answered op %q is not in the registry", f, r.Op)
			}
			if err := decode(r.Response, reflect.New(o.resp).Interface()); err != nil {
				t.Errorf("%s: %s's response does not decode into %v: %v", f, r.Op, o.resp, err)
			}
			checked++
			if !strings.HasSuffix(f, ".jsonl") {
				break
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d responses checked", checked)
	}
}
