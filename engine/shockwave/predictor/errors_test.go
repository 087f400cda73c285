package predictor

import (
	"errors"
	"testing"
)

// TestFieldErrorPath: an element index goes where "[]" marks it, else
// after the field, so the message names the Go expression of the value.
func TestFieldErrorPath(t *testing.T) {
	timeline := []Sample{{Round: 1, ItPerSec: 2, BatchSize: 32}, {Round: 2, ItPerSec: -4, BatchSize: 32}}
	_, _, err := Calibrate([]float64{10, 10}, []float64{10, 10}, 100, timeline, CalibrateOptions{})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "timeline[].ItPerSec" || fe.Index != 1 || !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v (%+v)", err, fe)
	}
	if got, want := err.Error(), "predictor: timeline[1].ItPerSec = -4: invalid value"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, _, err = Calibrate([]float64{10, 10}, []float64{10, -1}, 100, nil, CalibrateOptions{})
	if got, want := err.Error(), "predictor: pre[1] = -1: invalid value"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
