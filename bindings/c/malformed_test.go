package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/bindings/internal/corpus"
	"github.com/orrery/orrery/internal/malformed"
)

// The malformed-input generator's single-call cases (internal/malformed)
// through the C interface: written one a line to a file that check runs in
// one session (stateless ops answer the same in any session), each answer
// must be orrery.Handle's bytes. A case with a newline of its own (a
// damage of an envelope written over several lines) cannot be a line and
// is left to the other hosts' tests.
func TestMalformedMatchesNative(t *testing.T) {
	dir, run := setup(t)
	cdir, err := corpus.Dir(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := malformed.Load(filepath.Join(cdir, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	var names []string
	var want [][]byte
	skipped := 0
	for mc, err := range c.Cases() {
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(mc.Envelope, '\n') >= 0 || len(mc.Envelope) == 0 {
			skipped++
			continue
		}
		in.Write(mc.Envelope)
		in.WriteByte('\n')
		names = append(names, mc.Name)
		// A runaway's bound, as bindings/go's nativeCtx: the library runs
		// unbounded, and a twelve-job rank took over 2 s natively at a
		// load of 25 on 2 cores, answering time_limit where it did not.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		want = append(want, orrery.Handle(ctx, mc.Envelope))
		cancel()
	}
	file := filepath.Join(dir, "malformed.jsonl")
	if err := os.WriteFile(file, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got := bytes.Split(run("session", file), []byte("\n"))
	if len(got) != len(want) {
		t.Fatalf("%d answers to %d cases", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%s: library and native differ\nlib:    %.300s\nnative: %.300s", names[i], got[i], want[i])
		}
	}
	t.Logf("%d single-call cases through the C interface (%d with a newline or empty left out)", len(want), skipped)
}
