package orrerywasm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/internal/build"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// The typed calls decode to what the native engine returns.
func TestTypedCalls(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	for _, c := range loadCorpus(t) {
		var env struct {
			Op      string          `json:"op"`
			Request json.RawMessage `json:"request"`
		}
		if c.Want != "ok" || json.Unmarshal(c.Envelope, &env) != nil {
			continue
		}
		native, err := orrery.Call(ctx, env.Op, env.Request)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var got, want any
		switch env.Op {
		case "cassini.link":
			var req orrery.LinkRequest
			mustDecode(t, env.Request, &req)
			got, err = m.Link(ctx, req)
			want = decodeAs[orrery.LinkResponse](t, native)
		case "cassini.rank":
			var req orrery.RankRequest
			mustDecode(t, env.Request, &req)
			got, err = m.Rank(ctx, req)
			want = decodeAs[orrery.RankResponse](t, native)
		case "shockwave.plan":
			var req orrery.ShockwavePlanRequest
			mustDecode(t, env.Request, &req)
			got, err = m.Plan(ctx, req)
			want = decodeAs[orrery.ShockwavePlanResponse](t, native)
		default:
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
		} else if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: typed call differs from native (-native +module):\n%s", c.Name, diff)
		}
	}
}

func mustDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	// The typed call re-encodes the request from the decoded struct.
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func decodeAs[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Call's errors are *orrery.Error values with the native code and field.
func TestCallErrors(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	for _, c := range []struct{ op, req string }{
		{"cassini.link", `{"capacity_gbps": 0, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}`},
		{"cassini.link", `{"capacity_gbps": 5, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": "x"}]}]}`},
		{"cassini.rank", `{"links": []}`},
		{"no.such.op", `{}`},
		{"cassini.link\"", `{}`},
	} {
		_, nerr := orrery.Call(ctx, c.op, []byte(c.req))
		_, err := m.Call(ctx, c.op, []byte(c.req))
		var we, ne *orrery.Error
		if !errors.As(err, &we) || !errors.As(nerr, &ne) {
			t.Fatalf("%s %s: errors %v, %v", c.op, c.req, err, nerr)
		}
		if we.Code != ne.Code || we.Field != ne.Field || we.Message != ne.Message {
			t.Errorf("%s %s: module %+v, native %+v", c.op, c.req, we, ne)
		}
		for _, s := range []error{orrery.ErrInvalid, orrery.ErrMalformed, orrery.ErrUnknownOp} {
			if errors.Is(err, s) != errors.Is(nerr, s) {
				t.Errorf("%s: errors.Is(%v) differs", c.op, s)
			}
		}
	}
}

// An envelope over orrery.MaxRequestBytes gets orrery.Handle's answer without
// entering the module.
func TestTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 64 MiB")
	}
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	env := bytes.Repeat([]byte(" "), orrery.MaxRequestBytes+1)
	got, err := m.Handle(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if want := orrery.Handle(ctx, env); !bytes.Equal(got, want) {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Many goroutines share a small pool; every answer is the native one.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 3})
	var cases [][]byte
	for _, c := range loadCorpus(t) {
		if len(c.Envelope) < 4000 && !strings.Contains(c.Name, "twelve") && !c.Session() {
			cases = append(cases, c.Envelope)
		}
	}
	want := make([][]byte, len(cases))
	for i, env := range cases {
		want[i] = orrery.Handle(ctx, env)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 25 {
				i := r.IntN(len(cases))
				got, err := m.Handle(ctx, cases[i])
				if err != nil || !bytes.Equal(got, want[i]) {
					errs <- fmt.Errorf("case %d: %v\n%s\n%s", i, err, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(m.idle); n > 3 {
		t.Errorf("%d idle instances in a pool of 3", n)
	}
}

// A search that needs more memory than the instance may have traps it; the
// call returns ErrTrap, and the next call gets a fresh instance.
func TestTrapReplacesInstance(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1, MemoryLimitPages: 1024}) // 64 MiB
	request := func(n int) []byte {
		// Periods 97·101, 97·103 and 101·103 ms share all 1,009,091 ticks
		// of their circle; n-3 one-tick jobs beside them: n tiles of 4 MiB.
		jobs := []string{
			`{"id":"x","phases":[{"ms":1,"gbps":1},{"ms":9796,"gbps":0}]}`,
			`{"id":"y","phases":[{"ms":1,"gbps":1},{"ms":9990,"gbps":0}]}`,
			`{"id":"z","phases":[{"ms":1,"gbps":1},{"ms":10402,"gbps":0}]}`,
		}
		for i := range n - 3 {
			jobs = append(jobs, fmt.Sprintf(`{"id":"j%d","phases":[{"ms":1,"gbps":1}]}`, i))
		}
		return []byte(`{"op":"cassini.link","request":{"capacity_gbps":100,"jobs":[` + strings.Join(jobs, ",") + `]}}`)
	}
	// 64 jobs are past the engine's cell limit: an error, no trap.
	if got, err := m.Handle(ctx, request(64)); err != nil || !bytes.Contains(got, []byte(`"code":"limit_exceeded"`)) {
		t.Fatalf("64 jobs on a 1,009,091-tick circle: %v %s, want limit_exceeded", err, got)
	}
	// 8 are within it (8e6 cells) but need more than this instance's 64 MiB.
	if _, err := m.Handle(ctx, request(8)); !errors.Is(err, ErrTrap) {
		t.Fatalf("a search past the memory limit: %v, want ErrTrap", err)
	}
	env := []byte(`{"op":"cassini.link","request":{"capacity_gbps":50,"jobs":[{"id":"a","phases":[{"ms":30,"gbps":40},{"ms":42,"gbps":0}]}]}}`)
	got, err := m.Handle(ctx, env)
	if err != nil || !bytes.Equal(got, orrery.Handle(ctx, env)) {
		t.Fatalf("after a trap: %v %s", err, got)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	m.Close(ctx)
	if _, err := m.Handle(ctx, []byte(`{}`)); err == nil {
		t.Error("Handle on a closed module succeeded")
	}
}

func TestNotAModule(t *testing.T) {
	ctx := context.Background()
	for _, b := range [][]byte{nil, []byte("\x00asm\x01\x00\x00\x00"), []byte("not wasm")} {
		if m, err := New(ctx, b, Options{}); err == nil || !errors.Is(err, ErrABI) {
			t.Errorf("New(%q) = %v, %v; want ErrABI", b, m, err)
		}
	}
}

func pulse(t, up int, bw int32) profile.Profile {
	d := make([]int32, t)
	for i := range up {
		d[i] = bw
	}
	return profile.Profile{Period: t, Demand: d}
}

// Search through the module returns what link.Workspace.Search returns.
func TestSearchMatchesNative(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	r := rand.New(rand.NewPCG(7, 8))
	var w link.Workspace
	for it := range 150 {
		k := 1 + r.IntN(4)
		jobs := make([]profile.Profile, k)
		for j := range jobs {
			tt := 5 + r.IntN(60)
			jobs[j] = pulse(tt, 1+r.IntN(tt), int32(1+r.IntN(40)))
		}
		pr := link.Problem{Jobs: jobs, Capacity: int32(10 + r.IntN(50))}
		if r.IntN(3) == 0 {
			pr.Fixed = make([]int, k)
			for j := range pr.Fixed {
				pr.Fixed[j] = r.IntN(200) - 50
			}
		}
		opt := link.Options{Mode: link.Mode(r.IntN(2)), Restarts: r.IntN(3), Seed: r.Uint64()}
		if r.IntN(4) == 0 {
			opt.Budget = int64(r.IntN(3000))
		}
		if r.IntN(4) == 0 {
			opt.Circle.MaxPerimeter, opt.Circle.Round = 300, true
		}
		want, werr := w.Search(ctx, pr, opt, nil)
		got, err := m.Search(ctx, pr, opt, nil)
		if (werr == nil) != (err == nil) {
			t.Fatalf("%d: native %v, module %v", it, werr, err)
		}
		if werr != nil {
			continue
		}
		want.Circle.Periods = append([]int(nil), want.Circle.Periods...)
		want.Unrounded = link.Unrounded{} // not in ABI v1's result
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%d: module differs from native (-native +module):\n%s", it, diff)
		}
	}
	// Errors carry the module's code.
	_, err := m.Search(ctx, link.Problem{Jobs: []profile.Profile{pulse(10, 2, 5)}, Capacity: 0}, link.Options{}, nil)
	if !errors.Is(err, orrery.ErrInvalid) {
		t.Errorf("zero capacity: %v", err)
	}
	_, err = m.Search(ctx, link.Problem{Jobs: []profile.Profile{{Period: 3, Demand: []int32{1}}}, Capacity: 5}, link.Options{}, nil)
	if !errors.Is(err, orrery.ErrInvalid) {
		t.Errorf("short demand: %v", err)
	}
}

// A warm Search allocates only the result's Circle.Periods.
func TestSearchAllocs(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	pr := link.Problem{Jobs: []profile.Profile{pulse(72, 30, 40), pulse(72, 30, 40), pulse(90, 20, 30)}, Capacity: 50}
	dst := make([]int, 3)
	run := func() {
		if _, err := m.Search(ctx, pr, link.Options{}, dst); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n > 1 {
		t.Errorf("%v allocations per warm search, want at most 1", n)
	}
}

// TestTimeLimitInModule: a request's time_limit_ms ends a search inside the
// module. The Go scheduler on wasm never preempts, so a limit that relied on
// the runtime's timer would be ignored and this search would run for hours.
func TestTimeLimitInModule(t *testing.T) {
	ctx := context.Background()
	m := newModule(t, Options{Instances: 1})
	rng := rand.New(rand.NewPCG(1, 1))
	req := orrery.LinkRequest{CapacityGbps: 40, SearchSpec: orrery.SearchSpec{Budget: -1, TimeLimitMs: 50}}
	for j := range 5 {
		period := []float64{200, 300, 400}[rng.IntN(3)]
		comm := 20 + rng.Float64()*(period/2)
		req.Jobs = append(req.Jobs, orrery.JobSpec{ID: fmt.Sprint("j", j), Phases: []orrery.PhaseSpec{
			{Ms: period - comm, Gbps: 0}, {Ms: comm, Gbps: 10 + rng.Float64()*20},
		}})
	}
	res, err := m.Link(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "time_limit" || res.Score < res.UnshiftedScore || res.Bound < res.Score {
		t.Fatalf("status %q score %v unshifted %v bound %v, want time_limit with score <= bound", res.Status, res.Score, res.UnshiftedScore, res.Bound)
	}
}

// bothModules returns the default module's bytes and the purego build's.
func bothModules(t *testing.T) (def, portable []byte) {
	t.Helper()
	b, err := wasmBytes()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "orrery-portable.wasm")
	if err := build.WasmPortable(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	pb, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, pb
}

// TestPortableModule checks that the default build imports its kernels and
// the purego build does not, and that New runs both to the same bytes.
func TestPortableModule(t *testing.T) {
	ctx := context.Background()
	b, pb := bothModules(t)
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  bool
	}{{"default", b, true}, {"purego", pb, false}} {
		if got, err := ImportsKernels(ctx, tc.bytes); err != nil || got != tc.want {
			t.Errorf("%s build: ImportsKernels = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	m, err := New(ctx, pb, Options{Instances: 1, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	for _, name := range []string{"link_exact_coprime_periods.json", "rank_twelve_jobs.json"} {
		env, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "ok", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Handle(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		if want := orrery.Handle(ctx, env); !bytes.Equal(got, want) {
			t.Errorf("%s: the purego build answers\n%s\nnative\n%s", name, got, want)
		}
	}
}
