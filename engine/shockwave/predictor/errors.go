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
	ErrLength           = errors.New("predictor: lengths do not match")
	ErrProgress         = errors.New("predictor: progress out of range")
	ErrUnknownBatchSize = errors.New("predictor: batch size is not one of the job's modes")
	ErrMissingDuration  = errors.New("predictor: no epoch duration known for a batch-size mode")
	ErrRound            = errors.New("predictor: round out of order")
	ErrEmptySeries      = errors.New("predictor: finish-time series is empty")
	ErrOverflow         = errors.New("predictor: values too large: a result is past 1.8e308")
)

// FieldError reports which input was bad, by its Go name: a field of [Job],
// [Options] or [CalibrateOptions] ("Job.EpochDur", "Options.Estimator"), or
// an argument of the function called ("pre", "samplesPerEpoch",
// "timeline[].Round", "remaining"). Index is the element index, −1 when
// there is none; "[]" in Field marks where it goes, else it follows Field.
type FieldError struct {
	Field string
	Index int
	Value string
	Err   error
}

// path returns Field with Index in place: "Job.EpochDur[3]",
// "timeline[2].Round".
func (e *FieldError) path() string {
	if e.Index < 0 {
		return e.Field
	}
	i := "[" + strconv.Itoa(e.Index) + "]"
	if strings.Contains(e.Field, "[]") {
		return strings.Replace(e.Field, "[]", i, 1)
	}
	return e.Field + i
}

// Error returns "predictor: path = value: message".
func (e *FieldError) Error() string {
	s := "predictor: " + e.path()
	if e.Value != "" {
		s += " = " + e.Value
	}
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "predictor: ")
}

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// fieldErr builds every *FieldError of the package. Its field argument is
// always a string literal, so that the names the package can report are in
// its source for tests to list (package round's TestFieldNames).
func fieldErr(field string, index int, value string, err error) error {
	return &FieldError{Field: field, Index: index, Value: value, Err: err}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
