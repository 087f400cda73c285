package orrery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/orrery/orrery"
)

// reply is the response envelope, decoded strictly.
type reply struct {
	Version  int             `json:"version"`
	Op       string          `json:"op"`
	Response json.RawMessage `json:"response"`
	Error    *orrery.Error   `json:"error"`
}

// handle runs env through Handle and checks the envelope's contract: valid
// JSON, version 1, exactly one of response and error, an error with a known
// code (never "internal", which is a bug) and a message.
func handle(t testing.TB, env []byte) reply {
	t.Helper()
	out := orrery.Handle(context.Background(), env)
	if !json.Valid(out) {
		t.Fatalf("Handle(%.200q) returned invalid JSON %q", env, out)
	}
	var r reply
	d := json.NewDecoder(bytes.NewReader(out))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		t.Fatalf("Handle(%.200q) = %s: %v", env, out, err)
	}
	if r.Version != orrery.Version {
		t.Fatalf("Handle(%.200q): version %d", env, r.Version)
	}
	if (r.Response == nil) == (r.Error == nil) {
		t.Fatalf("Handle(%.200q) = %s: want exactly one of response and error", env, out)
	}
	if e := r.Error; e != nil {
		if !slices.Contains([]string{orrery.CodeMalformed, orrery.CodeInvalid, orrery.CodeUnknownOp, orrery.CodeLimit}, e.Code) || e.Message == "" {
			t.Fatalf("Handle(%.200q): error %+v", env, e)
		}
	}
	return r
}

// TestHandleHostile feeds Handle envelopes no client should send.
func TestHandleHostile(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for _, tc := range []struct {
		env  string
		code string // expected error code; "" for a response
	}{
		{``, orrery.CodeMalformed},
		{"  \n\t", orrery.CodeMalformed},
		{`null`, orrery.CodeMalformed},
		{`[]`, orrery.CodeMalformed},
		{`{}`, orrery.CodeUnknownOp},
		{`123`, orrery.CodeMalformed},
		{`"cassini.link"`, orrery.CodeMalformed},
		{`{"op": null}`, orrery.CodeMalformed},
		{`{"op": 1}`, orrery.CodeMalformed},
		{`{"op": "cassini.link"}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": null}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": "x"}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": []}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {}}`, orrery.CodeInvalid},
		{`{"op": "cassini.rank", "request": {}}`, orrery.CodeInvalid},
		{`{"op": "shockwave.nope", "request": {}}`, orrery.CodeUnknownOp},
		{`{"op": "CASSINI.LINK", "request": {}}`, orrery.CodeUnknownOp},
		{`{"op": "cassini.link", "request": {}, "extra": 1}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {}} {}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": ` + issueRequest + `}`, ""},
		{`{"request": ` + issueRequest + `, "op": "cassini.link"}`, ""},
		{`{"op": "cassini.rank", "op": "cassini.link", "request": ` + issueRequest + `}`, orrery.CodeMalformed},
		{`{"Op": "cassini.link", "request": ` + issueRequest + `}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": ` + deep + `}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"jobs": ` + deep + `}}`, orrery.CodeMalformed},
		{"{\"op\": \"\xff\xfe\", \"request\": {}}", orrery.CodeMalformed},
		{"\xef\xbb\xbf{\"op\": \"cassini.link\", \"request\": {}}", orrery.CodeMalformed},
		{"{\"op\": \"cassini.link\", \"request\": {\"capacity_gbps\": 50, \"jobs\": [{\"id\": \"\x00\xff\", \"phases\": [{\"ms\": 1, \"gbps\": 1}]}]}}", orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "\u0000\ud800", "phases": [{"ms": 1, "gbps": 1}]}]}}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "\ud83d\ude00\u0000", "phases": [{"ms": 1, "gbps": 1}]}]}}`, ""},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "\ude00\ud83d", "phases": [{"ms": 1, "gbps": 1}]}]}}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"capacity_gbps": null, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}], "samples": {"interval_ms": 1, "gbps": [1, null]}}]}}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 5e-324, "jobs": []}}`, orrery.CodeInvalid},
		{`{"op": "cassini.link", "request": {"capacity_gbps": -0, "jobs": []}}`, orrery.CodeInvalid},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "budget": -9223372036854775808, "max_perimeter_ticks": 9223372036854775807, "jobs": []}}`, orrery.CodeInvalid},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "budget": 9223372036854775808}}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "seed": -1}}`, orrery.CodeMalformed},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}], "restarts": 1000000000}}`, orrery.CodeInvalid},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "tick_ms": 1e-6, "jobs": [{"id": "a", "phases": [{"ms": 1e9, "gbps": 1}]}]}}`, orrery.CodeLimit},
		{`{"op": "cassini.rank", "request": {"links": [{"id": "l", "capacity_gbps": 1}], "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}], "candidates": [{"id": "c", "paths": null}]}}`, orrery.CodeMalformed},
		{`{"op": "cassini.rank", "request": {"links": [{"id": "l", "capacity_gbps": 1}], "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}], "candidates": [{"id": "c", "paths": {"a": null}}]}}`, orrery.CodeMalformed},
		{`{"op": "cassini.rank", "request": {"links": [{"id": "l", "capacity_gbps": 1}], "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}], "candidates": [{"id": "c", "paths": {"a": ["l", "l"]}}]}}`, orrery.CodeInvalid},
		{`{"op": "cassini.rank", "request": {"workers": 100000}}`, orrery.CodeInvalid},
	} {
		r := handle(t, []byte(tc.env))
		switch {
		case tc.code == "" && r.Error != nil:
			t.Errorf("Handle(%.120q): error %+v, want a response", tc.env, r.Error)
		case tc.code != "" && (r.Error == nil || r.Error.Code != tc.code):
			t.Errorf("Handle(%.120q): %+v / %s, want code %q", tc.env, r.Error, r.Response, tc.code)
		}
	}
}

