package malformed

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Sequences returns n random stateful sessions of calls lines each,
// seeded, so the same on every run and host: Shockwave schedulers and
// CASSINI agents driven by every stateful op. Values come from the edges
// of their domains (the largest and smallest a field takes: batch sizes
// of 1e15 and 2^53+1, epochs of a nanosecond and of 1e15 s, 2^62 epochs,
// instants in the year 2262, a window of 1024 rounds) and from ordinary
// ones. About one call in six is meant to be refused: one value just past
// its domain (a batch size of 0, a sample from a future round, a handle of
// the other kind, an id past the string cap, a duplicate id); the others
// are meant to be accepted, and the generator follows the handles, ids,
// rounds and timelines they create, so that later calls refer to them.
//
// A host runs each session's lines in order on a fresh session. What the
// lines must answer is not fixed here: the root package's test checks the
// invariants (an accepted call never makes a later call fail, a refused
// call leaves the session as it was, messages name the request's fields)
// and the bindings check that every host answers each line with the
// native bytes.
func Sequences(seed uint64, n, calls int) []Session {
	out := make([]Session, n)
	for k := range out {
		g := &seqGen{r: rand.New(rand.NewPCG(seed, uint64(k))), next: 1}
		out[k] = Session{Name: fmt.Sprintf("seq-%d-%03d.jsonl", seed, k), Lines: g.session(calls)}
	}
	return out
}

// seqGen builds one session and follows the state its calls meant to be
// accepted create.
type seqGen struct {
	r      *rand.Rand
	bad    bool  // the call being built is meant to be refused
	next   int64 // the handle the next accepted new gets
	scheds []*schedGen
	agents []int64
}

// schedGen is a scheduler the session opened.
type schedGen struct {
	handle int64
	gpus   int
	round  int
	str    bool // its ids are strings
	oracle bool // its estimator needs every epoch profiled
	jobs   map[string]*jobGen
	gone   []any // ids removed
	closed bool
}

// jobGen is an active job of a scheduler.
type jobGen struct {
	id       any
	epochs   int // E
	covered  int // epochs profiled
	progress int
	last     int  // round of the last sample of its timeline, −1 for none
	samples  bool // it has a dataset size, so observe can calibrate
}

// pick returns one of vs.
func pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

func (g *seqGen) chance(p float64) bool { return g.r.Float64() < p }

// val returns one of good, or (at most once a call, now and then) one of
// bad, marking the call as meant to be refused.
func (g *seqGen) val(good []any, bad ...any) any {
	if len(bad) > 0 && !g.bad && g.chance(0.04) {
		g.bad = true
		return pick(g.r, bad...)
	}
	return pick(g.r, good...)
}

// vals is a list of values, for val.
func vals(v ...any) []any { return v }

func (g *seqGen) session(calls int) [][]byte {
	var lines [][]byte
	emit := func(op string, req map[string]any) {
		b, err := json.Marshal(map[string]any{"op": op, "request": req})
		if err != nil {
			panic(err) // the generator builds only values JSON encodes
		}
		lines = append(lines, b)
	}
	for len(lines) < calls {
		g.bad = false
		open := g.open()
		switch {
		case len(open) == 0 || g.chance(0.04):
			emit("shockwave.scheduler.new", g.newScheduler())
		case g.chance(0.03):
			emit("cassini.agent.new", g.newAgent())
		case len(g.agents) > 0 && g.chance(0.15):
			op, req := g.agentCall()
			emit(op, req)
		default:
			op, req := g.schedCall(pick(g.r, open...))
			emit(op, req)
		}
	}
	return lines
}

// open returns the schedulers not closed.
func (g *seqGen) open() []*schedGen {
	var out []*schedGen
	for _, s := range g.scheds {
		if !s.closed {
			out = append(out, s)
		}
	}
	return out
}

// handleOf returns h, or now and then (a call meant to be refused) one
// that is not open or is of the other kind.
func (g *seqGen) handleOf(h int64, agent bool) int64 {
	if g.bad || !g.chance(0.03) {
		return h
	}
	g.bad = true
	switch {
	case agent && len(g.scheds) > 0:
		return pick(g.r, g.scheds...).handle
	case !agent && len(g.agents) > 0:
		return pick(g.r, g.agents...)
	}
	return g.next + 7
}

