package orrery_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orrery/orrery"
)

// The malformed-input generator (issue 13, "how it is judged"): every
// field of every request in testdata/corpus/ok, through Handle (and a
// Session for the stateful ops), replaced by each of badValues, plus
// structural damage of each envelope. No case may panic, hang or answer an
// internal error; each answers a typed error or a valid response, and a
// stateful op that fails leaves its session as it was.

var writeSeeds = flag.Bool("write-seeds", false, "write a sample of the generated malformed envelopes to fuzz/testdata/fuzz/FuzzHandle")

// badValues are the raw JSON (or not quite JSON) values each field gets.
var badValues = []string{
	`NaN`, `Infinity`, `-Infinity`, `"NaN"`, `1e309`, `-1e309`, `-0`, `1e-320`, `-1e-320`, `1e-400`,
	`null`, `true`, `"x"`, `[]`, `{}`, `[null]`, `-1`, `-2`, `0`, `1e300`, `9223372036854775808`,
	`1180591620717411303424`, `0.5`, `"` + strings.Repeat("a", 2000) + `"`, "\"\xff\xfe\"", `"\ud800"`,
}

// node is a decoded JSON value that re-encodes with a mutation at one path.
type node struct {
	raw  json.RawMessage // a scalar, as written
	obj  []field         // an object, in order
	arr  []*node         // an array
	kind byte            // 's' scalar, 'o' object, 'a' array
}

type field struct {
	key string
	val *node
}

func parse(t *testing.T, data []byte) *node {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var build func(v any) *node
	build = func(v any) *node {
		switch v := v.(type) {
		case map[string]any:
			n := &node{kind: 'o'}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				n.obj = append(n.obj, field{k, build(v[k])})
			}
			return n
		case []any:
			n := &node{kind: 'a'}
			for _, e := range v {
				n.arr = append(n.arr, build(e))
			}
			return n
		default:
			raw, _ := json.Marshal(v)
			return &node{kind: 's', raw: raw}
		}
	}
	return build(v)
}

// paths returns the path of every value under n (the root is ""), the
// first element of each array only: the other elements are of the same
// schema field.
func (n *node) paths(prefix string, out *[]string) {
	switch n.kind {
	case 'o':
		for _, f := range n.obj {
			p := prefix + "." + f.key
			*out = append(*out, p)
			f.val.paths(p, out)
		}
	case 'a':
		if len(n.arr) > 0 {
			p := prefix + "[0]"
			*out = append(*out, p)
			n.arr[0].paths(p, out)
		}
	}
}

// encode writes n with the value at path replaced by the raw bytes with.
func (n *node) encode(b *bytes.Buffer, at, path, with string) {
	if at == path {
		b.WriteString(with)
		return
	}
	switch n.kind {
	case 's':
		b.Write(n.raw)
	case 'o':
		b.WriteByte('{')
		for i, f := range n.obj {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.key)
			b.Write(k)
			b.WriteByte(':')
			f.val.encode(b, at+"."+f.key, path, with)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.encode(b, fmt.Sprintf("%s[%d]", at, i), path, with)
		}
		b.WriteByte(']')
	}
}

// damaged returns structural damage of env: truncations, a trailing
// value, a duplicated key, deep nesting, invalid UTF-8 and a 2 MB string.
func damaged(env []byte) [][]byte {
	var out [][]byte
	for _, f := range []float64{0.1, 0.5, 0.9} {
		out = append(out, env[:int(f*float64(len(env)))])
	}
	out = append(out,
		append(append([]byte{}, env...), []byte(` {}`)...),
		append([]byte(`{"op":"x",`), env[1:]...),
		bytes.Replace(env, []byte(`{`), []byte(`{"request":{},`), 1),
		bytes.Replace(env, []byte(`"request":`), []byte(`"request":`+strings.Repeat("[", 100000)), 1),
		bytes.Replace(env, []byte(`"`), []byte("\"\xc3\x28"), 3),
		bytes.Replace(env, []byte(`"request":{`), []byte(`"request":{"id":"`+strings.Repeat("\\u00e9", 1<<19)+`",`), 1),
	)
	return out
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

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
	}
	return r.Error == nil
}

// corpus returns the envelopes of testdata/corpus/ok: single requests, and
// sessions (.jsonl) as sequences.
func corpus(t *testing.T) (single [][]byte, sessions [][][]byte, names []string) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "ok", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".jsonl") {
			var seq [][]byte
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
					seq = append(seq, append([]byte{}, l...))
				}
			}
			sessions = append(sessions, seq)
			continue
		}
		single = append(single, bytes.TrimSpace(data))
		names = append(names, filepath.Base(f))
	}
	return single, sessions, names
}

// callCtx bounds one generated call: a mutation may remove a request's own
// limits (budget, time_limit_ms), and a solve answers its best by then.
func callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Second)
}

// unseenPaths are the paths of envelope root whose op and schema path
// (indices folded) are not in seen yet; it adds them, so that each field
// of each op is mutated once.
func unseenPaths(root *node, seen map[string]bool) []string {
	var op string
	for _, f := range root.obj {
		if f.key == "op" {
			json.Unmarshal(f.val.raw, &op)
		}
	}
	var ps, out []string
	root.paths("", &ps)
	for _, p := range ps {
		key := op + indexRE.ReplaceAllString(p, "[]")
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out
}

func TestMalformedInputs(t *testing.T) {
	single, sessions, names := corpus(t)
	seen := map[string]bool{} // op + schema path: each mutated once
	var seeds [][]byte
	n := 0
	for i, env := range single {
		root := parse(t, env)
		for _, p := range unseenPaths(root, seen) {
			for vi, v := range badValues {
				var b bytes.Buffer
				root.encode(&b, "", p, v)
				ctx, cancel := callCtx()
				verdict(t, fmt.Sprintf("%s %s = %.40s", names[i], p, v), orrery.Handle(ctx, b.Bytes()))
				cancel()
				n++
				if vi%9 == 0 && len(b.Bytes()) < 1024 {
					seeds = append(seeds, append([]byte{}, b.Bytes()...))
				}
			}
		}
		for k, d := range damaged(env) {
			ctx, cancel := callCtx()
			verdict(t, fmt.Sprintf("%s damage %d", names[i], k), orrery.Handle(ctx, d))
			cancel()
			n++
		}
	}
	for _, seq := range sessions {
		n += sessionCases(t, seq)
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
func sessionCases(t *testing.T, seq [][]byte) int {
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
	want := run(seq)
	seen := map[string]bool{}
	n := 0
	for k, line := range seq {
		root := parse(t, line)
		for _, p := range unseenPaths(root, seen) {
			for _, v := range badValues {
				var b bytes.Buffer
				root.encode(&b, "", p, v)
				s := orrery.NewSession()
				for _, l := range seq[:k] {
					ctx, cancel := callCtx()
					s.Handle(ctx, l)
					cancel()
				}
				ctx, cancel := callCtx()
				what := fmt.Sprintf("session line %d %s = %.40s", k, p, v)
				ok := verdict(t, what, s.Handle(ctx, b.Bytes()))
				cancel()
				n++
				if !ok {
					for j := k; j < len(seq); j++ {
						ctx, cancel := callCtx()
						got := s.Handle(ctx, seq[j])
						cancel()
						if !bytes.Equal(got, want[j]) {
							t.Errorf("%s: the session changed: line %d answers %.200s, want %.200s", what, j, got, want[j])
							break
						}
					}
				}
				s.Close()
			}
		}
	}
	return n
}
