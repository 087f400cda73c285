package trace

import (
	"fmt"
	"math"
	"strconv"

	"github.com/orrery/orrery/internal/eval/throughput"
)

// DefaultWorker is the worker type whose throughputs define profiles
// (upstream get_metric reads "v100").
const DefaultWorker = "v100"

// Profile is a job's per-epoch plan, as the authors' generate_pickle_file
// writes it: the batch size and the isolated duration (seconds on the job's
// GPUs) of every epoch.
type Profile struct {
	Model           Model
	GPUs            int
	SamplesPerEpoch int       // D, the dataset size
	EpochBS         []int     // bs_every_epoch
	EpochDur        []float64 // duration_every_epoch: (D/b_e)/throughput, not rounded
}

// Epochs returns E, the number of epochs.
func (p *Profile) Epochs() int { return len(p.EpochBS) }

// Isolated returns Σ_e d_e, the job's runtime alone on its GPUs with its
// adaptation schedule: T_iso in the finish-time fairness ρ (upstream sums
// the profile's unrounded durations).
func (p *Profile) Isolated() float64 {
	var s float64
	for _, d := range p.EpochDur {
		s += d
	}
	return s
}

// MetadataDurations writes into dst (reused if large enough) the durations
// as the authors' scheduler holds them (JobMetaData): each d_e rounded to
// whole seconds, halves to even as Python's round(), and at least 1. The
// faithful predictor and FT* use these; T_iso uses the unrounded ones.
func (p *Profile) MetadataDurations(dst []float64) []float64 {
	if cap(dst) < len(p.EpochDur) {
		dst = make([]float64, len(p.EpochDur))
	}
	dst = dst[:len(p.EpochDur)]
	for i, d := range p.EpochDur {
		dst[i] = max(1.0, math.RoundToEven(d))
	}
	return dst
}

// DeriveOptions configure [Derive]. The zero value is the authors'.
type DeriveOptions struct {
	// Worker is the throughput table's worker type; "" means DefaultWorker.
	Worker string
}

// Epochs returns a job's epoch count, E = ⌈steps / ⌈D/bs0⌉⌉ (exact integer
// arithmetic, equal to upstream's float ceilings for these magnitudes).
func Epochs(m Model, bs0 int, steps int64) int64 {
	if bs0 <= 0 || steps <= 0 {
		return 0
	}
	d := int64(m.SamplesPerEpoch())
	perEpoch := (d + int64(bs0) - 1) / int64(bs0)
	if perEpoch == 0 {
		return 0
	}
	return (steps + perEpoch - 1) / perEpoch
}

// EpochDuration returns the isolated duration of one epoch of m at batch
// size bs on gpus GPUs: (D/bs)/throughput, with D/bs not rounded up, as
// upstream get_metric. It fails with ErrThroughput when the table has no
// throughput for the configuration in [MinThroughput, MaxThroughput].
func EpochDuration(tab *throughput.Table, worker string, m Model, bs, gpus int) (float64, error) {
	if worker == "" {
		worker = DefaultWorker
	}
	key := throughput.Key{Model: m.String(), BatchSize: bs, GPUs: gpus}
	tput, err := tab.Alone(worker, key)
	if err != nil {
		return 0, &ParseError{Field: "throughput", Value: key.String(), Err: fmt.Errorf("%w: %w", ErrThroughput, err)}
	}
	if !(tput >= MinThroughput && tput <= MaxThroughput) {
		return 0, &ParseError{Field: "throughput", Value: key.String(), Err: fmt.Errorf("%w: %s iterations/s on %s (want %g..%g)", ErrThroughput, strconv.FormatFloat(tput, 'g', -1, 64), worker, MinThroughput, MaxThroughput)}
	}
	return float64(m.SamplesPerEpoch()) / float64(bs) / tput, nil
}

// Derive computes a job's profile from its trace line and a throughput
// table, as upstream generate_pickle_file: E = ⌈steps/⌈D/bs0⌉⌉ epochs, the
// batch-size schedule of the job's mode ([Schedule]) and per-epoch
// durations ([EpochDuration]). Errors are *[ParseError]s carrying the job's
// line number.
func Derive(j *Job, tab *throughput.Table, opts DeriveOptions) (Profile, error) {
	p, err := derive(j, tab, opts)
	if err != nil {
		if pe, ok := err.(*ParseError); ok && pe.Line == 0 {
			pe.Line = j.Line
		}
		return Profile{}, err
	}
	return p, nil
}

func derive(j *Job, tab *throughput.Table, opts DeriveOptions) (Profile, error) {
	if tab == nil {
		return Profile{}, &ParseError{Field: "throughput", Err: fmt.Errorf("%w: nil table", ErrThroughput)}
	}
	e64 := Epochs(j.Model, j.BatchSize, j.TotalSteps)
	if e64 <= 0 || e64 > MaxEpochs {
		return Profile{}, &ParseError{Field: "total_steps", Value: strconv.FormatInt(j.TotalSteps, 10), Err: ErrRange}
	}
	bs, err := Schedule(nil, j.Model, j.Mode, j.BatchSize, j.GPUs, int(e64))
	if err != nil {
		return Profile{}, err
	}
	p := Profile{
		Model:           j.Model,
		GPUs:            j.GPUs,
		SamplesPerEpoch: j.Model.SamplesPerEpoch(),
		EpochBS:         bs,
		EpochDur:        make([]float64, len(bs)),
	}
	lastBS, lastDur := 0, 0.0
	for e, b := range bs {
		if b != lastBS {
			if lastDur, err = EpochDuration(tab, opts.Worker, j.Model, b, j.GPUs); err != nil {
				return Profile{}, err
			}
			lastBS = b
		}
		p.EpochDur[e] = lastDur
	}
	return p, nil
}

// DeriveAll derives the profile of every job.
func DeriveAll(jobs []Job, tab *throughput.Table, opts DeriveOptions) ([]Profile, error) {
	ps := make([]Profile, len(jobs))
	for i := range jobs {
		p, err := Derive(&jobs[i], tab, opts)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}
