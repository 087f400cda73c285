package orrery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// issueRequest is the request of issue 2: test vector D.
const issueRequest = `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": 72, "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}, {"id": "b", "period_ms": 72, "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}]}`

func TestIssueRequest(t *testing.T) {
	out, err := orrery.Call(context.Background(), "cassini.link", []byte(issueRequest))
	if err != nil {
		t.Fatal(err)
	}
	var r orrery.LinkResponse
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if r.Score != 1 || r.UnshiftedScore != 0.75 || r.Bound != 1 || r.Status != "optimal" {
		t.Fatalf("score %v unshifted %v bound %v status %q; want 1, 0.75, 1, optimal", r.Score, r.UnshiftedScore, r.Bound, r.Status)
	}
	if len(r.ShiftsMs) != 2 || r.ShiftsMs["a"] != 0 || r.ShiftsMs["b"] != 30 {
		t.Fatalf("shifts_ms %v, want {a: 0, b: 30}", r.ShiftsMs)
	}
	if r.PerimeterMs != 72 || r.Points != 72 || r.ExcessGbit != 0 || r.RotationsDeg["b"] != 150 || r.PeriodsMs["b"] != 72 {
		t.Fatalf("perimeter %v points %d excess %v rotations %v periods %v", r.PerimeterMs, r.Points, r.ExcessGbit, r.RotationsDeg, r.PeriodsMs)
	}
	// The same request without the optional period_ms.
	noPeriod := strings.ReplaceAll(issueRequest, `"period_ms": 72, `, "")
	out2, err := orrery.Call(context.Background(), "cassini.link", []byte(noPeriod))
	if err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("without period_ms: %s, %v; want the same response", out2, err)
	}
}

// TestExcessUnits: the excess is reported in Gbit whatever the grid.
// Vector E (two 45 ms pulses in 72 ms) overlaps for 18 ms at 30 Gbps over
// capacity at best: 0.54 Gbit and score 0.85, on 1 ms ticks of 1 Mbps as on
// 0.5 ms ticks of 1 Gbps.
func TestExcessUnits(t *testing.T) {
	req := `{"capacity_gbps": 50, %s "jobs": [{"id": "a", "phases": [{"ms": 45, "gbps": 40}, {"ms": 27, "gbps": 0}]}, {"id": "b", "phases": [{"ms": 45, "gbps": 40}, {"ms": 27, "gbps": 0}]}]}`
	for _, grid := range []string{"", `"tick_ms": 0.5, "unit_mbps": 1000,`} {
		out, err := orrery.Call(context.Background(), "cassini.link", []byte(strings.Replace(req, "%s", grid, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var r orrery.LinkResponse
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if d := r.ExcessGbit - 0.54; d > 1e-12 || d < -1e-12 || r.Score != 0.85 || r.ShiftsMs["b"] != 27 {
			t.Errorf("grid %q: excess %v Gbit, score %v, shifts %v; want 0.54, 0.85, b at 27", grid, r.ExcessGbit, r.Score, r.ShiftsMs)
		}
	}
}

// TestGolden runs every envelope in testdata/golden through Handle and
// compares the response, indented, byte for byte with its .golden file.
// Regenerate with: go test . -run TestGolden -update
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden requests: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			env, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out := orrery.Handle(context.Background(), env)
			var b bytes.Buffer
			if err := json.Indent(&b, out, "", "  "); err != nil {
				t.Fatalf("invalid JSON %s: %v", out, err)
			}
			b.WriteByte('\n')
			golden := strings.TrimSuffix(f, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("response differs from %s (rerun with -update if the change is intended):\ngot:\n%s\nwant:\n%s", golden, b.Bytes(), want)
			}
			var r struct {
				Error *orrery.Error
			}
			if err := json.Unmarshal(out, &r); err != nil || r.Error != nil {
				t.Errorf("golden requests must succeed: %s", out)
			}
		})
	}
}

