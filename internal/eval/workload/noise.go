package workload

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// ErrData reports a malformed noise file.
var ErrData = errors.New("workload: malformed data")

// Noise multiplies a job's compute time, iteration by iteration; its
// typical value is 1. Iteration i uses Noise[i mod len]; an empty Noise is
// always 1.
type Noise []float64

// Factor returns iteration i's multiplier (i >= 0).
func (n Noise) Factor(i int) float64 {
	if len(n) == 0 {
		return 1
	}
	return n[i%len(n)]
}

// Mul returns the iteration-wise product of n and m, over as many
// iterations as the longer of the two (the shorter repeats).
func (n Noise) Mul(m Noise) Noise {
	if len(n) == 0 {
		return slices.Clone(m)
	}
	if len(m) == 0 {
		return slices.Clone(n)
	}
	out := make(Noise, max(len(n), len(m)))
	for i := range out {
		out[i] = n.Factor(i) * m.Factor(i)
	}
	return out
}

// WorkerTimes is one job of the Alibaba PAI mini-batch-time release
// (job_*_norm.csv): per-worker iteration times, sampled every few
// iterations.
type WorkerTimes struct {
	Workers []int       // worker IDs, increasing
	Iter    []int       // the iteration of each sample, increasing
	Times   [][]float64 // Times[s][w]: sample s of worker Workers[w]; NaN where the file has none
}

// Bounds on what the parsers accept. The value ranges keep every multiplier
// [WorkerTimes.Sync] and [CoV.Jitter] derive finite and positive: the
// release's normalized times lie in 380..1000 and its coefficients of
// variation below 3.2, so the bounds reject only corrupt files.
const (
	maxDataRows = 1 << 20
	minNormTime = 1e-9 // batch_time_norm, inclusive
	maxNormTime = 1e9
	maxCoV      = 1e3 // coefficient of variation, inclusive; the minimum is 0
)

// ParseWorkerTimes reads a job_*_norm.csv file: a header
// ",worker,gpu,time,batch_time_norm", then one row per worker and sample,
// each value in [1e-9, 1e9].
func ParseWorkerTimes(r io.Reader) (WorkerTimes, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return WorkerTimes{}, fmt.Errorf("%w: header: %v", ErrData, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	wc, ok1 := col["worker"]
	tc, ok2 := col["time"]
	vc, ok3 := col["batch_time_norm"]
	if !ok1 || !ok2 || !ok3 {
		return WorkerTimes{}, fmt.Errorf("%w: header %q lacks worker, time or batch_time_norm", ErrData, head)
	}
	type rec struct {
		worker, iter int
		v            float64
	}
	var recs []rec
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return WorkerTimes{}, fmt.Errorf("%w: %v", ErrData, err)
		}
		if len(recs) >= maxDataRows {
			return WorkerTimes{}, fmt.Errorf("%w: more than %d rows", ErrData, maxDataRows)
		}
		w, err1 := strconv.Atoi(row[wc])
		it, err2 := strconv.Atoi(row[tc])
		v, err3 := strconv.ParseFloat(row[vc], 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return WorkerTimes{}, fmt.Errorf("%w: line %d: %v", ErrData, line, err)
		}
		if w < 0 || it < 0 || !(v >= minNormTime && v <= maxNormTime) {
			return WorkerTimes{}, fmt.Errorf("%w: line %d: worker %d, time %d, value %v", ErrData, line, w, it, v)
		}
		recs = append(recs, rec{w, it, v})
	}
	if len(recs) == 0 {
		return WorkerTimes{}, fmt.Errorf("%w: no samples", ErrData)
	}
	var wt WorkerTimes
	for _, r := range recs {
		wt.Workers = append(wt.Workers, r.worker)
		wt.Iter = append(wt.Iter, r.iter)
	}
	slices.Sort(wt.Workers)
	wt.Workers = slices.Compact(wt.Workers)
	slices.Sort(wt.Iter)
	wt.Iter = slices.Compact(wt.Iter)
	wt.Times = make([][]float64, len(wt.Iter))
	for s := range wt.Times {
		wt.Times[s] = make([]float64, len(wt.Workers))
		for w := range wt.Times[s] {
			wt.Times[s][w] = math.NaN()
		}
	}
	for _, r := range recs {
		s, _ := slices.BinarySearch(wt.Iter, r.iter)
		w, _ := slices.BinarySearch(wt.Workers, r.worker)
		wt.Times[s][w] = r.v
	}
	return wt, nil
}

