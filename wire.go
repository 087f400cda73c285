// The versioned JSON schema (v1): the one format the
// command-line tool, the WebAssembly module and every binding speak.
//
// A call names an operation ("cassini.link", "cassini.rank",
// "shockwave.plan", ...) and carries its request object. [Call] decodes the
// request strictly (unknown fields, trailing data and wrong types are errors),
// validates it, runs the engine and encodes the response. [Handle] wraps the
// same thing in an envelope and never fails: errors come back as a JSON error
// object, which is what the WebAssembly ABI returns.
//
// Envelope request:
//
//	{"op": "cassini.link", "request": {...}}
//
// Envelope response, one of:
//
//	{"version": 1, "op": "cassini.link", "response": {...}}
//	{"version": 1, "op": "cassini.link", "error": {"code": "invalid_argument", "field": "jobs[1].phases[0].gbps", "message": "..."}}
//
// Responses are deterministic: the same request gives byte-identical JSON on
// every host (maps are encoded with sorted keys, and every engine result is
// computed in exact integer arithmetic before it is converted to floats).

package orrery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/orrery/orrery/engine/cassini/link"
)

// Version is the schema version this package speaks.
const Version = 1

// MaxRequestBytes bounds a request's size; larger requests are rejected with
// code "limit_exceeded" before any decoding.
const MaxRequestBytes = 64 << 20

// Error codes of the JSON error object.
const (
	CodeMalformed = "malformed_json"   // the bytes are not the JSON the schema expects
	CodeInvalid   = "invalid_argument" // well-formed, but a value is out of its domain
	CodeUnknownOp = "unknown_op"       // the envelope names no known operation
	CodeLimit     = "limit_exceeded"   // a size or perimeter limit was hit
	CodeInternal  = "internal"         // a bug: please report it
)

// Sentinel errors; every error [Call] returns wraps exactly one of them.
var (
	ErrMalformed = errors.New("wire: malformed request")
	ErrInvalid   = errors.New("wire: invalid argument")
	ErrUnknownOp = errors.New("wire: unknown operation")
	ErrLimit     = errors.New("wire: limit exceeded")
	ErrInternal  = errors.New("wire: internal error")
)

