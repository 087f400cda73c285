package predictor

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors; every error returned by this package wraps one of them.
var (
	ErrInvalid          = errors.New("predictor: invalid value")
	ErrNoEpochs         = errors.New("predictor: job has no epochs")
	ErrLength           = errors.New("predictor: slice length does not match")
	ErrProgress         = errors.New("predictor: progress out of range")
	ErrUnknownBatchSize = errors.New("predictor: batch size is not one of the job's modes")
	ErrMissingDuration  = errors.New("predictor: no epoch duration known for a batch-size mode")
	ErrRound            = errors.New("predictor: round out of order")
	ErrEmptySeries      = errors.New("predictor: finish-time series is empty")
	ErrOverflow         = errors.New("predictor: values too large: a result overflows float64")
)

// FieldError reports which input field was bad. Index is the element index
// for slice fields and -1 otherwise.
type FieldError struct {
	Field string
	Index int
	Value string
	Err   error
}

func (e *FieldError) Error() string {
	s := "predictor: " + e.Field
	if e.Index >= 0 {
		s += "[" + strconv.Itoa(e.Index) + "]"
	}
	if e.Value != "" {
		s += " = " + e.Value
	}
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "predictor: ")
}

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, index int, value string, err error) error {
	return &FieldError{Field: field, Index: index, Value: value, Err: err}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
