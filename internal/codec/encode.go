package codec

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

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

// Marshal returns the JSON encoding of v, byte for byte what json.Marshal
// returns for the schema's types.
func Marshal(v any) ([]byte, error) { return MarshalAfter(nil, v, "") }

// MarshalAfter returns prefix, the JSON encoding of v, then suffix, in one
// buffer: an envelope written around a response without copying the
// response. prefix is only read.
func MarshalAfter(prefix []byte, v any, suffix string) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	e.buf = append(e.buf, prefix...)
	e.any(v)
	if e.err != nil {
		return nil, e.err
	}
	e.buf = append(e.buf, suffix...)
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
		e.buf = AppendString(e.buf, v.String())
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
		if st.custom != nil {
			e.buf = st.custom.enc(e.buf, v)
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
		case st.t == rawType:
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
			e.buf = append(AppendString(e.buf, k), ':')
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
			e.buf = append(AppendString(e.buf, key.String()), ':')
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

// AppendString appends s quoted as encoding/json quotes it: <, > and &
// escaped for HTML, the control characters as \b \f \n \r \t or \u00XX,
// invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func AppendString(dst []byte, s string) []byte {
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
