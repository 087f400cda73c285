package codec

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes a whole JSON string as encoding/json does: an invalid
// UTF-8 byte and an unpaired surrogate escape each become U+FFFD.
func Unquote(raw []byte) string {
	if Plain(raw) {
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

// decoder fills a Go value from JSON that CheckKeys accepted for its type:
// every key is a field, every value has the field's JSON type and fits it.
// What it meets otherwise is a bug of the scan, an internal error.
type decoder struct {
	data []byte
	i    int
}

var errDecode = errors.New("decoding a request the key scan accepted failed")

// Unmarshal decodes data (one JSON value, accepted by CheckKeys for v's
// type) into v, a non-nil pointer, as encoding/json would.
func Unmarshal(data []byte, v any) error {
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
		if st.custom != nil {
			st.custom.dec(v, d.raw())
			return nil
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
		case st.t == rawType:
			v.SetBytes(slices.Clone(d.raw()))
			return nil
		case c == '[' && !st.anyValue:
			return d.slice(v, st)
		}
	case reflect.Array:
		if c == '[' && !st.anyValue {
			return d.array(v, st)
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
			v.SetString(Unquote(d.raw()))
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
		if Plain(key) {
			i = st.fieldIndex(key[1:len(key)-1], next)
		} else {
			i = st.fieldIndex([]byte(Unquote(key)), next)
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
		v.SetMapIndex(reflect.ValueOf(Unquote(key)).Convert(t.Key()), elem)
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

// array decodes an array into v, a Go array, as encoding/json does:
// elements past its length are dropped, and those the JSON lacks are
// zero.
func (d *decoder) array(v reflect.Value, st *schemaType) error {
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
			for i := n; i < v.Len(); i++ {
				v.Index(i).SetZero()
			}
			return nil
		case ',':
			d.i++
			continue
		}
		if n < v.Len() {
			if err := d.value(v.Index(n), st.elem); err != nil {
				return err
			}
		} else {
			d.raw()
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
