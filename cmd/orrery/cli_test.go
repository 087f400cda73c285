package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// version names orrery, the toolchain and the schema and ABI versions.
func TestVersion(t *testing.T) {
	code, out, errs := runWith(nil, "version")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "orrery ") || !strings.Contains(out, "schema v1, ABI v1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A group's -h lists its commands on stdout; a group without a command
// is a usage error with the group's usage.
func TestGroupHelp(t *testing.T) {
	for _, g := range []string{"cassini", "shockwave"} {
		code, out, errs := runWith(nil, g, "-h")
		if code != 0 || errs != "" || !strings.Contains(out, "usage: orrery "+g+" <command>") || !strings.Contains(out, g+" simulate") {
			t.Errorf("%s -h: exit %d, stdout %q, stderr %q", g, code, out, errs)
		}
		code, _, errs = runWith(nil, g)
		if code != 2 || !strings.Contains(errs, "usage: orrery "+g+" <command>") || strings.Contains(errs, "usage: orrery <command>") {
			t.Errorf("%s alone: exit %d, stderr %q", g, code, errs)
		}
	}
}

// A bad flag prints its message once, then its own command's usage, and
// nothing of the top-level usage.
func TestBadFlagOnce(t *testing.T) {
	for _, args := range [][]string{{"cassini", "link", "-x"}, {"shockwave", "plan", "-nope"}, {"serve", "stray"}, {"serve", "-x"}} {
		code, out, errs := runWith(strings.NewReader(""), args...)
		bad := args[len(args)-1]
		if code != 2 || out != "" || strings.Count(errs, bad) != 1 || !strings.Contains(errs, "usage: orrery "+strings.Join(args[:len(args)-1], " ")) || strings.Contains(errs, "commands:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// Errors say nothing of internal packages.
func TestUserMessage(t *testing.T) {
	err := errors.New("round: invalid state: trace: line 3: job_type: unknown model; capacity in [1, kernels.MaxValue]")
	if got, want := userMessage(err), "invalid state: line 3: job_type: unknown model; capacity in [1, 16777215]"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	code, _, errs := runWith(strings.NewReader(`{"gpus": 0, "round": 0, "jobs": []}`), "shockwave", "plan")
	if code != 1 || errs != "orrery: gpus: invalid state: 0 GPUs (want ≥ 1)\n" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// serve answers each line in one session, so a handle made on one line
// works on the next; blank lines are skipped.
func TestServe(t *testing.T) {
	in := `{"op":"shockwave.scheduler.new","request":{"gpus":4}}

{"op":"shockwave.scheduler.add","request":{"handle":1,"job":{"id":"a","gpus":1,"submit_s":0,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[60,60]}}}
{"op":"shockwave.scheduler.schedule","request":{"handle":1}}
{"op":"shockwave.scheduler.schedule","request":{"handle":2}}`
	code, out, errs := runWith(strings.NewReader(in), "serve")
	want := `{"version":1,"op":"shockwave.scheduler.new","response":{"handle":1}}
{"version":1,"op":"shockwave.scheduler.add","response":{"round":0,"active":1}}
{"version":1,"op":"shockwave.scheduler.schedule","response":{"round":0,"jobs":["a"]}}
{"version":1,"op":"shockwave.scheduler.schedule","error":{"code":"invalid_argument","field":"handle","message":"unknown handle: 2 is not open in this session"}}
`
	if code != 0 || errs != "" || out != want {
		t.Fatalf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, out, want)
	}
}

// A line past the request limit gets the limit error, and the next line
// is answered.
func TestServeLongLine(t *testing.T) {
	var in bytes.Buffer
	in.WriteString(`{"op":"cassini.link","request":"`)
	in.Write(bytes.Repeat([]byte("x"), 70<<20))
	in.WriteString("\"}\n" + `{"op":"nope","request":{}}` + "\n")
	code, out, _ := runWith(&in, "serve")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], "limit_exceeded") || !strings.Contains(lines[1], "unknown_op") {
		t.Fatalf("exit %d, %d lines: %.300s", code, len(lines), out)
	}
}

// Progress is silent when stderr is not a terminal, or with -q.
func TestProgressQuiet(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(stdio{err: &b}, false)
	p.Report("replay", 1, 2)
	p.Done()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	newProgress(stdio{err: f}, false).Report("replay", 1, 2)
	if p != nil || b.Len() != 0 {
		t.Fatalf("a buffer got progress: %q", b.String())
	}
	if st, _ := f.Stat(); st.Size() != 0 {
		t.Fatal("a file got progress")
	}
	// On a terminal it writes one line rewritten in place, then clears it.
	p = &progress{w: &b}
	p.Report("replay", 3, 4)
	p.Done()
	if got := b.String(); !strings.HasPrefix(got, "\rreplay: 3/4 (75%)") || !strings.HasSuffix(got, "\r") {
		t.Fatalf("%q", got)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	if q := quietFlag(fs); fs.Parse([]string{"-q"}) != nil || !*q {
		t.Fatal("-q")
	}

	// The ETA is the time so far scaled to the work left, from the first
	// report, once a second has passed.
	clock := time.Unix(1000, 0)
	b.Reset()
	p = &progress{w: &b, now: func() time.Time { return clock }}
	p.Report("run", 0, 10)
	clock = clock.Add(500 * time.Millisecond)
	p.Report("run", 1, 10)
	if got := b.String(); strings.Contains(got, "ETA") {
		t.Fatalf("an ETA before a second: %q", got)
	}
	clock = clock.Add(3500 * time.Millisecond) // 4 s for 4 of 10: 6 s left
	p.Report("run", 4, 10)
	if got := b.String(); !strings.HasSuffix(strings.TrimRight(got, " "), "run: 4/10 (40%, ETA 6s)") {
		t.Fatalf("%q", got)
	}
	// shockwave simulate's ETA covers every policy: the second of three
	// policies half done is half of the run.
	b.Reset()
	clock = time.Unix(1000, 0)
	p = &progress{w: &b, now: func() time.Time { return clock }}
	report := swProgress(p, 3)
	report("shockwave", 120, 120)
	clock = clock.Add(3 * time.Second)
	report("gavel", 60, 120)
	if got := b.String(); !strings.HasSuffix(strings.TrimRight(got, " "), "shockwave simulate: gavel: 180/360 (50%, ETA 3s)") {
		t.Fatalf("%q", got)
	}
}
