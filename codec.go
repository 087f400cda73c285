package orrery

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// The schema's own JSON codec, in place of encoding/json: the requests are
// checked in full by the key scan (checkKeys) before they are decoded, so
// the decoder only fills values from input already known to fit them, and
// the encoder writes exactly what encoding/json writes for the schema's
// types (HTML-safe string escapes, the ES6 float format, map keys sorted,
// omitempty, embedded structs inlined), which TestCodecMatchesEncodingJSON
// checks on the whole corpus. It exists for the WebAssembly module's size:
// encoding/json cost the module 0.34 MB more than this file does (242 kB
// of its code, time.Time's JSON methods its interface calls kept, their
// data). It uses reflect, which fmt links in anyway.

// rawJSON is a JSON value kept as its bytes: decoded as any value, encoded
// as is.
type rawJSON []byte

// MarshalJSON returns r, or null when r is empty.
func (r rawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of b.
func (r *rawJSON) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// marshalerJSON and unmarshalerJSON are encoding/json's Marshaler and
// Unmarshaler, declared here so the codec needs nothing of that package.
type marshalerJSON interface{ MarshalJSON() ([]byte, error) }

type unmarshalerJSON interface{ UnmarshalJSON([]byte) error }

var (
	idType          = reflect.TypeFor[JobID]()
	rawJSONType     = reflect.TypeFor[rawJSON]()
	marshalerType   = reflect.TypeFor[marshalerJSON]()
	unmarshalerType = reflect.TypeFor[unmarshalerJSON]()
)

// codecField is a struct field as JSON sees it: its key, where it is (an
// index path through embedded structs) and whether omitempty drops it.
type codecField struct {
	name      string
	key       []byte // the encoded key and its colon, "name":
	index     []int
	omitEmpty bool
	typ       *schemaType
}

// schemaType is what the key scan and the codec know of a Go type, worked
// out once per type so that a scan or a decoding walks these nodes rather
// than asking reflect again at every value (reflect.PointerTo and
// Implements at each value cost the key scan most of its time in
// WebAssembly).
type schemaType struct {
	t    reflect.Type
	kind reflect.Kind
	// anyValue: the type takes any JSON value (rawJSON, a type with its
	// own UnmarshalJSON), so the scan checks nothing inside it; custom:
	// it is JobID, whose methods the codec calls.
	anyValue, custom bool
	elem             *schemaType            // of a pointer, slice, array or map
	fields           []codecField           // of a struct, in encoding/json's order
	keyTypes         map[string]*schemaType // field type by key, for the scan
}

// schemaTypes caches schemaType by reflect.Type, the way encoding/json
// caches its encoders: a type's node depends on the type alone. building
// serializes the building of new nodes, which may refer to each other.
var (
	schemaTypes sync.Map
	building    sync.Mutex
)

// schemaOf returns t's node.
func schemaOf(t reflect.Type) *schemaType {
	if st, ok := schemaTypes.Load(t); ok {
		return st.(*schemaType)
	}
	building.Lock()
	defer building.Unlock()
	fresh := map[reflect.Type]*schemaType{}
	st := buildSchema(t, fresh)
	for t, st := range fresh {
		schemaTypes.Store(t, st)
	}
	return st
}

func buildSchema(t reflect.Type, fresh map[reflect.Type]*schemaType) *schemaType {
	if st, ok := schemaTypes.Load(t); ok {
		return st.(*schemaType)
	}
	if st, ok := fresh[t]; ok {
		return st // a recursive type: filled in below, further up
	}
	st := &schemaType{t: t, kind: t.Kind()}
	fresh[t] = st
	st.custom = t == idType
	st.anyValue = t == rawJSONType || reflect.PointerTo(t).Implements(unmarshalerType)
	switch st.kind {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		st.elem = buildSchema(t.Elem(), fresh)
	case reflect.Struct:
		st.fields = jsonFields(t)
		st.keyTypes = make(map[string]*schemaType, len(st.fields))
		for i := range st.fields {
			f := &st.fields[i]
			f.typ = buildSchema(t.FieldByIndex(f.index).Type, fresh)
			f.key = append(appendJSONString(nil, f.name), ':')
			st.keyTypes[f.name] = f.typ
		}
	}
	return st
}

// fieldIndex returns the index in st.fields of the field of key name, or
// -1: it compares from hint on, round, since a request's keys mostly come
// in the fields' order (a hash of the key, in a map, costs more than the
// one or two comparisons that then find it).
func (st *schemaType) fieldIndex(name []byte, hint int) int {
	n := len(st.fields)
	i := min(max(hint, 0), n)
	for range n {
		if i == n {
			i = 0
		}
		if st.fields[i].name == string(name) {
			return i
		}
		i++
	}
	return -1
}

// jsonFields returns the JSON fields of struct t in encoding/json's order
// and with its rule for embedded structs: of the fields sharing a key, the
// shallowest wins, a tagged one breaks a tie at that depth, and a tie that
// remains drops them all.
func jsonFields(t reflect.Type) []codecField {
	type cand struct {
		codecField
		tagged bool
	}
	var all []cand
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok || f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Chan {
			continue
		}
		tag := f.Tag.Get("json")
		_, opts, _ := strings.Cut(tag, ",")
		all = append(all, cand{codecField{name: name, index: f.Index, omitEmpty: hasOption(opts, "omitempty")}, tag != "" && !strings.HasPrefix(tag, ",")})
	}
	var out []codecField
	for i, c := range all {
		win, tie := true, false
		for j, d := range all {
			if i == j || d.name != c.name {
				continue
			}
			switch {
			case len(d.index) < len(c.index):
				win = false
			case len(d.index) == len(c.index) && d.tagged && !c.tagged:
				win = false
			case len(d.index) == len(c.index) && d.tagged == c.tagged:
				tie = true
			}
		}
		if win && !tie {
			out = append(out, c.codecField)
		}
	}
	return out
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// encoder appends the JSON of Go values.
type encoder struct {
	buf []byte
	err error

	// Scratch of mapping, reused: the entries of the maps being written
	// (a stack: a map inside a map puts its own above), and their bytes.
	entries []mapEntry
	tmp     []byte
}

// mapEntry is a map's entry as the encoder wrote it, in map order:
// buf[a:b] is its key, colon and value.
type mapEntry struct {
	key  string
	a, b int
}

// encoders keeps encoders between calls (as encoding/json keeps its
// encodeState), so that a call's encoding grows no buffer in the steady
// state: the caller gets a copy of the right size.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

// maxKeptBuffer bounds the buffers an encoder keeps in encoders: a rare
// huge response is not held on to.
const maxKeptBuffer = 64 << 10

func getEncoder() *encoder { return encoders.Get().(*encoder) }

func putEncoder(e *encoder) {
	if cap(e.buf) > maxKeptBuffer || cap(e.tmp) > maxKeptBuffer {
		return
	}
	e.buf, e.err, e.entries, e.tmp = e.buf[:0], nil, e.entries[:0], e.tmp[:0]
	encoders.Put(e)
}

// marshal returns the JSON encoding of v, byte for byte what json.Marshal
// returns for the schema's types.
func marshal(v any) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	e.any(v)
	if e.err != nil {
		return nil, e.err
	}
	return slices.Clone(e.buf), nil
}