// Sync returns the per-iteration multiplier of a synchronous job whose
// workers behave as the given workers (indices into wt.Workers): each
// iteration waits for the slowest, so a sample's value is the maximum over
// them (a worker missing from a sample keeps its previous value), divided
// by the median over the samples. A sample holds until the next one; the
// series starts at the first sample.
func (wt WorkerTimes) Sync(workers []int) (Noise, error) {
	h, err := wt.held(workers)
	if err != nil {
		return nil, err
	}
	out := make(Noise, 0, h.len())
	for s, v := range h.vals {
		for range h.ends[s] - len(out) {
			out = append(out, v)
		}
	}
	return out, nil
}

// held is a series kept by sample: vals[s] holds from iteration ends[s-1]
// (0 for the first) up to ends[s]. A Sync series has a few hundred
// samples, each held for about ten iterations.
type held struct {
	vals []float64
	ends []int
}

func (h held) len() int {
	if len(h.ends) == 0 {
		return 0
	}
	return h.ends[len(h.ends)-1]
}

// at returns iteration k's value (0 <= k < h.len()).
func (h held) at(k int) float64 {
	s, _ := slices.BinarySearch(h.ends, k+1) // the first sample to end past k
	return h.vals[s]
}

// held returns Sync's series by sample.
func (wt WorkerTimes) held(workers []int) (held, error) {
	if len(workers) == 0 {
		return held{}, fmt.Errorf("%w: no workers", ErrInvalid)
	}
	for _, w := range workers {
		if w < 0 || w >= len(wt.Workers) {
			return held{}, fmt.Errorf("%w: worker index %d of %d", ErrInvalid, w, len(wt.Workers))
		}
	}
	last := make([]float64, len(wt.Workers))
	for w := range last {
		last[w] = math.NaN()
	}
	peaks := make([]float64, len(wt.Iter))
	for s, row := range wt.Times {
		p := math.NaN()
		for _, w := range workers { // only they are read: only theirs kept
			if v := row[w]; !math.IsNaN(v) {
				last[w] = v
			}
			if !math.IsNaN(last[w]) && !(last[w] <= p) {
				p = last[w]
			}
		}
		peaks[s] = p
	}
	// Drop leading samples before every chosen worker has a value.
	first := slices.IndexFunc(peaks, func(v float64) bool { return !math.IsNaN(v) })
	if first < 0 {
		return held{}, fmt.Errorf("%w: the chosen workers have no samples", ErrData)
	}
	h := held{vals: peaks[first:], ends: make([]int, len(wt.Iter)-first)}
	med := median(h.vals)
	for s := range h.vals {
		h.vals[s] /= med
		if k := first + s + 1; k < len(wt.Iter) {
			h.ends[s] = wt.Iter[k] - wt.Iter[first]
		} else {
			h.ends[s] = wt.Iter[k-1] - wt.Iter[first] + 1 // the last sample holds one
		}
	}
	return h, nil
}

// CoV is the Alibaba PAI release's coefficient_variation.csv: for each job,
// the coefficient of variation of the iteration time across its 10 workers,
// per iteration.
type CoV struct {
	Jobs   []string    // row names
	Values [][]float64 // per job, per iteration, trailing empty cells dropped
	// Medians are the median of each job's Values, which every Jitter of
	// the row divides by (ParseCoV fills them once: a simulation asks for
	// every job's jitter, and sorting a row each time was a fifth of a
	// Clos run); a row past its end is computed when asked. Whoever
	// changes Values updates or drops them.
	Medians []float64
}

