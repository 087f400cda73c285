package orrery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery/internal/codec"
	"github.com/orrery/orrery/internal/malformed"
)

// The codec (codec.go, syntaxCheck) replaced encoding/json in the request
// and response path; encoding/json is the oracle here. Over the corpus and
// every malformed case generated from it, the two must agree: the same
// syntax error message, the same decoded request where the key scan
// accepts one, and byte-identical responses and error envelopes.

// decoderSyntax is how the package described a syntax error while it
// decoded with encoding/json (json.Valid refused data).
func decoderSyntax(data []byte) string {
	d := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	err := d.Decode(&raw)
	if err == nil {
		return "trailing data after the request object"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := codec.Position(data, se.Offset)
		return fmt.Sprintf("%v (byte %d, line %d, column %d)", se, se.Offset, line, col)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := codec.Position(data, int64(len(data)))
		return fmt.Sprintf("unexpected end of the request (byte %d, line %d, column %d)", len(data), line, col)
	}
	return err.Error()
}

// sameDecoding checks data decoded into a new t by the codec and by
// encoding/json: the same syntax error, or, where the key scan accepts
// data, the same value.
func sameDecoding(t *testing.T, what string, data []byte, typ reflect.Type) {
	t.Helper()
	if len(bytes.TrimSpace(data)) == 0 {
		return
	}
	if !json.Valid(data) {
		got := codec.CheckSyntax(data)
		if want := decoderSyntax(data); got == nil || got.Message != want {
			t.Errorf("%s: syntax error %v, encoding/json's %q", what, got, want)
		}
		return
	}
	if codec.CheckKeys(data, typ, nil) != nil {
		return
	}
	mine, theirs := reflect.New(typ), reflect.New(typ)
	if err := codec.Unmarshal(data, mine.Interface()); err != nil {
		t.Errorf("%s: codec: %v", what, err)
		return
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(theirs.Interface()); err != nil {
		t.Errorf("%s: the key scan accepted what encoding/json refuses: %v", what, err)
		return
	}
	// DeepEqual first: cmp.Diff on the large requests, for every case,
	// costs half a minute; it explains a difference.
	if reflect.DeepEqual(theirs.Interface(), mine.Interface()) {
		return
	}
	if diff := cmp.Diff(theirs.Interface(), mine.Interface(), cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
		t.Errorf("%s: decoded (-encoding/json +codec):\n%s", what, diff)
	}
}

// sameEncoding checks that the codec encodes v as json.Marshal does.
func sameEncoding(t *testing.T, what string, v any) {
	t.Helper()
	got, gerr := codec.Marshal(v)
	want, werr := json.Marshal(v)
	if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
		t.Errorf("%s: codec %.300s (%v), encoding/json %.300s (%v)", what, got, gerr, want, werr)
	}
}

// check decodes env both ways, then its request, and, when run, runs it
// (on s for a stateful op) comparing the encodings of the answer.
func (c *codecCheck) check(t *testing.T, what string, env []byte, s *Session, run bool) {
	t.Helper()
	sameDecoding(t, what, env, reflect.TypeFor[envelope]())
	var e envelope
	if decode(env, &e) != nil {
		return
	}
	o, ok := lookup(e.Op)
	if !ok {
		return
	}
	sameDecoding(t, what+" request", e.Request, o.req)
	if !run || (o.Session && s == nil) {
		return
	}
	resp, err := o.run(context.Background(), s, e.Request)
	if err != nil {
		sameEncoding(t, what+" error", reply{Version: Version, Op: e.Op, Error: asError(err)})
		return
	}
	c.responses++
	sameEncoding(t, what+" response", resp)
	out, _ := codec.Marshal(resp)
	sameEncoding(t, what+" envelope", reply{Version: Version, Op: e.Op, Response: out})
}

type codecCheck struct{ responses int }