// TestStrictKeys: what encoding/json lets through (a key in another case,
// a key given twice, which it resolves to the last) is an error naming the
// key's path.
func TestStrictKeys(t *testing.T) {
	const jobs = `"jobs": [{"id": "a", "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}]`
	for _, tc := range []struct{ env, field, msg string }{
		{`{"op": "cassini.link", "request": {"Capacity_Gbps": 50, ` + jobs + `}}`, "Capacity_Gbps", `the schema's is "capacity_gbps"`},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "capacity_gbps": 5, ` + jobs + `}}`, "capacity_gbps", "duplicate key"},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 30, "GBPS": 40}]}]}}`, "jobs[0].phases[0].GBPS", `the schema's is "gbps"`},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "jobs": [{"id": "a", "id": "b", "phases": [{"ms": 30, "gbps": 40}]}]}}`, "jobs[0].id", "duplicate key"},
		{`{"op": "cassini.rank", "request": {"links": [{"id": "l", "capacity_gbps": 1}], ` + jobs + `, "candidates": [{"id": "c", "paths": {"a": ["l"], "a": []}}]}}`, "candidates[0].paths.a", "duplicate key"},
		{`{"request": {}, "OP": "cassini.link"}`, "OP", `the schema's is "op"`},
		{`{"op": "cassini.link", "request": {"capacity_gbps": 50, "\u0063apacity_gbps": 5, ` + jobs + `}}`, "capacity_gbps", "duplicate key"},
		{`{"op": "cassini.rank", "request": {"links": [{"id": "l", "capacity_gbps": 1}], ` + jobs + `, "candidates": [{"id": "c", "paths": {` + manyPaths(100) + `, "j7": []}}]}}`, "candidates[0].paths.j7", "duplicate key"},
	} {
		r := handle(t, []byte(tc.env))
		if r.Error == nil || r.Error.Code != orrery.CodeMalformed || r.Error.Field != tc.field || !strings.Contains(r.Error.Message, tc.msg) {
			t.Errorf("Handle(%.100q): %+v, want malformed_json at %q (%s)", tc.env, r.Error, tc.field, tc.msg)
		}
	}
}