// any writes v, of any type.
func (e *encoder) any(v any) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		e.buf = append(e.buf, "null"...)
		return
	}
	e.value(rv, schemaOf(rv.Type()))
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// value writes v, whose type's node is st.
func (e *encoder) value(v reflect.Value, st *schemaType) {
	switch st.kind {
	case reflect.Bool:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		e.float(v.Float(), st.t.Bits())
	case reflect.String:
		e.buf = appendJSONString(e.buf, v.String())
	case reflect.Pointer:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return
		}
		e.value(v.Elem(), st.elem)
	case reflect.Interface:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return
		}
		v = v.Elem()
		e.value(v, schemaOf(v.Type()))
	case reflect.Struct:
		if st.custom {
			e.custom(v)
			return
		}
		if st.anyValue || st.t.Implements(marshalerType) {
			e.fail(errors.New("json: unsupported type: " + st.t.String()))
			return
		}
		e.object(v, st)
	case reflect.Map:
		e.mapping(v, st)
	case reflect.Slice:
		switch {
		case st.t == rawJSONType:
			if v.Len() == 0 {
				e.buf = append(e.buf, "null"...)
			} else {
				e.buf = append(e.buf, v.Bytes()...)
			}
		case v.IsNil():
			e.buf = append(e.buf, "null"...)
		case st.elem.kind == reflect.Uint8:
			e.fail(errors.New("json: unsupported type: " + st.t.String()))
		default:
			e.array(v, st.elem)
		}
	case reflect.Array:
		e.array(v, st.elem)
	default:
		e.fail(errors.New("json: unsupported type: " + st.t.String()))
	}
}

