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

// Every request of the corpus gets, through the module, the bytes an
// orrery.Session gives natively, and the answer the corpus expects; a
// session runs on a fresh Session of each.
func TestCorpusMatchesNative(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	for _, c := range loadCorpus(t) {
		native := orrery.NewSession()
		want, _ := c.Answer(func(env []byte) ([]byte, error) { return native.Handle(ctx, env), nil })
		if err := c.Check(want); err != nil {
			t.Errorf("native: %v", err)
		}
		handle := m.Handle
		if c.Session() {
			s, err := m.NewSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			handle = s.Handle
		}
		got, err := c.Answer(func(env []byte) ([]byte, error) { return handle(ctx, env) })
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: module and native differ\nmodule: %.400s\nnative: %.400s", c.Name, got, want)
		}
	}
}
