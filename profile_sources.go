package orrery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// SeriesSpec is a long bandwidth record of a job (a NIC's counter read
// every interval_ms, over many iterations): the iteration is found in it
// (its period, by autocorrelation), and the record folded onto one
// iteration (engine/cassini/profile.FromSeries).
type SeriesSpec struct {
	IntervalMs  float64   `json:"interval_ms"`             // sample spacing
	Gbps        []float64 `json:"gbps"`                    // the record, one value per interval
	MinPeriodMs float64   `json:"min_period_ms,omitempty"` // search range; 0: two samples
	MaxPeriodMs float64   `json:"max_period_ms,omitempty"` // 0: half the record
	MinQuality  float64   `json:"min_quality,omitempty"`   // least correlation of consecutive iterations; 0: 0.5
}

// EventsSpec is a job's communication events (collective calls: when, how
// many bytes, and for how long when known), binned into interval_ms and
// profiled as a series (engine/cassini/profile.FromEvents).
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
	// Warnings are values the call accepted but changed or doubts (see
	// Warning); absent when there are none.
	Warnings []Warning `json:"warnings,omitempty"`
}

// FitSpec is how well a measured record repeats its period.
type FitSpec struct {
	PeriodMs   float64 `json:"period_ms"`  // found, before quantization
	Quality    float64 `json:"quality"`    // correlation of consecutive iterations (1 = identical)
	Explained  float64 `json:"explained"`  // variance the folded iteration explains (drift lowers it)
	Iterations int     `json:"iterations"` // whole periods in the record
}

// measured validates a series or events source: it finds the period and
// folds the record (work proportional to the record), and checks the
// period against the cap before anything of its size is built.
func (r quantum) measured(f string, s JobSpec) (source, error) {
	if s.Series != nil && s.Events != nil || len(s.Phases) > 0 || s.Samples != nil || s.PeriodMs != nil {
		return source{}, fieldError(f, ErrOneSource)
	}
	if s.Series != nil {
		return r.series(f+".series", s.Series)
	}
	return r.events(f+".events", s.Events)
}

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

func (r quantum) series(f string, s *SeriesSpec) (source, error) {
	iv, err := r.interval(f+".interval_ms", s.IntervalMs)
	if err != nil {
		return source{}, err
	}
	opt, err := r.seriesOptions(f, s.MinPeriodMs, s.MaxPeriodMs, s.MinQuality)
	if err != nil {
		return source{}, err
	}
	if len(s.Gbps) > profile.MaxSeriesSamples {
		return source{}, fieldError(f+".gbps", fmt.Errorf("%w: %d samples (at most %d)", profile.ErrSeriesTooLong, len(s.Gbps), profile.MaxSeriesSamples))
	}
	bps := make([]float64, len(s.Gbps))
	for k, g := range s.Gbps {
		if bps[k], err = r.demand("", g); err != nil {
			err = withField(err, elemPath(f+".gbps", k, ""))
			return source{}, err
		}
	}
	return r.fitted(f, bps, iv, opt, "gbps")
}

func (r quantum) events(f string, s *EventsSpec) (source, error) {
	iv, err := r.interval(f+".interval_ms", s.IntervalMs)
	if err != nil {
		return source{}, err
	}
	opt, err := r.seriesOptions(f, s.MinPeriodMs, s.MaxPeriodMs, s.MinQuality)
	if err != nil {
		return source{}, err
	}
	if len(s.Bytes) != len(s.AtMs) {
		return source{}, fieldError(f+".bytes", fmt.Errorf("%w: %d sizes for %d events", ErrInvalid, len(s.Bytes), len(s.AtMs)))
	}
	if s.DurationMs != nil && len(s.DurationMs) != len(s.AtMs) {
		return source{}, fieldError(f+".duration_ms", fmt.Errorf("%w: %d durations for %d events", ErrInvalid, len(s.DurationMs), len(s.AtMs)))
	}
	ev := make([]profile.Event, len(s.AtMs))
	for k := range ev {
		if ev[k].At, err = duration("", s.AtMs[k]); err != nil {
			err = withField(err, elemPath(f+".at_ms", k, ""))
			return source{}, err
		}
		if b := s.Bytes[k]; !(b >= 0) || math.IsInf(b, 0) {
			return source{}, fieldError(fmt.Sprintf("%s.bytes[%d]", f, k), fmt.Errorf("%w: %v bytes", profile.ErrInvalidBandwidth, b))
		}
		ev[k].Bytes = s.Bytes[k]
		if s.DurationMs != nil {
			if ev[k].Duration, err = duration("", s.DurationMs[k]); err != nil {
				err = withField(err, elemPath(f+".duration_ms", k, ""))
				return source{}, err
			}
		}
	}
	bits, err := profile.BinEvents(ev, iv)
	if err != nil {
		return source{}, r.seriesError(f, err, "bytes")
	}
	return r.fitted(f, bits, iv, opt, "bytes")
}

