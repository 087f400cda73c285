package orrery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/internal/malformed"
)

// Issue 29: no accepted call may poison a session. The stateful sequences
// of internal/malformed (random calls of every stateful op with values at
// the edges of their domains) run on a Session, and:
//
//   - a schedule (or last_plan) on an open scheduler never fails: every
//     call the session accepted before it was checked at its door;
//   - a refused call leaves the session as it was: the session of the
//     accepted calls alone answers each of them byte for byte as the
//     session of all the calls did;
//   - no answer is an internal error, and no message names a Go
//     identifier (see goWords).
//
// The default runs in a few seconds; -reliability.sessions raises the
// count (the long run of docs/reliability.md).

var (
	relSessions = flag.Int("reliability.sessions", 150, "stateful sequences TestAcceptedCallsNeverPoison runs")
	relCalls    = flag.Int("reliability.calls", 60, "calls in each sequence")
	relSeed     = flag.Uint64("reliability.seed", 29, "seed of the sequences")
)

// answer is one decoded answer envelope.
type answer struct {
	Op       string          `json:"op"`
	Response json.RawMessage `json:"response"`
	Error    *orrery.Error   `json:"error"`
}

func decodeAnswer(t *testing.T, b []byte) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("answer is not JSON: %v: %.200s", err, b)
	}
	return a
}

// runLines answers lines in order on a fresh Session, with no deadline:
// the answers must not depend on the machine's speed.
func runLines(lines [][]byte) [][]byte {
	s := orrery.NewSession()
	defer s.Close()
	out := make([][]byte, len(lines))
	for i, l := range lines {
		out[i] = s.Handle(context.Background(), l)
	}
	return out
}

func TestAcceptedCallsNeverPoison(t *testing.T) {
	seqs := malformed.Sequences(*relSeed, *relSessions, *relCalls)
	var calls, refused, schedules int
	for _, seq := range seqs {
		got := runLines(seq.Lines)
		var kept [][]byte
		var keptAt []int
		for i, b := range got {
			calls++
			a := decodeAnswer(t, b)
			what := fmt.Sprintf("%s line %d (%.300s)", seq.Name, i, seq.Lines[i])
			if a.Error == nil {
				kept, keptAt = append(kept, seq.Lines[i]), append(keptAt, i)
				if a.Op == "shockwave.scheduler.schedule" {
					schedules++
				}
				continue
			}
			refused++
			switch {
			case a.Error.Code == orrery.CodeInternal || a.Error.Code == "":
				t.Errorf("%s: internal or untyped error: %+v", what, a.Error)
			case (a.Op == "shockwave.scheduler.schedule" || a.Op == "shockwave.scheduler.last_plan") && a.Error.Field != "handle":
				t.Errorf("%s: an accepted call poisoned the scheduler: %s: %s", what, a.Error.Field, a.Error.Message)
			}
			if w := goWords(a.Error.Field) + goWords(a.Error.Message); w != "" {
				t.Errorf("%s: the message names %q, not the request's words: %s: %s", what, w, a.Error.Field, a.Error.Message)
			}
		}
		// The accepted calls alone answer as they did among the refused.
		again := runLines(kept)
		for k, b := range again {
			if i := keptAt[k]; !bytes.Equal(b, got[i]) {
				t.Errorf("%s line %d: without the refused calls it answers\n%.300s\nwith them\n%.300s", seq.Name, i, b, got[i])
				break
			}
		}
	}
	t.Logf("%d sequences, %d calls, %d refused, %d schedules answered", len(seqs), calls, refused, schedules)
	if refused == 0 || schedules < len(seqs) {
		t.Errorf("the sequences exercise too little: %d refused, %d schedules", refused, schedules)
	}
}

// goWords returns the first word of an error's field and message that is
// Go's rather than the request's (empty if none): a CamelCase identifier
// ("PriorStrength", "EpochBS"), a selector ("Options.", "cfg.Reopt"), a
// capitalized field name of the engine mid-sentence ("Known"), a Go type
// ("float64", "[]int"), a length in Go's words ("len 6"), a package
// prefix ("round: ", "predictor.") or a formatting mistake ("%!d").
func goWords(s string) string {
	s = quotedRE.ReplaceAllString(s, `""`) // the request's own strings, echoed
	for _, re := range goWordREs {
		for _, m := range re.FindAllString(s, -1) {
			if !englishCapitals[strings.TrimLeft(m, " (")] {
				return strings.TrimLeft(m, " (")
			}
		}
	}
	for _, w := range capitalRE.FindAllStringSubmatch(s, -1) {
		if !englishCapitals[w[1]] {
			return w[1]
		}
	}
	return ""
}