// manyPaths is n distinct "paths" entries.
func manyPaths(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"j%d": ["l"]`, i)
	}
	return b.String()
}

// TestStrictKeysAccepts: distinct keys, in a small object or a large map,
// escaped or not, are not duplicates.
func TestStrictKeysAccepts(t *testing.T) {
	var jobs strings.Builder
	for i := range 100 {
		fmt.Fprintf(&jobs, `{"id": "j%d", "phases": [{"ms": 1, "gbps": 1}]}, `, i)
	}
	env := `{"op": "cassini.rank", "request": {"links": [{"id": "l", "capacity_gbps": 1}], "jobs": [` + jobs.String() + `{"id": "a", "phases": [{"\u006ds": 1, "gbps": 1}]}], "candidates": [{"id": "c", "paths": {` + manyPaths(100) + `, "j\u0031": []}}]}}`
	if r := handle(t, []byte(env)); r.Error == nil || r.Error.Field != "candidates[0].paths.j1" {
		t.Fatalf("escaped duplicate in a large map: %+v", r.Error)
	}
	env = strings.Replace(env, `"j\u0031": []`, `"a": ["l"]`, 1)
	if r := handle(t, []byte(env)); r.Error != nil {
		t.Fatalf("distinct keys rejected: %+v", r.Error)
	}
}

func TestHandleUnknownOp(t *testing.T) {
	r := handle(t, []byte(`{"op": "cassini.lnk", "request": {}}`))
	if r.Op != "cassini.lnk" || r.Error.Code != orrery.CodeUnknownOp || r.Error.Field != "op" || !strings.Contains(r.Error.Message, "cassini.link") {
		t.Fatalf("got %+v", r)
	}
	_, err := orrery.Call(context.Background(), "nope", []byte(`{}`))
	if !errors.Is(err, orrery.ErrUnknownOp) {
		t.Fatalf("Call: err = %v, want ErrUnknownOp", err)
	}
}

// TestOps: the registry is sorted and complete, every op it lists is known
// to Handle, and each names a typed function of the package.
func TestOps(t *testing.T) {
	ops := orrery.Ops()
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.Name
	}
	want := []string{"cassini.agent.close", "cassini.agent.communicating", "cassini.agent.new", "cassini.agent.next",
		"cassini.agent.set_plan", "cassini.agent.stats", "cassini.link", "cassini.profile", "cassini.rank", "shockwave.plan", "shockwave.predict",
		"shockwave.scheduler.add", "shockwave.scheduler.close", "shockwave.scheduler.end_round", "shockwave.scheduler.last_plan",
		"shockwave.scheduler.new", "shockwave.scheduler.observe", "shockwave.scheduler.progress", "shockwave.scheduler.remove", "shockwave.scheduler.resolve",
		"shockwave.scheduler.schedule"}
	if !slices.IsSorted(names) || !slices.Equal(names, want) {
		t.Fatalf("Ops() = %v, want %v", names, want)
	}
	for _, op := range ops {
		r := handle(t, []byte(`{"op": "`+op.Name+`", "request": {}}`))
		if r.Error != nil && r.Error.Code == orrery.CodeUnknownOp {
			t.Errorf("listed op %q is unknown to Handle", op.Name)
		}
		if op.Func == "" || op.Summary == "" {
			t.Errorf("op %q: no function or summary", op.Name)
		}
	}
}

// TestTypedEqualsJSON: the typed function and the JSON op give the same
// answer, and the same error, for every request of the corpus.
func TestTypedEqualsJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	typed := map[string]func(ctx context.Context, req []byte) (any, error){
		"cassini.link":      typedCall(orrery.Link),
		"cassini.profile":   typedCall(orrery.Profile),
		"cassini.rank":      typedCall(orrery.Rank),
		"shockwave.plan":    typedCall(orrery.Plan),
		"shockwave.predict": typedCall(orrery.Predict),
	}
	checked := 0
	for _, f := range files {
		env, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Op      string          `json:"op"`
			Request json.RawMessage `json:"request"`
		}
		if json.Unmarshal(env, &e) != nil || typed[e.Op] == nil {
			continue
		}
		var probe map[string]any
		if json.Unmarshal(e.Request, &probe) != nil {
			continue // not decodable into the typed request: nothing to compare
		}
		want, werr := orrery.Call(context.Background(), e.Op, e.Request)
		if errors.Is(werr, orrery.ErrMalformed) {
			continue // bytes the typed call never sees
		}
		resp, gerr := typed[e.Op](context.Background(), e.Request)
		if gerr == errSkip {
			t.Errorf("%s: the strict decoder accepts what encoding/json rejects", f)
			continue
		}
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("%s: JSON op error %v, typed error %v", f, werr, gerr)
			continue
		}
		if werr == nil {
			got, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: typed answer differs from the JSON op's:\n%s\n%s", f, got, want)
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d corpus requests compared", checked)
	}
}

// errSkip marks a request encoding/json cannot decode.
var errSkip = errors.New("skip")

// typedCall decodes the request with encoding/json, as a Go caller's values
// would be, and calls the typed function.
func typedCall[Req, Resp any](f func(context.Context, Req) (Resp, error)) func(context.Context, []byte) (any, error) {
	return func(ctx context.Context, data []byte) (any, error) {
		var req Req
		d := json.NewDecoder(bytes.NewReader(data))
		d.DisallowUnknownFields()
		if err := d.Decode(&req); err != nil {
			return nil, errSkip
		}
		return f(ctx, req)
	}
}

func TestRequestTooLarge(t *testing.T) {
	big := make([]byte, orrery.MaxRequestBytes+1)
	for i := range big {
		big[i] = ' '
	}
	_, err := orrery.Call(context.Background(), "cassini.link", big)
	var we *orrery.Error
	if !errors.As(err, &we) || we.Code != orrery.CodeLimit || !errors.Is(err, orrery.ErrLimit) {
		t.Fatalf("Call: err = %v, want limit_exceeded", err)
	}
	if r := handle(t, big); r.Error.Code != orrery.CodeLimit {
		t.Fatalf("Handle: %+v, want limit_exceeded", r.Error)
	}
}

// TestDeterministic: the same request gives the same bytes, however many
// times and workers, and from concurrent callers.
func TestDeterministic(t *testing.T) {
	envs := [][]byte{
		[]byte(`{"op": "cassini.link", "request": ` + issueRequest + `}`),
		[]byte(`{"op": "cassini.rank", "request": {"workers": 1, "links": [{"id": "l1", "capacity_gbps": 50}, {"id": "l2", "capacity_gbps": 50}], "jobs": [{"id": "a", "phases": [{"ms": 24, "gbps": 40}, {"ms": 48, "gbps": 0}]}, {"id": "b", "phases": [{"ms": 30, "gbps": 40}, {"ms": 30, "gbps": 0}]}, {"id": "c", "phases": [{"ms": 10, "gbps": 40}, {"ms": 26, "gbps": 5}]}], "candidates": [{"id": "x", "paths": {"a": ["l1"], "b": ["l1", "l2"], "c": ["l2"]}}, {"id": "y", "paths": {"a": ["l1", "l2"], "b": ["l1"], "c": ["l2"]}}, {"id": "z", "paths": {"a": ["l2"], "b": ["l2"], "c": ["l2"]}}]}}`),
	}
	for _, env := range envs {
		first := orrery.Handle(context.Background(), env)
		if r := handle(t, env); r.Error != nil {
			t.Fatalf("%+v", r.Error)
		}
		for range 3 {
			if again := orrery.Handle(context.Background(), env); !bytes.Equal(first, again) {
				t.Fatalf("second call differs:\n%s\n%s", first, again)
			}
		}
		if bytes.Contains(env, []byte(`"workers": 1`)) {
			for _, w := range []string{`"workers": 2`, `"workers": 4`, `"workers": 0`} {
				env4 := bytes.Replace(env, []byte(`"workers": 1`), []byte(w), 1)
				if out := orrery.Handle(context.Background(), env4); !bytes.Equal(first, out) {
					t.Fatalf("%s differs from 1 worker:\n%s\n%s", w, first, out)
				}
			}
		}
		var wg sync.WaitGroup
		outs := make([][]byte, 4)
		for i := range outs {
			wg.Go(func() { outs[i] = orrery.Handle(context.Background(), env) })
		}
		wg.Wait()
		for _, out := range outs {
			if !bytes.Equal(first, out) {
				t.Fatalf("concurrent call differs:\n%s\n%s", first, out)
			}
		}
	}
}

// TestErrorJSON: the error object's JSON form, with and without a field.
func TestErrorJSON(t *testing.T) {
	r := handle(t, []byte(`{"op": "cassini.link", "request": {"capacity_gbps": -1}}`))
	out, _ := json.Marshal(r.Error)
	if !strings.HasPrefix(string(out), `{"code":"invalid_argument","field":"capacity_gbps","message":"`) {
		t.Fatalf("error JSON %s", out)
	}
	r = handle(t, []byte(`{"op": "cassini.link", "request": {`))
	out, _ = json.Marshal(r.Error)
	if strings.Contains(string(out), `"field"`) || r.Error.Error() != r.Error.Message {
		t.Fatalf("error without a field: %s / %q", out, r.Error.Error())
	}
	e := &orrery.Error{Code: orrery.CodeInvalid, Field: "jobs[0].id", Message: "empty id"}
	if e.Error() != "jobs[0].id: empty id" || !errors.Is(e, orrery.ErrInvalid) {
		t.Fatalf("Error() = %q", e.Error())
	}
}

