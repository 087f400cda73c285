package sim

import (
	"errors"
	"strconv"
)

// Sentinel errors; every error returned by this package wraps one of them
// (or, for trace and throughput problems, package trace's or throughput's).
var (
	// ErrInvalid: bad options or workload (a job wider than the cluster,
	// arrivals out of order, no jobs).
	ErrInvalid = errors.New("sim: invalid input")
	// ErrPolicy: a policy failed or returned an impossible schedule
	// (unknown or inactive job, a job twice, more GPUs than the cluster).
	ErrPolicy = errors.New("sim: policy error")
	// ErrStalled: the simulation stopped making progress (MaxRounds reached,
	// or active jobs left unscheduled with no arrival to wait for).
	ErrStalled = errors.New("sim: simulation stalled")
	// ErrCanceled: the context ended; the Result holds the jobs finished so
	// far. It also wraps the context's error.
	ErrCanceled = errors.New("sim: canceled")
)

// JobError names the trace job (its ID and 1-based line) and the field at
// fault.
type JobError struct {
	ID, Line int
	Field    string
	Err      error
}

func (e *JobError) Error() string {
	s := "sim: job " + strconv.Itoa(e.ID)
	if e.Line > 0 {
		s += " (line " + strconv.Itoa(e.Line) + ")"
	}
	if e.Field != "" {
		s += " field " + e.Field
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *JobError) Unwrap() error { return e.Err }
