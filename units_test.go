package orrery

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func phases(ms ...float64) []PhaseSpec {
	out := make([]PhaseSpec, 0, len(ms)/2)
	for i := 0; i+1 < len(ms); i += 2 {
		out = append(out, PhaseSpec{Ms: ms[i], Gbps: ms[i+1]})
	}
	return out
}

// Numbers in the wrong unit do not pass silently: an iteration shorter
// than a tick (seconds typed as milliseconds) is refused with the unit and
// the likely meaning; one of few ticks, a period rounded up to whole ticks,
// a phase under a tick and a demand above the link's capacity are warned
// of, naming the field.
func TestUnits(t *testing.T) {
	ctx := context.Background()
	vgg := JobSpec{ID: "vgg", Phases: phases(30, 40, 42, 0)}
	for _, c := range []struct {
		name  string
		job   JobSpec
		field string
		want  string
	}{
		{"seconds typed as ms", JobSpec{ID: "a", Phases: phases(0.030, 40, 0.042, 0)}, "jobs[1].phases",
			"period shorter than one tick: 0.072 ms against a tick of 1 ms — ms are milliseconds; did you mean 72 (seconds typed as ms)?"},
		{"stated period in seconds", JobSpec{ID: "a", PeriodMs: new(0.072), Phases: phases(0.030, 40, 0.042, 0)}, "jobs[1].period_ms",
			"0.072 ms against a tick of 1 ms"},
		{"samples in seconds", JobSpec{ID: "a", Samples: &SamplesSpec{IntervalMs: 0.001, Gbps: []float64{40, 0, 0}}}, "jobs[1].samples.interval_ms",
			"0.003 ms against a tick of 1 ms"},
	} {
		_, err := Link(ctx, LinkRequest{CapacityGbps: 50, Jobs: []JobSpec{vgg, c.job}})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalid || e.Field != c.field || !strings.Contains(e.Message, c.want) || !errors.Is(err, ErrShortPeriod) {
			t.Errorf("%s: %v, want %s: ...%s", c.name, err, c.field, c.want)
		}
	}

	// Megabits typed as gigabits past what a tick holds: refused, with the hint.
	_, err := Link(ctx, LinkRequest{CapacityGbps: 50, Jobs: []JobSpec{vgg, {ID: "a", Phases: phases(30, 40000, 42, 0)}}})
	var e *Error
	if !errors.As(err, &e) || e.Field != "jobs[1].phases[0].gbps" || !strings.Contains(e.Message, "40000 Gbps is more than the 16777215 units of 1 Mbps") ||
		!strings.Contains(e.Message, "gbps are gigabits per second; did you mean 40 (Mbps typed as Gbps)?") {
		t.Errorf("40000 Gbps: %v", err)
	}

	resp, err := Link(ctx, LinkRequest{CapacityGbps: 50, Jobs: []JobSpec{
		vgg,
		{ID: "fractional", Phases: phases(30.3, 40, 80, 0)},                  // 110.3 ms
		{ID: "short", Phases: phases(3, 40, 4, 0)},                           // 7 ticks
		{ID: "subtick", Phases: phases(0.4, 40, 71.6, 0)},                    // a 0.4 ms phase
		{ID: "fast", Phases: phases(30, 60, 42, 0)},                          // above 50 Gbps
		{ID: "mbps", Phases: phases(30, 4000, 42, 0)},                        // 4000 Gbps: Mbps?
		{ID: "stated", PeriodMs: new(72.5), Phases: phases(30, 40, 42.5, 0)}, // stated, fractional
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Warning{
		{"jobs[1].phases", "110.3 ms is not a whole number of ticks of 1 ms: the period is rounded up to 111 ms (111 ticks)"},
		{"jobs[2].phases", "an iteration of 7 ms is 7 ticks of 1 ms, under the 10 its circle needs to mean much — ms are milliseconds; did you mean 7000 (seconds typed as ms)? (for iterations this short, lower tick_ms)"},
		{"jobs[3].phases[0].ms", "0.4 ms is under one tick of 1 ms: its traffic is spread over the tick it falls in"},
		{"jobs[4].phases[0].gbps", "60 Gbps is above the link's capacity of 50 Gbps: the job alone overloads it — gbps are gigabits per second"},
		{"jobs[5].phases[0].gbps", "4000 Gbps is above the link's capacity of 50 Gbps: the job alone overloads it — gbps are gigabits per second; did you mean 4 (Mbps typed as Gbps)?"},
		{"jobs[6].period_ms", "72.5 ms is not a whole number of ticks of 1 ms: the period is rounded up to 73 ms (73 ticks)"},
	}
	if !equalWarnings(resp.Warnings, want) {
		t.Errorf("warnings\n got %q\nwant %q", resp.Warnings, want)
	}
	if resp.PeriodsMs["fractional"] != 111 || resp.PeriodsMs["stated"] != 73 {
		t.Errorf("periods %v", resp.PeriodsMs)
	}
	// A finer tick takes the same jobs without a word.
	fine, err := Link(ctx, LinkRequest{CapacityGbps: 50, SearchSpec: SearchSpec{TickMs: 0.1}, Jobs: []JobSpec{vgg, {ID: "short", Phases: phases(3, 40, 4, 0)}, {ID: "subtick", Phases: phases(0.4, 40, 71.6, 0)}}})
	if err != nil || len(fine.Warnings) != 0 {
		t.Errorf("tick 0.1 ms: %v, warnings %q", err, fine.Warnings)
	}
	// A clean request has none, and none in its JSON.
	b, err := Call(ctx, "cassini.link", []byte(`{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}]}`))
	if err != nil || strings.Contains(string(b), "warnings") {
		t.Errorf("clean request: %s, %v", b, err)
	}

	// Rank: above every link of the request, named by the fastest.
	rk, err := Rank(ctx, RankRequest{
		Links:      []LinkSpec{{ID: "slow", CapacityGbps: 25}, {ID: "up", CapacityGbps: 50}},
		Jobs:       []JobSpec{vgg, {ID: "fast", Phases: phases(30, 80, 42.5, 0)}},
		Candidates: []CandidateSpec{{ID: "c", Paths: map[string][]string{"vgg": {"up"}, "fast": {"up"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = []Warning{
		{"jobs[1].phases", "72.5 ms is not a whole number of ticks of 1 ms: the period is rounded up to 73 ms (73 ticks)"},
		{"jobs[1].phases[0].gbps", "80 Gbps is above every link of the request (the fastest, up, has 50 Gbps): the job alone overloads it — gbps are gigabits per second"},
	}
	if !equalWarnings(rk.Warnings, want) {
		t.Errorf("rank warnings\n got %q\nwant %q", rk.Warnings, want)
	}

	// Profile carries its job's warnings.
	pr, err := Profile(ctx, ProfileRequest{Job: JobSpec{ID: "a", Phases: phases(3, 40, 4.5, 0)}})
	if err != nil || len(pr.Warnings) != 2 || pr.Warnings[0].Field != "job.phases" {
		t.Errorf("profile: %v, %q", err, pr.Warnings)
	}

	// At most maxWarnings, then a count of the rest.
	var jobs []JobSpec
	for i := range 20 {
		jobs = append(jobs, JobSpec{ID: string(rune('a' + i)), Phases: phases(30, 40, 42.5, 0)})
	}
	many, err := Link(ctx, LinkRequest{CapacityGbps: 1000, Jobs: jobs, SearchSpec: SearchSpec{Budget: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(many.Warnings); n != maxWarnings+1 || many.Warnings[n-1] != (Warning{"", "and 4 more warnings"}) {
		t.Errorf("%d warnings, last %q", n, many.Warnings[n-1])
	}
}

func equalWarnings(a, b []Warning) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
