package codec

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// CheckKeys checks a request against the Go type t it decodes into, before
// it is decoded (Unmarshal, which trusts it), and names the offending value
// by its exact path ("jobs[1].phases[0].ms"). It rejects what encoding/json,
// whose decoding the package kept, would let through: a key that names a field only when case is ignored (it matches
// names case-insensitively), a key given twice in one object (it keeps the
// last), null (it leaves the field as it was: zero, or the default), and
// strings that are not valid UTF-8 or hold an unpaired surrogate escape (it
// replaces them with U+FFFD, so two distinct bad ids would collide). And it
// rejects, with the path encoding/json cannot give, values of the wrong JSON
// type and numbers that do not fit their field (1e309, 2.5 for an integer).
// data must be one valid JSON value (CheckSyntax).
//
// It scans the bytes once rather than walking tokens, which cost three
// times the decoding itself on small requests.
//
// It also refuses, before anything is decoded, a string (a value or a key)
// longer than [MaxStringBytes] (limit_exceeded), and a number too small
// for a normal float64 (invalid_argument: 1e-320 is no quantity of the
// schema, and such a literal would either lose its precision or decode as
// 0). And it measures the values m names (their raw bytes, and an array's
// element count), so that a request's sizes can be checked before anything
// is allocated for them.
func CheckKeys(data []byte, t reflect.Type, m *Measures) *Error {
	k := keyScanner{data: data}
	if m != nil {
		k.m = *m // a copy in k, which stays on the stack: *m may too
	}
	path, ok := k.value(schemaOf(t))
	if m != nil {
		*m = k.m
	}
	if !ok {
		code := k.code
		if code == "" {
			code = Malformed
		}
		return &Error{Code: code, Field: path, Message: k.why}
	}
	return nil
}

// MaxStringBytes bounds every string of a request, a value or a key, in
// bytes of UTF-8 once its escapes are decoded: ids, link ids in paths,
// names of modes. A longer one is a limit_exceeded error naming it, found
// before the request is decoded (a 50 MB id would otherwise be decoded,
// copied into maps and echoed three times in the response).
const MaxStringBytes = 1024

// keyScanner walks valid JSON alongside the Go type it decodes into.
type keyScanner struct {
	data []byte
	i    int
	why  string
	code string // of the error, when not malformed_json
	// The raw keys of the open objects (offsets in data), a stack: the
	// first ones in shallow, which needs no allocation, the rest in deep.
	nkeys   int
	shallow [32]keyRef
	deep    []keyRef

	m     Measures // values to measure (none: m.paths is empty)
	depth int      // objects open, the root one is 1
	top   []byte   // the raw key of the root object's value being scanned
	elems int      // element count of the array scanned last
}

// measured returns the index in k.m of the value of key raw in the object
// at the current depth, or -1. Keys compare by their text: "j\u006fbs" is
// measured as "jobs" is.
func (k *keyScanner) measured(raw []byte, isPlain bool) int {
	if len(k.m.paths) == 0 || k.depth > 2 {
		return -1
	}
	key := raw[1 : len(raw)-1]
	if !isPlain {
		key = []byte(Unquote(raw))
	}
	for i, p := range k.m.paths {
		parent, name, nested := strings.Cut(p, ".")
		switch {
		case k.depth == 1 && !nested && parent == string(key):
			return i
		case k.depth == 2 && nested && name == string(key) && sameText(k.top, parent):
			return i
		}
	}
	return -1
}

// sameText reports whether the raw JSON string raw's text is s.
func sameText(raw []byte, s string) bool {
	if Plain(raw) {
		return string(raw[1:len(raw)-1]) == s
	}
	return Unquote(raw) == s
}

