package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orrery/orrery"
)

// issueRequest is the request of issue 2 (test vector D).
const issueRequest = `{"capacity_gbps": 50, "jobs": [{"id": "a", "period_ms": 72, "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}, {"id": "b", "period_ms": 72, "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}]}`

const rankRequest = `{"links": [{"id": "l1", "capacity_gbps": 50}, {"id": "l2", "capacity_gbps": 50}],
 "jobs": [{"id": "a", "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}, {"id": "b", "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]}],
 "candidates": [{"id": "apart", "paths": {"a": ["l1"], "b": ["l2"]}}, {"id": "shared", "paths": {"a": ["l1"], "b": ["l1"]}}]}`

// runWith runs the command line with stdin and returns the exit status,
// standard output and standard error.
func runWith(stdin io.Reader, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdio{stdin, &out, &errb})
	return code, out.String(), errb.String()
}

func TestCassiniLink(t *testing.T) {
	code, out, errs := runWith(strings.NewReader(issueRequest), "cassini", "link")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want, err := orrery.Call(context.Background(), "cassini.link", []byte(issueRequest))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want)+"\n" {
		t.Fatalf("stdout %q, want the wire response %q and a newline", out, want)
	}
	var r orrery.LinkResponse
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Score != 1 || r.UnshiftedScore != 0.75 || r.ShiftsMs["a"] != 0 || r.ShiftsMs["b"] != 30 {
		t.Fatalf("score %v unshifted %v shifts %v; want 1, 0.75, {a: 0, b: 30}", r.Score, r.UnshiftedScore, r.ShiftsMs)
	}

	// -pretty indents the same response.
	code, pretty, _ := runWith(strings.NewReader(issueRequest), "cassini", "link", "-pretty")
	var b bytes.Buffer
	if err := json.Indent(&b, want, "", "  "); err != nil {
		t.Fatal(err)
	}
	if code != 0 || pretty != b.String()+"\n" {
		t.Fatalf("-pretty: exit %d, stdout %q", code, pretty)
	}
}

func TestCassiniRank(t *testing.T) {
	code, out, errs := runWith(strings.NewReader(rankRequest), "cassini", "rank")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var r orrery.RankResponse
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Best == nil || *r.Best != "apart" || strings.Join(r.Ranking, ",") != "apart,shared" || r.ShiftsMs["b"] != 0 {
		t.Fatalf("best %v ranking %v shifts %v; want apart first (nothing shared, score 1, ties by input order)", r.Best, r.Ranking, r.ShiftsMs)
	}
	if c := r.Candidates[1]; c.Score != 1 || c.ShiftsMs["b"] != 30 {
		t.Fatalf("candidate shared: %+v, want score 1 with b at 30 ms", c)
	}
}

// TestBadInput: bad requests exit 1 with the field at fault on stderr and
// nothing on stdout.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string // in stderr
	}{
		{[]string{"cassini", "link"}, strings.Replace(issueRequest, `"ms": 42, "gbps": 0}]}]}`, `"ms": 42, "gbps": -1}]}]}`, 1), "jobs[1].phases[1].gbps"},
		{[]string{"cassini", "link"}, strings.Replace(issueRequest, `"capacity_gbps": 50`, `"capacity_gbps": 0`, 1), "capacity_gbps"},
		{[]string{"cassini", "link"}, strings.Replace(issueRequest, `"id": "b"`, `"id": "a"`, 1), "jobs[1].id"},
		{[]string{"cassini", "link"}, strings.Replace(issueRequest, `"gbps": 40}`, `"gbps": "40"}`, 1), "jobs[0].phases[0].gbps"},
		{[]string{"cassini", "link"}, strings.Replace(issueRequest, `"period_ms": 72`, `"period_ms": 70`, 1), "jobs[0].period_ms"},
		{[]string{"cassini", "link"}, `{"capacity_gbps": 50, "max_perimeter_ticks": 200, "jobs": [{"id": "a", "phases": [{"ms": 10, "gbps": 9}, {"ms": 50, "gbps": 0}]}, {"id": "b", "phases": [{"ms": 10, "gbps": 9}, {"ms": 90, "gbps": 0}]}, {"id": "c", "phases": [{"ms": 10, "gbps": 9}, {"ms": 140, "gbps": 0}]}]}`, "jobs: unified perimeter exceeds the cap"},
		{[]string{"cassini", "link"}, `{"capacity_gbps": 50,`, "orrery: "},
		{[]string{"cassini", "link"}, ``, "empty request"},
		{[]string{"cassini", "link", "-pretty"}, `{"jobz": []}`, "jobz: unknown field"},
		{[]string{"cassini", "rank"}, strings.Replace(rankRequest, `"b": ["l1"]}`, `"b": ["l9"]}`, 1), "candidates[1].paths.b[0]"},
		{[]string{"cassini", "rank"}, strings.Replace(rankRequest, `{"id": "l2", "capacity_gbps": 50}`, `{"id": "l1", "capacity_gbps": 50}`, 1), "links[1].id"},
	} {
		code, out, errs := runWith(strings.NewReader(tc.stdin), tc.args...)
		if code != 1 || out != "" || !strings.Contains(errs, tc.want) || !strings.HasPrefix(errs, "orrery: ") {
			t.Errorf("%v < %.60q: exit %d, stdout %q, stderr %q; want 1 and %q on stderr", tc.args, tc.stdin, code, out, errs, tc.want)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadError(t *testing.T) {
	code, _, errs := runWith(failingReader{}, "cassini", "link")
	if code != 1 || !strings.Contains(errs, "reading the request: disk on fire") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// TestUsage: mistakes in the command line itself exit 2 with the usage.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nope"},
		{"cassini"},
		{"cassini", "nope"},
		{"cassini", "link", "-nope"},
		{"cassini", "link", "req.json", "extra"},
		{"cassini", "rank", "--pretty=maybe"},
		{"demo", "extra"},
		{"demo", "-nope"},
	} {
		code, out, errs := runWith(strings.NewReader(issueRequest), args...)
		if code != 2 || out != "" || !strings.Contains(errs, "usage") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr", args, code, out, errs)
		}
	}
}

