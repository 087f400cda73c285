package ns3

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func seeds(f *testing.F, pattern string) {
	paths, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seeds %s: %v", pattern, err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

// A scenario that reads writes back and reads again as itself.
func FuzzReadScenario(f *testing.F) {
	seeds(f, "*.scenario")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ReadScenario(strings.NewReader(text))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if _, err := s.WriteTo(&b); err != nil {
			t.Fatalf("a scenario that read does not write: %v", err)
		}
		again, err := ReadScenario(&b)
		if err != nil {
			t.Fatalf("a written scenario does not read: %v\n%s", err, b.String())
		}
		s.Net = s.Net.normalize()
		if d := cmp.Diff(s, again, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); d != "" {
			t.Fatalf("round trip (-read +reread):\n%s", d)
		}
	})
}

// Output that parses has one iteration per I record and one link per L.
func FuzzParse(f *testing.F) {
	seeds(f, "*.out")
	f.Fuzz(func(t *testing.T, text string) {
		out, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		var iters, links int
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "I":
				iters++
			case "L":
				links++
			}
		}
		if len(out.Iterations) != iters || len(out.Links) != links {
			t.Fatalf("%d iterations and %d links from %d and %d records", len(out.Iterations), len(out.Links), iters, links)
		}
	})
}