func (g *seqGen) newScheduler() map[string]any {
	cfg := map[string]any{}
	set := func(p float64, key string, good []any, bad ...any) {
		if g.chance(p) {
			cfg[key] = g.val(good, bad...)
		}
	}
	set(0.3, "rounds", vals(1, 3, 8, 20, 1024), 0, 1025)
	set(0.15, "round_s", vals(0.001, 1, 120, 1e15), 1e16, 1e-4)
	set(0.15, "k", vals(1e-9, 1e-3, 1e6), 1e7, 1e308)
	set(0.1, "lambda", vals(1e-3, 12, 1e6, 1e300))
	set(0.1, "rho_max", vals(1e-3, 1, 1e6))
	set(0.1, "breakpoints", vals([]float64{0, 1}, []float64{0, 0.5, 1}), []float64{0, 0.5, 0.4, 1})
	set(0.1, "log_zero", vals(1e-300, 1e-6, 0.999), 1, 2)
	set(0.1, "urgent_power", vals(1e-3, 100, 1e300))
	set(0.1, "log", vals("exact", "piecewise"), "natural")
	set(0.1, "no_relax", vals(true))
	set(0.1, "gap", vals(0, 0.5, 0.999), 1, -1)
	set(0.1, "max_nodes", vals(1, 5, 20000), -1)
	set(0.2, "estimator", vals("faithful", "posterior", "oracle"))
	set(0.1, "prior_strength", vals(0, 1e-300, 1, float64(1<<40)), 1e308)
	set(0.1, "momentum", vals(1e-3, 0.5, 1), 1.5)
	set(0.1, "tolerance", vals(1e-9, 0.4, 1e15))
	set(0.4, "reopt_rounds", vals(1, 2, 8), -1)
	if cfg["rounds"] == 1024 {
		// A window of 1024 rounds with the default 20000 nodes can take
		// a minute to prove; the sequences must answer the same without
		// a deadline on every host.
		cfg["max_nodes"] = pick(g.r, 1, 50)
	}
	gpus := g.val(vals(1, 2, 4, 16), 0).(int)
	req := map[string]any{"gpus": gpus, "config": cfg}
	if !g.bad {
		g.scheds = append(g.scheds, &schedGen{handle: g.next, gpus: gpus, str: g.chance(0.4),
			oracle: cfg["estimator"] == "oracle", jobs: map[string]*jobGen{}})
		g.next++
	}
	return req
}

func (g *seqGen) newAgent() map[string]any {
	req := g.agentPlan()
	if g.chance(0.5) {
		req["mode"] = g.val(vals("pad", "free", "", "elastic"), "fixed")
	}
	if g.chance(0.2) {
		req["threshold"] = g.val(vals(0, 0.05, 0.5), 0.6)
	}
	if g.chance(0.2) {
		req["cooldown_ms"] = g.val(vals(0, 10, 1e9), 2e9)
	}
	if !g.bad {
		g.agents = append(g.agents, g.next)
		g.next++
	}
	return req
}

// The agent's instants, in ms since the Unix epoch: today, and around the
// last instant an agent takes, 9223199236854 ms (in 2262: int64
// nanoseconds end at 9223372036854.775807 ms, and an answer may lie up to
// two days after the latest instant given).
var (
	goodInstants = vals(0.0, 1.7e12, 1.7e12+0.25, 9.2e12, 9223199236854.0, 9223199236853.5)
	badInstants  = []any{9223199236855.0, 9.2233e12, 9.3e12, 9.2e15, -1.0}
)

func (g *seqGen) agentPlan() map[string]any {
	period := g.val(vals(0.001, 1.0, 72.0, 8.64e7), 9e7, 0.0).(float64)
	p := map[string]any{"period_ms": period, "shift_ms": g.val(vals(0, period/3, period*0.999), period)}
	if g.chance(0.4) {
		p["comm_offset_ms"] = g.val(vals(0, period/2), period*2)
	}
	if g.chance(0.6) {
		p["reference_unix_ms"] = g.val(goodInstants, badInstants...)
	}
	return p
}

func (g *seqGen) instant() float64 {
	t := g.val(goodInstants, badInstants...).(float64)
	if !g.bad && t < 9e12 && g.chance(0.5) {
		t += float64(float64(g.r.IntN(100000)) / 4) // float64(): no fused multiply-add (.ci/fma-check.sh)
	}
	return t
}

func (g *seqGen) agentCall() (string, map[string]any) {
	a := pick(g.r, g.agents...)
	h := g.handleOf(a, true)
	switch g.r.IntN(12) {
	case 0, 1, 2, 3, 4:
		return "cassini.agent.next", map[string]any{"handle": h, "ready_unix_ms": g.instant()}
	case 5, 6, 7:
		return "cassini.agent.communicating", map[string]any{"handle": h, "at_unix_ms": g.instant()}
	case 8, 9:
		return "cassini.agent.set_plan", map[string]any{"handle": h, "plan": g.agentPlan()}
	case 10:
		return "cassini.agent.stats", map[string]any{"handle": h}
	}
	if !g.bad {
		g.agents = slices.DeleteFunc(g.agents, func(x int64) bool { return x == a })
	}
	return "cassini.agent.close", map[string]any{"handle": h}
}

