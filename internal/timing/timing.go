// Package timing builds the requests that check a time limit holds over
// a whole call (issue 29), on every host: rankings, plans and a
// scheduler's re-plans of growing size, each long enough to run past any
// limit tried, with the limit set. A host runs a case (its lines in order
// on a fresh session, timing the last) and reports the time; Check says
// whether it is within the bound.
//
// The bound is elapsed ≤ Slack·limit + Fixed + PerByte·(the case's
// bytes): Slack for the granularity of the searches' looks at the clock
// (they look every few microseconds to a millisecond), and a constant and
// a per-byte part for what no limit can interrupt: decoding the request
// and encoding the answer, and the first answer (a ranking's candidates
// each evaluated whole, a plan's tables). The constants are per host
// (natively, in wazero, in node), measured on the machine of
// docs/reliability.md.
package timing

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orrery/orrery/internal/codec"
)

// Case is one timed call: Lines run in order on a fresh session, the last
// one timed (the others set a scheduler up).
type Case struct {
	Name    string
	Kind    string // "rank", "plan" or "schedule"
	N       int    // candidates, or jobs
	Op      string
	LimitMs float64
	Lines   [][]byte
}

// Bytes returns the size of the timed line.
func (c Case) Bytes() int { return len(c.Lines[len(c.Lines)-1]) }

// Sizes of the requests: small ones, and ones whose full search runs for
// seconds to minutes.
var (
	RankSizes  = []int{30, 120, 500, 2000} // candidates, of 24 jobs over 12 links
	PlanSizes  = []int{50, 400, 3000}      // jobs, over 20 rounds (200 from 1000 jobs)
	SchedSizes = []int{50, 400, 2000}      // jobs of a scheduler, re-planned
)

// Make returns the case of kind and size n with the limit (ms).
func Make(kind string, n int, limitMs float64) Case {
	c := Case{Name: fmt.Sprintf("%s/%d/%g ms", kind, n, limitMs), Kind: kind, N: n, LimitMs: limitMs}
	switch kind {
	case "rank":
		c.Op, c.Lines = "cassini.rank", [][]byte{envelope("cassini.rank", Rank(1, n, 24, 12, limitMs))}
	case "plan":
		c.Op, c.Lines = "shockwave.plan", [][]byte{envelope("shockwave.plan", Plan(2, n, limitMs))}
	case "schedule":
		c.Op, c.Lines = "shockwave.scheduler.schedule", Scheduler(3, n, limitMs)
	default:
		panic("timing: no case of kind " + kind)
	}
	return c
}

// WithLimit returns c with the limit limitMs.
func WithLimit(c Case, limitMs float64) Case { return Make(c.Kind, c.N, limitMs) }

// Cases returns the cases of the given limits (ms) over the sizes, in a
// fixed order.
func Cases(limits []float64, rank, plan, sched []int) []Case {
	var out []Case
	for _, lim := range limits {
		for _, n := range rank {
			out = append(out, Make("rank", n, lim))
		}
		for _, n := range plan {
			out = append(out, Make("plan", n, lim))
		}
		for _, n := range sched {
			out = append(out, Make("schedule", n, lim))
		}
	}
	return out
}

func envelope(op string, req any) []byte {
	b, err := json.Marshal(map[string]any{"op": op, "request": req})
	if err != nil {
		panic(err)
	}
	return b
}

// Rank is a ranking of cands candidates placing jobs jobs (of unrelated
// periods, so that the link searches are not trivial) over links links,
// seeded, with the limit.
func Rank(seed uint64, cands, jobs, links int, limitMs float64) map[string]any {
	r := rand.New(rand.NewPCG(seed, 1))
	var ls, js, cs []map[string]any
	for l := range links {
		ls = append(ls, map[string]any{"id": fmt.Sprint("l", l), "capacity_gbps": 40 + 10*r.IntN(7)})
	}
	for j := range jobs {
		p := 60 + r.IntN(120)
		on := 10 + r.IntN(p/2)
		js = append(js, map[string]any{"id": fmt.Sprint("j", j), "phases": []map[string]any{{"ms": on, "gbps": 10 + r.IntN(30)}, {"ms": p - on, "gbps": 0}}})
	}
	for c := range cands {
		paths := map[string][]string{}
		for j := range jobs {
			if r.IntN(3) == 0 {
				continue
			}
			a := r.IntN(links)
			on := []string{fmt.Sprint("l", a)}
			if b := r.IntN(links); b != a && r.IntN(2) == 0 {
				on = append(on, fmt.Sprint("l", b))
			}
			paths[fmt.Sprint("j", j)] = on
		}
		cs = append(cs, map[string]any{"id": fmt.Sprint("c", c), "paths": paths})
	}
	// One worker: the call's CPU time is then its time on an idle core
	// (the ranking does not depend on the workers).
	return map[string]any{"links": ls, "jobs": js, "candidates": cs, "time_limit_ms": limitMs, "workers": 1}
}

