package orrery_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// burst is a record of n iterations of period ms (1 ms samples), busy at
// gbps for the middle third.
func burst(n, period int, gbps float64) []float64 {
	var g []float64
	for range n {
		for i := range period {
			v := 0.0
			if i >= period/3 && i < 2*period/3 {
				v = gbps
			}
			g = append(g, v)
		}
	}
	return g
}

// cassini.profile of a series finds its period; the profile it answers,
// given back as samples, is the same job; cassini.link ranks a series job
// as the equivalent phases job.
func TestProfileSeries(t *testing.T) {
	ctx := context.Background()
	job := orrery.JobSpec{ID: "a", Series: &orrery.SeriesSpec{IntervalMs: 1, Gbps: burst(50, 90, 30)}}
	res, err := orrery.Profile(ctx, orrery.ProfileRequest{Job: job})
	if err != nil {
		t.Fatal(err)
	}
	if res.PeriodMs != 90 || res.Fit == nil || res.Fit.Quality < 0.99 || math.Abs(res.MeanGbps-10) > 0.01 || res.PeakGbps != 30 {
		t.Fatalf("%+v %+v", res, res.Fit)
	}
	back, err := orrery.Profile(ctx, orrery.ProfileRequest{Job: orrery.JobSpec{ID: "a", Samples: &res.Samples}})
	if err != nil {
		t.Fatal(err)
	}
	res.Fit = nil
	if diff := cmp.Diff(res, back); diff != "" {
		t.Fatalf("the answered samples are another profile (-series +samples):\n%s", diff)
	}
	phases := orrery.JobSpec{ID: "b", Phases: []orrery.PhaseSpec{{Ms: 30, Gbps: 0}, {Ms: 30, Gbps: 30}, {Ms: 30, Gbps: 0}}}
	l1, err := orrery.Link(ctx, orrery.LinkRequest{CapacityGbps: 40, Jobs: []orrery.JobSpec{job, phases}})
	if err != nil {
		t.Fatal(err)
	}
	phases2 := phases
	phases2.ID = "a"
	l2, err := orrery.Link(ctx, orrery.LinkRequest{CapacityGbps: 40, Jobs: []orrery.JobSpec{phases2, phases}})
	if err != nil {
		t.Fatal(err)
	}
	if l1.Score != l2.Score || l1.Score != 1 {
		t.Fatalf("series job scores %v, phases job %v", l1.Score, l2.Score)
	}
}

// Errors name the field of a measured source.
func TestProfileSourceErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		req   string
		field string
		is    error
	}{
		{`{"job": {"id": "a", "series": {"interval_ms": 1, "gbps": [1, 2, 1, 2, 1, -2]}}}`, "job.series.gbps[5]", profile.ErrInvalidBandwidth},
		{`{"job": {"id": "a", "series": {"interval_ms": 0, "gbps": [1, 2]}}}`, "job.series.interval_ms", profile.ErrInvalidDuration},
		{`{"job": {"id": "a", "series": {"interval_ms": 1, "gbps": [5, 5, 5, 5, 5, 5]}}}`, "job.series", profile.ErrNotPeriodic},
		{`{"job": {"id": "a", "series": {"interval_ms": 1, "gbps": [1, 0, 1, 0], "min_quality": 2}}}`, "job.series.min_quality", orrery.ErrInvalid},
		{`{"job": {"id": "a", "period_ms": 2, "series": {"interval_ms": 1, "gbps": [1, 0, 1, 0]}}}`, "job", orrery.ErrOneSource},
		{`{"job": {"id": "a", "events": {"interval_ms": 1, "at_ms": [0, -1], "bytes": [1, 1]}}}`, "job.events.at_ms[1]", profile.ErrInvalidDuration},
		{`{"job": {"id": "a", "events": {"interval_ms": 1, "at_ms": [0, 1], "bytes": [1, 1], "duration_ms": [1]}}}`, "job.events.duration_ms", orrery.ErrInvalid},
		{`{"job": {"id": "", "series": {"interval_ms": 1, "gbps": [1, 0, 1, 0]}}}`, "job.id", orrery.ErrEmptyID},
	} {
		_, err := orrery.Call(ctx, "cassini.profile", []byte(c.req))
		var e *orrery.Error
		if !errors.As(err, &e) || e.Field != c.field || !errors.Is(err, c.is) {
			t.Errorf("%s: %v (field %q), want %q wrapping %v", c.req, err, fieldOf(err), c.field, c.is)
		}
	}
	// A series job in cassini.link is named by its index there.
	req, _ := json.Marshal(orrery.LinkRequest{CapacityGbps: 10, Jobs: []orrery.JobSpec{{ID: "x", Phases: []orrery.PhaseSpec{{Ms: 5, Gbps: 1}}},
		{ID: "y", Series: &orrery.SeriesSpec{IntervalMs: 1, Gbps: []float64{3, 3, 3, 3}}}}})
	if _, err := orrery.Call(ctx, "cassini.link", req); fieldOf(err) != "jobs[1].series" {
		t.Errorf("link: %v", err)
	}
}

func fieldOf(err error) string {
	var e *orrery.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
