// Package corpus reads the request corpus (testdata/corpus) that every host
// of orrery must answer byte for byte the same, and checks an answer
// against the expectation the corpus encodes in its directory names.
//
// Each file is one request envelope, sent as is (it may be malformed on
// purpose). The directory says what must come back: "ok" a response, any
// other name an error with that code ("malformed_json",
// "invalid_argument", "unknown_op", "limit_exceeded").
package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/orrery/orrery/bindings/internal/build"
)

// Case is one request of the corpus.
type Case struct {
	Name     string // path relative to the corpus root, with forward slashes
	Want     string // "ok" or the expected error code
	Envelope []byte
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
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
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
		cases = append(cases, Case{Name: filepath.ToSlash(rel), Want: filepath.Base(filepath.Dir(path)), Envelope: b})
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

// Check reports whether resp, a response envelope, is what c expects:
// version 1 and a response, or an error with the expected code.
func (c Case) Check(resp []byte) error {
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