func key(id any) string { return fmt.Sprintf("%T %v", id, id) }

// newID returns an id s has no active job under, of its kind; or, for a
// call meant to be refused, a duplicate, an empty string, a string past
// the 1024-byte cap or an id of the other kind.
func (g *seqGen) newID(s *schedGen) any {
	if !g.bad && g.chance(0.05) {
		g.bad = true
		var active []any
		for _, j := range s.jobs {
			active = append(active, j.id)
		}
		slices.SortFunc(active, func(a, b any) int { return strings.Compare(key(a), key(b)) })
		switch {
		case len(active) > 0 && g.chance(0.4):
			return pick(g.r, active...)
		case s.str && g.chance(0.5):
			return pick(g.r, "", strings.Repeat("x", 1025))
		case s.str:
			return g.r.IntN(8)
		}
		return "job"
	}
	// Few ids, so that removed ones come back, and more the more jobs
	// are active, so that a free one turns up soon.
	span := 12 + 2*len(s.jobs)
	for {
		var id any
		switch {
		case s.str && g.chance(0.1):
			id = fmt.Sprintf("%01024d", g.r.IntN(span)) // the longest id
		case s.str:
			id = fmt.Sprintf("job-%d", g.r.IntN(span))
		case g.chance(0.1):
			id = pick(g.r, int64(math.MaxInt64), int64(math.MinInt64), int64(1)<<53, int64(1)<<53+1)
		default:
			id = g.r.IntN(span)
		}
		if s.jobs[key(id)] == nil {
			return id
		}
	}
}

// activeJob returns one of s's active jobs, sorted by id for a
// deterministic pick, or nil.
func (g *seqGen) activeJob(s *schedGen) *jobGen {
	if len(s.jobs) == 0 {
		return nil
	}
	keys := make([]string, 0, len(s.jobs))
	for k := range s.jobs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return s.jobs[pick(g.r, keys...)]
}

// jobID returns j's id, or (a call meant to be refused) one that is not
// active.
func (g *seqGen) jobID(s *schedGen, j *jobGen) any {
	if j == nil || (!g.bad && g.chance(0.04)) {
		g.bad = true
		if len(s.gone) > 0 && g.chance(0.5) {
			return pick(g.r, s.gone...)
		}
		return g.newIDOfKind(s)
	}
	return j.id
}

func (g *seqGen) newIDOfKind(s *schedGen) any {
	for {
		var id any = g.r.IntN(100 + 2*len(s.jobs))
		if s.str {
			id = fmt.Sprintf("job-%d", g.r.IntN(100+2*len(s.jobs)))
		}
		if s.jobs[key(id)] == nil {
			return id
		}
	}
}

func (g *seqGen) schedCall(s *schedGen) (string, map[string]any) {
	h := g.handleOf(s.handle, false)
	switch g.r.IntN(22) {
	case 0, 1, 2, 3, 4, 5:
		job, j := g.job(s)
		if !g.bad {
			s.jobs[key(j.id)] = j
		}
		return "shockwave.scheduler.add", map[string]any{"handle": h, "job": job}
	case 6, 7, 8:
		j := g.activeJob(s)
		id := g.jobID(s, j)
		r := s.round + 1
		if j != nil && j.last >= 0 {
			r = min(j.last+1+g.r.IntN(2), s.round+1)
			if r <= j.last {
				g.bad = true // no round left for a sample this round
			}
		}
		smp := map[string]any{
			"round":    g.val(vals(r), s.round+2, -1),
			"it_per_s": g.val(vals(0, 1e-300, 0.5, 9, 1e12), 2e12),
			"bs":       g.val(vals(1, 32, int64(1e12), int64(1e15), int64(1)<<53+1, int64(math.MaxInt64)), 0),
		}
		if j != nil && !j.samples {
			g.bad = true
		}
		if !g.bad && j != nil {
			j.last = r
		}
		return "shockwave.scheduler.observe", map[string]any{"handle": h, "id": id, "sample": smp}
	case 9, 10:
		j := g.activeJob(s)
		id := g.jobID(s, j)
		e := 0
		if j != nil {
			e = g.val(vals(0, j.progress, j.progress+1, min(j.epochs, j.covered-1), j.epochs/2), j.epochs+1, -1).(int)
			if e > j.epochs || e < 0 || min(e+1, j.epochs) > j.covered {
				g.bad = true
			}
			if !g.bad {
				j.progress = e
			}
		}
		return "shockwave.scheduler.progress", map[string]any{"handle": h, "id": id, "epochs": e}
	case 11, 12, 13:
		if !g.bad {
			s.round++
		}
		return "shockwave.scheduler.end_round", map[string]any{"handle": h}
	case 14, 15, 16, 17:
		return "shockwave.scheduler.schedule", map[string]any{"handle": h}
	case 18:
		return "shockwave.scheduler.last_plan", map[string]any{"handle": h}
	case 19, 20:
		j := g.activeJob(s)
		id := g.jobID(s, j)
		if !g.bad {
			delete(s.jobs, key(j.id))
			s.gone = append(s.gone, j.id)
		}
		return "shockwave.scheduler.remove", map[string]any{"handle": h, "id": id}
	}
	if g.chance(0.3) {
		if !g.bad {
			s.closed = true
		}
		return "shockwave.scheduler.close", map[string]any{"handle": h}
	}
	return "shockwave.scheduler.schedule", map[string]any{"handle": h}
}

