package orrery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/orrery/orrery/engine/profile"
)

// SeriesSpec is a long bandwidth record of a job (a NIC's counter read
// every interval_ms, over many iterations): the iteration is found in it
// (its period, by autocorrelation), and the record folded onto one
// iteration (engine/profile.FromSeries).
type SeriesSpec struct {
	IntervalMs  float64   `json:"interval_ms"`             // sample spacing
	Gbps        []float64 `json:"gbps"`                    // the record, one value per interval
	MinPeriodMs float64   `json:"min_period_ms,omitempty"` // search range; 0: two samples
	MaxPeriodMs float64   `json:"max_period_ms,omitempty"` // 0: half the record
	MinQuality  float64   `json:"min_quality,omitempty"`   // least correlation of consecutive iterations; 0: 0.5
}

// EventsSpec is a job's communication events (collective calls: when, how
// many bytes, and for how long when known), binned into interval_ms and
// profiled as a series (engine/profile.FromEvents).
type EventsSpec struct {
	IntervalMs  float64   `json:"interval_ms"`           // bin width
	AtMs        []float64 `json:"at_ms"`                 // start of each event, on any clock (≥ 0)
	Bytes       []float64 `json:"bytes"`                 // bytes each event sent
	DurationMs  []float64 `json:"duration_ms,omitempty"` // each event's duration; absent: unknown (the bytes count in the start's bin)
	MinPeriodMs float64   `json:"min_period_ms,omitempty"`
	MaxPeriodMs float64   `json:"max_period_ms,omitempty"`
	MinQuality  float64   `json:"min_quality,omitempty"`
}

// ProfileRequest is the request of "cassini.profile": one job, and the
// grid it is quantized to.
type ProfileRequest struct {
	Job JobSpec `json:"job"`
	SearchSpec
}

// ProfileResponse is the response of "cassini.profile": the job's
// quantized iteration, as samples that cassini.link and cassini.rank take
// back ("samples": one value per tick), and, for a series or events, the
// fit of the period found.
type ProfileResponse struct {
	ID       string      `json:"id"`
	PeriodMs float64     `json:"period_ms"` // the quantized iteration time
	PeakGbps float64     `json:"peak_gbps"`
	MeanGbps float64     `json:"mean_gbps"`
	Samples  SamplesSpec `json:"samples"` // per tick, in Gbps
	Fit      *FitSpec    `json:"fit,omitempty"`
}

// FitSpec is how well a measured record repeats its period.
type FitSpec struct {
	PeriodMs   float64 `json:"period_ms"`  // found, before quantization
	Quality    float64 `json:"quality"`    // correlation of consecutive iterations (1 = identical)
	Explained  float64 `json:"explained"`  // variance the folded iteration explains (drift lowers it)
	Iterations int     `json:"iterations"` // whole periods in the record
}

// measured profiles a series or events source, and its fit.
func (r quantum) measured(f string, s JobSpec) (profile.Profile, profile.Fit, error) {
	if s.Series != nil && s.Events != nil || len(s.Phases) > 0 || s.Samples != nil || s.PeriodMs != nil {
		return profile.Profile{}, profile.Fit{}, fieldError(f, ErrOneSource)
	}
	if s.Series != nil {
		return r.series(f+".series", s.Series)
	}
	return r.events(f+".events", s.Events)
}

// ErrOneSource: a job gives more than one of phases, samples, series and
// events (or a period_ms with a series or events, whose period is found).
var ErrOneSource = errors.New("give one of phases, samples, series and events (and period_ms only with phases or samples)")

func (r quantum) seriesOptions(f string, minMs, maxMs, q float64) (profile.SeriesOptions, error) {
	lo, err := duration(f+".min_period_ms", minMs)
	if err != nil {
		return profile.SeriesOptions{}, err
	}
	hi, err := duration(f+".max_period_ms", maxMs)
	if err != nil {
		return profile.SeriesOptions{}, err
	}
	if hi > 0 && hi < lo {
		return profile.SeriesOptions{}, fieldError(f+".max_period_ms", fmt.Errorf("%w: %v ms is below min_period_ms", profile.ErrInvalidDuration, maxMs))
	}
	if !(q >= 0 && q <= 1) {
		return profile.SeriesOptions{}, fieldError(f+".min_quality", fmt.Errorf("%w: %v (want 0..1)", ErrInvalid, q))
	}
	return profile.SeriesOptions{MinPeriod: lo, MaxPeriod: hi, MinQuality: q}, nil
}

func (r quantum) interval(f string, ms float64) (time.Duration, error) {
	iv, err := duration(f, ms)
	if err == nil && iv == 0 {
		err = fieldError(f, fmt.Errorf("%w: %v ms", profile.ErrInvalidDuration, ms))
	}
	return iv, err
}