// Error is the JSON error object. Field is a JSON path into the request
// ("jobs[1].phases[0].gbps") when the error concerns one value.
type Error struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`

	err error // the engine or decoding error, which wraps the engine's sentinel
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Unwrap returns both the wire sentinel of e's code and the underlying cause,
// so errors.Is works with either (e.g. circle.ErrPerimeterTooLarge).
func (e *Error) Unwrap() []error {
	s := ErrInternal
	switch e.Code {
	case CodeMalformed:
		s = ErrMalformed
	case CodeInvalid:
		s = ErrInvalid
	case CodeUnknownOp:
		s = ErrUnknownOp
	case CodeLimit:
		s = ErrLimit
	}
	if e.err == nil {
		return []error{s}
	}
	return []error{s, e.err}
}

// fieldError reports that the value at field is invalid because of err.
func fieldError(field string, err error) *Error {
	code := CodeInvalid
	if link.IsLimit(err) || errors.Is(err, ErrTooManyTicks) || errors.Is(err, ErrTooLarge) {
		code = CodeLimit
	}
	return &Error{Code: code, Field: field, Message: message(err), err: err}
}

// elemPath is the path of element k of the array at pre, then post:
// built with strconv, not fmt.Sprintf, which cost a tenth of a small
// cassini.link call (more in WebAssembly) when it named every element.
func elemPath(pre string, k int, post string) string {
	return pre + "[" + strconv.Itoa(k) + "]" + post
}

// withField names field in err, an *Error from fieldError(""): an
// element's path is built only once its value is refused.
func withField(err error, field string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Field = field
	}
	return err
}

// Call runs op on the JSON request and returns the JSON response. Errors are
// *Error values. The stateful operations need a [Session] and are errors
// here.
func Call(ctx context.Context, op string, request []byte) ([]byte, error) {
	return call(ctx, nil, op, request)
}

func call(ctx context.Context, s *Session, op string, request []byte) ([]byte, error) {
	o, ok := lookup(op)
	if !ok {
		return nil, unknownOp(op)
	}
	resp, err := runOp(ctx, s, o, request, false)
	if err != nil {
		return nil, err
	}
	out, err := marshal(resp)
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: message(err), err: err}
	}
	return out, nil
}

func unknownOp(op string) *Error {
	return &Error{Code: CodeUnknownOp, Field: "op", Message: fmt.Sprintf("unknown operation %q (known: %s)", op, strings.Join(opNames(), ", "))}
}

// runOp runs o on request (checked: its syntax was checked with the
// envelope's) and returns the response to encode.
func runOp(ctx context.Context, s *Session, o op, request []byte, checked bool) (any, error) {
	if len(request) > MaxRequestBytes {
		return nil, &Error{Code: CodeLimit, Message: fmt.Sprintf("request is %d bytes, above the %d byte limit", len(request), MaxRequestBytes)}
	}
	resp, err := o.exec(ctx, s, request, checked)
	if err != nil {
		var we *Error
		if !errors.As(err, &we) {
			we = &Error{Code: CodeInvalid, Message: message(err), err: err}
		}
		return nil, we
	}
	return resp, nil
}

// envelope is the request envelope of [Handle].
type envelope struct {
	Op      string  `json:"op"`
	Request rawJSON `json:"request"`
}

// reply is the response envelope of [Handle].
type reply struct {
	Version  int     `json:"version"`
	Op       string  `json:"op,omitempty"`
	Response rawJSON `json:"response,omitempty"`
	Error    *Error  `json:"error,omitempty"`
}

// ErrorEnvelope returns the error envelope {"version": 1, "error": {"code",
// "message"}} that hosts answer with for a failure outside any request
// (a bad pointer, a NULL buffer), in the bytes Handle would use.
func ErrorEnvelope(code, message string) []byte {
	out, _ := marshal(reply{Version: Version, Error: &Error{Code: code, Message: message}})
	return out
}

// Handle runs the envelope {"op": ..., "request": ...} and returns the
// response envelope. It never fails and never panics: every error, including
// a bug in the engine, comes back as {"error": {...}}. The stateful
// operations need a [Session] and are errors here.
func Handle(ctx context.Context, env []byte) []byte { return handle(ctx, nil, env) }

func handle(ctx context.Context, s *Session, env []byte) (out []byte) {
	r := reply{Version: Version}
	defer func() {
		if p := recover(); p != nil {
			r.Response = nil
			r.Error = &Error{Code: CodeInternal, Message: fmt.Sprintf("panic: %v", p)}
			out, _ = marshal(r)
		}
	}()
	if len(env) > MaxRequestBytes {
		r.Error = &Error{Code: CodeLimit, Message: fmt.Sprintf("request is %d bytes, above the %d byte limit", len(env), MaxRequestBytes)}
	} else if o, name, request, err := openEnvelope(env); err != nil {
		r.Op = name
		r.Error = asError(err)
	} else {
		r.Op = name
		resp, err := runOp(ctx, s, o, request, true)
		if err == nil {
			if out, err = encodeReply(name, resp); err == nil {
				return out
			}
			err = &Error{Code: CodeInternal, Message: message(err), err: err}
		}
		r.Error = asError(err)
	}
	out, _ = marshal(r)
	return out
}

// encodeReply returns marshal(reply{Version: Version, Op: op, Response:
// resp's encoding}): the response is written in place, in the one buffer.
func encodeReply(op string, resp any) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	e.buf = strconv.AppendInt(append(e.buf, `{"version":`...), Version, 10)
	e.buf = append(appendJSONString(append(e.buf, `,"op":`...), op), `,"response":`...)
	e.any(resp)
	if e.err != nil {
		return nil, e.err
	}
	e.buf = append(e.buf, '}')
	return slices.Clone(e.buf), nil
}

var (
	envelopeType     = reflect.TypeFor[envelope]()
	envelopeMeasures = []string{"op", "request"}
)

// openEnvelope checks env as decode would decode it into an envelope, and
// returns the operation it names (name: the op as given, when it names
// none, with an unknown_op error) and the request's bytes, a slice of env:
// the one scan of the envelope's syntax checked the request's too, and
// nothing copies it.
func openEnvelope(env []byte) (o op, name string, request []byte, err error) {
	if len(bytes.TrimSpace(env)) == 0 {
		return op{}, "", nil, &Error{Code: CodeMalformed, Message: "empty request"}
	}
	s := syntaxScanner{data: env, record: true}
	if se := s.check(); se != nil {
		return op{}, "", nil, se
	}
	rawOp, request, ok := plainEnvelope(&s)
	if !ok {
		m := measures{paths: envelopeMeasures}
		if err := checkKeys(env, envelopeType, &m); err != nil {
			return op{}, "", nil, err
		}
		rawOp, _ = m.get("op")
		request, _ = m.get("request")
	}
	request = bytes.TrimSpace(request)
	if rawOp = bytes.TrimSpace(rawOp); plain(rawOp) {
		if o, ok := lookupRaw(rawOp[1 : len(rawOp)-1]); ok {
			return o, o.Name, request, nil
		}
	}
	if rawOp != nil {
		name = unquote(rawOp)
	}
	if o, ok := lookup(name); ok {
		return o, o.Name, request, nil
	}
	return op{}, name, nil, unknownOp(name)
}

// plainEnvelope returns the raw op and request of the envelope s's syntax
// scan passed, when the scan alone shows that the key scan accepts it: an
// object of two members, "op" a plain string within MaxStringBytes and
// "request" (any value), with plain keys. Then the envelope's bytes are
// scanned once; any other envelope, right or wrong, is left to checkKeys.
func plainEnvelope(s *syntaxScanner) (rawOp, request []byte, ok bool) {
	if s.nmembers != 2 || s.shallow[0] != '{' {
		return nil, nil, false
	}
	for _, m := range s.members {
		switch string(s.data[m.keyA:m.keyB]) {
		case `"op"`:
			rawOp = bytes.TrimSpace(s.data[m.valA:m.valB])
		case `"request"`:
			request = s.data[m.valA:m.valB]
		}
	}
	if rawOp == nil || request == nil || rawOp[0] != '"' || !plain(rawOp) || len(rawOp)-2 > MaxStringBytes {
		return nil, nil, false
	}
	return rawOp, request, true
}

// lookupRaw is lookup by the bytes of the name, without making it a
// string.
func lookupRaw(name []byte) (op, bool) {
	lo, hi := 0, len(registry)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if registry[m].Name < string(name) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(registry) && registry[lo].Name == string(name) {
		return registry[lo], true
	}
	return op{}, false
}

func asError(err error) *Error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	return &Error{Code: CodeInternal, Message: message(err), err: err}
}

// decode unmarshals data into v strictly: unknown fields, trailing data and
// type mismatches are *Error values with code malformed_json naming the field.
func decode(data []byte, v any) error { return decodeRequest(data, v, false) }

// decodeRequest is decode; checked says data's syntax was checked already
// (it is a value of an envelope syntaxCheck accepted, so it would accept
// data too) and is not checked again.
func decodeRequest(data []byte, v any, checked bool) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Code: CodeMalformed, Message: "empty request"}
	}
	if !checked {
		if se := syntaxCheck(data); se != nil {
			return se
		}
	}
	t := reflect.TypeOf(v)
	sz, _ := v.(sized)
	var m *measures
	if sz != nil {
		m = getMeasures(sz.measure())
		defer putMeasures(m)
	}
	if err := checkKeys(data, t, m); err != nil {
		return err
	}
	if sz != nil {
		if err := sz.limits(m); err != nil {
			return err
		}
	}
	if err := unmarshal(data, v); err != nil {
		return &Error{Code: CodeInternal, Message: message(err), err: err}
	}
	return nil
}

// sized is a request whose sizes are checked before it is decoded: the
// scan measures the values measure names (see measures), and limits
// refuses a request past a limit, so that a large request is refused in
// time and memory proportional to its bytes, before its values are
// allocated (a 40 MB plan of 700,000 jobs decoded into 800 MB
// before its size was checked).
type sized interface {
	measure() []string
	limits(m *measures) error
}

// position returns the 1-based line and column (in bytes) of offset.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	prefix := data[:offset]
	line = 1 + bytes.Count(prefix, []byte{'\n'})
	return line, int(offset) - (bytes.LastIndexByte(prefix, '\n') + 1)
}

// structField returns the type and declared key of the field of struct t
// that the JSON key decodes into (encoding/json matches names
// case-insensitively), and whether there is one.
func structField(t reflect.Type, key string) (reflect.Type, string, bool) {
	var fold reflect.Type
	var foldName string
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		if name == key {
			return f.Type, name, true
		}
		if fold == nil && strings.EqualFold(name, key) {
			fold, foldName = f.Type, name
		}
	}
	return fold, foldName, fold != nil
}

// jsonName returns the key encoding/json gives struct field f, and false
// when f has none (unexported, "-", or an untagged embedded struct whose
// fields are promoted).
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || (f.Anonymous && f.Tag.Get("json") == "") {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}