// A flag value a subcommand refuses prints that subcommand's usage, not
// its group's; a runtime failure (a file that is not there) exits 1
// without a usage.
func TestSubcommandUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cassini", "simulate", "-load", "-1"}, 2, "usage: orrery cassini simulate [flags]"},
		{[]string{"cassini", "simulate", "-policies", "nope"}, 2, "usage: orrery cassini simulate [flags]"},
		{[]string{"shockwave", "simulate", "--gpus", "7"}, 2, "usage: orrery shockwave simulate [flags]"},
		{[]string{"cassini", "simulate", "-noise-dir", "no/such/folder", "-q"}, 1, "-noise-dir no/such/folder: not a folder"},
		{[]string{"shockwave", "simulate", "--trace", "no/such.trace", "-q"}, 1, "no/such.trace"},
	} {
		code, out, errs := runWith(strings.NewReader(""), c.args...)
		if code != c.code || out != "" || !strings.Contains(errs, c.want) || strings.Contains(errs, "<command>") ||
			(c.code == 1) == strings.Contains(errs, "usage") {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, h := range []string{"help", "-h", "--help"} {
		code, out, _ := runWith(nil, h)
		if code != 0 || !strings.Contains(out, "cassini link") || !strings.Contains(out, "demo") {
			t.Errorf("%s: exit %d, stdout %q", h, code, out)
		}
	}
	// A command's -h prints its flags and is not an error.
	code, _, errs := runWith(strings.NewReader(""), "cassini", "link", "-h")
	if code != 0 || !strings.Contains(errs, "-pretty") {
		t.Errorf("cassini link -h: exit %d, stderr %q", code, errs)
	}
}

func TestDemo(t *testing.T) {
	plots := t.TempDir()
	t.Chdir(t.TempDir()) // the demo's data is inside the binary: any folder will do
	code, out, errs := runWith(nil, "demo", "-out", plots)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, name := range []string{"cassini_iteration_cdf.png", "cassini_unified_circle.png", "shockwave_ftf_cdf.png"} {
		if fi, err := os.Stat(filepath.Join(plots, name)); err != nil || fi.Size() < 1000 {
			t.Errorf("plot %s: %v", name, err)
		}
	}
	for _, want := range []string{"Shockwave", "cassini", "Plots written to"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Two VGG19-like jobs (110 ms at 40 Gbps every 240 ms) overlap when
	// started together (110 ms 30 Gbps over: 1 - 110*30/(240*50) = 0.725)
	// and interleave once one is delayed by 110..130 ms.
	for _, want := range []string{"compatibility score 0.725 unshifted -> 1.000", "vgg19-a  delay    0.0 ms", "vgg19-b  delay  110.0 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// A JSON command reads its request from the file it is given (flags before
// or after it), or stdin with - or none; -table prints link and rank as
// tables; a response's warnings go to stderr.
func TestRequestFileAndTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "link.json")
	if err := os.WriteFile(path, []byte(issueRequest), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, _ := runWith(strings.NewReader(issueRequest), "cassini", "link")
	for _, args := range [][]string{{path}, {"-", "<stdin>"}} {
		in := io.Reader(strings.NewReader(""))
		if len(args) == 2 {
			in, args = strings.NewReader(issueRequest), args[:1]
		}
		code, out, errs := runWith(in, append([]string{"cassini", "link"}, args...)...)
		if code != 0 || out != want || errs != "" {
			t.Errorf("%v: exit %d, %q, stderr %q", args, code, out, errs)
		}
	}
	code, out, _ := runWith(nil, "cassini", "link", path, "-table")
	for _, s := range []string{"score 1.000 (unshifted 0.750, bound 1.000, optimal", "job  period (ms)  shift (ms)  rotation (deg)", "b           72          30           150.0"} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("link -table: exit %d, lacks %q:\n%s", code, s, out)
		}
	}
	code, out, _ = runWith(strings.NewReader(rankRequest), "cassini", "rank", "-table")
	for _, s := range []string{"best apart (", "apart      1.000  optimal  none", "shared     1.000  optimal  l1 1.000: a, b"} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("rank -table: exit %d, lacks %q:\n%s", code, s, out)
		}
	}
	if code, _, errs := runWith(nil, "shockwave", "plan", "-table"); code != 2 || !strings.Contains(errs, "-table") {
		t.Errorf("plan -table: exit %d, %q", code, errs)
	}
	warn := strings.Replace(issueRequest, `"ms": 42`, `"ms": 42.5`, 1)
	warn = strings.Replace(warn, `"period_ms": 72, `, ``, 1)
	code, out, errs := runWith(strings.NewReader(warn), "cassini", "link")
	if code != 0 || !strings.Contains(out, `"warnings":[{"field":"jobs[0].phases"`) ||
		errs != "orrery: warning: jobs[0].phases: 72.5 ms is not a whole number of ticks of 1 ms: the period is rounded up to 73 ms (73 ticks)\n" {
		t.Errorf("warnings: exit %d, stdout %s, stderr %q", code, out, errs)
	}
}