// ParseCoV reads a coefficient_variation.csv file: a header row of
// iteration numbers, then one row per job, its name first, each value in
// [0, 1000].
func ParseCoV(r io.Reader) (CoV, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	if _, err := cr.Read(); err != nil {
		return CoV{}, fmt.Errorf("%w: header: %v", ErrData, err)
	}
	var c CoV
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return CoV{}, fmt.Errorf("%w: %v", ErrData, err)
		}
		if len(c.Jobs) >= maxDataRows {
			return CoV{}, fmt.Errorf("%w: more than %d rows", ErrData, maxDataRows)
		}
		var vals []float64
		for i, cell := range row[1:] {
			cell = strings.TrimSpace(cell)
			if cell == "" || strings.EqualFold(cell, "nan") {
				vals = append(vals, math.NaN())
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || !(v >= 0 && v <= maxCoV) {
				return CoV{}, fmt.Errorf("%w: line %d, column %d: %q", ErrData, line, i+1, cell)
			}
			vals = append(vals, v)
		}
		for len(vals) > 0 && math.IsNaN(vals[len(vals)-1]) {
			vals = vals[:len(vals)-1]
		}
		if len(vals) == 0 || slices.ContainsFunc(vals, math.IsNaN) {
			return CoV{}, fmt.Errorf("%w: line %d: no values, or a gap within them", ErrData, line)
		}
		c.Jobs = append(c.Jobs, row[0])
		c.Values = append(c.Values, vals)
		c.Medians = append(c.Medians, median(vals))
	}
	if len(c.Jobs) == 0 {
		return CoV{}, fmt.Errorf("%w: no jobs", ErrData)
	}
	return c, nil
}

// expectedMax[n] is the expected maximum of n independent standard normal
// variables (n = 1..10).
var expectedMax = [...]float64{0, 0, 0.5642, 0.8463, 1.0294, 1.1630, 1.2672, 1.3522, 1.4236, 1.4850, 1.5388}

// Jitter returns the per-iteration multiplier a job of n workers (n >= 1;
// 10 and more count as 10, the release's job size) sees from row's
// coefficient of variation: (1 + e_n*cv_i) / (1 + e_n*median(cv)), the
// slowest of n workers whose times spread with that coefficient, relative to
// a typical iteration. One worker has no jitter from this source.
func (c CoV) Jitter(row, n int) (Noise, error) {
	j, err := c.jitter(row, n)
	if err != nil {
		return nil, err
	}
	out := make(Noise, len(j.cv))
	for i := range out {
		out[i] = j.at(i)
	}
	return out, nil
}

// jitter is the multiplier series of a row for n workers, computed when
// asked: at(i) is entry i of what Jitter returns.
type jitter struct {
	cv      []float64 // the row (the CoV's: read only)
	e, base float64
}

func (c CoV) jitter(row, n int) (jitter, error) {
	if row < 0 || row >= len(c.Values) {
		return jitter{}, fmt.Errorf("%w: row %d of %d", ErrInvalid, row, len(c.Values))
	}
	if n < 1 {
		return jitter{}, fmt.Errorf("%w: %d workers", ErrInvalid, n)
	}
	e := expectedMax[min(n, 10)]
	cv := c.Values[row]
	var m float64
	if row < len(c.Medians) {
		m = c.Medians[row]
	} else {
		m = median(cv)
	}
	return jitter{cv: cv, e: e, base: 1 + float64(e*m)}, nil
}

func (j jitter) at(i int) float64 { return (1 + float64(j.e*j.cv[i])) / j.base }

// median returns the median of v (not empty, no NaN): the middle value,
// or the mean of the two middle ones, of v sorted. It selects them rather
// than sorting (every Sync takes one over a trace's samples).
func median(v []float64) float64 {
	s := slices.Clone(v)
	h := len(s) / 2
	m := selectKth(s, h)
	if len(s)%2 == 1 {
		return m
	}
	return (slices.Max(s[:h]) + m) / 2 // s[:h] holds the h least
}