// TestLoopPolicies checks the loop goldens' meaning, not just their bytes:
// the triangle's walk with each link's smallest tied optimum puts b and c
// together on l2, but its ties are consistent (shifts 0, 24, 48 ms keep
// every link at score 1), so resolve and reoptimize keep it; the square is
// a 4-cycle of two jobs on two links. The paper's rule discards both.
func TestLoopPolicies(t *testing.T) {
	type result struct {
		Best       *string
		Ranking    []string
		Candidates []orrery.CandidateResult
	}
	for _, tc := range []struct {
		policy  string
		ranking []string
		reasons map[string]string // discarded candidate -> reason prefix
	}{
		{"resolve", []string{"triangle", "square", "chain", "crowded"}, nil},
		{"paper", []string{"chain", "crowded"}, map[string]string{"triangle": "loop:", "square": "loop:"}},
		{"reoptimize", []string{"triangle", "square", "chain", "crowded"}, nil},
	} {
		env, err := os.ReadFile(filepath.Join("testdata", "golden", "rank_loops_"+tc.policy+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Request json.RawMessage
		}
		if err := json.Unmarshal(env, &e); err != nil {
			t.Fatal(err)
		}
		out, err := orrery.Call(context.Background(), "cassini.rank", e.Request)
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if strings.Join(r.Ranking, ",") != strings.Join(tc.ranking, ",") || r.Best == nil || *r.Best != tc.ranking[0] {
			t.Errorf("%s: ranking %v best %v, want %v", tc.policy, r.Ranking, r.Best, tc.ranking)
		}
		for _, c := range r.Candidates {
			prefix, discard := tc.reasons[c.ID]
			if c.Discarded != discard || !strings.HasPrefix(c.Reason, prefix) {
				t.Errorf("%s: candidate %s discarded %v (%q), want %v (%q...)", tc.policy, c.ID, c.Discarded, c.Reason, discard, prefix)
			}
			if c.Discarded {
				continue
			}
			if c.Score != 1 {
				t.Errorf("%s: candidate %s score %v, want 1", tc.policy, c.ID, c.Score)
			}
		}
	}
}

// badRequests are requests the schema rejects, with the error code and the
// path of the field at fault.
var badRequests = []struct {
	name, op, req, code, field string
	cause                      error // an engine sentinel the error wraps, or nil
}{
	// Decoding.
	{"malformed JSON", "cassini.link", `{"capacity_gbps": 50,`, orrery.CodeMalformed, "", nil},
	{"not an object", "cassini.link", `[1, 2]`, orrery.CodeMalformed, "", nil},
	{"empty", "cassini.link", ``, orrery.CodeMalformed, "", nil},
	{"unknown field", "cassini.link", `{"capacity_gbps": 50, "jobz": []}`, orrery.CodeMalformed, "jobz", nil},
	{"unknown nested field", "cassini.link", jobs2(`{"ms": 1, "gbsp": 1}`), orrery.CodeMalformed, "jobs[1].phases[0].gbsp", nil},
	{"unknown samples field", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "samples": {"interval_ms": 1, "gbps": [1], "unit": "x"}}]}`, orrery.CodeMalformed, "jobs[0].samples.unit", nil},
	{"trailing data", "cassini.link", issueRequest + ` {}`, orrery.CodeMalformed, "", nil},
	{"trailing garbage", "cassini.link", issueRequest + `x`, orrery.CodeMalformed, "", nil},
	{"wrong type: bandwidth", "cassini.link", jobs2(`{"ms": 1, "gbps": "40"}`), orrery.CodeMalformed, "jobs[1].phases[0].gbps", nil},
	{"wrong type: capacity", "cassini.link", `{"capacity_gbps": "50", "jobs": []}`, orrery.CodeMalformed, "capacity_gbps", nil},
	{"wrong type: jobs", "cassini.link", `{"capacity_gbps": 50, "jobs": {"a": 1}}`, orrery.CodeMalformed, "jobs", nil},
	{"wrong type: job", "cassini.link", `{"capacity_gbps": 50, "jobs": [7]}`, orrery.CodeMalformed, "jobs[0]", nil},
	{"wrong type: sample", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "samples": {"interval_ms": 1, "gbps": [1, true]}}]}`, orrery.CodeMalformed, "jobs[0].samples.gbps[1]", nil},
	{"wrong type: round_periods", "cassini.link", `{"capacity_gbps": 50, "round_periods": 1, "jobs": []}`, orrery.CodeMalformed, "round_periods", nil},
	{"budget below -1", "cassini.link", `{"capacity_gbps": 50, "budget": -2, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "budget", link.ErrInvalidOption},
	{"id past MaxStringBytes", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "` + strings.Repeat("x", orrery.MaxStringBytes+1) + `", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeLimit, "jobs[0].id", nil},
	{"subnormal gbps", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1e-320}]}]}`, orrery.CodeInvalid, "jobs[0].phases[0].gbps", nil},
	{"more than link.MaxJobs jobs", "cassini.link", `{"capacity_gbps": 50, "jobs": [` + strings.Repeat(`{"id": "a", "phases": [{"ms": 1, "gbps": 1}]},`, link.MaxJobs) + `{"id": "b", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeLimit, "jobs", link.ErrTooLarge},
	{"fraction for an integer", "cassini.link", `{"capacity_gbps": 50, "max_perimeter_ticks": 1.5}`, orrery.CodeMalformed, "max_perimeter_ticks", nil},
	{"huge number: capacity", "cassini.link", `{"capacity_gbps": 1e400}`, orrery.CodeMalformed, "capacity_gbps", nil},
	{"huge number: integer", "cassini.link", `{"capacity_gbps": 50, "max_perimeter_ticks": 1e30}`, orrery.CodeMalformed, "max_perimeter_ticks", nil},

	// Jobs.
	{"no jobs", "cassini.link", `{"capacity_gbps": 50}`, orrery.CodeInvalid, "jobs", link.ErrNoJobs},
	{"empty jobs", "cassini.link", `{"capacity_gbps": 50, "jobs": []}`, orrery.CodeInvalid, "jobs", link.ErrNoJobs},
	{"empty id", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}, {"id": "", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "jobs[1].id", orrery.ErrEmptyID},
	{"duplicate id", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}, {"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "jobs[1].id", orrery.ErrDuplicateID},
	{"negative duration", "cassini.link", jobs2(`{"ms": -1, "gbps": 1}`), orrery.CodeInvalid, "jobs[1].phases[0].ms", profile.ErrInvalidDuration},
	{"negative bandwidth", "cassini.link", jobs2(`{"ms": 1, "gbps": 1}, {"ms": 1, "gbps": -0.5}`), orrery.CodeInvalid, "jobs[1].phases[1].gbps", profile.ErrInvalidBandwidth},
	{"huge duration", "cassini.link", jobs2(`{"ms": 1e300, "gbps": 1}`), orrery.CodeInvalid, "jobs[1].phases[0].ms", profile.ErrInvalidDuration},
	{"huge bandwidth", "cassini.link", jobs2(`{"ms": 1, "gbps": 1e300}`), orrery.CodeLimit, "jobs[1].phases[0].gbps", profile.ErrDemandTooLarge},
	{"large bandwidth", "cassini.link", jobs2(`{"ms": 1, "gbps": 20000}`), orrery.CodeLimit, "jobs[1].phases[0].gbps", profile.ErrDemandTooLarge},
	{"summed peaks too large", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 9000}]}, {"id": "b", "phases": [{"ms": 1, "gbps": 9000}]}]}`, orrery.CodeLimit, "jobs", link.ErrDemandTooLarge},
	{"zero period", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": 0, "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "jobs[0].period_ms", profile.ErrZeroPeriod},
	{"zero-length phases", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 0, "gbps": 1}, {"ms": 0, "gbps": 0}]}]}`, orrery.CodeInvalid, "jobs[0].period_ms", profile.ErrZeroPeriod},
	{"negative period", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": -72, "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "jobs[0].period_ms", profile.ErrInvalidDuration},
	{"huge period", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": 1e300, "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "jobs[0].period_ms", profile.ErrInvalidDuration},
	{"phases short of the period", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": 72, "phases": [{"ms": 30, "gbps": 40}, {"ms": 41, "gbps": 0}]}]}`, orrery.CodeInvalid, "jobs[0].period_ms", profile.ErrPeriodMismatch},
	{"samples short of the period", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": 5, "samples": {"interval_ms": 1, "gbps": [1, 2]}}]}`, orrery.CodeInvalid, "jobs[0].period_ms", profile.ErrPeriodMismatch},
	{"phases and samples", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}], "samples": {"interval_ms": 1, "gbps": [1]}}]}`, orrery.CodeInvalid, "jobs[0]", orrery.ErrPhasesAndSamples},
	{"neither phases nor samples", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a"}]}`, orrery.CodeInvalid, "jobs[0].phases", profile.ErrNoPhases},
	{"zero sample interval", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "samples": {"interval_ms": 0, "gbps": [1]}}]}`, orrery.CodeInvalid, "jobs[0].samples.interval_ms", profile.ErrInvalidDuration},
	{"no samples", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "samples": {"interval_ms": 1, "gbps": []}}]}`, orrery.CodeInvalid, "jobs[0].samples.gbps", profile.ErrNoPhases},
	{"negative sample", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "samples": {"interval_ms": 1, "gbps": [1, 2, -3]}}]}`, orrery.CodeInvalid, "jobs[0].samples.gbps[2]", profile.ErrInvalidBandwidth},
	// 60, 100 and 150 ms share lcm(20, 30, 50) = 300 residues of their circle.
	{"shared circle past the cap", "cassini.link", `{"capacity_gbps": 50, "max_perimeter_ticks": 200, "jobs": [{"id": "a", "phases": [{"ms": 10, "gbps": 1}, {"ms": 50, "gbps": 0}]}, {"id": "b", "phases": [{"ms": 10, "gbps": 1}, {"ms": 90, "gbps": 0}]}, {"id": "c", "phases": [{"ms": 10, "gbps": 1}, {"ms": 140, "gbps": 0}]}]}`, orrery.CodeLimit, "jobs", circle.ErrPerimeterTooLarge},
	// 1021·1019, 1021·1013 and 1019·1013 ms share all of their 1.05e9 ticks.
	{"shared circle past the default cap", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}, {"ms": 1040398, "gbps": 0}]}, {"id": "b", "phases": [{"ms": 1, "gbps": 1}, {"ms": 1034272, "gbps": 0}]}, {"id": "c", "phases": [{"ms": 1, "gbps": 1}, {"ms": 1032246, "gbps": 0}]}]}`, orrery.CodeLimit, "jobs", circle.ErrPerimeterTooLarge},
	{"period past the cap", "cassini.link", `{"capacity_gbps": 50, "max_perimeter_ticks": 100, "round_periods": true, "jobs": [{"id": "a", "phases": [{"ms": 100, "gbps": 1}]}, {"id": "b", "phases": [{"ms": 100.5, "gbps": 1}]}]}`, orrery.CodeLimit, "jobs[1].period_ms", circle.ErrPerimeterTooLarge},
	{"samples past the cap", "cassini.link", `{"capacity_gbps": 50, "jobs": [{"id": "a", "samples": {"interval_ms": 1e6, "gbps": [1, 2]}}]}`, orrery.CodeLimit, "jobs[0].period_ms", circle.ErrPerimeterTooLarge},

	// Link and options.
	{"zero capacity", "cassini.link", `{"capacity_gbps": 0, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "capacity_gbps", link.ErrCapacity},
	{"negative capacity", "cassini.link", `{"capacity_gbps": -50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "capacity_gbps", link.ErrCapacity},
	{"capacity under a unit", "cassini.link", `{"capacity_gbps": 0.0001, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "capacity_gbps", link.ErrCapacity},
	{"huge capacity", "cassini.link", `{"capacity_gbps": 1e300, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}]}`, orrery.CodeInvalid, "capacity_gbps", link.ErrCapacity},
	{"bad mode", "cassini.link", `{"capacity_gbps": 50, "mode": "fast", "jobs": []}`, orrery.CodeInvalid, "mode", link.ErrInvalidOption},
	{"negative tick", "cassini.link", `{"capacity_gbps": 50, "tick_ms": -1, "jobs": []}`, orrery.CodeInvalid, "tick_ms", profile.ErrInvalidQuantum},
	{"tick under a nanosecond", "cassini.link", `{"capacity_gbps": 50, "tick_ms": 1e-9, "jobs": []}`, orrery.CodeInvalid, "tick_ms", profile.ErrInvalidQuantum},
	{"huge tick", "cassini.link", `{"capacity_gbps": 50, "tick_ms": 1e300, "jobs": []}`, orrery.CodeInvalid, "tick_ms", profile.ErrInvalidQuantum},
	{"negative unit", "cassini.link", `{"capacity_gbps": 50, "unit_mbps": -1, "jobs": []}`, orrery.CodeInvalid, "unit_mbps", profile.ErrInvalidQuantum},
	{"huge unit", "cassini.link", `{"capacity_gbps": 50, "unit_mbps": 1e308, "jobs": []}`, orrery.CodeInvalid, "unit_mbps", profile.ErrInvalidQuantum},
	{"negative cap", "cassini.link", `{"capacity_gbps": 50, "max_perimeter_ticks": -1, "jobs": []}`, orrery.CodeInvalid, "max_perimeter_ticks", link.ErrInvalidOption},
	{"cap too large", "cassini.link", `{"capacity_gbps": 50, "max_perimeter_ticks": 1099511627776, "jobs": []}`, orrery.CodeInvalid, "max_perimeter_ticks", link.ErrInvalidOption},
	{"negative restarts", "cassini.link", `{"capacity_gbps": 50, "restarts": -1, "jobs": []}`, orrery.CodeInvalid, "restarts", link.ErrInvalidOption},
	{"negative time limit", "cassini.link", `{"capacity_gbps": 50, "time_limit_ms": -1, "jobs": []}`, orrery.CodeInvalid, "time_limit_ms", link.ErrInvalidOption},

	// Ranking.
	{"rank: no links", "cassini.rank", rankReq(`[]`, `[{"id": "c", "paths": {}}]`), orrery.CodeInvalid, "links", candidate.ErrInvalid},
	{"rank: empty link id", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}, {"id": "", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {}}]`), orrery.CodeInvalid, "links[1].id", orrery.ErrEmptyID},
	{"rank: duplicate link id", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}, {"id": "l", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {}}]`), orrery.CodeInvalid, "links[1].id", orrery.ErrDuplicateID},
	{"rank: zero link capacity", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}, {"id": "m", "capacity_gbps": 0}]`, `[{"id": "c", "paths": {}}]`), orrery.CodeInvalid, "links[1].capacity_gbps", link.ErrCapacity},
	{"rank: no candidates", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[]`), orrery.CodeInvalid, "candidates", candidate.ErrInvalid},
	{"rank: empty candidate id", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[{"id": "", "paths": {}}]`), orrery.CodeInvalid, "candidates[0].id", orrery.ErrEmptyID},
	{"rank: duplicate candidate id", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {}}, {"id": "c", "paths": {}}]`), orrery.CodeInvalid, "candidates[1].id", orrery.ErrDuplicateID},
	{"rank: unknown job id", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {"a": ["l"], "x": ["l"]}}]`), orrery.CodeInvalid, "candidates[0].paths.x", orrery.ErrUnknownID},
	{"rank: unknown link id", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {"a": ["l", "m"]}}]`), orrery.CodeInvalid, "candidates[0].paths.a[1]", orrery.ErrUnknownID},
	{"rank: link twice in a path", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}, {"id": "m", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {"a": ["m", "l", "m"]}}]`), orrery.CodeInvalid, "candidates[0].paths.a[2]", candidate.ErrInvalid},
	{"rank: wrong type in a path", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {"a": ["l", 3]}}]`), orrery.CodeMalformed, "candidates[0].paths.a[1]", nil},
	{"rank: unknown candidate field", "cassini.rank", rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[{"id": "c", "path": {}}]`), orrery.CodeMalformed, "candidates[0].path", nil},
	{"rank: bad job", "cassini.rank", `{"links": [{"id": "l", "capacity_gbps": 1}], "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": -1}]}], "candidates": [{"id": "c", "paths": {}}]}`, orrery.CodeInvalid, "jobs[0].phases[0].gbps", profile.ErrInvalidBandwidth},
	{"rank: bad aggregate", "cassini.rank", `{"aggregate": "max"}`, orrery.CodeInvalid, "aggregate", candidate.ErrInvalid},
	{"rank: bad loop policy", "cassini.rank", `{"loops": "ignore"}`, orrery.CodeInvalid, "loops", affinity.ErrInvalid},
	{"rank: negative workers", "cassini.rank", `{"workers": -1}`, orrery.CodeInvalid, "workers", candidate.ErrInvalid},
	{"rank: bad mode", "cassini.rank", `{"mode": "exactly"}`, orrery.CodeInvalid, "mode", link.ErrInvalidOption},
}