// value scans one value decoding into st (nil: anything, unchecked). On a
// bad key it returns the key's path relative to this value and false.
func (k *keyScanner) value(st *schemaType) (string, bool) {
	k.space()
	if k.i >= len(k.data) {
		return "", true
	}
	for st != nil && st.kind == reflect.Pointer {
		st = st.elem
	}
	if st != nil && st.anyValue {
		st = nil // Raw and the like take any value
	}
	kind := reflect.Invalid
	if st != nil {
		kind = st.kind
		why, done := k.scalar(st)
		if why != "" {
			k.why = why
			return "", false
		}
		if done {
			return "", true
		}
	}
	switch {
	case k.data[k.i] == '{' && (kind == reflect.Struct || kind == reflect.Map):
		return k.object(st)
	case k.data[k.i] == '[' && (kind == reflect.Slice || kind == reflect.Array):
		k.i++
		for n := 0; ; n++ {
			k.space()
			if k.i >= len(k.data) || k.data[k.i] == ']' {
				k.i++
				k.elems = n
				return "", true
			}
			if p, ok := k.value(st.elem); !ok {
				return "[" + strconv.Itoa(n) + "]" + dotted(p), false
			}
			k.space()
			if k.i < len(k.data) && k.data[k.i] == ',' {
				k.i++
			}
		}
	}
	// Nothing to check inside: skip it without recursion, so the depth of
	// the scan is the depth of the schema's types, never the input's (a
	// json.RawMessage may nest 10000 deep, more than a WebAssembly host's
	// call stack takes).
	k.skip()
	return "", true
}

// scalar checks the value at k.i against st's type: null is never a
// value, the JSON type must be the one it decodes from, a string must be
// valid text and a number must fit it. It returns why not, or "", and
// whether it moved past the value (a string, number or bool it checked).
func (k *keyScanner) scalar(st *schemaType) (string, bool) {
	c := k.data[k.i]
	kind := st.kind
	if c == 'n' {
		return "null is not a value: give one, or omit the key where it is optional", false
	}
	got := Kind(c)
	switch kind {
	case reflect.Interface:
		return "", false
	case reflect.Bool:
		if got == "bool" {
			k.i += len("true")
			if c == 'f' {
				k.i++
			}
			return "", true
		}
	case reflect.String:
		if got == "string" {
			return k.text()
		}
	case reflect.Struct, reflect.Map:
		if got == "object" {
			return "", false
		}
	case reflect.Slice, reflect.Array:
		if got == "array" {
			return "", false
		}
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if got == "number" {
			return k.numberFits(st)
		}
	default:
		return "", false
	}
	return fmt.Sprintf("expected %s, got JSON %s", jsonKind(st.t, false), got), false
}

// jsonKind names what a value of Go type t is in JSON, in the schema's
// words ("a number", "an array", "an object"); with ranges, a number's
// range ("an integer in [0, 65535]").
func jsonKind(t reflect.Type, ranges bool) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch k := t.Kind(); {
	case k == reflect.Float32 && ranges:
		return "a number of at most 3.4e38 in magnitude"
	case k == reflect.Float64 && ranges:
		return "a number of at most 1.8e308 in magnitude"
	case k == reflect.Float32 || k == reflect.Float64:
		return "a number"
	case k >= reflect.Int && k <= reflect.Int64 && ranges:
		lim := int64(1)<<(t.Bits()-1) - 1
		return fmt.Sprintf("an integer in [%d, %d]", -lim-1, lim)
	case k >= reflect.Uint && k <= reflect.Uint64 && ranges:
		return fmt.Sprintf("an integer in [0, %d]", uint64(1)<<(t.Bits()-1)*2-1)
	case k >= reflect.Int && k <= reflect.Uint64:
		return "an integer"
	case k == reflect.String:
		return "a string"
	case k == reflect.Bool:
		return "true or false"
	case k == reflect.Slice || k == reflect.Array:
		return "an array"
	case k == reflect.Struct || k == reflect.Map:
		return "an object"
	}
	return "a value"
}

// text checks the string at k.i and moves past it.
func (k *keyScanner) text() (string, bool) {
	a := k.i
	k.str()
	raw := k.data[a:k.i]
	n := len(raw) - 2
	if !Plain(raw) {
		if !validString(raw) {
			return "string is not valid UTF-8 (or holds an unpaired surrogate)", false
		}
		n = textLen(raw)
	}
	if n > MaxStringBytes {
		k.code = Limit
		return fmt.Sprintf("a string of %d bytes, above the %d-byte limit", n, MaxStringBytes), false
	}
	return "", true
}

