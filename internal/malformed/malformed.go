// Package malformed generates malformed request envelopes from valid ones,
// the generator of issue 13 that every entry point and host of orrery must
// survive: natively (orrery.Handle, orrery.Session), through the
// WebAssembly module (bindings/go) and wherever else an envelope arrives.
//
// From a corpus of valid envelopes (testdata/corpus/ok: .json files, one
// envelope each, and .jsonl sessions, one envelope a line), it makes:
//
//   - mutations: every schema field of every op (the first element of
//     each array only, and each op's field once over the corpus) replaced
//     by each of [BadValues]: non-finite and out-of-range numbers, wrong
//     types, invalid UTF-8, lone surrogates, a long string;
//   - damages ([Damaged]): truncations, a trailing value, a duplicated
//     key, deep nesting, invalid UTF-8 and a multi-megabyte string.
//
// The cases are deterministic: the same corpus gives the same cases, in
// the same order, on every run and host.
package malformed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// BadValues returns the raw JSON (or not quite JSON) values each field
// gets, in order.
func BadValues() []string {
	return []string{
		`NaN`, `Infinity`, `-Infinity`, `"NaN"`, `1e309`, `-1e309`, `-0`, `1e-320`, `-1e-320`, `1e-400`,
		`null`, `true`, `"x"`, `[]`, `{}`, `[null]`, `-1`, `-2`, `0`, `1e300`, `9223372036854775808`,
		`1180591620717411303424`, `0.5`, `"` + strings.Repeat("a", 2000) + `"`, "\"\xff\xfe\"", `"\ud800"`,
	}
}

// Node is a decoded JSON value that re-encodes with a mutation at one
// path. Object keys are kept sorted, so the encoding does not depend on
// the input's key order.
type Node struct {
	raw  json.RawMessage // a scalar, as written
	obj  []field         // an object, keys sorted
	arr  []*Node         // an array
	kind byte            // 's' scalar, 'o' object, 'a' array
}

type field struct {
	key string
	val *Node
}

// Parse decodes one JSON value (numbers kept as written).
func Parse(data []byte) (*Node, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return build(v), nil
}

func build(v any) *Node {
	switch v := v.(type) {
	case map[string]any:
		n := &Node{kind: 'o'}
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
		n := &Node{kind: 'a'}
		for _, e := range v {
			n.arr = append(n.arr, build(e))
		}
		return n
	default:
		raw, _ := json.Marshal(v)
		return &Node{kind: 's', raw: raw}
	}
}

// Paths returns the path of every value under n but n itself (".key",
// "[0]" joined: ".request.jobs[0].id"), the first element of each array
// only: the other elements are of the same schema field.
func (n *Node) Paths() []string {
	var out []string
	n.paths("", &out)
	return out
}

func (n *Node) paths(prefix string, out *[]string) {
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

// Encode returns n encoded with the value at path replaced by the raw
// bytes with; a path that is not in n (such as "-") changes nothing.
func (n *Node) Encode(path, with string) []byte {
	var b bytes.Buffer
	n.encode(&b, "", path, with)
	return b.Bytes()
}

func (n *Node) encode(b *bytes.Buffer, at, path, with string) {
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

// op returns the envelope's "op", or "".
func (n *Node) op() string {
	var op string
	for _, f := range n.obj {
		if f.key == "op" && f.val.kind == 's' {
			json.Unmarshal(f.val.raw, &op)
		}
	}
	return op
}

// Damaged returns the structural damages of env, in order: truncations at
// 10, 50 and 90%, a trailing value, a duplicated key, a second request,
// 100000 levels of nesting, invalid UTF-8 and a 3 MB string id.
func Damaged(env []byte) [][]byte {
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

// unseenPaths are the paths of envelope root whose op and schema path
// (indices folded) are not in seen yet; it adds them, so that each field
// of each op is mutated once.
func unseenPaths(root *Node, seen map[string]bool) []string {
	op := root.op()
	var out []string
	for _, p := range root.Paths() {
		key := op + indexRE.ReplaceAllString(p, "[]")
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out
}

// File is one valid envelope of the corpus.
type File struct {
	Name     string // base name
	Envelope []byte // trimmed of surrounding space
}

// Session is one .jsonl file of the corpus.
type Session struct {
	Name  string
	Lines [][]byte // the envelopes, in order, blank lines dropped
}

// Corpus is the valid envelopes the cases derive from.
type Corpus struct {
	Files    []File    // sorted by name
	Sessions []Session // sorted by name
}

// Load reads every file of dir (testdata/corpus/ok): a .jsonl file is a
// Session, any other a File.
func Load(dir string) (Corpus, error) {
	var c Corpus
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return c, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return c, err
		}
		if !strings.HasSuffix(f, ".jsonl") {
			c.Files = append(c.Files, File{filepath.Base(f), bytes.TrimSpace(data)})
			continue
		}
		s := Session{Name: filepath.Base(f)}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				s.Lines = append(s.Lines, append([]byte{}, l...))
			}
		}
		if err := sc.Err(); err != nil {
			return c, fmt.Errorf("%s: %w", f, err)
		}
		c.Sessions = append(c.Sessions, s)
	}
	return c, nil
}

// Case is one generated envelope.
type Case struct {
	Name     string // what it is, for messages: file, path and value, or damage
	Envelope []byte
	Value    int // the index in BadValues of a mutation; -1 for a damage
	Line     int // the line mutated, of a session case; 0 otherwise
}

// Cases yields the cases of the corpus's Files: for each file in order,
// the mutations of its fields not mutated yet in an earlier file of the
// same op (each path with every bad value in turn), then its damages.
// It stops at the first file that is not JSON, yielding that error.
func (c Corpus) Cases() iter.Seq2[Case, error] {
	return func(yield func(Case, error) bool) {
		seen := map[string]bool{}
		bad := BadValues()
		for _, f := range c.Files {
			root, err := Parse(f.Envelope)
			if err != nil {
				yield(Case{Name: f.Name}, fmt.Errorf("%s: %w", f.Name, err))
				return
			}
			for _, p := range unseenPaths(root, seen) {
				for vi, v := range bad {
					if !yield(Case{fmt.Sprintf("%s %s = %.40s", f.Name, p, v), root.Encode(p, v), vi, 0}, nil) {
						return
					}
				}
			}
			for k, d := range Damaged(f.Envelope) {
				if !yield(Case{fmt.Sprintf("%s damage %d", f.Name, k), d, -1, 0}, nil) {
					return
				}
			}
		}
	}
}

// Cases yields the mutations of s: for each line in order, each of its
// paths not mutated on an earlier line of the same op, with every bad
// value in turn. A host replays s.Lines[:Line] on a fresh session, then
// the case's envelope (and, to check the session, the rest of s.Lines).
func (s Session) Cases() iter.Seq2[Case, error] {
	return func(yield func(Case, error) bool) {
		seen := map[string]bool{}
		bad := BadValues()
		for k, line := range s.Lines {
			root, err := Parse(line)
			if err != nil {
				yield(Case{Name: s.Name, Line: k}, fmt.Errorf("%s line %d: %w", s.Name, k, err))
				return
			}
			for _, p := range unseenPaths(root, seen) {
				for vi, v := range bad {
					if !yield(Case{fmt.Sprintf("%s line %d %s = %.40s", s.Name, k, p, v), root.Encode(p, v), vi, k}, nil) {
						return
					}
				}
			}
		}
	}
}
