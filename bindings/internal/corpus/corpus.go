// Package corpus reads the request corpus (testdata/corpus) that every host
// of orrery must answer byte for byte the same, and checks an answer
// against the expectation the corpus encodes in its directory names.
//
// A .json file is one request envelope, sent as is (it may be malformed on
// purpose). The directory says what must come back: "ok" a response, any
// other name an error with that code ("malformed_json",
// "invalid_argument", "unknown_op", "limit_exceeded").
//
// A .jsonl file is a session: one envelope per line, run in order on one
// fresh session (a fresh orrery.Session, WebAssembly instance or C
// session), for the stateful operations ("shockwave.scheduler.*"). Its
// answer is the response envelopes joined by newlines; every line but the
// last must succeed, and the last must be what the directory says. The
// stateful operations appear only in sessions: a host may run .json
// files on a shared session.
package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orrery/orrery/bindings/internal/build"
)

// Case is one request of the corpus, or one session.
type Case struct {
	Name     string   // path relative to the corpus root, with forward slashes
	Want     string   // "ok" or the expected error code
	Envelope []byte   // the file's bytes
	Steps    [][]byte // a session's envelopes, in order; nil for a .json file
}

// Session reports whether c is a session (a .jsonl file).
func (c Case) Session() bool { return strings.HasSuffix(c.Name, ".jsonl") }

// Answer runs c through handle, which runs one envelope: the file's
// envelope, or a session's envelopes in order (handle is then a fresh
// session's), joined by newlines.
func (c Case) Answer(handle func([]byte) ([]byte, error)) ([]byte, error) {
	if !c.Session() {
		return handle(c.Envelope)
	}
	var out []byte
	for i, step := range c.Steps {
		b, err := handle(step)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", c.Name, i+1, err)
		}
		if i > 0 {
			out = append(out, '\n')
		}
		out = append(out, b...)
	}
	return out, nil
}

// Dir returns the corpus directory of the orrery module.
func Dir(ctx context.Context) (string, error) {
	root, err := build.Root(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testdata", "corpus"), nil
}

// Load reads every case under dir, sorted by name.
func Load(dir string) ([]Case, error) {
	var cases []Case
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".json" && filepath.Ext(path) != ".jsonl") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		c := Case{Name: filepath.ToSlash(rel), Want: filepath.Base(filepath.Dir(path)), Envelope: b}
		if c.Session() {
			for line := range strings.Lines(string(b)) {
				if line = strings.TrimSpace(line); line != "" {
					c.Steps = append(c.Steps, []byte(line))
				}
			}
			if len(c.Steps) == 0 {
				return fmt.Errorf("corpus: %s: an empty session", rel)
			}
		}
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("corpus: no cases in %s", dir)
	}
	slices.SortFunc(cases, func(a, b Case) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return cases, nil
}

// Check reports whether resp, c's answer, is what c expects: version 1
// and a response, or an error with the expected code; of a session, a
// response on every line but the last, and the expectation on the last.
func (c Case) Check(resp []byte) error {
	if !c.Session() {
		return c.check(resp)
	}
	lines := strings.Split(string(resp), "\n")
	if len(lines) != len(c.Steps) {
		return fmt.Errorf("%s: %d answers to %d lines", c.Name, len(lines), len(c.Steps))
	}
	for i, l := range lines {
		step := Case{Name: fmt.Sprintf("%s:%d", c.Name, i+1), Want: "ok"}
		if i == len(lines)-1 {
			step.Want = c.Want
		}
		if err := step.check([]byte(l)); err != nil {
			return err
		}
	}
	return nil
}

func (c Case) check(resp []byte) error {
	var r struct {
		Version  int             `json:"version"`
		Response json.RawMessage `json:"response"`
		Error    *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return fmt.Errorf("%s: response is not JSON: %v", c.Name, err)
	}
	if r.Version != 1 {
		return fmt.Errorf("%s: version %d", c.Name, r.Version)
	}
	switch {
	case (r.Response == nil) == (r.Error == nil):
		return fmt.Errorf("%s: want exactly one of response and error: %.200s", c.Name, resp)
	case c.Want == "ok" && r.Error != nil:
		return fmt.Errorf("%s: want a response, got error %s: %.300s", c.Name, r.Error.Code, resp)
	case c.Want != "ok" && r.Error == nil:
		return fmt.Errorf("%s: want error %s, got a response", c.Name, c.Want)
	case c.Want != "ok" && r.Error.Code != c.Want:
		return fmt.Errorf("%s: want error %s, got %s: %.300s", c.Name, c.Want, r.Error.Code, resp)
	}
	return nil
}
