package orrery

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/shockwave/predictor"
	"github.com/orrery/orrery/internal/codec"
	"github.com/orrery/orrery/kernels"
)

// Error codes of the JSON error object.
const (
	CodeMalformed = codec.Malformed // the bytes are not the JSON the schema expects
	CodeInvalid   = codec.Invalid   // well-formed, but a value is out of its domain
	CodeUnknownOp = "unknown_op"    // the envelope names no known operation
	CodeLimit     = codec.Limit     // a size or perimeter limit was hit
	CodeInternal  = "internal"      // a bug: please report it
)

// The sentinel of each code: every error [Call] returns wraps exactly one
// of them.
var (
	ErrMalformed = errors.New("orrery: malformed request")
	ErrInvalid   = errors.New("orrery: invalid argument")
	ErrUnknownOp = errors.New("orrery: unknown operation")
	ErrLimit     = errors.New("orrery: limit exceeded")
	ErrInternal  = errors.New("orrery: internal error")
)

// Errors of a request that the engine packages do not define; an error
// wraps one of these beside its code's sentinel.
var (
	// ErrTooManyTicks: a request's jobs quantize to more than
	// MaxProfileTicks ticks in all (limit_exceeded).
	ErrTooManyTicks = errors.New("orrery: the jobs quantize to too many ticks")
	// ErrTooLarge: a request's counts (candidates × jobs, ...) pass a limit
	// of the schema (limit_exceeded).
	ErrTooLarge = errors.New("orrery: request too large")
	// ErrTimeLimit: a call's time limit ended before it had any answer to
	// return (limit_exceeded, naming time_limit_ms). Once it has one, a
	// call that runs out of time answers its best so far with a status
	// instead.
	ErrTimeLimit = errors.New("orrery: time limit ended before a first answer")

	// ErrShortPeriod: a job's iteration is shorter than one tick of the
	// request's tick_ms (invalid_argument): most often seconds typed
	// where milliseconds are meant.
	ErrShortPeriod = errors.New("orrery: period shorter than one tick")

	ErrEmptyID          = errors.New("orrery: empty id")
	ErrDuplicateID      = errors.New("orrery: duplicate id")
	ErrUnknownID        = errors.New("orrery: unknown id")
	ErrPhasesAndSamples = errors.New("orrery: give phases or samples, not both")
	// ErrOneSource: a job gives more than one of phases, samples, series
	// and events (or a period_ms with a series or events, whose period is
	// found).
	ErrOneSource = errors.New("orrery: give one of phases, samples, series and events (and period_ms only with phases or samples)")
	// ErrUnknownHandle: a stateful operation's handle is not open in the
	// Session.
	ErrUnknownHandle = errors.New("orrery: unknown handle")
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

// Unwrap returns both the sentinel of e's code and the underlying cause,
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

// asError is err as an *Error: itself, or an internal error.
func asError(err error) *Error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	return &Error{Code: CodeInternal, Message: message(err), err: err}
}

// codecError is the codec's refusal as the schema's error.
func codecError(e *codec.Error) *Error {
	return &Error{Code: e.Code, Field: e.Field, Message: e.Message}
}

// checkFloats reports the first float of a request (v, a pointer to it)
// that no request may hold, named by its JSON path under prefix (see
// codec.BadFloat): what the typed functions check first. The JSON
// operations skip it: their requests hold none.
func checkFloats(prefix string, v any) error {
	path, x, why, ok := codec.BadFloat(v, prefix)
	if ok {
		return nil
	}
	return fieldError(path, fmt.Errorf("%w: %v is %s", ErrInvalid, x, why))
}

// internalPackages prefix the text of the sentinels ("round: invalid
// state", "orrery: empty id"): names a user of the schema never needs in
// a message.
var internalPackages = []string{"orrery", "round", "market", "predictor", "profile", "link", "circle", "candidate", "affinity", "agent"}

// message returns err's text in the schema's words: no package names
// ("round: invalid state: ..." is "invalid state: ...") and limits as
// numbers ("kernels.MaxValue units" is "16777215 units"). Every *Error
// built from an engine error takes its message from here; the wrapped
// cause keeps its own text, for errors.Is and for logs.
func message(err error) string {
	msg := strings.ReplaceAll(err.Error(), "kernels.MaxValue", strconv.Itoa(kernels.MaxValue))
	var b strings.Builder
	// A prefix counts at the start of the message or of a wrapped part,
	// after ": ".
	for start := true; msg != ""; {
		if start {
			for _, p := range internalPackages {
				if rest, ok := strings.CutPrefix(msg, p+": "); ok {
					msg = rest
					break
				}
			}
		}
		i := strings.Index(msg, ": ")
		if i < 0 {
			b.WriteString(msg)
			break
		}
		b.WriteString(msg[:i+2])
		msg = msg[i+2:]
		start = true
	}
	return b.String()
}

// fieldMessage is message for an engine error about a value the *Error's
// field names already: a predictor error leaves out its own (Go) name for
// the value ("Job.EpochBS = 6 epochs profiled, ...: lengths do not match"
// is "lengths do not match: 6 epochs profiled, ...").
func fieldMessage(err error) string {
	var pe *predictor.FieldError
	if !errors.As(err, &pe) {
		return message(err)
	}
	m := message(pe.Err)
	if pe.Value != "" {
		m += ": " + pe.Value
	}
	return m
}