// selectKth reorders s (no NaN) so that s[k] is the value sorting would put
// there, every value before it no greater, and returns it.
func selectKth(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		// Hoare's partition around the median of three.
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		p := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for p < s[j] {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		// Now s[lo:j+1] <= p, s[j+1:i] == p, s[i:hi+1] >= p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// Source selects which measurements a [Replay] uses.
type Source int

const (
	Both   Source = iota // worker traces times CoV jitter (default)
	Traces               // job_*_norm.csv only: drift and stragglers, 10-iteration resolution
	Jitter               // coefficient_variation.csv only: iteration-to-iteration jitter
	None                 // no noise
	Gauss                // synthetic: independent Gaussian multipliers of mean 1 and coefficient of variation Replay.CV
)

func (s Source) String() string {
	switch s {
	case Both:
		return "both"
	case Traces:
		return "traces"
	case Jitter:
		return "cov"
	case None:
		return "none"
	case Gauss:
		return "gauss"
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// ParseSource parses "both", "traces", "cov" or "none"; "" is Both.
func ParseSource(s string) (Source, error) {
	switch s {
	case "", "both":
		return Both, nil
	case "traces":
		return Traces, nil
	case "cov":
		return Jitter, nil
	case "none":
		return None, nil
	}
	return 0, fmt.Errorf("%w: noise %q (want both, traces, cov or none)", ErrInvalid, s)
}

// ParseNoise parses a noise source as ParseSource does, or "gauss:CV" for
// Gaussian jitter of coefficient of variation CV in [0, 1], returned with
// it.
func ParseNoise(s string) (Source, float64, error) {
	if v, ok := strings.CutPrefix(s, "gauss:"); ok {
		cv, err := strconv.ParseFloat(v, 64)
		if err != nil || !(cv >= 0 && cv <= 1) {
			return 0, 0, fmt.Errorf("%w: noise %q: want gauss:CV with CV in [0, 1]", ErrInvalid, s)
		}
		return Gauss, cv, nil
	}
	src, err := ParseSource(s)
	return src, 0, err
}

// Replay deals the release's measurements (or synthetic jitter) out to
// simulated jobs.
type Replay struct {
	Traces []WorkerTimes // job_1_norm.csv, job_2_norm.csv, ... in order
	CoV    CoV
	Source Source
	// CV and Seed (Source Gauss): every job gets its own series of
	// GaussLength independent multipliers 1 + CV·z, z standard normal
	// (at least 0.05), drawn from Seed and the job's ID.
	CV   float64
	Seed uint64
	// Offset shifts how the release's measurements are dealt (job id gets
	// what job id+Offset would): another draw of the same noise, for
	// repeating an experiment of fixed jobs. Non-negative.
	Offset int
}

// GaussLength is the length of a Gauss noise series (it repeats past it).
const GaussLength = 4096

// LoadReplay reads job_*_norm.csv (in name order) and
// coefficient_variation.csv from fsys (nothing for None and Gauss) (e.g. os.DirFS("internal/eval/data/alibaba")).
func LoadReplay(fsys fs.FS, src Source) (Replay, error) {
	r := Replay{Source: src}
	if src == None || src == Gauss {
		return r, nil // nothing to read (set CV and Seed for Gauss)
	}
	names, err := fs.Glob(fsys, "job_*_norm.csv")
	if err != nil {
		return r, err
	}
	if len(names) == 0 {
		return r, fmt.Errorf("%w: no job_*_norm.csv files", ErrData)
	}
	slices.Sort(names)
	for _, name := range names {
		wt, err := parseFile(fsys, name, ParseWorkerTimes)
		if err != nil {
			return r, err
		}
		r.Traces = append(r.Traces, wt)
	}
	if r.CoV, err = parseFile(fsys, "coefficient_variation.csv", ParseCoV); err != nil {
		return r, err
	}
	return r, nil
}

func parseFile[T any](fsys fs.FS, name string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := fsys.Open(name)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// For returns the noise of simulated job id running on n workers: with k =
// id + Offset, trace k mod len(Traces) with workers k, k+1, ... (mod 10),
// and CoV row k mod len(rows), as Source selects.
func (r Replay) For(id, n int) (Noise, error) {
	if id < 0 || n < 1 || r.Offset < 0 || r.Offset > 1<<30 {
		return nil, fmt.Errorf("%w: job %d on %d workers, offset %d", ErrInvalid, id, n, r.Offset)
	}
	if r.Source == Gauss {
		return gauss(r.CV, r.Seed, id)
	}
	id += r.Offset
	var out Noise
	if (r.Source == Both || r.Source == Traces) && len(r.Traces) > 0 {
		wt := r.Traces[id%len(r.Traces)]
		k := min(n, len(wt.Workers))
		workers := make([]int, k)
		for i := range workers {
			workers[i] = (id + i) % len(wt.Workers)
		}
		s, err := wt.Sync(workers)
		if err != nil {
			return nil, err
		}
		out = s
	}
	if (r.Source == Both || r.Source == Jitter) && len(r.CoV.Values) > 0 {
		j, err := r.CoV.Jitter(id%len(r.CoV.Values), n)
		if err != nil {
			return nil, err
		}
		out = out.Mul(j)
	}
	return out, nil
}

// A Dealer deals a [Replay]'s noise to the jobs of a simulation: its
// [Dealer.For] gives, bit for bit, the multipliers of the Replay's For,
// but computes a worker-trace series once for every job that shares it (a
// simulation of many jobs draws on a few traces, worker windows and sizes)
// and the CoV jitter, and the product of the two, only for the iterations
// asked for. Create it with [Replay.Dealer]; it is not safe for concurrent
// use.
type Dealer struct {
	r     Replay
	syncs map[syncKey]syncSeries
}

// syncKey names the workers of a trace a job's series syncs: workers
// first, first+1, ... (mod the trace's), k of them.
type syncKey struct{ trace, first, k int }

type syncSeries struct {
	s   held
	err error
}

// Dealer returns a Dealer of r's noise. It reads r's traces and CoV rows,
// which must not change while it is in use.
func (r Replay) Dealer() *Dealer { return &Dealer{r: r} }

// Series is a job's noise as a [Dealer] deals it. The zero value has no
// noise (every factor 1).
type Series struct {
	// The worker traces' series, by sample (a Noise of their thousands
	// of iterations each was a tenth of a simulation's CPU in a fresh
	// process), or the Gauss one (shared: read only).
	held held
	base Noise
	j    jitter
	// period is the product's: the longer of base and the jitter, when
	// both have entries.
	period int
}

// Factor returns iteration i's multiplier (i >= 0): Noise.Factor(i) of
// what [Replay.For] returns for the job.
func (s Series) Factor(i int) float64 {
	lb, lj := s.baseLen(), len(s.j.cv)
	switch {
	case lj == 0 && lb == 0:
		return 1
	case lj == 0:
		return s.baseAt(i % lb)
	case lb == 0:
		return s.j.at(i % lj)
	}
	// As Noise.Mul: the product over the longer period, the shorter
	// repeating.
	k := i % s.period
	return s.baseAt(k%lb) * s.j.at(k%lj)
}

func (s Series) baseLen() int { return max(s.held.len(), len(s.base)) }

func (s Series) baseAt(k int) float64 {
	if s.base != nil {
		return s.base[k]
	}
	return s.held.at(k)
}

// For returns the noise of simulated job id running on n workers, as
// [Replay.For] does (the same errors).
func (d *Dealer) For(id, n int) (Series, error) {
	r := d.r
	if id < 0 || n < 1 || r.Offset < 0 || r.Offset > 1<<30 {
		return Series{}, fmt.Errorf("%w: job %d on %d workers, offset %d", ErrInvalid, id, n, r.Offset)
	}
	if r.Source == Gauss {
		g, err := gauss(r.CV, r.Seed, id)
		return Series{base: g}, err
	}
	id += r.Offset
	var out Series
	if (r.Source == Both || r.Source == Traces) && len(r.Traces) > 0 {
		t := id % len(r.Traces)
		wt := r.Traces[t]
		key := syncKey{t, 0, min(n, len(wt.Workers))}
		if len(wt.Workers) > 0 {
			key.first = id % len(wt.Workers)
		}
		e, ok := d.syncs[key]
		if !ok {
			workers := make([]int, key.k)
			for i := range workers {
				workers[i] = (key.first + i) % len(wt.Workers)
			}
			e.s, e.err = wt.held(workers)
			if d.syncs == nil {
				d.syncs = map[syncKey]syncSeries{}
			}
			d.syncs[key] = e
		}
		if e.err != nil {
			return Series{}, e.err
		}
		out.held = e.s
	}
	if (r.Source == Both || r.Source == Jitter) && len(r.CoV.Values) > 0 {
		j, err := r.CoV.jitter(id%len(r.CoV.Values), n)
		if err != nil {
			return Series{}, err
		}
		out.j, out.period = j, max(out.baseLen(), len(j.cv))
	}
	return out, nil
}

// gauss is job id's Gauss series.
func gauss(cv float64, seed uint64, id int) (Noise, error) {
	if !(cv >= 0 && cv <= 1) {
		return nil, fmt.Errorf("%w: Gaussian noise of CV %v (want [0, 1])", ErrInvalid, cv)
	}
	if cv == 0 {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(seed, uint64(id)^0x9a055))
	out := make(Noise, GaussLength)
	for i := range out {
		out[i] = max(0.05, 1+float64(cv*rng.NormFloat64()))
	}
	return out, nil
}
