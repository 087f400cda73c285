package orrery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/malformed"
)

// The malformed-input generator (issue 13, "how it is judged";
// internal/malformed): every field of every request in testdata/corpus/ok,
// through Handle (and a Session for the stateful ops), replaced by each of
// malformed.BadValues, plus structural damage of each envelope. No case may panic, hang or answer an
// internal error; each answers a typed error or a valid response, and a
// stateful op that fails leaves its session as it was.

var writeSeeds = flag.Bool("write-seeds", false, "write a sample of the generated malformed envelopes to fuzz/testdata/fuzz/FuzzHandle")

// verdict checks one answer: a response or a typed error, never an
// internal one.
func verdict(t *testing.T, what string, out []byte) (ok bool) {
	t.Helper()
	var r struct {
		Response json.RawMessage `json:"response"`
		Error    *struct {
			Code, Field, Message string
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: answer is not JSON: %v: %.200s", what, err, out)
	}
	switch {
	case r.Error != nil && r.Error.Code == orrery.CodeInternal:
		t.Errorf("%s: internal error: %s", what, r.Error.Message)
	case r.Error != nil && r.Error.Code == "":
		t.Errorf("%s: untyped error: %+v", what, r.Error)
	case r.Error == nil && len(r.Response) == 0:
		t.Errorf("%s: neither response nor error: %.200s", what, out)
	case r.Error != nil && goWords(r.Error.Field)+goWords(r.Error.Message) != "":
		t.Errorf("%s: the message names %q, not the request's words: %s: %s", what, goWords(r.Error.Field)+goWords(r.Error.Message), r.Error.Field, r.Error.Message)
	}
	return r.Error == nil
}

// callCtx bounds one generated call: a mutation may remove a request's own
// limits (budget, time_limit_ms), and a solve answers its best by then.
func callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Second)
}

func TestMalformedInputs(t *testing.T) {
	c, err := malformed.Load(filepath.Join("testdata", "corpus", "ok"))
	if err != nil {
		t.Fatal(err)
	}
	var seeds [][]byte
	n := 0
	for mc, err := range c.Cases() {
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := callCtx()
		verdict(t, mc.Name, orrery.Handle(ctx, mc.Envelope))
		cancel()
		n++
		if mc.Value >= 0 && mc.Value%9 == 0 && len(mc.Envelope) < 1024 {
			seeds = append(seeds, mc.Envelope)
		}
	}
	for _, s := range c.Sessions {
		n += sessionCases(t, s)
	}
	t.Logf("%d malformed cases", n)
	if *writeSeeds {
		dir := filepath.Join("fuzz", "testdata", "fuzz", "FuzzHandle")
		for k, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("gen-%03d", k)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sessionCases replays seq in a fresh session with line k mutated, for
// every line and field (first occurrence of each schema path): when the
// mutated call fails, the rest of the sequence must answer exactly as in
// the unmutated run, so the failed call left the session unchanged.
func sessionCases(t *testing.T, seq malformed.Session) int {
	run := func(lines [][]byte) [][]byte {
		s := orrery.NewSession()
		defer s.Close()
		out := make([][]byte, len(lines))
		for i, l := range lines {
			ctx, cancel := callCtx()
			out[i] = s.Handle(ctx, l)
			cancel()
		}
		return out
	}
	want := run(seq.Lines)
	n := 0
	for mc, err := range seq.Cases() {
		if err != nil {
			t.Fatal(err)
		}
		s := orrery.NewSession()
		for _, l := range seq.Lines[:mc.Line] {
			ctx, cancel := callCtx()
			s.Handle(ctx, l)
			cancel()
		}
		ctx, cancel := callCtx()
		ok := verdict(t, mc.Name, s.Handle(ctx, mc.Envelope))
		cancel()
		n++
		if !ok {
			for j := mc.Line; j < len(seq.Lines); j++ {
				ctx, cancel := callCtx()
				got := s.Handle(ctx, seq.Lines[j])
				cancel()
				if !bytes.Equal(got, want[j]) {
					t.Errorf("%s: the session changed: line %d answers %.200s, want %.200s", mc.Name, j, got, want[j])
					break
				}
			}
		}
		s.Close()
	}
	return n
}