// numberFits checks the number at k.i against st's type and moves past
// it.
func (k *keyScanner) numberFits(st *schemaType) (string, bool) {
	lit := k.number()
	if !fits(lit, st.t) {
		return fmt.Sprintf("expected %s, got JSON number %s", jsonKind(st.t, true), lit), false
	}
	if (st.kind == reflect.Float32 || st.kind == reflect.Float64) && tiny(lit) {
		k.code = Invalid
		return fmt.Sprintf("%s is below the smallest normal number (%v) in magnitude: no quantity of the schema is that small", lit, MinNormal), false
	}
	k.i += len(lit)
	return "", true
}

// Kind names the JSON type of the value that starts with c.
func Kind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// number returns the number literal at k.i, leaving k.i there.
func (k *keyScanner) number() []byte {
	end := k.i
	for end < len(k.data) && (isDigit(k.data[end]) || k.data[end] == '-' || k.data[end] == '+' || k.data[end] == '.' || k.data[end] == 'e' || k.data[end] == 'E') {
		end++
	}
	return k.data[k.i:end]
}

// fits reports whether the JSON number lit decodes into a t (a float, int
// or uint kind) as encoding/json would decode it: a float within range, an
// integer literal within the integer's range. Short literals are decided
// from their shape, without parsing (or allocating); the rest are parsed.
func fits(lit []byte, t reflect.Type) bool {
	kind := t.Kind()
	point, exp := false, false
	for _, c := range lit {
		switch c {
		case '.':
			point = true
		case 'e', 'E':
			exp = true
		}
	}
	frac := point || exp
	digits := len(lit)
	if lit[0] == '-' {
		digits--
	}
	switch {
	case kind == reflect.Float32 || kind == reflect.Float64:
		// Without an exponent a float64 overflows only past 309 digits.
		if kind == reflect.Float64 && !exp && len(lit) < 300 {
			return true
		}
		_, err := strconv.ParseFloat(string(lit), t.Bits())
		return err == nil
	case frac:
		return false // encoding/json takes only integer literals into integers
	case kind >= reflect.Uint && kind <= reflect.Uint64:
		if lit[0] == '-' {
			return false
		}
		if digits < (t.Bits()*3)/10 { // 10^digits < 2^bits
			return true
		}
		_, err := strconv.ParseUint(string(lit), 10, t.Bits())
		return err == nil
	default:
		if digits < (t.Bits()*3)/10 {
			return true
		}
		_, err := strconv.ParseInt(string(lit), 10, t.Bits())
		return err == nil
	}
}

// MinNormal is the smallest positive normal float64.
const MinNormal = 0x1p-1022

// tiny reports whether the number literal lit (valid JSON, within float64's
// range) is not zero but below the smallest normal float64 in magnitude: a
// subnormal (1e-320), or a literal that parses as 0 (1e-400). Literals
// without an exponent under 300 bytes are at least 1e-298: not parsed.
func tiny(lit []byte) bool {
	if len(lit) < 300 && bytes.IndexByte(lit, 'e') < 0 && bytes.IndexByte(lit, 'E') < 0 {
		return false
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return false
	}
	if v != 0 {
		return math.Abs(v) < MinNormal
	}
	mant, _, _ := bytes.Cut(bytes.ToLower(lit), []byte("e"))
	return bytes.ContainsAny(mant, "123456789")
}

// skip passes over one value.
func (k *keyScanner) skip() { k.i = skipValue(k.data, k.i) }

// skipValue returns the offset past the value of valid JSON at data[i:].
func skipValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			i = skipString(data, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return i // the enclosing value's end: nothing was here
			}
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}