// float writes f as encoding/json does (ES6's number to string: %f, or %e
// below 1e-6 and from 1e21, with the exponent unpadded).
func (e *encoder) float(f float64, bits int) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(errors.New("json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, bits)))
		e.buf = append(e.buf, "null"...)
		return
	}
	abs := math.Abs(f)
	if bits == 64 && abs < 1e15 && f == math.Trunc(f) && (f != 0 || !math.Signbit(f)) {
		// An integral float64 of at most 15 digits: its shortest form is
		// its integer's digits (-0 has its sign bit: not here).
		e.buf = strconv.AppendInt(e.buf, int64(f), 10)
		return
	}
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b := strconv.AppendFloat(e.buf, f, format, -1, bits)
	if n := len(b); format == 'e' && n-len(e.buf) >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 is e-7
		b = b[:n-1]
	}
	e.buf = b
}

// custom writes a value with its own MarshalJSON. JobID is the schema's
// one. Its method is called directly: a call through the interface would
// keep every MarshalJSON of the program in the module (time.Time's, 40 kB).
func (e *encoder) custom(v reflect.Value) {
	id, ok := reflect.TypeAssert[JobID](v)
	if !ok {
		e.fail(errors.New("json: unsupported type: " + v.Type().String()))
		return
	}
	b, _ := id.MarshalJSON()
	e.buf = append(e.buf, b...)
}

func (e *encoder) object(v reflect.Value, st *schemaType) {
	e.buf = append(e.buf, '{')
	first := true
	for i := range st.fields {
		f := &st.fields[i]
		var fv reflect.Value
		if len(f.index) == 1 {
			fv = v.Field(f.index[0])
		} else {
			var err error
			if fv, err = v.FieldByIndexErr(f.index); err != nil {
				continue // behind a nil embedded pointer
			}
		}
		if f.omitEmpty && empty(fv) {
			continue
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = append(e.buf, f.key...)
		e.value(fv, f.typ)
	}
	e.buf = append(e.buf, '}')
}

// empty is omitempty's test.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// mapping writes a map with its keys sorted, as encoding/json does: each
// entry is written in map order, then the entries are put in key order.
// A map[string]float64 (the responses' maps) is read without reflect;
// another map through one reused key and value, not a copy of each.
func (e *encoder) mapping(v reflect.Value, st *schemaType) {
	if v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		e.fail(errors.New("json: unsupported type: " + v.Type().String()))
		return
	}
	e.buf = append(e.buf, '{')
	start, base := len(e.buf), len(e.entries)
	if m, ok := reflect.TypeAssert[map[string]float64](v); ok {
		for k, x := range m {
			a := len(e.buf)
			e.buf = append(appendJSONString(e.buf, k), ':')
			e.float(x, 64)
			e.entries = append(e.entries, mapEntry{k, a, len(e.buf)})
		}
	} else {
		key := reflect.New(v.Type().Key()).Elem()
		elem := reflect.New(v.Type().Elem()).Elem()
		var it reflect.MapIter
		it.Reset(v)
		for it.Next() {
			key.SetIterKey(&it)
			elem.SetIterValue(&it)
			a := len(e.buf)
			e.buf = append(appendJSONString(e.buf, key.String()), ':')
			e.value(elem, st.elem)
			e.entries = append(e.entries, mapEntry{key.String(), a, len(e.buf)})
		}
	}
	entries := e.entries[base:]
	if len(entries) <= 1 {
		e.entries = e.entries[:base]
		e.buf = append(e.buf, '}')
		return // in order already
	}
	slices.SortFunc(entries, func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
	e.tmp = append(e.tmp[:0], e.buf[start:]...)
	e.buf = e.buf[:start]
	for i, en := range entries {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, e.tmp[en.a-start:en.b-start]...)
	}
	e.entries = e.entries[:base]
	e.buf = append(e.buf, '}')
}

func (e *encoder) array(v reflect.Value, elem *schemaType) {
	e.buf = append(e.buf, '[')
	for i := range v.Len() {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.value(v.Index(i), elem)
	}
	e.buf = append(e.buf, ']')
}

// appendJSONString appends s quoted as encoding/json quotes it: <, > and &
// escaped for HTML, the control characters as \b \f \n \r \t or \u00XX,
// invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// unquote decodes a whole JSON string as encoding/json does: an invalid
// UTF-8 byte and an unpaired surrogate escape each become U+FFFD.
func unquote(raw []byte) string {
	if plain(raw) {
		return string(raw[1 : len(raw)-1])
	}
	body := raw[1 : len(raw)-1]
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i += 2
			switch body[i-1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(body[i:])
				if !ok {
					return string(out) // not valid JSON: never decoded
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
						r2, ok = hex4(body[i+2:])
					}
					if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
						i += 6
						r = d
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default: // \" \\ \/
				out = append(out, body[i-1])
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	return string(out)
}

// decoder fills a Go value from JSON that checkKeys accepted for its type:
// every key is a field, every value has the field's JSON type and fits it.
// What it meets otherwise is a bug of the scan, an internal error.
type decoder struct {
	data []byte
	i    int
}

var errDecode = errors.New("decoding a request the key scan accepted failed")

// unmarshal decodes data (one JSON value, accepted by checkKeys for v's
// type) into v, a non-nil pointer, as encoding/json would.
func unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v).Elem()
	d := decoder{data: data}
	if err := d.value(rv, schemaOf(rv.Type())); err != nil {
		return err
	}
	d.space()
	if d.i != len(d.data) {
		return errDecode
	}
	return nil
}

