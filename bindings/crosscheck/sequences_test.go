package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/orrery/orrery/bindings/internal/corpus"
	"github.com/orrery/orrery/internal/malformed"
)

// The stateful sequences of internal/malformed (random calls of every
// stateful op, values at the edges of their domains, refused calls among
// them: issue 29) on every host: each sequence on a fresh session, every
// answer byte for byte the native one. The root package's
// TestAcceptedCallsNeverPoison checks the sequences' invariants natively;
// this checks that wazero, node and Python (on the C library) answer them
// alike.

var seqCount = flag.Int("sequences", 40, "stateful sequences TestSequencesOnEveryHost runs")

func TestSequencesOnEveryHost(t *testing.T) {
	ctx := context.Background()
	seqs := malformed.Sequences(29, *seqCount, 60)
	dir := t.TempDir()
	var cases []corpus.Case
	for _, s := range seqs {
		var b bytes.Buffer
		for _, l := range s.Lines {
			b.Write(l)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, corpus.Case{Name: s.Name, Want: "ok", Steps: s.Lines})
	}
	a := *shared
	a.corpus = dir // the program hosts read their cases from it
	var want map[string][]byte
	for _, h := range hosts {
		got, err := h.corpus(ctx, &a, cases)
		if errors.Is(err, errMissing) {
			if h.optional || !requireHosts {
				t.Logf("%s: skipped: %v", h.name, err)
				continue
			}
			t.Errorf("%s: %v", h.name, err)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", h.name, err)
			continue
		}
		if want == nil {
			want = got
			continue
		}
		same := 0
		for _, c := range cases {
			if g, w := got[c.Name], want[c.Name]; !bytes.Equal(g, w) {
				gl, wl := bytes.Split(g, []byte("\n")), bytes.Split(w, []byte("\n"))
				for i := range min(len(gl), len(wl)) {
					if !bytes.Equal(gl[i], wl[i]) {
						t.Errorf("%s: %s line %d differs from native\n%s: %.300s\nnative: %.300s", h.name, c.Name, i, h.name, gl[i], wl[i])
						break
					}
				}
				if len(gl) != len(wl) {
					t.Errorf("%s: %s: %d answers, native %d", h.name, c.Name, len(gl), len(wl))
				}
				continue
			}
			same++
		}
		t.Logf("%s: %d/%d sequences byte-identical to native", h.name, same, len(cases))
	}
}