func TestCodecMatchesEncodingJSON(t *testing.T) {
	corpus, err := malformed.Load(filepath.Join("testdata", "corpus", "ok"))
	if err != nil {
		t.Fatal(err)
	}
	var c codecCheck
	for _, f := range corpus.Files {
		c.check(t, f.Name, f.Envelope, nil, true)
	}
	for _, seq := range corpus.Sessions {
		s := NewSession()
		for i, l := range seq.Lines {
			c.check(t, fmt.Sprintf("%s:%d", seq.Name, i+1), l, s, true)
		}
		s.Close()
	}
	n := 0
	for mc, err := range corpus.Cases() {
		if err != nil {
			t.Fatal(err)
		}
		c.check(t, mc.Name, mc.Envelope, nil, false)
		n++
	}
	if c.responses < len(corpus.Files) || n < 1000 {
		t.Fatalf("%d responses, %d malformed cases: the corpus did not run", c.responses, n)
	}
	t.Logf("%d files, %d sessions, %d malformed cases, %d responses compared", len(corpus.Files), len(corpus.Sessions), n, c.responses)
}

// BenchmarkCodec: the codec against encoding/json on corpus requests and
// their responses, in one process:
//
//	go test -run '^$' -bench Codec .
func BenchmarkCodec(b *testing.B) {
	for _, name := range []string{"link_exact_three_jobs", "rank_loops_resolve_exact", "plan_small"} {
		env, err := os.ReadFile(filepath.Join("testdata", "corpus", "ok", name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		var e envelope
		if err := decode(env, &e); err != nil {
			b.Fatal(err)
		}
		o, _ := lookup(e.Op)
		resp, err := o.run(context.Background(), nil, e.Request)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/decode/codec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := codec.Unmarshal(e.Request, reflect.New(o.req).Interface()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/decode/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := json.NewDecoder(bytes.NewReader(e.Request))
				d.DisallowUnknownFields()
				if err := d.Decode(reflect.New(o.req).Interface()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/encode/codec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				codec.Marshal(resp)
			}
		})
		b.Run(name+"/encode/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				json.Marshal(resp)
			}
		})
	}
}