// job is a Shockwave job of a trace's shape: 20 to 80 epochs whose batch
// size doubles once, submitted in the first hours.
func job(r *rand.Rand, id, gpus int) map[string]any {
	n := 20 + r.IntN(60)
	bs, dur := make([]int, n), make([]float64, n)
	d := float64(30 + r.IntN(200))
	for e := range n {
		bs[e], dur[e] = 32, d
		if e >= n/2 {
			bs[e], dur[e] = 64, d*0.9
		}
	}
	return map[string]any{"id": id, "gpus": 1 << r.IntN(3), "submit_s": r.IntN(7200), "progress": r.IntN(n / 2),
		"epoch_bs": bs, "epoch_dur_s": dur}
}

// Plan is a plan of jobs jobs on a cluster of a quarter as many GPUs (at
// least 8), over 20 rounds (200 from 1000 jobs: the planner solves trace
// jobs at its root, and a large window is what makes it take a while),
// with the limit.
func Plan(seed uint64, jobs int, limitMs float64) map[string]any {
	r := rand.New(rand.NewPCG(seed, 2))
	gpus := max(8, jobs/4)
	js := make([]map[string]any, jobs)
	for i := range js {
		js[i] = job(r, i, gpus)
	}
	rounds := 20
	if jobs >= 1000 {
		rounds = 200
	}
	return map[string]any{"gpus": gpus, "round": 40, "reestimate": true, "config": map[string]any{"rounds": rounds, "time_limit_ms": limitMs}, "jobs": js}
}

// Scheduler is a scheduler's session: new (with the limit), jobs adds,
// and the schedule whose re-plan is timed.
func Scheduler(seed uint64, jobs int, limitMs float64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 3))
	gpus := max(8, jobs/4)
	lines := [][]byte{envelope("shockwave.scheduler.new", map[string]any{"gpus": gpus, "config": map[string]any{"time_limit_ms": limitMs}})}
	for i := range jobs {
		lines = append(lines, envelope("shockwave.scheduler.add", map[string]any{"handle": 1, "job": job(r, i, gpus)}))
	}
	return append(lines, envelope("shockwave.scheduler.schedule", map[string]any{"handle": 1}))
}

// Tiny is the limit (ms) at which a case's time is what no limit can
// interrupt: decoding, the first answer or the time-limit error,
// encoding.
const Tiny = 0.001

// Within reports whether a host's time on c (the fastest of a few runs)
// is within the bound: Slack times the limit, plus twice t0 (its time on
// the same request at the Tiny limit: the part no limit interrupts, which
// a longer limit can double by the larger answer it encodes), plus Jitter
// (the searches look at the clock every few microseconds to a
// millisecond, and the host's scheduler adds its own).
func Within(c Case, elapsed, t0 time.Duration) bool { return elapsed <= Bound(c, t0) }

// Bound is the bound of Within.
func Bound(c Case, t0 time.Duration) time.Duration {
	return time.Duration(Slack*c.LimitMs*float64(time.Millisecond)) + 2*t0 + Jitter
}

// Slack and Jitter are the bound's factor on the limit and its constant.
const (
	Slack  = 1.2
	Jitter = 2 * time.Millisecond
)

// Uninterrupted bounds t0, so that a limit ignored altogether (whose t0
// would be the full search's time) fails: Fixed plus PerByte a byte of the
// timed request plus PerJob a job of a scheduler's state, per host.
type Uninterrupted struct {
	Fixed, PerByte, PerJob time.Duration
}

// Of returns the bound on c's t0.
func (u Uninterrupted) Of(c Case) time.Duration {
	jobs := 0
	if c.Op == "shockwave.scheduler.schedule" {
		jobs = len(c.Lines) - 2
	}
	return u.Fixed + time.Duration(c.Bytes())*u.PerByte + time.Duration(jobs)*u.PerJob
}

// Loaded reports whether the machine's load (the 1-minute load average of
// /proc/loadavg) is at least its CPUs: then a call's wall time measures the
// other processes as much as the call, and a host checks its CPU time
// against the bound instead (a call that ignored its limit spends CPU
// past it all the same). It reports false where there is no
// /proc/loadavg.
func Loaded(cpus int) (bool, float64) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return false, 0
	}
	var load float64
	if _, err := fmt.Sscan(string(b), &load); err != nil {
		return false, 0
	}
	return load >= float64(cpus), load
}

// Median returns the median of ts (which it sorts).
func Median(ts []time.Duration) time.Duration {
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts[len(ts)/2]
}

// Run is one timed call: its wall time, the process's CPU time over it,
// and the answer.
type Run struct {
	Wall, CPU time.Duration
	Answer    []byte
}

// Runner runs case c n times, each on a fresh session (its set-up lines
// untimed).
type Runner func(c Case, n int) ([]Run, error)