// jobs2 is a link request whose second job has the given phases.
func jobs2(phases string) string {
	return `{"capacity_gbps": 50, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}, {"id": "b", "phases": [` + phases + `]}]}`
}

// rankReq is a rank request of two jobs with the given links and candidates.
func rankReq(links, cands string) string {
	return `{"links": ` + links + `, "jobs": [{"id": "a", "phases": [{"ms": 1, "gbps": 1}]}, {"id": "b", "phases": [{"ms": 1, "gbps": 1}]}], "candidates": ` + cands + `}`
}

func TestBadRequests(t *testing.T) {
	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := orrery.Call(context.Background(), tc.op, []byte(tc.req))
			if err == nil {
				t.Fatalf("accepted: %s", out)
			}
			var we *orrery.Error
			if !errors.As(err, &we) {
				t.Fatalf("err %v is not a *orrery.Error", err)
			}
			if we.Code != tc.code || we.Field != tc.field {
				t.Fatalf("code %q field %q (%v); want %q %q", we.Code, we.Field, we.Message, tc.code, tc.field)
			}
			if we.Message == "" {
				t.Errorf("empty message")
			}
			sentinel := map[string]error{orrery.CodeMalformed: orrery.ErrMalformed, orrery.CodeInvalid: orrery.ErrInvalid, orrery.CodeLimit: orrery.ErrLimit}[tc.code]
			if !errors.Is(err, sentinel) {
				t.Errorf("err %v does not wrap %v", err, sentinel)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("err %v does not wrap %v", err, tc.cause)
			}
			// Through the envelope: the same error object.
			env := `{"op": "` + tc.op + `", "request": ` + tc.req + `}`
			if strings.TrimSpace(tc.req) == "" || !json.Valid([]byte(tc.req)) {
				return // not embeddable as a JSON value
			}
			r := handle(t, []byte(env))
			if r.Error == nil || r.Error.Code != tc.code || r.Error.Field != tc.field || r.Op != tc.op {
				t.Errorf("Handle: %+v, want code %q field %q", r, tc.code, tc.field)
			}
		})
	}
}