func (r quantum) series(f string, s *SeriesSpec) (profile.Profile, profile.Fit, error) {
	iv, err := r.interval(f+".interval_ms", s.IntervalMs)
	if err != nil {
		return profile.Profile{}, profile.Fit{}, err
	}
	opt, err := r.seriesOptions(f, s.MinPeriodMs, s.MaxPeriodMs, s.MinQuality)
	if err != nil {
		return profile.Profile{}, profile.Fit{}, err
	}
	if len(s.Gbps) > profile.MaxSeriesSamples {
		return profile.Profile{}, profile.Fit{}, fieldError(f+".gbps", fmt.Errorf("%w: %d samples (at most %d)", profile.ErrSeriesTooLong, len(s.Gbps), profile.MaxSeriesSamples))
	}
	bps := make([]float64, len(s.Gbps))
	for k, g := range s.Gbps {
		if bps[k], err = bitsPerSecond(fmt.Sprintf("%s.gbps[%d]", f, k), g); err != nil {
			return profile.Profile{}, profile.Fit{}, err
		}
	}
	p, fit, err := profile.FromSeries(bps, iv, r.q, opt)
	return r.fitted(f, p, fit, err, "gbps")
}

func (r quantum) events(f string, s *EventsSpec) (profile.Profile, profile.Fit, error) {
	iv, err := r.interval(f+".interval_ms", s.IntervalMs)
	if err != nil {
		return profile.Profile{}, profile.Fit{}, err
	}
	opt, err := r.seriesOptions(f, s.MinPeriodMs, s.MaxPeriodMs, s.MinQuality)
	if err != nil {
		return profile.Profile{}, profile.Fit{}, err
	}
	if len(s.Bytes) != len(s.AtMs) {
		return profile.Profile{}, profile.Fit{}, fieldError(f+".bytes", fmt.Errorf("%w: %d sizes for %d events", ErrInvalid, len(s.Bytes), len(s.AtMs)))
	}
	if s.DurationMs != nil && len(s.DurationMs) != len(s.AtMs) {
		return profile.Profile{}, profile.Fit{}, fieldError(f+".duration_ms", fmt.Errorf("%w: %d durations for %d events", ErrInvalid, len(s.DurationMs), len(s.AtMs)))
	}
	ev := make([]profile.Event, len(s.AtMs))
	for k := range ev {
		if ev[k].At, err = duration(fmt.Sprintf("%s.at_ms[%d]", f, k), s.AtMs[k]); err != nil {
			return profile.Profile{}, profile.Fit{}, err
		}
		if b := s.Bytes[k]; !(b >= 0) || math.IsInf(b, 0) {
			return profile.Profile{}, profile.Fit{}, fieldError(fmt.Sprintf("%s.bytes[%d]", f, k), fmt.Errorf("%w: %v bytes", profile.ErrInvalidBandwidth, b))
		}
		ev[k].Bytes = s.Bytes[k]
		if s.DurationMs != nil {
			if ev[k].Duration, err = duration(fmt.Sprintf("%s.duration_ms[%d]", f, k), s.DurationMs[k]); err != nil {
				return profile.Profile{}, profile.Fit{}, err
			}
		}
	}
	p, fit, err := profile.FromEvents(ev, iv, r.q, opt)
	return r.fitted(f, p, fit, err, "bytes")
}

// fitted names the field of a series' error and checks the period found
// against the perimeter cap.
func (r quantum) fitted(f string, p profile.Profile, fit profile.Fit, err error, values string) (profile.Profile, profile.Fit, error) {
	var pe *profile.PhaseError
	switch {
	case errors.As(err, &pe):
		return p, fit, fieldError(fmt.Sprintf("%s.%s[%d]", f, values, pe.Index), err)
	case errors.Is(err, profile.ErrSeriesTooLong):
		return p, fit, fieldError(f+"."+values, err)
	case err != nil:
		return p, fit, fieldError(f, err)
	}
	if err := r.fits(f, fit.Period); err != nil {
		return p, fit, err
	}
	return p, fit, nil
}

// Profile runs "cassini.profile": one job's quantized iteration, and for a
// series or events the period found and how well the record repeats it,
// so that a user can check a measurement before ranking with it.
func Profile(_ context.Context, req ProfileRequest) (ProfileResponse, error) {
	r, err := req.SearchSpec.parse()
	if err != nil {
		return ProfileResponse{}, err
	}
	s := req.Job
	if s.ID == "" {
		return ProfileResponse{}, fieldError("job.id", ErrEmptyID)
	}
	var p profile.Profile
	var fit *FitSpec
	if s.Series != nil || s.Events != nil {
		var pf profile.Fit
		p, pf, err = r.measured("job", s)
		if err == nil {
			fit = &FitSpec{PeriodMs: float64(pf.Period) / 1e6, Quality: pf.Quality, Explained: pf.Explained, Iterations: pf.Iterations}
		}
	} else {
		p, err = r.profile("job", s)
	}
	if err != nil {
		return ProfileResponse{}, err
	}
	unitGbps := r.q.Unit / profile.Gbps
	resp := ProfileResponse{ID: s.ID, PeriodMs: r.ms(float64(p.Period)), PeakGbps: float64(p.Peak()) * unitGbps,
		MeanGbps: float64(p.Mass()) / float64(p.Period) * unitGbps, Fit: fit,
		Samples: SamplesSpec{IntervalMs: r.ms(1), Gbps: make([]float64, p.Period)}}
	for i, d := range p.Demand {
		resp.Samples.Gbps[i] = float64(d) * unitGbps
	}
	return resp, nil
}
