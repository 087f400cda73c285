package orrerywasm

import (
	"bytes"
	"context"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/internal/corpus"
)

func loadCorpus(tb testing.TB) []corpus.Case {
	tb.Helper()
	dir, err := corpus.Dir(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}

// Every request of the corpus gets, through the module, the bytes
// orrery.Handle gives natively, and the answer the corpus expects.
func TestCorpusMatchesNative(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	for _, c := range loadCorpus(t) {
		want := orrery.Handle(ctx, c.Envelope)
		if err := c.Check(want); err != nil {
			t.Errorf("native: %v", err)
		}
		got, err := m.Handle(ctx, c.Envelope)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: module and native differ\nmodule: %.400s\nnative: %.400s", c.Name, got, want)
		}
	}
}
