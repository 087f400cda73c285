// Package codec is the strict JSON codec of orrery's schema, in place of
// encoding/json.
//
// Decoding is checked in full before anything is decoded: [CheckSyntax]
// holds the bytes to encoding/json's grammar and words its refusals as
// encoding/json's Decoder does; [CheckKeys] then walks them beside the Go
// type they decode into and refuses, naming the value by its JSON path
// ("jobs[1].phases[0].ms"), what encoding/json lets through: a key that
// names a field only when case is ignored, a key given twice, null, text
// that is not valid UTF-8 or holds an unpaired surrogate, a value of the
// wrong JSON type, a number that does not fit its field, a string past
// [MaxStringBytes] and a float below the smallest normal. It also measures
// the values a caller names ([Measures]), so that a request's sizes can be
// refused before its values are allocated: work before a refusal is
// bounded by the request's bytes. [Unmarshal] then fills the value from
// input already known to fit it; [Decode] is the three in one.
//
// Encoding ([Marshal]) writes exactly what encoding/json writes for the
// schema's types (HTML-safe string escapes, the ES6 float format, map keys
// sorted, omitempty, embedded structs inlined), which the tests check on
// the whole corpus of the schema.
//
// It exists for strictness and for the WebAssembly module's size:
// encoding/json cost the module 0.34 MB more than this package does (its
// code, time.Time's JSON methods its interface calls kept, their data). It
// uses reflect, which fmt links in anyway, and caches what it learns of
// each type.
package codec

import (
	"bytes"
	"reflect"
	"sync"
)

// Decode decodes data, one JSON value, into v, a non-nil pointer,
// strictly: [CheckSyntax], then [CheckKeys] for v's type, then
// [Unmarshal]. Its errors are *[Error]s.
func Decode(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Code: Malformed, Message: "empty request"}
	}
	if e := CheckSyntax(data); e != nil {
		return e
	}
	if e := CheckKeys(data, reflect.TypeOf(v), nil); e != nil {
		return e
	}
	return Unmarshal(data, v)
}

// Register makes the codec encode a T with enc and decode one with dec
// (which may not fail: a T that cannot be what it decoded keeps the bytes
// for its owner to refuse, naming the field). The schema's job id is such
// a type. Their functions are called directly, not through the
// json.Marshaler interface, which would keep every MarshalJSON of a
// program in a WebAssembly module (time.Time's, 40 kB). Call it from an
// init function, before the codec meets a T.
func Register[T any](enc func(dst []byte, v T) []byte, dec func(v *T, raw []byte)) {
	t := reflect.TypeFor[T]()
	customs.Store(t, &custom{
		enc: func(dst []byte, v reflect.Value) []byte {
			x, _ := reflect.TypeAssert[T](v)
			return enc(dst, x)
		},
		dec: func(v reflect.Value, raw []byte) {
			p, _ := reflect.TypeAssert[*T](v.Addr())
			dec(p, raw)
		},
	})
}

// custom is a registered type's encoder and decoder.
type custom struct {
	enc func(dst []byte, v reflect.Value) []byte
	dec func(v reflect.Value, raw []byte)
}

// customs holds the registered types, by reflect.Type.
var customs sync.Map
