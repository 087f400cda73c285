package orrerywasm

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/internal/corpus"
	"github.com/orrery/orrery/internal/malformed"
)

// The malformed-input generator of the root package's TestMalformedInputs
// (internal/malformed), through the module: every case must get from the
// module the bytes orrery.Handle (or an orrery.Session) gives natively,
// and the host call must not fail (no trap, no error).

// sessionEvery keeps CI's cost small: a session case starts an instance
// of its own (about 16 ms) and replays its session, so by default every
// fifth session case runs. A path's 26 bad values are consecutive cases
// and 5 is prime to 26, so each path meets a fifth of them and each bad
// value a fifth of the paths, rotating (a stride of 2 or 4 would skip the
// odd values altogether). Every single-call case and damage runs.
var sessionEvery = flag.Int("malformed-session-every", 5, "run every k-th malformed session case through the module (1: all)")

// nativeCtx bounds a native call; the module's calls run unbounded
// (CloseOnContextDone is off), so a case that needed the bound natively
// shows as a divergence. The bound is a runaway's, not a speed test's: a
// twelve-job rank took over 2 s natively on a CI-sized machine loaded 13
// times over, and its answer then said time_limit where the module's did
// not.
func nativeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func loadMalformed(t *testing.T) malformed.Corpus {
	t.Helper()
	dir, err := corpus.Dir(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := malformed.Load(filepath.Join(dir, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMalformedMatchesNative(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	c := loadMalformed(t)
	n := 0
	for mc, err := range c.Cases() {
		if err != nil {
			t.Fatal(err)
		}
		nctx, cancel := nativeCtx()
		want := orrery.Handle(nctx, mc.Envelope)
		cancel()
		got, err := m.Handle(ctx, mc.Envelope)
		n++
		if err != nil {
			t.Errorf("%s: host call failed: %v", mc.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: module and native differ\nmodule: %.400s\nnative: %.400s", mc.Name, got, want)
		}
	}
	ns, all := 0, 0
	for _, s := range c.Sessions {
		k, a := malformedSession(t, m, s, max(*sessionEvery, 1))
		ns, all = ns+k, all+a
	}
	t.Logf("%d single-call cases, %d of %d session cases (every %d-th)", n, ns, all, max(*sessionEvery, 1))
}

// malformedSession runs every k-th case of s on a fresh session of each
// host: the lines before the mutated one, the mutated one, then the lines
// from the one mutated on (as the root test replays them, to see that a
// failed call left the session unchanged); every answer of the module
// must be the native one. It returns the cases run and the cases of s.
func malformedSession(t *testing.T, m *Module, s malformed.Session, k int) (ran, all int) {
	ctx := context.Background()
	for mc, err := range s.Cases() {
		if err != nil {
			t.Fatal(err)
		}
		all++
		if (all-1)%k != 0 {
			continue
		}
		ran++
		lines := append(append(append([][]byte{}, s.Lines[:mc.Line]...), mc.Envelope), s.Lines[mc.Line:]...)
		native := orrery.NewSession()
		ws, err := m.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for j, l := range lines {
			nctx, cancel := nativeCtx()
			want := native.Handle(nctx, l)
			cancel()
			got, err := ws.Handle(ctx, l)
			if err != nil {
				t.Errorf("%s: step %d: host call failed: %v", mc.Name, j, err)
				break
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: step %d: module and native differ\nmodule: %.400s\nnative: %.400s", mc.Name, j, got, want)
				break
			}
		}
		ws.Close(ctx)
		native.Close()
	}
	return ran, all
}
