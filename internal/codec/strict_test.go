package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A small schema of the shapes the codec meets: nested structs, slices of
// numbers and of structs, a map, an optional pointer, an embedded struct,
// omitempty, a registered type and a raw value.
type testPhase struct {
	Ms   float64 `json:"ms"`
	Gbps float64 `json:"gbps"`
}

type testBase struct {
	Tick float64 `json:"tick_ms,omitempty"`
}

type testJob struct {
	ID     testID      `json:"id"`
	Phases []testPhase `json:"phases"`
	Shares []float64   `json:"shares,omitempty"`
	Counts []int       `json:"counts,omitempty"`
}

type testRequest struct {
	testBase
	Capacity float64            `json:"capacity_gbps"`
	Rounds   *int               `json:"rounds,omitempty"`
	Mode     string             `json:"mode,omitempty"`
	Jobs     []testJob          `json:"jobs"`
	Weights  map[string]float64 `json:"weights,omitempty"`
	Extra    Raw                `json:"extra,omitempty"`
	Small    int8               `json:"small,omitempty"`
	Count    uint16             `json:"count,omitempty"`
	On       bool               `json:"on,omitempty"`
}

// testID is registered: any value, kept as its compact text (encoding/json
// compacts what a MarshalJSON returns, so the text must be compact for the
// two encoders to agree).
type testID struct{ text string }

func compactText(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(bytes.TrimSpace(raw))
	}
	return b.String()
}

func init() {
	Register(func(dst []byte, id testID) []byte { b, _ := id.MarshalJSON(); return append(dst, b...) },
		func(id *testID, raw []byte) { id.text = compactText(raw) })
}

func (id testID) MarshalJSON() ([]byte, error) {
	if id.text == "" {
		return []byte("null"), nil
	}
	return []byte(id.text), nil
}
func (id *testID) UnmarshalJSON(b []byte) error {
	id.text = compactText(b)
	return nil
}

// TestDecodeStrict: every refusal encoding/json would not make is an
// Error with its code and the exact path of the value at fault.
func TestDecodeStrict(t *testing.T) {
	long := strings.Repeat("x", MaxStringBytes+1)
	for _, c := range []struct {
		in, code, field, msg string
	}{
		{`{"capacity_gbps": 50, "jobs": [], "Mode": "x"}`, Malformed, "Mode", `unknown field (keys are case-sensitive: the schema's is "mode")`},
		{`{"capacity_gbps": 50, "jobs": [], "capacity_gbps": 40}`, Malformed, "capacity_gbps", "duplicate key"},
		{`{"capacity_gbps": 50, "jobs": [], "capacity": 40}`, Malformed, "capacity", `unknown field (did you mean "capacity_gbps"?)`},
		{`{"capacity_gbps": null, "jobs": []}`, Malformed, "capacity_gbps", "null is not a value: give one, or omit the key where it is optional"},
		{`{"capacity_gbps": 50, "jobs": [{"id": 1, "phases": [{"ms": "2", "gbps": 1}]}]}`, Malformed, "jobs[0].phases[0].ms", "expected a number, got JSON string"},
		{`{"capacity_gbps": 50, "jobs": [{"id": 1, "phases": [{"ms": 1e-320, "gbps": 1}]}]}`, Invalid, "jobs[0].phases[0].ms", "1e-320 is below the smallest normal number (2.2250738585072014e-308) in magnitude: no quantity of the schema is that small"},
		{`{"capacity_gbps": 1e309, "jobs": []}`, Malformed, "capacity_gbps", "expected a number of at most 1.8e308 in magnitude, got JSON number 1e309"},
		{`{"capacity_gbps": 50, "jobs": [], "small": 200}`, Malformed, "small", "expected an integer in [-128, 127], got JSON number 200"},
		{`{"capacity_gbps": 50, "jobs": [], "count": -1}`, Malformed, "count", "expected an integer in [0, 65535], got JSON number -1"},
		{`{"capacity_gbps": 50, "jobs": [], "rounds": 2.5}`, Malformed, "rounds", "expected an integer in [-9223372036854775808, 9223372036854775807], got JSON number 2.5"},
		{`{"capacity_gbps": 50, "jobs": [], "mode": "\ud800"}`, Malformed, "mode", "string is not valid UTF-8 (or holds an unpaired surrogate)"},
		{"{\"capacity_gbps\": 50, \"jobs\": [], \"mode\": \"\xff\"}", Malformed, "mode", "string is not valid UTF-8 (or holds an unpaired surrogate)"},
		{`{"capacity_gbps": 50, "jobs": [], "mode": "` + long + `"}`, Limit, "mode", fmt.Sprintf("a string of %d bytes, above the %d-byte limit", len(long), MaxStringBytes)},
		{`{"capacity_gbps": 50, "jobs": [], "weights": {"a": 1, "\u0061": 2}}`, Malformed, "weights.a", "duplicate key"},
		{`{"capacity_gbps": 50, "jobs": []} {}`, Malformed, "", "trailing data after the request object"},
		{`{"capacity_gbps": 50, "jobs": [}`, Malformed, "", "invalid character '}' looking for beginning of value (byte 32, line 1, column 32)"},
		{`  `, Malformed, "", "empty request"},
	} {
		var v testRequest
		err := Decode([]byte(c.in), &v)
		e, ok := err.(*Error)
		if !ok || e.Code != c.code || e.Field != c.field || e.Message != c.msg {
			t.Errorf("%.80s:\n got %#v\nwant %s %q %q", c.in, err, c.code, c.field, c.msg)
		}
	}
}

