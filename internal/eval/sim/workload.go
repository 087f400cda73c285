package sim

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/orrery/orrery/internal/eval/throughput"
	"github.com/orrery/orrery/internal/eval/trace"
)

// gnsPatternLen is the length of the batch-size pattern the authors'
// _simulate_gns asks for: get_gns_bs_pattern(..., max(760, epoch+2), ...).
const gnsPatternLen = 760

// Workload is a trace made ready to replay: every job's profile derived as
// the authors' generate_pickle_file does, and the throughput table the
// simulator reads batch-size changes from. It is immutable once built and
// may be shared by concurrent runs.
type Workload struct {
	Jobs     []trace.Job
	Profiles []trace.Profile
	Table    *throughput.Table
	Worker   string // throughput worker type ("v100")

	gns []gnsPattern // per job; empty for jobs that are not GNS
}

// gnsPattern answers get_gns_bs_pattern(bs0, L)[e] for the L the authors
// use: far[e] is the value for every e < L−1 (the pattern does not depend
// on L there) and last is the value at e = L−1 for any L ≥ 760 (the
// upstream quirk reverts the last epoch of a later phase to bs0).
type gnsPattern struct {
	far  []int
	last int
}

// at returns the pattern of length L = max(760, cur+2) at epoch e ≤ cur+1.
func (g *gnsPattern) at(e, cur int64) int {
	L := max(int64(gnsPatternLen), cur+2)
	if e == L-1 {
		return g.last
	}
	if e >= int64(len(g.far)) {
		return g.far[len(g.far)-1]
	}
	return g.far[e]
}

// WorkloadOptions configure [NewWorkload]; the zero value is the authors'.
type WorkloadOptions struct {
	// Worker is the throughput table's worker type; "" means "v100".
	Worker string
}

// LoadWorkload reads a trace and a throughput table in the authors' formats
// from files and returns the NewWorkload of the trace's first n jobs (all
// of them when n is 0 or past the trace's end). Errors name the file.
func LoadWorkload(tracePath, tablePath string, n int, opts WorkloadOptions) (*Workload, error) {
	jobs, err := trace.ParseFile(tracePath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tracePath, err)
	}
	if n > 0 && n < len(jobs) {
		jobs = jobs[:n]
	}
	tab, err := throughput.LoadFile(tablePath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tablePath, err)
	}
	w, err := NewWorkload(jobs, tab, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tracePath, err)
	}
	return w, nil
}

// NewWorkload checks the trace (at least one job, arrivals in
// non-decreasing order, as upstream asserts), derives every profile with
// package trace and prepares the GNS batch-size patterns. Errors name the
// job and its trace line.
func NewWorkload(jobs []trace.Job, tab *throughput.Table, opts WorkloadOptions) (*Workload, error) {
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%w: the trace has no jobs", ErrInvalid)
	}
	if tab == nil {
		return nil, fmt.Errorf("%w: no throughput table", ErrInvalid)
	}
	worker := opts.Worker
	if worker == "" {
		worker = trace.DefaultWorker
	}
	w := &Workload{Jobs: jobs, Table: tab, Worker: worker, gns: make([]gnsPattern, len(jobs))}
	for i := range jobs {
		j := &jobs[i]
		if i > 0 && j.Arrival < jobs[i-1].Arrival {
			return nil, &JobError{ID: j.ID, Line: j.Line, Field: "arrival_s",
				Err: fmt.Errorf("%w: %s s is before the previous job's %s s (arrivals must not decrease)",
					ErrInvalid, ftoa(j.Arrival), ftoa(jobs[i-1].Arrival))}
		}
		if !(j.Arrival >= 0) || j.Arrival > maxTime {
			return nil, &JobError{ID: j.ID, Line: j.Line, Field: "arrival_s",
				Err: fmt.Errorf("%w: %s s", ErrInvalid, ftoa(j.Arrival))}
		}
	}
	var err error
	if w.Profiles, err = trace.DeriveAll(jobs, tab, trace.DeriveOptions{Worker: worker}); err != nil {
		return nil, err
	}
	for i := range jobs {
		j := &jobs[i]
		if j.Mode != trace.GNS {
			continue
		}
		if err := w.gns[i].build(j, len(w.Profiles[i].EpochBS)); err != nil {
			return nil, &JobError{ID: j.ID, Line: j.Line, Field: "mode", Err: err}
		}
	}
	return w, nil
}

// build computes the pattern far enough that every epoch the job can reach
// (at most its epoch count E) is covered, and the last-epoch value.
func (g *gnsPattern) build(j *trace.Job, epochs int) error {
	n := max(gnsPatternLen+2, epochs+3)
	far, err := trace.Schedule(nil, j.Model, trace.GNS, j.BatchSize, j.GPUs, n)
	if err != nil {
		return err
	}
	a, err := trace.Schedule(nil, j.Model, trace.GNS, j.BatchSize, j.GPUs, gnsPatternLen)
	if err != nil {
		return err
	}
	b, err := trace.Schedule(nil, j.Model, trace.GNS, j.BatchSize, j.GPUs, gnsPatternLen+1)
	if err != nil {
		return err
	}
	// The shortcut holds when every doubling starts before epoch 759 (the
	// authors' table stops at 221): then the value of the last epoch of a
	// pattern of length L ≥ 760 does not depend on L, and far is constant
	// from epoch 759 on.
	if a[gnsPatternLen-1] != b[gnsPatternLen] || far[gnsPatternLen-1] != far[n-2] {
		return errors.New("sim: GNS schedule changes after epoch 759; unsupported")
	}
	g.far, g.last = far[:n-1], a[gnsPatternLen-1]
	return nil
}

// maxTime bounds arrival times (seconds), far beyond any trace, so that
// simulated times stay exact to well under a millisecond.
const maxTime = 1e12

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// ceilDiv is ⌈a/b⌉ for b > 0, as Python's math.ceil(a / b) for the
// magnitudes involved (also for a < 0).
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b > 0 {
		q++
	}
	return q
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// stepsPerEpoch is ⌈D/bs⌉, the iterations of one epoch in the simulator
// (the profile uses D/bs without rounding).
func stepsPerEpoch(m trace.Model, bs int) int64 {
	return ceilDiv(int64(m.SamplesPerEpoch()), int64(bs))
}

// aloneThroughput returns the table's iterations/s for the model at bs on
// gpus GPUs, and whether it is usable (present, in [trace.MinThroughput,
// trace.MaxThroughput]).
func (w *Workload) aloneThroughput(m trace.Model, bs, gpus int) (float64, bool) {
	v, err := w.Table.Alone(w.Worker, throughput.Key{Model: m.String(), BatchSize: bs, GPUs: gpus})
	if err != nil || !(v >= trace.MinThroughput && v <= trace.MaxThroughput) {
		return 0, false
	}
	return v, true
}