// fitted finds the period of a series (bit/s), checks it against the
// perimeter cap and returns the folded iteration as a source.
func (r quantum) fitted(f string, bps []float64, iv time.Duration, opt profile.SeriesOptions, values string) (source, error) {
	period, phases, fit, err := profile.FitSeries(bps, iv, r.q, opt)
	if err != nil {
		return source{}, r.seriesError(f, err, values)
	}
	if err := r.fits(f, fit.Period); err != nil {
		return source{}, err
	}
	sum, err := profile.Summarize(period, phases, r.q)
	if err != nil {
		return source{}, fieldError(f, err)
	}
	var w warnings
	if err := r.shortPeriod(&w, f, period, sum.Period); err != nil {
		return source{}, err
	}
	return source{period: period, phases: phases, sum: sum, fit: &fit, warns: w.list}, nil
}

// seriesError names the field of a series' error.
func (r quantum) seriesError(f string, err error, values string) error {
	var pe *profile.PhaseError
	switch {
	case errors.As(err, &pe):
		return fieldError(fmt.Sprintf("%s.%s[%d]", f, values, pe.Index), err)
	case errors.Is(err, profile.ErrSeriesTooLong):
		return fieldError(f+"."+values, err)
	}
	return fieldError(f, err)
}

// Profile runs "cassini.profile": one job's quantized iteration, and for a
// series or events the period found and how well the record repeats it,
// so that a user can check a measurement before ranking with it. The time
// limit covers building the profile.
func Profile(ctx context.Context, req ProfileRequest) (ProfileResponse, error) {
	if err := checkFloats("", &req); err != nil {
		return ProfileResponse{}, err
	}
	return profileOp(ctx, req)
}

// profileOp is Profile on a decoded request.
func profileOp(ctx context.Context, req ProfileRequest) (ProfileResponse, error) {
	r, err := req.SearchSpec.parse()
	if err != nil {
		return ProfileResponse{}, err
	}
	ctx, cancel := withLimit(ctx, r.timeout)
	defer cancel()
	s := req.Job
	if s.ID == "" {
		return ProfileResponse{}, fieldError("job.id", ErrEmptyID)
	}
	src, err := r.source("job", s)
	if err != nil {
		return ProfileResponse{}, err
	}
	ps, err := r.build(ctx, []source{src})
	if err != nil {
		return ProfileResponse{}, err
	}
	p := ps[0]
	var fit *FitSpec
	if pf := src.fit; pf != nil {
		fit = &FitSpec{PeriodMs: float64(pf.Period) / 1e6, Quality: pf.Quality, Explained: pf.Explained, Iterations: pf.Iterations}
	}
	unitGbps := r.q.Unit / profile.Gbps
	resp := ProfileResponse{ID: s.ID, PeriodMs: r.ms(float64(p.Period)), PeakGbps: float64(p.Peak()) * unitGbps,
		MeanGbps: float64(p.Mass()) / float64(p.Period) * unitGbps, Fit: fit, Warnings: src.warns,
		Samples: SamplesSpec{IntervalMs: r.ms(1), Gbps: make([]float64, p.Period)}}
	for i, d := range p.Demand {
		resp.Samples.Gbps[i] = float64(d) * unitGbps
	}
	return resp, nil
}
