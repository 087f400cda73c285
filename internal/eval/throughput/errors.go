package throughput

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors; every error returned by this package wraps one of them.
var (
	ErrSyntax        = errors.New("throughput: malformed table")
	ErrKey           = errors.New("throughput: malformed key")
	ErrValue         = errors.New("throughput: invalid throughput")
	ErrDuplicate     = errors.New("throughput: duplicate key")
	ErrUnknownWorker = errors.New("throughput: unknown worker type")
	ErrUnknownKey    = errors.New("throughput: no throughput for key")
)

// KeyError reports where in a table a problem is: the worker type, the key
// and, for co-located entries, the other job's key. Empty fields do not apply.
type KeyError struct {
	Worker, Key, Other string
	Detail             string
	Err                error
}

func (e *KeyError) Error() string {
	var b strings.Builder
	b.WriteString("throughput:")
	if e.Worker != "" {
		b.WriteString(" worker " + strconv.Quote(e.Worker))
	}
	if e.Key != "" {
		b.WriteString(" key " + strconv.Quote(e.Key))
	}
	if e.Other != "" {
		b.WriteString(" entry " + strconv.Quote(e.Other))
	}
	b.WriteString(": " + strings.TrimPrefix(e.Err.Error(), "throughput: "))
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *KeyError) Unwrap() error { return e.Err }