// ErrorEnvelope is the shape Handle answers errors in.
func TestErrorEnvelope(t *testing.T) {
	got := string(orrery.ErrorEnvelope(orrery.CodeInvalid, `abi: "x" is NULL`))
	if want := `{"version":1,"error":{"code":"invalid_argument","message":"abi: \"x\" is NULL"}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestExtremeNumbers sets every number of some corpus requests, one at a
// time, to finite values at the edges of float64 (and a few large or tiny
// ones): each call must keep handle's contract (never "internal", which is
// how a NaN or an infinity in a response surfaces) and never print a
// negative zero. These inputs found overflows that the fuzzers, which
// rarely write 1e308, did not.
func TestExtremeNumbers(t *testing.T) {
	files := []string{"ok/link_samples_and_quantum.json", "ok/rank_basic_mean.json", "ok/plan_options.json", "ok/predict_small.json"}
	values := []float64{1.7976931348623157e308, 1e308, 1e300, 1e20, 1 << 62, 1e9, 1e-10, 1e-300, 5e-324}
	calls := 0
	for _, name := range files {
		raw, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		var env any
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		var leaves []func(any) any
		numberLeaves(env, &leaves)
		for _, set := range leaves {
			for _, v := range values {
				old := set(v)
				in, err := json.Marshal(env)
				if err != nil {
					t.Fatal(err)
				}
				set(old)
				r := handle(t, in)
				if bytes.Contains(r.Response, []byte(":-0,")) || bytes.Contains(r.Response, []byte(":-0}")) {
					t.Errorf("%s: a negative zero in %.300s", in, r.Response)
				}
				calls++
			}
		}
	}
	if calls < 500 {
		t.Fatalf("only %d calls: the corpus files changed shape", calls)
	}
}

// numberLeaves collects a setter for each number in a decoded JSON value;
// a setter stores its argument and returns the value it replaced.
func numberLeaves(v any, out *[]func(any) any) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if _, ok := e.(float64); ok {
				*out = append(*out, func(n any) any { old := x[i]; x[i] = n; return old })
			} else {
				numberLeaves(e, out)
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if _, ok := x[k].(float64); ok {
				*out = append(*out, func(n any) any { old := x[k]; x[k] = n; return old })
			} else {
				numberLeaves(x[k], out)
			}
		}
	}
}

// TestDecodeNamesTheValue: every value encoding/json would reject, or
// accept wrongly, is named by its exact path before anything is decoded.
func TestDecodeNamesTheValue(t *testing.T) {
	phases := `"phases": [{"ms": 30, "gbps": 40}]`
	for _, tc := range []struct {
		op, req, field, msg string
	}{
		{"cassini.link", `{"tick_ms": 1e309, "capacity_gbps": 50, "jobs": [{"id": "a", ` + phases + `}]}`, "tick_ms", "got JSON number 1e309"},
		{"cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", ` + phases + `}], "tick_ms": 1e309}`, "tick_ms", "got JSON number 1e309"},
		{"cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1e309, "gbps": 40}]}]}`, "jobs[0].phases[0].ms", "1e309"},
		{"cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 30, "gbps": "x"}]}]}`, "jobs[0].phases[0].gbps", "expected a number, got JSON string"},
		{"cassini.link", `{"capacity_gbps": 50, "max_perimeter_ticks": 2.5, "jobs": [{"id": "a", ` + phases + `}]}`, "max_perimeter_ticks", "got JSON number 2.5"},
		{"cassini.link", `{"capacity_gbps": null, "jobs": [{"id": "a", ` + phases + `}]}`, "capacity_gbps", "null"},
		{"cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": null, ` + phases + `}]}`, "jobs[0].id", "null"},
		{"cassini.link", `{"capacity_gbps": 50, "period_ms": null, "jobs": [{"id": "a", ` + phases + `}]}`, "period_ms", "unknown field"},
		{"cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": null, ` + phases + `}]}`, "jobs[0].period_ms", "null"},
		{"cassini.link", "{\"capacity_gbps\": 50, \"jobs\": [{\"id\": \"a\xff\", " + phases + "}]}", "jobs[0].id", "UTF-8"},
		{"cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a\udc00", ` + phases + `}]}`, "jobs[0].id", "surrogate"},
		{"cassini.rank", "{\"links\": [{\"id\": \"l\", \"capacity_gbps\": 1}], \"jobs\": [{\"id\": \"a\", " + phases + "}], \"candidates\": [{\"id\": \"c\", \"paths\": {\"a\xc0\": [\"l\"]}}]}", "candidates[0].paths.a\uFFFD", "UTF-8"},
		{"shockwave.plan", `{"gpus": 4, "round": 0, "config": {"rounds": null}, "jobs": []}`, "config.rounds", "null"},
		{"shockwave.plan", `{"gpus": 4, "round": 0, "jobs": [{"id": 1.5, "gpus": 1, "submit_s": 0, "progress": 0, "epoch_bs": [1], "epoch_dur_s": [1]}]}`, "jobs[0].id", "expected an integer in [-9223372036854775808, 9223372036854775807], got JSON number 1.5"},
		{"shockwave.plan", `{"gpus": 4, "round": 0, "jobs": [{"id": 1, "gpus": 1, "submit_s": 0, "progress": 0, "epoch_bs": [1, null], "epoch_dur_s": [1, 1]}]}`, "jobs[0].epoch_bs[1]", "null"},
	} {
		_, err := orrery.Call(context.Background(), tc.op, []byte(tc.req))
		var we *orrery.Error
		if !errors.As(err, &we) || we.Code != orrery.CodeMalformed || we.Field != tc.field || !strings.Contains(we.Message, tc.msg) {
			t.Errorf("%s %.80s: %v (%+v), want malformed_json at %q with %q", tc.op, tc.req, err, we, tc.field, tc.msg)
		}
	}
}

// TestSyntaxErrorPosition: a syntax error says where it is.
func TestSyntaxErrorPosition(t *testing.T) {
	_, err := orrery.Call(context.Background(), "cassini.link", []byte("{\"capacity_gbps\": 50,\n \"jobs\": [}"))
	if err == nil || !strings.Contains(err.Error(), "byte 33, line 2, column 11") {
		t.Fatalf("%v", err)
	}
	_, err = orrery.Call(context.Background(), "cassini.link", []byte(`{"capacity_gbps": 50`))
	if err == nil || !strings.Contains(err.Error(), "unexpected end of the request (byte 20, line 1, column 20)") {
		t.Fatalf("%v", err)
	}
}

// TestTinyTimeLimit: a positive time limit under a nanosecond is a limit,
// not "none": the search stops at once with what it has.
func TestTinyTimeLimit(t *testing.T) {
	var jobs []string
	for i := range 6 {
		jobs = append(jobs, fmt.Sprintf(`{"id": "j%d", "phases": [{"ms": %d, "gbps": 30}, {"ms": %d, "gbps": 0}]}`, i, 30+3*i, 120-30-3*i+24*(i%2)))
	}
	req := `{"capacity_gbps": 50, "budget": 1073741824, "time_limit_ms": 1e-9, "jobs": [` + strings.Join(jobs, ",") + `]}`
	out, err := orrery.Call(context.Background(), "cassini.link", []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	var r orrery.LinkResponse
	if err := json.Unmarshal(out, &r); err != nil || r.Status != "time_limit" {
		t.Fatalf("status %q (%v), want time_limit", r.Status, err)
	}
}

// TestTypedRejectsNonFinite: JSON cannot carry NaN or an infinity, but a Go
// caller of the typed functions can. Every float64 of two corpus requests
// is set in turn to NaN, +Inf and -Inf: the call must fail with
// invalid_argument (never internal, never a panic, never an answer).
func TestTypedRejectsNonFinite(t *testing.T) {
	calls := 0
	for _, c := range []struct {
		file string
		call func(ctx context.Context, req []byte, set func(v reflect.Value)) error
	}{
		{"ok/link_samples_and_quantum.json", nonFinite(orrery.Link)},
		{"ok/rank_basic_mean.json", nonFinite(orrery.Rank)},
		{"ok/plan_options.json", nonFinite(orrery.Plan)},
		{"ok/plan_24_jobs.json", nonFinite(orrery.Plan)},
		{"ok/predict_small.json", nonFinite(orrery.Predict)},
		{"ok/profile_series.json", nonFinite(orrery.Profile)},
		{"ok/profile_events.json", nonFinite(orrery.Profile)},
	} {
		raw, err := os.ReadFile(filepath.Join("testdata", "corpus", c.file))
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Request json.RawMessage `json:"request"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		for k := 0; ; k++ {
			for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e-320} {
				found := false
				var path string
				err := c.call(context.Background(), env.Request, func(root reflect.Value) {
					n := 0
					path, found = setFloat(root, k, &n, v, "")
				})
				if !found {
					goto next
				}
				calls++
				var we *orrery.Error
				if !errors.As(err, &we) || we.Code != orrery.CodeInvalid || we.Field != path {
					t.Errorf("%s: %s = %v: %v, want invalid_argument naming %s", c.file, path, v, err, path)
				}
			}
		}
	next:
	}
	if calls < 30 {
		t.Fatalf("only %d calls", calls)
	}
}