// TestRankErrorsIgnoreMapOrder: with several bad paths the same one is
// reported every time (paths is a JSON object, decoded into a Go map).
func TestRankErrorsIgnoreMapOrder(t *testing.T) {
	req := rankReq(`[{"id": "l", "capacity_gbps": 1}]`, `[{"id": "c", "paths": {"zz": ["l"], "a": ["l", "m"], "b": ["q"], "yy": ["l"], "x": ["l"]}}]`)
	for range 20 {
		_, err := orrery.Call(context.Background(), "cassini.rank", []byte(req))
		var we *orrery.Error
		if !errors.As(err, &we) || we.Field != "candidates[0].paths.a[1]" {
			t.Fatalf("err = %v, want the first path in key order, candidates[0].paths.a[1]", err)
		}
	}
}

// TestLinkRequestProblem: Problem quantizes as the op does (1 ms ticks,
// 1 Mbps units, phases in order), and searching it gives the op's shifts.
func TestLinkRequestProblem(t *testing.T) {
	const body = `{"capacity_gbps": 50, "mode": "paper", "jobs": [{"id": "vgg16", "phases": [{"ms": 141, "gbps": 0}, {"ms": 114, "gbps": 25}]}, {"id": "resnet", "phases": [{"ms": 120, "gbps": 0}, {"ms": 61, "gbps": 30}]}]}`
	var req orrery.LinkRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	pr, opt, err := req.Problem()
	if err != nil {
		t.Fatal(err)
	}
	pulse := func(n, on int, v int32) []int32 {
		d := make([]int32, n)
		for i := on; i < n; i++ {
			d[i] = v
		}
		return d
	}
	if pr.Capacity != 50000 || opt.Mode != link.Paper || len(pr.Jobs) != 2 ||
		!slices.Equal(pr.Jobs[0].Demand, pulse(255, 141, 25000)) || !slices.Equal(pr.Jobs[1].Demand, pulse(181, 120, 30000)) {
		t.Fatalf("problem %+v options %+v", pr, opt)
	}
	var w link.Workspace
	res, err := w.Search(context.Background(), pr, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := orrery.Call(context.Background(), "cassini.link", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var resp orrery.LinkResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ShiftsMs["resnet"] != float64(res.Shifts[1]) || resp.Score != res.Score {
		t.Fatalf("op gives shift %v score %v, Problem's search %v %v", resp.ShiftsMs["resnet"], resp.Score, res.Shifts[1], res.Score)
	}
	req.CapacityGbps = -1
	var we *orrery.Error
	if _, _, err := req.Problem(); !errors.As(err, &we) || we.Field != "capacity_gbps" {
		t.Fatalf("bad capacity: %v", err)
	}
}
