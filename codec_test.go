package orrery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		line, col := position(data, se.Offset)
		return fmt.Sprintf("%v (byte %d, line %d, column %d)", se, se.Offset, line, col)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := position(data, int64(len(data)))
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
		got := syntaxCheck(data)
		if want := decoderSyntax(data); got == nil || got.Message != want {
			t.Errorf("%s: syntax error %v, encoding/json's %q", what, got, want)
		}
		return
	}
	if checkKeys(data, typ, nil) != nil {
		return
	}
	mine, theirs := reflect.New(typ), reflect.New(typ)
	if err := unmarshal(data, mine.Interface()); err != nil {
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
	got, gerr := marshal(v)
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
	out, _ := marshal(resp)
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

// TestCodecStrings: string escapes and float formats at their edges, both
// ways.
func TestCodecStrings(t *testing.T) {
	for _, s := range []string{"", "a", "<&>", "\u2028\u2029", "\x00\x1f\b\f\n\r\t\"\\/", "\xff\xc3(", "é😀", "\xed\xa0\x80"} {
		sameEncoding(t, fmt.Sprintf("%q", s), s)
		raw := appendJSONString(nil, s)
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || unquote(raw) != want {
			t.Errorf("unquote(%s) = %q, encoding/json %q (%v)", raw, unquote(raw), want, err)
		}
	}
	for _, raw := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83d\u0041"`, `"\udc00\ud83d\ude00"`, `"\u00e9\/\""`, "\"\xff\""} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil || unquote([]byte(raw)) != want {
			t.Errorf("unquote(%s) = %q, encoding/json %q (%v)", raw, unquote([]byte(raw)), want, err)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99e-7, 1e20, 1e21, 123456789e13, 5e-324, 1.7976931348623157e308, 0.1, 1.0 / 3} {
		sameEncoding(t, fmt.Sprint(f), f)
		sameEncoding(t, fmt.Sprint(f), float32(f))
	}
}

// TestCodecIntegralFloats: integral float64s, which the encoder writes as
// integers below 1e15, are written as encoding/json writes them, at the
// edge and past it, with either sign.
func TestCodecIntegralFloats(t *testing.T) {
	fs := []float64{0, math.Copysign(0, -1), 1e15, 1e15 - 1, 1e15 + 1, 1 << 53, 1<<53 + 2, 1e20, 1e21}
	for i := range 2000 {
		fs = append(fs, float64(i), float64(i*i*i*i)+0.5, math.Ldexp(1, i%64), math.Pow(10, float64(i%22)), float64(i)*12345678901.0)
	}
	for _, f := range fs {
		for _, x := range []float64{f, -f, math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1))} {
			got, _ := marshal(x)
			if want, _ := json.Marshal(x); !bytes.Equal(got, want) {
				t.Errorf("%v: codec %s, encoding/json %s", x, got, want)
			}
		}
	}
}

// TestParseNumbers: the decoder's number parsing is strconv's, bit for
// bit, on literals of every length around its exact path's (15 digits,
// 18 for integers), with and without a sign, a fraction or an exponent.
func TestParseNumbers(t *testing.T) {
	var lits []string
	digits := "9071845362"
	for n := 1; n <= 20; n++ {
		for p := 0; p <= n; p++ {
			for off := range 10 {
				d := strings.Repeat(digits[off:]+digits[:off], 3)[:n]
				lit := d
				if p > 0 {
					lit = d[:n-p] + "." + d[n-p:]
					if n == p {
						lit = "0." + d
					}
				} else if len(d) > 1 && d[0] == '0' {
					lit = d[1:]
				}
				lits = append(lits, lit, "-"+lit, lit+"e3", lit+"E-7")
			}
		}
	}
	lits = append(lits, "0", "-0", "0.0", "-0.0", "0.000001", "123456789012345", "1234567890123456", "999999999999999999", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "0.1", "0.2", "0.3")
	for _, lit := range lits {
		if !json.Valid([]byte(lit)) {
			continue
		}
		for _, bits := range []int{32, 64} {
			got, gerr := parseFloat([]byte(lit), bits)
			want, werr := strconv.ParseFloat(lit, bits)
			if math.Float64bits(got) != math.Float64bits(want) || (gerr == nil) != (werr == nil) {
				t.Errorf("parseFloat(%s, %d) = %v, %v; strconv %v, %v", lit, bits, got, gerr, want, werr)
			}
		}
		got, gerr := parseInt([]byte(lit))
		want, werr := strconv.ParseInt(lit, 10, 64)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("parseInt(%s) = %v, %v; strconv %v, %v", lit, got, gerr, want, werr)
		}
	}
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
				if err := unmarshal(e.Request, reflect.New(o.req).Interface()); err != nil {
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
				marshal(resp)
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
			{"syntax", func() { syntaxCheck(env) }},
			{"keys", func() { checkKeys(e.Request, o.req, nil) }},
			{"decode", func() { unmarshal(e.Request, req.Interface()) }},
			{"run", func() { o.run(ctx, nil, e.Request) }},
			{"encode", func() { marshal(resp) }},
		} {
			b.Run(name+"/"+phase.name, func(b *testing.B) {
				for b.Loop() {
					phase.f()
				}
			})
		}
	}
}

// TestSyntaxMatchesEncodingJSON: on every prefix of small envelopes, and
// on each with one byte replaced or inserted anywhere by one of the bytes
// JSON's grammar turns on, syntaxCheck accepts what json.Valid accepts and
// words its refusal as encoding/json's Decoder did.
func TestSyntaxMatchesEncodingJSON(t *testing.T) {
	envs := []string{
		`{"op": "cassini.link", "request": {"capacity_gbps": 5e1, "jobs": [{"id": "a\u00e9\n", "phases": [{"ms": -0.5E+2, "gbps": 40}], "x": [true, false, null, [], {}]}]}}`,
		"[1, 2.5e-3, \"\\\"\\/\\b\"]",
		`-12`,
		` {"a":{"b":[[{}]]}} `,
	}
	alphabet := []byte("{}[]:,\"\\ \t-+0123.eEtrufalsn\x00\x1f\xffx/'")
	n := 0
	check := func(data []byte) {
		n++
		got := syntaxCheck(data)
		if json.Valid(data) {
			if got != nil {
				t.Errorf("%q: %v, but json.Valid accepts it", data, got)
			}
			return
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return // "empty request", decided before
		}
		if want := decoderSyntax(data); got == nil || got.Message != want {
			t.Errorf("%q: %v, encoding/json %q", data, got, want)
		}
	}
	for _, env := range envs {
		b := []byte(env)
		for i := 0; i <= len(b); i++ {
			check(b[:i])
			for _, c := range alphabet {
				if i < len(b) {
					check(slices.Concat(b[:i], []byte{c}, b[i+1:]))
				}
				check(slices.Concat(b[:i], []byte{c}, b[i:]))
			}
		}
	}
	check([]byte(strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting)))
	check([]byte(strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)))
	check([]byte(strings.Repeat(`{"a":`, maxNesting+1)))
	t.Logf("%d inputs", n)
}

// TestCodecConcurrent: calls on several goroutines, each the first to
// meet some types, answer what one goroutine answers (the type cache is
// shared; go test -race checks it).
func TestCodecConcurrent(t *testing.T) {
	corpus, err := malformed.Load(filepath.Join("testdata", "corpus", "ok"))
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, len(corpus.Files))
	for i, f := range corpus.Files {
		want[i] = Handle(context.Background(), f.Envelope)
	}
	schemaTypes.Clear()
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
		if sc := (syntaxScanner{data: env, record: true}); sc.check() == nil {
			if _, _, ok := plainEnvelope(&sc); ok {
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