func (d *decoder) space() {
	for d.i < len(d.data) && (d.data[d.i] == ' ' || d.data[d.i] == '\t' || d.data[d.i] == '\r' || d.data[d.i] == '\n') {
		d.i++
	}
}

// raw returns the bytes of the value at d.i and moves past it.
func (d *decoder) raw() []byte {
	end := skipValue(d.data, d.i)
	b := d.data[d.i:end]
	d.i = end
	return b
}

// value decodes into v, whose type's node is st.
func (d *decoder) value(v reflect.Value, st *schemaType) error {
	d.space()
	if d.i >= len(d.data) {
		return errDecode
	}
	c := d.data[d.i]
	switch st.kind {
	case reflect.Pointer:
		if c == 'n' {
			return errDecode // the key scan refuses null
		}
		if v.IsNil() {
			v.Set(reflect.New(st.t.Elem()))
		}
		return d.value(v.Elem(), st.elem)
	case reflect.Struct:
		if st.custom {
			id, _ := reflect.TypeAssert[*JobID](v.Addr()) // the one Unmarshaler: see encoder.custom
			return id.UnmarshalJSON(d.raw())
		}
		if c == '{' && !st.anyValue {
			return d.object(v, st)
		}
	case reflect.Map:
		if c == '{' {
			return d.mapping(v, st)
		}
	case reflect.Slice:
		switch {
		case st.t == rawJSONType:
			v.SetBytes(slices.Clone(d.raw()))
			return nil
		case c == '[' && !st.anyValue:
			return d.slice(v, st)
		}
	default:
		return d.scalar(v, st, c)
	}
	return errDecode
}

// scalar decodes a string, a bool or a number into v.
func (d *decoder) scalar(v reflect.Value, st *schemaType, c byte) error {
	switch st.kind {
	case reflect.String:
		if c == '"' {
			v.SetString(unquote(d.raw()))
			return nil
		}
	case reflect.Bool:
		if c == 't' || c == 'f' {
			v.SetBool(c == 't')
			d.raw()
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := parseInt(d.raw())
		if err != nil || v.OverflowInt(n) {
			return errDecode
		}
		v.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(string(d.raw()), 10, 64)
		if err != nil || v.OverflowUint(n) {
			return errDecode
		}
		v.SetUint(n)
		return nil
	case reflect.Float32, reflect.Float64:
		f, err := parseFloat(d.raw(), st.t.Bits())
		if err != nil {
			return errDecode
		}
		v.SetFloat(f)
		return nil
	}
	return errDecode
}

// members calls f on each key of the object at d.i, with d.i at its value.
func (d *decoder) members(f func(key []byte) error) error {
	d.i++
	for {
		d.space()
		if d.i >= len(d.data) {
			return errDecode
		}
		switch d.data[d.i] {
		case '}':
			d.i++
			return nil
		case ',':
			d.i++
			continue
		}
		key := d.raw()
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return errDecode
		}
		d.i++
		if err := f(key); err != nil {
			return err
		}
	}
}

func (d *decoder) object(v reflect.Value, st *schemaType) error {
	next := 0
	return d.members(func(key []byte) error {
		var i int
		if plain(key) {
			i = st.fieldIndex(key[1:len(key)-1], next)
		} else {
			i = st.fieldIndex([]byte(unquote(key)), next)
		}
		if i < 0 {
			return errDecode
		}
		next = i + 1
		f := &st.fields[i]
		fv := v.Field(f.index[0])
		if len(f.index) > 1 {
			var err error
			if fv, err = v.FieldByIndexErr(f.index); err != nil {
				return errDecode // behind a nil embedded pointer: the schema has none
			}
		}
		return d.value(fv, f.typ)
	})
}

func (d *decoder) mapping(v reflect.Value, st *schemaType) error {
	t := st.t
	if t.Key().Kind() != reflect.String {
		return errDecode
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(t))
	}
	elem := reflect.New(t.Elem()).Elem()
	return d.members(func(key []byte) error {
		elem.SetZero()
		if err := d.value(elem, st.elem); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(unquote(key)).Convert(t.Key()), elem)
		return nil
	})
}