// TestDecodeMatchesEncodingJSON: what the codec accepts, it decodes as
// encoding/json does, and Marshal writes what json.Marshal writes.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	in := `{"tick_ms": 0.5, "capacity_gbps": 50, "rounds": 3, "mode": "a\u00e9<>&\n",
		"jobs": [{"id": "j1", "phases": [{"ms": 30, "gbps": 40.25}, {"ms": -0.5E+2, "gbps": 0}], "shares": [1, 2.5], "counts": [-3, 0, 7]},
		         {"id": 7, "phases": []}],
		"weights": {"z": 1, "a": 1e-7, "m": 1e21}, "extra": {"any":[null,true]}, "small": -128, "count": 65535, "on": true}`
	var mine, theirs testRequest
	if err := Decode([]byte(in), &mine); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(in), &theirs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mine, theirs) {
		t.Fatalf("decoded\n%+v\nencoding/json\n%+v", mine, theirs)
	}
	got, err := Marshal(mine)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(theirs)
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%s\nencoding/json\n%s", got, want)
	}
	if out, err := MarshalAfter([]byte(`{"r":`), mine, "}"); err != nil || !bytes.Equal(out, append(append([]byte(`{"r":`), want...), '}')) {
		t.Fatalf("MarshalAfter: %s, %v", out, err)
	}
}

// TestCheckObject: the members of a top-level object, as CheckSyntax
// accepts it; nothing for other values.
func TestCheckObject(t *testing.T) {
	n, m, err := CheckObject([]byte(` { "op" : "x" , "request": {"a": [1]} } `))
	if err != nil || n != 2 || string(m[0].Key) != `"op"` || strings.TrimSpace(string(m[0].Value)) != `"x"` ||
		string(m[1].Key) != `"request"` || strings.TrimSpace(string(m[1].Value)) != `{"a": [1]}` {
		t.Fatalf("%d %q %v", n, m, err)
	}
	if n, _, err := CheckObject([]byte(`[{"a": 1}, 2]`)); n != 0 || err != nil {
		t.Fatalf("array: %d members, %v", n, err)
	}
	if n, _, err := CheckObject([]byte(`{"a": 1, "b": 2, "c": {"d": 3}}`)); n != 3 || err != nil {
		t.Fatalf("three members: %d, %v", n, err)
	}
	if _, _, err := CheckObject([]byte(`{"a": }`)); err == nil || err.Code != Malformed {
		t.Fatalf("bad syntax: %v", err)
	}
}

// TestMeasures: the key scan measures the values named, top-level and one
// level down, by their text; a value not given measures nothing.
func TestMeasures(t *testing.T) {
	m := GetMeasures([]string{"jobs", "weights.a", "rounds", "mode"})
	defer PutMeasures(m)
	in := `{"capacity_gbps": 50, "j\u006fbs": [{"id": 1, "phases": []}, {"id": 2, "phases": []}], "rounds": 12, "weights": {"a": 3}}`
	if err := CheckKeys([]byte(in), reflect.TypeFor[testRequest](), m); err != nil {
		t.Fatal(err)
	}
	if raw, n := m.Get("jobs"); n != 2 || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`[{"id": 1`)) {
		t.Errorf("jobs: %q, %d elements", raw, n)
	}
	if r, ok := m.Int("rounds"); !ok || r != 12 {
		t.Errorf("rounds: %d %v", r, ok)
	}
	if raw, _ := m.Get("weights.a"); string(bytes.TrimSpace(raw)) != "3" {
		t.Errorf("weights.a: %q", raw)
	}
	if raw, _ := m.Get("mode"); raw != nil {
		t.Errorf("mode: %q, not given", raw)
	}
}

// TestConcurrentFirstUse: goroutines meeting types for the first time at
// once (the type cache is shared; go test -race checks it) decode and
// encode what one goroutine does.
func TestConcurrentFirstUse(t *testing.T) {
	type a struct {
		X []testJob `json:"x"`
	}
	type b struct {
		Y map[string]a `json:"y"`
		Z *b           `json:"z,omitempty"`
	}
	type c struct {
		b
		W [3]int `json:"w"`
	}
	in := []byte(`{"y": {"k": {"x": [{"id": 1, "phases": [{"ms": 1, "gbps": 2}]}]}}, "z": {"y": {}}, "w": [1, 2, 3]}`)
	var want c
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	wantOut, _ := json.Marshal(want)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var got c
			if err := Decode(in, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("decoded %+v, %v", got, err)
			}
			if out, err := Marshal(got); err != nil || !bytes.Equal(out, wantOut) {
				t.Errorf("encoded %s, %v", out, err)
			}
		})
	}
	wg.Wait()
}

// FuzzDecodeMatchesEncodingJSON: on any bytes, the codec refuses with
// encoding/json's syntax message what json.Valid refuses, and what its key
// scan accepts decodes and encodes as encoding/json does.
//
//	go test -run '^$' -fuzz FuzzDecodeMatchesEncodingJSON -fuzztime 60s ./internal/codec
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 30, "gbps": 40}]}]}`,
		`{"capacity_gbps": 5e1, "jobs": [], "weights": {"b": 2, "a": 1}, "extra": [1,{"x":null}]}`,
		`{"tick_ms": 1, "capacity_gbps": 0, "jobs": [{"id": -3, "phases": [], "counts": [1, 2]}], "mode": "\u00e9\ud83d\ude00"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(bytes.TrimSpace(data)) == 0 {
			return
		}
		if !json.Valid(data) {
			if got, want := CheckSyntax(data), decoderSyntax(data); got == nil || got.Message != want {
				t.Fatalf("%q: syntax %v, encoding/json %q", data, got, want)
			}
			return
		}
		var mine testRequest
		if err := Decode(data, &mine); err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%q: %v is not an *Error", data, err)
			}
			return
		}
		var theirs testRequest
		if err := json.Unmarshal(data, &theirs); err != nil {
			t.Fatalf("%q: the codec accepted what encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(mine, theirs) {
			t.Fatalf("%q: decoded %+v, encoding/json %+v", data, mine, theirs)
		}
		// A raw value is written as it came; encoding/json compacts it.
		var compact bytes.Buffer
		if json.Compact(&compact, mine.Extra) == nil && compact.Len() > 0 {
			mine.Extra = compact.Bytes()
		}
		got, gerr := Marshal(mine)
		want, werr := json.Marshal(theirs)
		if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q: encoded %s (%v), encoding/json %s (%v)", data, got, gerr, want, werr)
		}
	})
}

// BenchmarkDecode and BenchmarkMarshal: the codec against encoding/json on
// a request of n jobs, in one process:
//
//	go test -run '^$' -bench 'Decode|Marshal' ./internal/codec
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1, 100} {
		in := benchRequest(n)
		b.Run("jobs="+strconv.Itoa(n)+"/codec", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var v testRequest
				if err := Decode(in, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("jobs="+strconv.Itoa(n)+"/encoding_json", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var v testRequest
				d := json.NewDecoder(bytes.NewReader(in))
				d.DisallowUnknownFields()
				if err := d.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMarshal(b *testing.B) {
	for _, n := range []int{1, 100} {
		var v testRequest
		if err := Decode(benchRequest(n), &v); err != nil {
			b.Fatal(err)
		}
		b.Run("jobs="+strconv.Itoa(n)+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Marshal(v)
			}
		})
		b.Run("jobs="+strconv.Itoa(n)+"/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				json.Marshal(v)
			}
		})
	}
}

func benchRequest(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"capacity_gbps": 50, "jobs": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": "job-%d", "phases": [{"ms": %d.5, "gbps": 40}, {"ms": 120, "gbps": 0}], "shares": [0.25, 0.75]}`, i, 30+i%50)
	}
	b.WriteString(`], "weights": {"a": 1, "b": 2}}`)
	return []byte(b.String())
}
