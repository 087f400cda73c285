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
	"strconv"
	"strings"

	"github.com/orrery/orrery/internal/codec"
)

// Version is the schema version this package speaks.
const Version = 1

// MaxStringBytes bounds every string of a request, a value or a key, in
// bytes of UTF-8 once its escapes are decoded: ids, link ids in paths,
// names of modes. A longer one is a limit_exceeded error naming it, found
// before the request is decoded.
const MaxStringBytes = codec.MaxStringBytes

// MaxRequestBytes bounds a request's size; larger requests are rejected with
// code "limit_exceeded" before any decoding.
const MaxRequestBytes = 64 << 20

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
	out, err := codec.Marshal(resp)
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
	if o.timed {
		ctx = withStart(ctx)
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
	Op      string    `json:"op"`
	Request codec.Raw `json:"request"`
}

// reply is the response envelope of [Handle].
type reply struct {
	Version  int       `json:"version"`
	Op       string    `json:"op,omitempty"`
	Response codec.Raw `json:"response,omitempty"`
	Error    *Error    `json:"error,omitempty"`
}

// ErrorEnvelope returns the error envelope {"version": 1, "error": {"code",
// "message"}} that hosts answer with for a failure outside any request
// (a bad pointer, a NULL buffer), in the bytes Handle would use.
func ErrorEnvelope(code, message string) []byte {
	out, _ := codec.Marshal(reply{Version: Version, Error: &Error{Code: code, Message: message}})
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
			out, _ = codec.Marshal(r)
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
	out, _ = codec.Marshal(r)
	return out
}

// encodeReply returns codec.Marshal(reply{Version: Version, Op: op,
// Response: resp's encoding}): the response is written in place, in the
// one buffer.
func encodeReply(op string, resp any) ([]byte, error) {
	var head [96]byte
	pre := strconv.AppendInt(append(head[:0], `{"version":`...), Version, 10)
	pre = append(codec.AppendString(append(pre, `,"op":`...), op), `,"response":`...)
	return codec.MarshalAfter(pre, resp, "}")
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
	n, members, se := codec.CheckObject(env)
	if se != nil {
		return op{}, "", nil, codecError(se)
	}
	rawOp, request, ok := plainEnvelope(n, members)
	if !ok {
		m := codec.GetMeasures(envelopeMeasures)
		defer codec.PutMeasures(m)
		if err := codec.CheckKeys(env, envelopeType, m); err != nil {
			return op{}, "", nil, codecError(err)
		}
		rawOp, _ = m.Get("op")
		request, _ = m.Get("request")
	}
	request = bytes.TrimSpace(request)
	if rawOp = bytes.TrimSpace(rawOp); codec.Plain(rawOp) {
		if o, ok := lookupRaw(rawOp[1 : len(rawOp)-1]); ok {
			return o, o.Name, request, nil
		}
	}
	if rawOp != nil {
		name = codec.Unquote(rawOp)
	}
	if o, ok := lookup(name); ok {
		return o, o.Name, request, nil
	}
	return op{}, name, nil, unknownOp(name)
}

// plainEnvelope returns the raw op and request of an envelope of n
// members whose syntax codec.CheckObject passed, when the scan alone
// shows that the key scan accepts it: an object of two members, "op" a
// plain string within MaxStringBytes and "request" (any value), with
// plain keys. Then the envelope's bytes are scanned once; any other
// envelope, right or wrong, is left to codec.CheckKeys.
func plainEnvelope(n int, members [2]codec.Member) (rawOp, request []byte, ok bool) {
	if n != 2 {
		return nil, nil, false
	}
	for _, m := range members {
		switch string(m.Key) {
		case `"op"`:
			rawOp = bytes.TrimSpace(m.Value)
		case `"request"`:
			request = m.Value
		}
	}
	if rawOp == nil || request == nil || rawOp[0] != '"' || !codec.Plain(rawOp) || len(rawOp)-2 > MaxStringBytes {
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

// decode unmarshals data into v strictly: unknown fields, trailing data and
// type mismatches are *Error values with code malformed_json naming the field.
func decode(data []byte, v any) error { return decodeRequest(data, v, false) }

// decodeRequest is decode; checked says data's syntax was checked already
// (it is a value of an envelope codec.CheckSyntax accepted, so it would
// accept data too) and is not checked again.
func decodeRequest(data []byte, v any, checked bool) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Code: CodeMalformed, Message: "empty request"}
	}
	if !checked {
		if se := codec.CheckSyntax(data); se != nil {
			return codecError(se)
		}
	}
	t := reflect.TypeOf(v)
	sz, _ := v.(sized)
	var m *codec.Measures
	if sz != nil {
		m = codec.GetMeasures(sz.measure())
		defer codec.PutMeasures(m)
	}
	if err := codec.CheckKeys(data, t, m); err != nil {
		return codecError(err)
	}
	if sz != nil {
		if err := sz.limits(m); err != nil {
			return err
		}
	}
	if err := codec.Unmarshal(data, v); err != nil {
		return &Error{Code: CodeInternal, Message: message(err), err: err}
	}
	return nil
}

// sized is a request whose sizes are checked before it is decoded: the
// key scan measures the values measure names (see codec.Measures), and
// limits refuses a request past a limit, so that a large request is
// refused in time and memory proportional to its bytes, before its values
// are allocated (a 40 MB plan of 700,000 jobs decoded into 800 MB before
// its size was checked).
type sized interface {
	measure() []string
	limits(m *codec.Measures) error
}