// job returns a job for s's add, and what the generator follows of it.
func (g *seqGen) job(s *schedGen) (map[string]any, *jobGen) {
	n := 1 + g.r.IntN(6)
	bs := make([]int64, n)
	dur := make([]float64, n)
	j := &jobGen{id: g.newID(s), epochs: n, covered: n, last: -1}
	job := map[string]any{"id": j.id, "epoch_bs": bs, "epoch_dur_s": dur,
		"gpus":     g.val(vals(1, 1, max(s.gpus/2, 1), s.gpus), s.gpus+1, 0),
		"submit_s": g.val(vals(0, 60, 1e15), 2e15, -1)}
	modes := g.chance(0.2)
	sizes := []int64{1, 32, 64, 1 << 62}
	if modes {
		sizes = []int64{32, 64}
		job["modes"] = sizes
		job["mode_dur_s"] = []float64{pick(g.r, 1e-9, 36, 1e15), pick(g.r, 0.5, 200)}
		if !s.oracle && g.chance(0.6) {
			j.epochs = pick(g.r, n+3, 1000000, 1<<62)
			job["epochs"] = j.epochs
		}
	}
	b, d := pick(g.r, sizes...), pick(g.r, 1e-9, 0.001, 36, 1e9, 1e15)
	for i := range bs {
		if g.chance(0.3) {
			b = pick(g.r, sizes...)
		}
		if g.chance(0.3) {
			d = pick(g.r, 1e-9, 0.5, 36, 200, 1e9, 1e15)
		}
		bs[i], dur[i] = b, d
	}
	if g.chance(0.1) {
		dur[g.r.IntN(n)] = g.val(vals(36.0), 2e15, 0.0, -1.0).(float64)
	}
	p := g.r.IntN(n + 1)
	if p == n && n < j.epochs {
		p = n - 1 // epochs 0..p must be profiled
	}
	j.progress = g.val(vals(p), j.epochs+1).(int)
	job["progress"] = j.progress
	if g.chance(0.5) || g.chance(0.1) {
		job["samples_per_epoch"] = g.val(vals(1, 50000, 1e15), 2e15, -1)
		j.samples = true
	}
	if g.chance(0.15) {
		p := make([]float64, g.val(vals(n), n+1, 0).(int))
		for i := range p {
			p[i] = pick(g.r, 1e-9, 36, 1e15)
		}
		job["profiled_dur_s"] = p
	}
	if g.chance(0.2) {
		r := max(s.round+pick(g.r, -2, 0, 1), 0)
		job["timeline"] = []map[string]any{{"round": g.val(vals(r), s.round+2),
			"it_per_s": pick(g.r, 0, 9, 1e12), "bs": pick(g.r, int64(32), int64(1e15))}}
		if !j.samples {
			job["samples_per_epoch"] = 50000
			j.samples = true
		}
		j.last = r
	}
	if g.chance(0.15) {
		job["finish"] = []map[string]any{{"round": max(s.round-1, 0), "estimate_s": g.val(vals(1e-300, 100, 1e40, 1e100), -5, 1e300)}}
	}
	if g.chance(0.1) {
		for _, k := range []string{"epoch_dur_s", "modes", "mode_dur_s", "profiled_dur_s", "timeline"} {
			delete(job, k)
		}
		j.samples = false
		job["known"] = map[string]any{"remaining_s": g.val(vals(0, 100, 1e15), 2e15), "mean_epoch_s": pick(g.r, 1e-9, 36, 1e15),
			"elapsed_s": pick(g.r, 0, 10), "fair_finish_s": pick(g.r, 500, 1e15)}
	}
	return job, j
}
