package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

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
		line, col := Position(data, se.Offset)
		return fmt.Sprintf("%v (byte %d, line %d, column %d)", se, se.Offset, line, col)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := Position(data, int64(len(data)))
		return fmt.Sprintf("unexpected end of the request (byte %d, line %d, column %d)", len(data), line, col)
	}
	return err.Error()
}

// sameEncoding checks that the codec encodes v as json.Marshal does.
func sameEncoding(t *testing.T, what string, v any) {
	t.Helper()
	got, gerr := Marshal(v)
	want, werr := json.Marshal(v)
	if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
		t.Errorf("%s: codec %.300s (%v), encoding/json %.300s (%v)", what, got, gerr, want, werr)
	}
}

// TestCodecStrings: string escapes and float formats at their edges, both
// ways.
func TestCodecStrings(t *testing.T) {
	for _, s := range []string{"", "a", "<&>", "\u2028\u2029", "\x00\x1f\b\f\n\r\t\"\\/", "\xff\xc3(", "é😀", "\xed\xa0\x80"} {
		sameEncoding(t, fmt.Sprintf("%q", s), s)
		raw := AppendString(nil, s)
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || Unquote(raw) != want {
			t.Errorf("Unquote(%s) = %q, encoding/json %q (%v)", raw, Unquote(raw), want, err)
		}
	}
	for _, raw := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83d\u0041"`, `"\udc00\ud83d\ude00"`, `"\u00e9\/\""`, "\"\xff\""} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil || Unquote([]byte(raw)) != want {
			t.Errorf("Unquote(%s) = %q, encoding/json %q (%v)", raw, Unquote([]byte(raw)), want, err)
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
			got, _ := Marshal(x)
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
		got := CheckSyntax(data)
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

// An unknown key gets the schema key it most likely meant, by prefix or
// edit distance, and none when nothing is close.
func TestSuggest(t *testing.T) {
	keys := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	// The keys of cassini.link's request and of a Shockwave job.
	link := keys("capacity_gbps", "tick_ms", "mode", "max_perimeter", "budget", "time_limit_ms", "jobs")
	job := keys("id", "gpus", "submit_s", "epoch_bs", "epoch_dur_s", "profiled_dur_s", "samples_per_epoch", "timeline", "epochs_done")
	for _, c := range []struct {
		fields map[string]bool
		key    string
		want   string
	}{
		{link, "capacity", "capacity_gbps"},
		{link, "capacity_gbs", "capacity_gbps"},
		{link, "job", "jobs"},
		{link, "tick", "tick_ms"},
		{link, "budgett", "budget"},
		{link, "zzz", ""},
		{job, "gpu", "gpus"},
		{job, "epoch_durs", "epoch_dur_s"},
		{job, "submit", "submit_s"},
		{job, "x", ""},
	} {
		if got := Suggest(c.fields, c.key); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}
