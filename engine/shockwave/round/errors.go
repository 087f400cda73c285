package round

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/orrery/orrery/engine/shockwave/market"
	"github.com/orrery/orrery/engine/shockwave/predictor"
)

// Sentinel errors. Invalid input is a *[FieldError] wrapping one of them
// (or the market's or predictor's sentinels).
var (
	ErrInvalid   = errors.New("round: invalid state")
	ErrUnknownID = errors.New("round: unknown job ID")
	ErrDuplicate = errors.New("round: duplicate job ID")
)

// FieldError is an invalid input value, named by its Go field.
type FieldError struct {
	// Job is the index in State.Jobs of the job the value belongs to, or
	// −1 for a value outside the jobs.
	Job int
	// ID is that job's ID (when Job ≥ 0).
	ID int
	// Field is the Go field with its element indices: of the job when
	// Job ≥ 0 ("EpochDur[2]", "Known.MeanEpoch", "Timeline[0].Round"), else
	// of the State ("GPUs", "Config.Market.Breakpoints[1]"). Errors of a
	// [Scheduler] method name its arguments ("j.GPUs", "epochs",
	// "sample.Round").
	Field string
	// Err is the cause; it wraps a sentinel of this package, package market
	// or package predictor.
	Err error
}

// Error returns "job ID: field: message" for a job's field and
// "field: message" otherwise.
func (e *FieldError) Error() string {
	if e.Job >= 0 {
		return "job " + strconv.Itoa(e.ID) + ": " + e.Field + ": " + e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// The constructors below take the field's name as a string literal, so
// that the names the package can report are in its source for
// TestFieldNames to list. In a name, "[]" stands for the element index k
// where one is given.

// invalid reports a field of the State.
func invalid(field, format string, args ...any) error {
	return &FieldError{Job: -1, Field: field, Err: wrap(ErrInvalid, format, args)}
}

// jobInvalid reports a field of job j, at index i of the State's jobs; for
// i < 0, j is the argument of [Scheduler.Add].
func jobInvalid(i int, j *Job, field, format string, args ...any) error {
	return jobErr(i, j, field, wrap(ErrInvalid, format, args))
}

// jobInvalidAt is jobInvalid for element k of a field ("Finish[].Round").
func jobInvalidAt(i int, j *Job, field string, k int, format string, args ...any) error {
	return jobErr(i, j, indexed(field, k), wrap(ErrInvalid, format, args))
}

// argErr reports an argument of a Scheduler method.
func argErr(field string, sentinel error, format string, args ...any) error {
	return &FieldError{Job: -1, Field: field, Err: wrap(sentinel, format, args)}
}

func jobErr(i int, j *Job, field string, err error) error {
	if i < 0 {
		return &FieldError{Job: -1, Field: "j." + field, Err: err}
	}
	return &FieldError{Job: i, ID: j.ID, Field: field, Err: err}
}

func wrap(sentinel error, format string, args []any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}

// indexed puts index k into the first "[]" of field, or after it when it has
// none; k < 0 leaves field as it is.
func indexed(field string, k int) string {
	if k < 0 {
		return field
	}
	i := "[" + strconv.Itoa(k) + "]"
	if strings.Contains(field, "[]") {
		return strings.Replace(field, "[]", i, 1)
	}
	return field + i
}

// unmapped prefixes a name that fromPredictor or fromMarket does not know:
// the result names no field of the State, so the error stays loud (the
// wire reports it as an internal error). TestFieldNames keeps it unused.
const unmapped = "unmapped "

// fromPredictor re-roots a predictor error about job i of s (−1: one about
// the options) at the State field its input came from. The predictor names its own inputs (fields of
// predictor.Job, arguments of Calibrate, FinishEstimate and FinishSeries),
// which Plan fills from the State; k is the index in the job's Finish of
// the estimate being added, −1 for any other call.
func fromPredictor(s *State, i, k int, err error) error {
	j := &Job{} // i < 0: an error of the State's own (the options)
	if i >= 0 {
		j = &s.Jobs[i]
	}
	var pe *predictor.FieldError
	if !errors.As(err, &pe) {
		return fmt.Errorf("round: job %d: %w", j.ID, err)
	}
	field, ofJob := predictorField(j, k, pe)
	if !ofJob {
		return &FieldError{Job: -1, Field: field, Err: err}
	}
	return &FieldError{Job: i, ID: j.ID, Field: field, Err: err}
}

// predictorField names the input of pe: a field of job j (ofJob) or of the
// State.
func predictorField(j *Job, k int, pe *predictor.FieldError) (field string, ofJob bool) {
	job := func(f string) (string, bool) { return indexed(f, pe.Index), true }
	if f, ok := strings.CutPrefix(pe.Field, "Job."); ok {
		return job(f) // predictor.Job's fields are Job's, by the same names
	}
	switch pe.Field {
	case "cur":
		return job("EpochDur")
	case "pre": // Calibrate's pre-profiled durations: EpochDur without ProfiledDur
		if j.ProfiledDur == nil {
			return job("EpochDur")
		}
		return job("ProfiledDur")
	case "samplesPerEpoch":
		return job("SamplesPerEpoch")
	case "timeline":
		return job("Timeline")
	case "timeline[].Round":
		return job("Timeline[].Round")
	case "timeline[].ItPerSec":
		return job("Timeline[].ItPerSec")
	case "timeline[].BatchSize":
		return job("Timeline[].BatchSize")
	case "submit":
		return job("Submit")
	case "elapsed", "remaining": // FinishEstimate's: the caller's, or predicted from the profile
		if j.Known != nil {
			if pe.Field == "elapsed" {
				return job("Known.Elapsed")
			}
			return job("Known.Remaining")
		}
		return job("EpochDur")
	case "round", "est": // FinishSeries.Add: the history, or this round's estimate
		switch {
		case k >= 0 && pe.Field == "round":
			return indexed("Finish[].Round", k), true
		case k >= 0:
			return indexed("Finish[].Estimate", k), true
		case pe.Field == "round":
			return "Round", false
		}
		return job("Finish")
	case "FinishSeries":
		return job("Finish")
	case "now": // FinishSeries.Target
		return "Round", false
	case "FinishSeries.Momentum":
		return "Config.Momentum", false
	case "gpus":
		return "GPUs", false
	case "jobs":
		return "Jobs", false
	case "Options.Estimator":
		return "Config.Predictor.Estimator", false
	case "Options.PriorStrength":
		return "Config.Predictor.PriorStrength", false
	case "CalibrateOptions.RoundSec":
		return "Config.Market.RoundSeconds", false
	case "CalibrateOptions.Tolerance":
		return "Config.Tolerance", false
	}
	return job(unmapped + "predictor " + pe.Field)
}

// fromMarket re-roots a market error at the State field the market's input
// came from: the Problem's fields are the State's, its Config is
// Config.Market, and a job's predictions come from its Known or its
// profile. jobs are the predictions Plan made.
func fromMarket(s *State, jobs []JobResult, err error) error {
	var me *market.FieldError
	if !errors.As(err, &me) {
		return err
	}
	if me.Job >= 0 && s == nil {
		return err // unreachable: only CheckSize passes no State, and its errors name no job
	}
	if me.Job < 0 {
		return &FieldError{Job: -1, Field: marketField(me.Field), Err: me.Err}
	}
	j := &s.Jobs[me.Job]
	return &FieldError{Job: me.Job, ID: j.ID, Field: marketJobField(j, &jobs[me.Job], me.Field), Err: me.Err}
}

// marketField names a market.Problem field as a State field.
func marketField(f string) string {
	switch {
	case f == "GPUs", f == "Round", f == "Jobs":
		return f
	case strings.HasPrefix(f, "Config."):
		return "Config.Market." + strings.TrimPrefix(f, "Config.")
	}
	return unmapped + "market " + f
}

// marketJobField names a market.Job field as a field of job j, whose
// predictions are jr.
func marketJobField(j *Job, jr *JobResult, f string) string {
	// Predictions come from the caller, or from the profile: its
	// calibrated durations when calibration rescaled ProfiledDur.
	profile := "EpochDur"
	if jr.Calibration != 1 && j.ProfiledDur != nil {
		profile = "ProfiledDur"
	}
	switch f {
	case "ID", "GPUs", "Progress":
		return f
	case "Epochs": // 0 means len(EpochBS)
		if j.Epochs == 0 {
			return "EpochBS"
		}
		return "Epochs"
	case "MeanEpoch":
		if j.Known != nil {
			return "Known.MeanEpoch"
		}
		return profile
	case "Remaining":
		if j.Known != nil {
			return "Known.Remaining"
		}
		return profile
	case "FairFinish":
		if j.Known != nil && j.Known.FairFinish > 0 {
			return "Known.FairFinish"
		}
		return "Finish"
	}
	return unmapped + "market " + f
}