// BenchmarkHandlePhases splits a call into its phases (the syntax check,
// the key scan, decoding, the operation, encoding), to see where a host
// spends its time; run it natively and as WebAssembly (make wasm-test's
// wasirun) and compare:
//
//	go test -run '^$' -bench HandlePhases .
//	GOOS=wasip1 GOARCH=wasm go test -exec /tmp/wasirun -run '^$' -bench HandlePhases .
func BenchmarkHandlePhases(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"link_single_job", "link_exact_three_jobs", "rank_loops_resolve_exact", "plan_small"} {
		env, err := os.ReadFile(filepath.Join("testdata", "corpus", "ok", name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		var e envelope
		if err := decode(env, &e); err != nil {
			b.Fatal(err)
		}
		o, _ := lookup(e.Op)
		req := reflect.New(o.req)
		resp, err := o.run(ctx, nil, e.Request)
		if err != nil {
			b.Fatal(err)
		}
		for _, phase := range []struct {
			name string
			f    func()
		}{
			{"handle", func() { Handle(ctx, env) }},
			{"syntax", func() { codec.CheckSyntax(env) }},
			{"keys", func() { codec.CheckKeys(e.Request, o.req, nil) }},
			{"decode", func() { codec.Unmarshal(e.Request, req.Interface()) }},
			{"run", func() { o.run(ctx, nil, e.Request) }},
			{"encode", func() { codec.Marshal(resp) }},
		} {
			b.Run(name+"/"+phase.name, func(b *testing.B) {
				for b.Loop() {
					phase.f()
				}
			})
		}
	}
}

// TestCodecConcurrent: calls on several goroutines answer what one
// goroutine answers (the codec's type cache is shared; go test -race
// checks it, and internal/codec's TestConcurrentFirstUse has goroutines
// meet new types at once).
func TestCodecConcurrent(t *testing.T) {
	corpus, err := malformed.Load(filepath.Join("testdata", "corpus", "ok"))
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, len(corpus.Files))
	for i, f := range corpus.Files {
		want[i] = Handle(context.Background(), f.Envelope)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range corpus.Files {
				i := (k + g*len(corpus.Files)/4) % len(corpus.Files)
				if got := Handle(context.Background(), corpus.Files[i].Envelope); !bytes.Equal(got, want[i]) {
					t.Errorf("%s: goroutine %d answered %.200s, want %.200s", corpus.Files[i].Name, g, got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// FuzzCodecMatchesEncodingJSON: on any bytes, the codec and encoding/json
// agree (see sameDecoding), for the envelope and for its request.
//
//	go test -run '^$' -fuzz FuzzCodecMatchesEncodingJSON -fuzztime 60s .
func FuzzCodecMatchesEncodingJSON(f *testing.F) {
	corpus, err := malformed.Load(filepath.Join("testdata", "corpus", "ok"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range corpus.Files {
		f.Add(file.Envelope)
	}
	f.Fuzz(func(t *testing.T, env []byte) {
		var c codecCheck
		c.check(t, "fuzz", env, nil, false)
	})
}

// TestEnvelopeMatchesSteps: Handle opens the envelope in one scan
// (openEnvelope: the request a slice of it, its syntax checked with the
// envelope's) and decodes the request without checking its syntax again;
// on every corpus envelope, every malformed case and byte-level damage of
// a few envelopes, that gives what decoding the envelope and then its
// request, each checked in full, gives: the same error, or the same op
// and the same decoded request.
func TestEnvelopeMatchesSteps(t *testing.T) {
	var envs [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.json*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".jsonl") {
			envs = append(envs, bytes.Split(b, []byte("\n"))...)
		} else {
			envs = append(envs, b)
		}
	}
	corpus, err := malformed.Load(filepath.Join("testdata", "corpus", "ok"))
	if err != nil {
		t.Fatal(err)
	}
	for mc, err := range corpus.Cases() {
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, mc.Envelope)
	}
	alphabet := []byte("{}[]:,\"\\ -0.e\x00\xffx")
	for _, env := range []string{
		`{"op": "cassini.link", "request": {"capacity_gbps": 25, "jobs": [{"id": "solo", "phases": [{"ms": 20, "gbps": 40}]}]}}`,
		` { "request" : {"gpus": 4, "config": {"rounds": 4}, "jobs": []} , "op" : "shockwave.plan" } `,
		`{"op": "cassini\u002elink", "request": {}}`,
		`{"\u006fp": "shockwave.plan", "req\u0075est": {"gpus": 4, "c\u006enfig": {"r\u006funds": 4}, "jobs": []}}`,
	} {
		b := []byte(env)
		for i := 0; i <= len(b); i++ {
			envs = append(envs, b[:i])
			for _, c := range alphabet {
				if i < len(b) {
					envs = append(envs, slices.Concat(b[:i], []byte{c}, b[i+1:]))
				}
				envs = append(envs, slices.Concat(b[:i], []byte{c}, b[i:]))
			}
		}
	}
	same := func(env []byte, what string, want, got error) bool {
		t.Helper()
		if want == nil && got == nil {
			return true
		}
		if want == nil || got == nil {
			t.Errorf("%.200q: %s: %v, by steps %v", env, what, got, want)
			return false
		}
		if w, g := asError(want), asError(got); w.Code != g.Code || w.Field != g.Field || w.Message != g.Message {
			t.Errorf("%.200q: %s: %v, by steps %v", env, what, got, want)
			return false
		}
		return true
	}
	fast := 0
	for _, env := range envs {
		if n, members, err := codec.CheckObject(env); err == nil {
			if _, _, ok := plainEnvelope(n, members); ok {
				fast++
			}
		}
		var e envelope
		want := decode(env, &e)
		o, name, request, err := openEnvelope(env)
		if want == nil {
			if _, ok := lookup(e.Op); !ok {
				want = unknownOp(e.Op)
			}
		}
		if !same(env, "envelope", want, err) {
			continue
		}
		if want != nil {
			if name != e.Op {
				t.Errorf("%.200q: op %q, by steps %q", env, name, e.Op)
			}
			continue
		}
		if name != e.Op || o.Name != e.Op || !bytes.Equal(request, e.Request) {
			t.Errorf("%.200q: op %q (%q), request %.200q; by steps %q, %.200q", env, name, o.Name, request, e.Op, e.Request)
			continue
		}
		mine, theirs := reflect.New(o.req), reflect.New(o.req)
		if !same(env, "request", decode(e.Request, theirs.Interface()), decodeRequest(request, mine.Interface(), true)) {
			continue
		}
		if !reflect.DeepEqual(mine.Interface(), theirs.Interface()) {
			t.Errorf("%.200q: decoded request differs from the steps'", env)
		}
	}
	if fast < len(files) || fast == len(envs) {
		t.Errorf("%d of %d envelopes opened by the syntax scan alone: want most, not all", fast, len(envs))
	}
	t.Logf("%d envelopes, %d opened by the syntax scan alone", len(envs), fast)
}