// slice decodes an array into v. [] is an empty slice, not nil, as
// encoding/json has it. Slices of float64 and int, most of a request's
// values, are filled without reflect.
func (d *decoder) slice(v reflect.Value, st *schemaType) error {
	switch st.t {
	case float64Slice:
		p, _ := reflect.TypeAssert[*[]float64](v.Addr())
		return elements(d, p, func(b []byte) (float64, error) { return parseFloat(b, 64) })
	case intSlice:
		p, _ := reflect.TypeAssert[*[]int](v.Addr())
		return elements(d, p, func(b []byte) (int, error) {
			n, err := parseInt(b)
			if int64(int(n)) != n {
				return 0, errDecode
			}
			return int(n), err
		})
	}
	d.i++
	n := 0
	for {
		d.space()
		if d.i >= len(d.data) {
			return errDecode
		}
		switch d.data[d.i] {
		case ']':
			d.i++
			if n == 0 {
				v.Set(reflect.MakeSlice(st.t, 0, 0))
			} else {
				v.SetLen(n)
			}
			return nil
		case ',':
			d.i++
			continue
		}
		if n >= v.Cap() {
			v.Grow(max(4, v.Cap())) // in place: MakeSlice would allocate a header too
		}
		v.SetLen(n + 1)
		if err := d.value(v.Index(n), st.elem); err != nil {
			return err
		}
		n++
	}
}

var (
	float64Slice = reflect.TypeFor[[]float64]()
	intSlice     = reflect.TypeFor[[]int]()
)

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseFloat is strconv.ParseFloat(string(b), bits) for a number literal
// the key scan accepted. One of at most 15 digits without an exponent
// (most of a request's) is its mantissa, an exact integer, over an exact
// power of ten: one correctly rounded division, so the float ParseFloat
// returns (its own exact path), at a fraction of the cost under
// WebAssembly (ParseFloat("40") is 17 times slower there than natively).
// Any other literal is ParseFloat's.
func parseFloat(b []byte, bits int) (float64, error) {
	digits := b
	if len(b) > 0 && b[0] == '-' {
		digits = b[1:]
	}
	var mant uint64
	n, frac, point := 0, 0, false
	for _, c := range digits {
		switch {
		case isDigit(c):
			mant = mant*10 + uint64(c-'0')
			n++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			n = -1 // an exponent: ParseFloat's
		}
		if n < 0 || n > 15 {
			return strconv.ParseFloat(string(b), bits)
		}
	}
	if bits != 64 || n == 0 {
		return strconv.ParseFloat(string(b), bits)
	}
	f := float64(mant) / exactPow10[frac]
	if len(digits) < len(b) {
		f = -f // -0 too
	}
	return f, nil
}

// parseInt is strconv.ParseInt(string(b), 10, 64) for a number literal
// the key scan accepted, by hand for up to 18 digits (exact in an int64).
func parseInt(b []byte) (int64, error) {
	digits := b
	if len(b) > 0 && b[0] == '-' {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	var n int64
	for _, c := range digits {
		if !isDigit(c) {
			return strconv.ParseInt(string(b), 10, 64)
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(b) {
		n = -n
	}
	return n, nil
}

// count returns the number of elements of the array of numbers at d.i
// (which the key scan accepted), so that it is decoded into one
// allocation rather than appended to one element at a time.
func (d *decoder) count() int {
	n, empty := 0, true
	for _, c := range d.data[d.i+1:] {
		switch {
		case c == ']':
			if empty {
				return 0
			}
			return n + 1
		case c == ',':
			n++
		case !isSpace(c):
			empty = false
		}
	}
	return n
}

// elements decodes an array of numbers into *p with parse.
func elements[T any](d *decoder, p *[]T, parse func([]byte) (T, error)) error {
	out := (*p)[:0]
	if n := d.count(); cap(out) < n || out == nil {
		out = make([]T, 0, n)
	}
	d.i++
	for {
		d.space()
		if d.i >= len(d.data) {
			return errDecode
		}
		switch d.data[d.i] {
		case ']':
			d.i++
			*p = out
			return nil
		case ',':
			d.i++
			continue
		}
		x, err := parse(d.raw())
		if err != nil {
			return errDecode
		}
		out = append(out, x)
	}
}

// wholeString reports whether b is one JSON string and nothing more: a
// quote, characters or escapes but no control character, a closing quote.
func wholeString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' {
		return false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\\':
			i++
		case c == '"':
			return i == len(b)-1
		case c < 0x20:
			return false
		}
	}
	return false
}