var (
	quotedRE  = regexp.MustCompile(`"(\\.|[^"\\])*"`)
	goWordREs = []*regexp.Regexp{
		regexp.MustCompile(`\b[A-Za-z_]+\.[A-Z]\w*`),
		regexp.MustCompile(`\b[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*`),
		regexp.MustCompile(`\b(u?int(8|16|32|64)?|float(32|64)|time\.Duration|map\[|\[\][a-z]+)\b`),
		regexp.MustCompile(`\blen \d`),
		regexp.MustCompile(`(^|: )(orrery|round|market|predictor|profile|link|circle|candidate|affinity|agent|codec|kernels|deadline): `),
		regexp.MustCompile(`(^|[ (])(orrery|round|market|predictor|profile|link|circle|candidate|affinity|agent|codec|kernels)\.[A-Za-z]`),
		regexp.MustCompile(`%!`),
	}
	// capitalRE finds a capitalized word that does not start the text or
	// a sentence.
	capitalRE       = regexp.MustCompile(`[^.:;!?(\s]\s+([A-Z][A-Za-z]*)`)
	englishCapitals = map[string]bool{"Unix": true, "Gbps": true, "Mbps": true, "Pbps": true, "NaN": true, "Infinity": true,
		"JSON": true, "UTF": true, "GPU": true, "GPUs": true, "LCM": true, "CASSINI": true, "Shockwave": true, "Dirichlet": true,
		"BFS": true, "FT": true, "ID": true, "IDs": true}
)

