package plan

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/engine/cassini/agent"
)

var ref = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestRoundTrip(t *testing.T) {
	p := Plan{Job: "default/bert", Reference: ref, Shift: 150 * time.Millisecond, Period: 255 * time.Millisecond,
		CommOffset: 141 * time.Millisecond, Score: 1, Generation: 3}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"job":"default/bert","reference":"2025-01-01T00:00:00Z","shift":"150ms","period":"255ms","commOffset":"141ms","score":1,"generation":3}`
	if string(b) != want {
		t.Errorf("encoded %s, want %s", b, want)
	}
	var q Plan
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, q); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, field string }{
		{`{"reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"0s","commOffset":"0s"}`, "period"},
		{`{"reference":"2025-01-01T00:00:00Z","shift":"9ms","period":"9ms","commOffset":"0s"}`, "shift"},
		{`{"reference":"2025-01-01T00:00:00Z","shift":"-1ms","period":"9ms","commOffset":"0s"}`, "shift"},
		{`{"reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"9ms","commOffset":"9ms"}`, "commOffset"},
		{`{"shift":"1ms","period":"9ms","commOffset":"0s"}`, "reference"},
		{`{"reference":"2025-01-01T00:00:00Z","shift":"soon","period":"9ms","commOffset":"0s"}`, "shift"},
		{`{"reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"9ms","commOffset":"0s","extra":1}`, "extra"},
		{`{"reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"9ms","commOffset":"0s"} {}`, "after"},
		// What encoding/json lets through and the strict decoder does not.
		{`{"reference":"2025-01-01T00:00:00Z","shift":"1ms","shift":"2ms","period":"9ms","commOffset":"0s"}`, "shift"},
		{`{"reference":"2025-01-01T00:00:00Z","Shift":"1ms","period":"9ms","commOffset":"0s"}`, "Shift"},
		{`{"job":null,"reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"9ms","commOffset":"0s"}`, "job"},
		{"{\"job\":\"a\xffb\",\"reference\":\"2025-01-01T00:00:00Z\",\"shift\":\"1ms\",\"period\":\"9ms\",\"commOffset\":\"0s\"}", "job"},
		{`{"job":"\ud800","reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"9ms","commOffset":"0s"}`, "job"},
		{`{"reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"9ms","commOffset":"0s","score":"1"}`, "score"},
		{`{"reference":"yesterday","shift":"1ms","period":"9ms","commOffset":"0s"}`, "reference"},
	} {
		_, err := Parse([]byte(tc.in))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Parse(%s) = %v, want ErrInvalid naming %s", tc.in, err, tc.field)
		}
	}
}

// TestReadAndFollow: the downward API file is empty before the scheduler
// writes a plan (os.ErrNotExist), then holds one; Follow re-plans the
// agent when the file changes.
func TestReadAndFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read(empty) = %v, want os.ErrNotExist", err)
	}
	write := func(p Plan) {
		b, _ := json.Marshal(p)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := Plan{Job: "j", Reference: ref, Shift: 10 * time.Millisecond, Period: 72 * time.Millisecond, Generation: 1}
	write(first)
	p, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(p.Agent(), agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	second := first
	second.Shift, second.Generation = 40*time.Millisecond, 2
	write(second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error)
	go func() { done <- Follow(ctx, path, a, time.Millisecond, nil) }()
	for a.Plan().Shift != second.Shift && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if got := a.Plan(); got.Shift != second.Shift || a.Stats().Replans != 1 {
		t.Errorf("after Follow: plan %+v, %d re-plans; want shift %v, 1 re-plan", got, a.Stats().Replans, second.Shift)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"job":"default/bert","reference":"2025-01-01T00:00:00Z","shift":"150ms","period":"255ms","commOffset":"141ms","score":1,"generation":3}`))
	f.Add([]byte(`{"reference":"2025-01-01T00:00:00Z","shift":"1ms","period":"0s","commOffset":"0s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed an invalid plan: %v", err)
		}
		if _, err := agent.New(p.Agent(), agent.Options{}); err != nil {
			t.Fatalf("the agent refuses a parsed plan: %v", err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse(b)
		if err != nil || !q.Reference.Equal(p.Reference) || q.Shift != p.Shift || q.Period != p.Period || q.CommOffset != p.CommOffset {
			t.Fatalf("round trip: %+v -> %s -> %+v, %v", p, b, q, err)
		}
	})
}

// TestAwait: Await returns the plan once the file holds one (empty, then
// missing, then written), a malformed plan at once, and ctx's error when
// none comes.
func TestAwait(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := Plan{Job: "j", Reference: ref, Shift: 10 * time.Millisecond, Period: 72 * time.Millisecond, Generation: 1}
	go func() {
		time.Sleep(30 * time.Millisecond)
		os.Remove(path)
		time.Sleep(30 * time.Millisecond)
		b, _ := json.Marshal(want)
		os.WriteFile(path+".tmp", b, 0o644)
		os.Rename(path+".tmp", path)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := Await(ctx, path, 5*time.Millisecond)
	if err != nil || got != want {
		t.Fatalf("Await = %+v, %v; want %+v", got, err, want)
	}
	if err := os.WriteFile(path, []byte(`{"shift":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Await(ctx, path, 5*time.Millisecond); !errors.Is(err, ErrInvalid) {
		t.Errorf("Await(malformed) = %v, want ErrInvalid", err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := Await(short, filepath.Join(dir, "none"), 5*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Await(no plan) = %v, want the deadline", err)
	}
}
