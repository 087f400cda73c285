package trace

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors; every error returned by this package wraps one of them.
var (
	ErrFieldCount   = errors.New("trace: line does not have 12 tab-separated fields")
	ErrSyntax       = errors.New("trace: malformed field")
	ErrRange        = errors.New("trace: value out of range")
	ErrUnknownModel = errors.New("trace: unknown model")
	ErrBatchSize    = errors.New("trace: batch size not supported by the model")
	ErrMode         = errors.New("trace: unknown adaptation mode")
	ErrThroughput   = errors.New("trace: no usable throughput")
	ErrConfig       = errors.New("trace: invalid configuration")
)

// ParseError locates a problem in a trace: the 1-based line number (0 when
// not parsing a file), the field (by its trace name, such as "job_type" or
// "total_steps"), and the offending value.
type ParseError struct {
	Line  int
	Field string
	Value string
	Err   error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("trace:")
	if e.Line > 0 {
		b.WriteString(" line " + strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(" field " + e.Field)
	}
	if e.Value != "" {
		v := e.Value
		if len(v) > 80 {
			v = v[:80] + "..."
		}
		b.WriteString(" " + strconv.Quote(v))
	}
	b.WriteString(": " + strings.TrimPrefix(e.Err.Error(), "trace: "))
	return b.String()
}

// Unwrap returns the wrapped error (a sentinel, or an error of another
// package wrapping its own sentinel).
func (e *ParseError) Unwrap() error { return e.Err }