func TestGoWords(t *testing.T) {
	for s, want := range map[string]string{
		"jobs[0].gpus: 4 GPUs on a 2-GPU cluster":                         "",
		"config.k: invalid state: 1e+07 per second (want at most 1e+06)":  "",
		"invalid value: 1e+308 (want 0..1099511627776)":                   "",
		"Options.PriorStrength = 1e+308: invalid value":                   "Options.PriorStrength",
		"cur = len 6, pre has 3: slice length does not match":             "len 6",
		"unknown handle: 1 is not a agent":                                "",
		"given with Known, which replaces the profile's predictions":      "Known",
		"predictor: job has no epochs":                                    "predictor: ",
		"expected float64, got JSON string":                               "float64",
		"job 3 was added without SamplesPerEpoch":                         "SamplesPerEpoch",
		"expected an integer in [0, 65535], got JSON number -1":           "",
		"a string of 1030 bytes, above the 1024-byte limit":               "",
		"cfg.ReoptRounds: -1 (want ≥ 0)":                                  "cfg.ReoptRounds",
		"Known replaces it. Give one or the other":                        "",
		"ready_unix_ms: 9.3e+12 ms since the Unix epoch (want 0..9.2e12)": "",
	} {
		if got := goWords(s); got != want {
			t.Errorf("goWords(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestHandleMessages: a handle of the other kind, and the handle cap,
// in the ops' own words (it was "1 is not a agent", and agent.new at the
// cap named the schedulers' close op only).
func TestHandleMessages(t *testing.T) {
	s := orrery.NewSession()
	defer s.Close()
	call := func(line string) answer {
		return decodeAnswer(t, s.Handle(context.Background(), []byte(line)))
	}
	call(`{"op":"cassini.agent.new","request":{"period_ms":72,"shift_ms":30}}`)
	call(`{"op":"shockwave.scheduler.new","request":{"gpus":4}}`)
	for line, want := range map[string]string{
		`{"op":"cassini.agent.stats","request":{"handle":2}}`:          "2 is a scheduler's handle, not an agent's",
		`{"op":"shockwave.scheduler.schedule","request":{"handle":1}}`: "1 is an agent's handle, not a scheduler's",
	} {
		if a := call(line); a.Error == nil || a.Error.Field != "handle" || !strings.Contains(a.Error.Message, want) {
			t.Errorf("%s: %+v, want %q", line, a.Error, want)
		}
	}
	for range orrery.MaxHandles - 2 {
		call(`{"op":"cassini.agent.new","request":{"period_ms":72,"shift_ms":30}}`)
	}
	a := call(`{"op":"cassini.agent.new","request":{"period_ms":72,"shift_ms":30}}`)
	if a.Error == nil || a.Error.Code != orrery.CodeLimit || !strings.Contains(a.Error.Message, "cassini.agent.close") || !strings.Contains(a.Error.Message, "shockwave.scheduler.close") {
		t.Errorf("new at the cap: %+v", a.Error)
	}
}

// TestRemovedIDsFreed (issue 29, item 3): 20,000 add/remove cycles of
// 1 KB string ids keep the heap flat; before, every removed id stayed in
// the scheduler's table for good (50,000 cycles grew orrery serve from 20
// to 100 MB).
func TestRemovedIDsFreed(t *testing.T) {
	s := orrery.NewSession()
	defer s.Close()
	do := func(line string) {
		if a := decodeAnswer(t, s.Handle(context.Background(), []byte(line))); a.Error != nil {
			t.Fatalf("%.100s: %+v", line, a.Error)
		}
	}
	do(`{"op":"shockwave.scheduler.new","request":{"gpus":4}}`)
	cycle := func(k int) {
		id := fmt.Sprintf("%01024d", k)
		do(`{"op":"shockwave.scheduler.add","request":{"handle":1,"job":{"id":"` + id + `","gpus":1,"submit_s":1,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[36,36]}}}`)
		if k%50 == 0 {
			do(`{"op":"shockwave.scheduler.schedule","request":{"handle":1}}`)
		}
		do(`{"op":"shockwave.scheduler.remove","request":{"handle":1,"id":"` + id + `"}}`)
	}
	for k := range 1000 { // warm up the buffers
		cycle(k)
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	const n = 20000
	for k := 1000; k < 1000+n; k++ {
		cycle(k)
	}
	do(`{"op":"shockwave.scheduler.schedule","request":{"handle":1}}`)
	grew := int64(heap()) - int64(before)
	t.Logf("%d cycles of 1 KB ids: the heap grew %d bytes", n, grew)
	if grew > 2<<20 { // the ids alone are 20 MB
		t.Errorf("the heap grew %d bytes over %d add/remove cycles", grew, n)
	}
	// The last plan's job, removed since, keeps its name (last_plan
	// lists it): one id.
	if bytes, jobs := s.Bytes(); bytes > 1024+96 || jobs != 0 {
		t.Errorf("no job left, and the session counts %d bytes of %d jobs", bytes, jobs)
	}
}

// TestPlanIDCap (issue 29, item 3): a scheduler's plan lists at most
// orrery.MaxPlanIDBytes of ids: with a window of 1024 rounds and 1 KB ids
// the 32nd add is refused, where before 32 ids (a 33 KB session) made
// last_plan answer 67 MB.
func TestPlanIDCap(t *testing.T) {
	s := orrery.NewSession()
	defer s.Close()
	s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.new","request":{"gpus":64,"config":{"rounds":1024,"max_nodes":1}}}`))
	var refused *orrery.Error
	n := 0
	for ; n < 64; n++ {
		id := fmt.Sprintf("%01024d", n)
		a := decodeAnswer(t, s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.add","request":{"handle":1,"job":{"id":"`+id+`","gpus":1,"submit_s":1,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[36,36]}}}`)))
		if a.Error != nil {
			refused = a.Error
			break
		}
	}
	if refused == nil || refused.Code != orrery.CodeLimit || refused.Field != "job.id" || n != 31 {
		t.Fatalf("after %d adds: %+v, want the 32nd refused naming job.id", n, refused)
	}
	s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.schedule","request":{"handle":1}}`))
	plan := s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.last_plan","request":{"handle":1}}`))
	if len(plan) > orrery.MaxPlanIDBytes+n*400 {
		t.Errorf("last_plan answered %d bytes for %d jobs", len(plan), n)
	}
	t.Logf("%d jobs of 1 KB ids, window 1024: last_plan answers %d bytes", n, len(plan))
}

// TestIDCap: string ids are strings: at most orrery.MaxStringBytes
// bytes (a 16 MB id was accepted, and last_plan then wrote 621 MB).
func TestIDCap(t *testing.T) {
	s := orrery.NewSession()
	defer s.Close()
	s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.new","request":{"gpus":4}}`))
	for n, want := range map[int]string{orrery.MaxStringBytes: "", orrery.MaxStringBytes + 1: orrery.CodeLimit, 16 << 20: orrery.CodeLimit} {
		id := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		a := decodeAnswer(t, s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.add","request":{"handle":1,"job":{"id":"`+id+`","gpus":1,"submit_s":1,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[36,36]}}}`)))
		switch {
		case want == "" && a.Error != nil:
			t.Errorf("an id of %d bytes: %+v", n, a.Error)
		case want != "" && (a.Error == nil || a.Error.Code != want || a.Error.Field != "job.id"):
			t.Errorf("an id of %d bytes: %+v, want %s naming job.id", n, a.Error, want)
		}
	}
}
