package market

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors. Validation failures are *[FieldError] values wrapping one.
var (
	ErrInvalid = errors.New("market: invalid problem")
	ErrLimit   = errors.New("market: problem too large")
	// ErrTimeLimit: the context ended before Solve had a first plan
	// (while it built its tables); past that point an ending context
	// gives the best plan so far instead.
	ErrTimeLimit = errors.New("market: the context ended before the first plan")
)

// FieldError is an invalid value of a [Problem], named by its Go field.
type FieldError struct {
	// Job is the index in Problem.Jobs of the job the value belongs to, or
	// −1 for a value outside the jobs.
	Job int
	// ID is that job's ID (when Job ≥ 0).
	ID int
	// Field is the Go field with its element indices: of the job when
	// Job ≥ 0 ("Progress", "MeanEpoch"), else of the Problem ("GPUs",
	// "Jobs", "Config.Rounds", "Config.Breakpoints[2]").
	Field string
	Err   error // wraps ErrInvalid or ErrLimit
}

// Error returns "job ID: field: message" for a job's field and
// "field: message" otherwise.
func (e *FieldError) Error() string {
	if e.Job >= 0 {
		return "job " + strconv.Itoa(e.ID) + ": " + e.Field + ": " + e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns the sentinel-wrapping cause.
func (e *FieldError) Unwrap() error { return e.Err }

// The constructors below take the field's name as a string literal, so
// that the names the package can report are in its source for tests to
// list (package round's TestFieldNames). In a name, "[]" stands for the
// element index i where one is given.

// invalid reports the Problem's field, wrapping ErrInvalid.
func invalid(field, format string, args ...any) error {
	return &FieldError{Job: -1, Field: field, Err: wrap(ErrInvalid, format, args)}
}

// invalidAt reports element i of the Problem's field ("Config.Breakpoints[]").
func invalidAt(field string, i int, format string, args ...any) error {
	return &FieldError{Job: -1, Field: indexed(field, i), Err: wrap(ErrInvalid, format, args)}
}

// tooLarge reports the Problem's field, wrapping ErrLimit.
func tooLarge(field, format string, args ...any) error {
	return &FieldError{Job: -1, Field: field, Err: wrap(ErrLimit, format, args)}
}

// jobInvalid reports the field of job i of p, wrapping ErrInvalid.
func (p *Problem) jobInvalid(i int, field, format string, args ...any) error {
	return &FieldError{Job: i, ID: p.Jobs[i].ID, Field: field, Err: wrap(ErrInvalid, format, args)}
}

func wrap(sentinel error, format string, args []any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}

// indexed puts index i into the first "[]" of field.
func indexed(field string, i int) string {
	return strings.Replace(field, "[]", "["+strconv.Itoa(i)+"]", 1)
}