// object scans an object decoding into st, a struct or a map.
func (k *keyScanner) object(st *schemaType) (string, bool) {
	k.i++
	var fields map[string]*schemaType
	var elem *schemaType
	if st.kind == reflect.Struct {
		fields = st.keyTypes
	} else {
		elem = st.elem
	}
	base := k.nkeys
	k.depth++
	defer func() { k.nkeys = base; k.depth-- }()
	var set map[string]bool
	next := 0 // the field after the last key's: where the next key most likely is
	for {
		k.space()
		if k.i >= len(k.data) || k.data[k.i] == '}' {
			k.i++
			return "", true
		}
		a := k.i
		k.str()
		raw := k.data[a:k.i]
		k.space()
		k.i++ // the colon
		ft := elem
		isPlain := Plain(raw) // then valid, and its text is its bytes
		n := len(raw) - 2
		if !isPlain {
			if !validString(raw) {
				k.why = "key is not valid UTF-8"
				return Unquote(raw), false
			}
			n = textLen(raw)
		}
		if n > MaxStringBytes {
			k.why, k.code = fmt.Sprintf("a key of %d bytes, above the %d-byte limit", n, MaxStringBytes), Limit
			return "", false // named by the object that holds it
		}
		if k.seen(&set, base, a, raw, isPlain) {
			k.why = "duplicate key"
			return Unquote(raw), false
		}
		if fields != nil {
			var f int
			if isPlain {
				f = st.fieldIndex(raw[1:len(raw)-1], next)
			} else {
				f = st.fieldIndex([]byte(Unquote(raw)), next)
			}
			if f >= 0 {
				ft, next = st.fields[f].typ, f+1
			} else {
				key := Unquote(raw)
				k.why = "unknown field"
				if _, name, ok := FieldByKey(st.t, key); ok {
					k.why = fmt.Sprintf("unknown field (keys are case-sensitive: the schema's is %q)", name)
				} else if name := Suggest(fields, key); name != "" {
					k.why = fmt.Sprintf("unknown field (did you mean %q?)", name)
				}
				return key, false
			}
		}
		if k.depth == 1 {
			k.top = raw
		}
		mi := k.measured(raw, isPlain)
		start := k.i
		k.elems = 0
		if p, ok := k.value(ft); !ok {
			return Unquote(raw) + dotted(p), false
		}
		if mi >= 0 {
			k.space()
			k.m.raw[mi], k.m.count[mi] = k.data[start:k.i], k.elems
		}
		k.space()
		if k.i < len(k.data) && k.data[k.i] == ',' {
			k.i++
		}
	}
}

// seen reports whether the object's key raw (at offset a) came before in
// it, and records it: a linear scan of the keys on the stack from base while the object is
// small, a set once it is large, so a huge map stays linear.
func (k *keyScanner) seen(set *map[string]bool, base, a int, raw []byte, isPlain bool) bool {
	if *set != nil {
		key := Unquote(raw)
		if (*set)[key] {
			return true
		}
		(*set)[key] = true
		return false
	}
	for j := base; j < k.nkeys; j++ {
		prev, prevPlain := k.rawKey(j)
		if isPlain && prevPlain {
			if bytes.Equal(prev, raw) {
				return true
			}
		} else if Unquote(prev) == Unquote(raw) {
			return true
		}
	}
	k.pushKey(keyRef{a, a + len(raw), isPlain})
	if n := k.nkeys - base; n > 32 {
		*set = make(map[string]bool, 2*n)
		for j := base; j < k.nkeys; j++ {
			prev, _ := k.rawKey(j)
			(*set)[Unquote(prev)] = true
		}
	}
	return false
}

// keyRef is a key on the stack: data[a:b], and whether it is plain.
type keyRef struct {
	a, b  int
	plain bool
}

// pushKey puts the key at data[a:b] on the stack of keys.
func (k *keyScanner) pushKey(ref keyRef) {
	if k.nkeys < len(k.shallow) {
		k.shallow[k.nkeys] = ref
	} else {
		k.deep = append(k.deep[:k.nkeys-len(k.shallow)], ref)
	}
	k.nkeys++
}

// rawKey returns key j of the stack and whether it is plain.
func (k *keyScanner) rawKey(j int) ([]byte, bool) {
	ref := k.shallow[min(j, len(k.shallow)-1)]
	if j >= len(k.shallow) {
		ref = k.deep[j-len(k.shallow)]
	}
	return k.data[ref.a:ref.b], ref.plain
}

// str skips a JSON string starting at the opening quote.
func (k *keyScanner) str() { k.i = skipString(k.data, k.i) }

// skipString returns the offset past the JSON string at data[i:].
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

func (k *keyScanner) space() {
	for k.i < len(k.data) && (k.data[k.i] == ' ' || k.data[k.i] == '\t' || k.data[k.i] == '\r' || k.data[k.i] == '\n') {
		k.i++
	}
}

// dotted joins a sub-path to its parent key: "" stays, "[2]..." is appended
// as is, a key gets a dot.
func dotted(p string) string {
	if p == "" || p[0] == '[' {
		return p
	}
	return "." + p
}