// Result is a case on a host.
type Result struct {
	Case   Case
	T0     time.Duration // the fastest at the Tiny limit
	Best   time.Duration // the fastest at the case's limit
	Median time.Duration
	Bound  time.Duration // Bound(Case, T0)
	Answer []byte        // of the last run
}

// OK reports whether the case is within its bound.
func (r Result) OK() bool { return r.Best <= r.Bound }

// Measure runs cases with run, on the CPU clock (cpu) or the wall clock:
// t0 at the Tiny limit once per kind and size (the fastest of 3 runs),
// then each case 3 times, and 4 more when none was within its bound.
func Measure(cases []Case, run Runner, cpu bool) ([]Result, error) {
	clock := func(r Run) time.Duration {
		if cpu {
			return r.CPU
		}
		return r.Wall
	}
	times := func(c Case, n int) ([]time.Duration, []byte, error) {
		rs, err := run(c, n)
		if err != nil || len(rs) == 0 {
			return nil, nil, fmt.Errorf("%s: %v (%d runs)", c.Name, err, len(rs))
		}
		ts := make([]time.Duration, len(rs))
		for i, r := range rs {
			ts[i] = clock(r)
		}
		return ts, rs[len(rs)-1].Answer, nil
	}
	t0s := map[string]time.Duration{}
	var out []Result
	for _, c := range cases {
		key := fmt.Sprint(c.Kind, c.N)
		t0, ok := t0s[key]
		if !ok {
			ts, _, err := times(WithLimit(c, Tiny), 3)
			if err != nil {
				return nil, err
			}
			t0 = slices.Min(ts)
			t0s[key] = t0
		}
		r := Result{Case: c, T0: t0, Bound: Bound(c, t0)}
		ts, ans, err := times(c, 3)
		if err != nil {
			return nil, err
		}
		if slices.Min(ts) > r.Bound {
			more, a, err := times(c, 4)
			if err != nil {
				return nil, err
			}
			ts, ans = append(ts, more...), a
		}
		r.Best, r.Median, r.Answer = slices.Min(ts), Median(ts), ans
		out = append(out, r)
	}
	return out, nil
}

// Table returns results as the Markdown table of docs/reliability.md.
func Table(results []Result) string {
	var b strings.Builder
	b.WriteString("| case | request | t0 | fastest | ÷ limit | median | bound |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d B | %.1f ms | %.1f ms | %.2f | %.1f ms | %.1f ms |\n", r.Case.Name, r.Case.Bytes(),
			ms(r.T0), ms(r.Best), ms(r.Best)/r.Case.LimitMs, ms(r.Median), ms(r.Bound))
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Select returns the cases a host's test runs: limits of 1 and 10 ms on
// the first rank sizes of rankings and the first two of plans and
// schedulers; with sweep, 1 ms to 1 s on every size (the table of
// docs/reliability.md); short keeps the 1 ms limit only.
func Select(sweep, short bool, rank int) []Case {
	limits, ranks, plans, scheds := []float64{1, 10}, RankSizes[:rank], PlanSizes[:2], SchedSizes[:2]
	if sweep {
		limits, ranks, plans, scheds = []float64{1, 10, 100, 1000}, RankSizes, PlanSizes, SchedSizes
	}
	if short {
		limits = limits[:1]
	}
	return Cases(limits, ranks, plans, scheds)
}

// Check measures cases with run on host and reports through t every
// result outside its contract: an answer that is neither a response nor
// a time-limit error naming time_limit_ms, a fastest run above its bound,
// a t0 above u. It logs the table, saying which clock it used.
func Check(t testing.TB, host string, cases []Case, run Runner, u Uninterrupted) {
	t.Helper()
	loaded, load := Loaded(runtime.NumCPU())
	results, err := Measure(cases, run, loaded)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		c := r.Case
		var a struct {
			Error *struct{ Code, Field string } `json:"error"`
		}
		if err := json.Unmarshal(r.Answer, &a); err != nil {
			t.Fatalf("%s on %s: %v", c.Name, host, err)
		}
		if a.Error != nil && (a.Error.Code != codec.Limit || !strings.Contains(a.Error.Field, "time_limit_ms")) {
			t.Errorf("%s on %s: %+v", c.Name, host, *a.Error)
		}
		if !r.OK() {
			t.Errorf("%s on %s: the fastest run took %v, above the bound %v (%.1f × the limit + 2 × t0 %v + %v)", c.Name, host, r.Best, r.Bound, Slack, r.T0, Jitter)
		}
		if b := u.Of(WithLimit(c, Tiny)); r.T0 > b {
			t.Errorf("%s on %s: t0 %v, above %v", c.Name, host, r.T0, b)
		}
	}
	clock := "wall time"
	if loaded {
		clock = fmt.Sprintf("CPU time (load %.1f on %d CPUs)", load, runtime.NumCPU())
	}
	t.Logf("%s, %s:\n%s", host, clock, Table(results))
}