// nonFinite decodes the request into its typed form, lets set change it,
// and calls f.
func nonFinite[Req, Resp any](f func(context.Context, Req) (Resp, error)) func(context.Context, []byte, func(reflect.Value)) error {
	return func(ctx context.Context, data []byte, set func(reflect.Value)) error {
		var req Req
		if err := json.Unmarshal(data, &req); err != nil {
			return err
		}
		set(reflect.ValueOf(&req).Elem())
		_, err := f(ctx, req)
		return err
	}
}

// setFloat sets the k-th float64 reachable from v (in field order) to x
// and reports whether there was one, and its JSON path (under path).
func setFloat(v reflect.Value, k int, n *int, x float64, path string) (string, bool) {
	switch v.Kind() {
	case reflect.Float64:
		if *n == k {
			v.SetFloat(x)
			return path, true
		}
		*n++
	case reflect.Pointer:
		if !v.IsNil() {
			return setFloat(v.Elem(), k, n, x, path)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			p := path
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				p = strings.TrimPrefix(path+"."+name, ".")
			}
			if q, ok := setFloat(v.Field(i), k, n, x, p); ok {
				return q, true
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if q, ok := setFloat(v.Index(i), k, n, x, fmt.Sprintf("%s[%d]", path, i)); ok {
				return q, true
			}
		}
	}
	return "", false
}

// BenchmarkHandle: a whole call through Handle (the envelope, the
// request's checks and decoding, the operation, the response), on the
// corpus's one-job and three-job links, a plan and the 12-job ranking
// (whose time is the link searches'). A call's fixed cost is
// the codec's, and WebAssembly hosts run it 13-24x slower than native, so
// its time and allocations are the figures to watch:
//
//	go test -run '^$' -bench 'Handle$' -count 6 .
func BenchmarkHandle(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"link_single_job", "link_exact_three_jobs", "plan_small", "rank_twelve_jobs"} {
		env, err := os.ReadFile(filepath.Join("testdata", "corpus", "ok", name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		if r := handle(b, env); r.Error != nil {
			b.Fatalf("%s: %+v", name, r.Error)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				orrery.Handle(ctx, env)
			}
		})
	}
}
