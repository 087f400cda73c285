package metrics

import (
	"errors"
	"math"
	"strconv"
)

// Unfairness thresholds used upstream: aggregate_result.py counts ρ > 1.05,
// plotting.py and analyze_fidelity.py count ρ > 1.1.
const (
	UnfairThreshold    = 1.05
	UnfairThresholdAlt = 1.1
)

// MaxTime bounds |Arrival| and |Completion| (seconds), so that sums and
// differences of times stay finite.
const MaxTime = 1e18

// Sentinel errors.
var (
	ErrInvalid = errors.New("metrics: invalid value")
	ErrEmpty   = errors.New("metrics: no jobs")
)

// Job is one finished job. Times are seconds on the simulation clock.
type Job struct {
	ID         int     // caller's identifier, echoed in errors
	Arrival    float64 // trace arrival time
	Completion float64 // finish time, ≥ Arrival
	Isolated   float64 // T_iso: runtime alone on its GPUs, > 0
	// GPUSeconds is the GPU time the job kept busy (GPUs × seconds run);
	// used by Utilization only.
	GPUSeconds float64
	// MeanActive is the mean number of active jobs over the rounds the job
	// lived (see [MeanActive]); used by the Themis ρ only, 0 = unknown.
	MeanActive float64
}

// Cluster describes the run the jobs come from.
type Cluster struct {
	GPUs int // M
	// TraceJobs is N_trace, the number of jobs in the trace, for ρ's static
	// contention factor; 0 means the number of records given.
	TraceJobs int
}

// JobError names the job (by index in the input and ID) and field at fault.
type JobError struct {
	Index, ID int
	Field     string
	Value     float64
	Err       error
}

func (e *JobError) Error() string {
	return "metrics: job " + strconv.Itoa(e.Index) + " (ID " + strconv.Itoa(e.ID) + ") " + e.Field + " = " +
		strconv.FormatFloat(e.Value, 'g', -1, 64) + ": " + trim(e.Err)
}

// Unwrap returns the sentinel.
func (e *JobError) Unwrap() error { return e.Err }

func trim(err error) string {
	s := err.Error()
	if len(s) > 9 && s[:9] == "metrics: " {
		return s[9:]
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// check validates the fields every metric needs.
func check(i int, j *Job) error {
	bad := func(field string, v float64) error {
		return &JobError{Index: i, ID: j.ID, Field: field, Value: v, Err: ErrInvalid}
	}
	switch {
	case !(math.Abs(j.Arrival) <= MaxTime):
		return bad("Arrival", j.Arrival)
	case !(math.Abs(j.Completion) <= MaxTime) || j.Completion < j.Arrival:
		return bad("Completion", j.Completion)
	case !finite(j.Isolated) || !(j.Isolated > 0):
		return bad("Isolated", j.Isolated)
	case !finite(j.GPUSeconds) || j.GPUSeconds < 0:
		return bad("GPUSeconds", j.GPUSeconds)
	case !finite(j.MeanActive) || j.MeanActive < 0:
		return bad("MeanActive", j.MeanActive)
	}
	return nil
}

func checkAll(jobs []Job) error {
	if len(jobs) == 0 {
		return ErrEmpty
	}
	for i := range jobs {
		if err := check(i, &jobs[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkGPUs(gpus int) error {
	if gpus <= 0 {
		return errors.Join(ErrInvalid, errors.New("metrics: cluster GPUs = "+strconv.Itoa(gpus)))
	}
	return nil
}

// JCT returns the job's completion time, completion − arrival.
func JCT(j Job) (float64, error) {
	if err := check(0, &j); err != nil {
		return 0, err
	}
	return j.Completion - j.Arrival, nil
}

// Makespan returns max completion − min arrival.
func Makespan(jobs []Job) (float64, error) {
	if err := checkAll(jobs); err != nil {
		return 0, err
	}
	return makespan(jobs), nil
}

func makespan(jobs []Job) float64 {
	first, last := jobs[0].Arrival, jobs[0].Completion
	for _, j := range jobs[1:] {
		first, last = min(first, j.Arrival), max(last, j.Completion)
	}
	return last - first
}

// AvgJCT returns the mean JCT.
func AvgJCT(jobs []Job) (float64, error) {
	if err := checkAll(jobs); err != nil {
		return 0, err
	}
	var s float64
	for _, j := range jobs {
		s += j.Completion - j.Arrival
	}
	return s / float64(len(jobs)), nil
}

// FTF returns ρ_j = JCT_j / (T_iso,j · max(1, traceJobs/gpus)).
func FTF(j Job, traceJobs, gpus int) (float64, error) {
	if err := check(0, &j); err != nil {
		return 0, err
	}
	if err := checkGPUs(gpus); err != nil {
		return 0, err
	}
	if traceJobs <= 0 {
		return 0, errors.Join(ErrInvalid, errors.New("metrics: traceJobs = "+strconv.Itoa(traceJobs)))
	}
	return rho(j, float64(traceJobs)/float64(gpus)), nil
}

// FTFThemis returns ρ_j with the Themis contention factor
// max(1, MeanActive/gpus); MeanActive must be known (> 0).
func FTFThemis(j Job, gpus int) (float64, error) {
	if err := check(0, &j); err != nil {
		return 0, err
	}
	if err := checkGPUs(gpus); err != nil {
		return 0, err
	}
	if !(j.MeanActive > 0) {
		return 0, &JobError{ID: j.ID, Field: "MeanActive", Value: j.MeanActive, Err: ErrInvalid}
	}
	return rho(j, j.MeanActive/float64(gpus)), nil
}

func rho(j Job, contention float64) float64 {
	return (j.Completion - j.Arrival) / (j.Isolated * max(1.0, contention))
}

// FTFs appends ρ_j of every job to dst (static contention factor) and
// returns it.
func FTFs(dst []float64, jobs []Job, c Cluster) ([]float64, error) {
	if err := checkAll(jobs); err != nil {
		return dst, err
	}
	if err := checkGPUs(c.GPUs); err != nil {
		return dst, err
	}
	n := c.TraceJobs
	if n == 0 {
		n = len(jobs)
	}
	if n < 0 {
		return dst, errors.Join(ErrInvalid, errors.New("metrics: TraceJobs = "+strconv.Itoa(n)))
	}
	f := float64(n) / float64(c.GPUs)
	for _, j := range jobs {
		dst = append(dst, rho(j, f))
	}
	return dst, nil
}

// UnfairFraction returns the share of ρ values strictly above threshold (0
// for none).
func UnfairFraction(rhos []float64, threshold float64) float64 {
	if len(rhos) == 0 {
		return 0
	}
	n := 0
	for _, r := range rhos {
		if r > threshold {
			n++
		}
	}
	return float64(n) / float64(len(rhos))
}

// Utilization returns Σ GPUSeconds / (gpus · makespan): the busy fraction of
// the cluster's GPU-time from the first arrival to the last completion (0
// when the makespan is 0). A value above 1 means inconsistent input and is
// an error.
func Utilization(jobs []Job, gpus int) (float64, error) {
	if err := checkAll(jobs); err != nil {
		return 0, err
	}
	if err := checkGPUs(gpus); err != nil {
		return 0, err
	}
	return utilization(jobs, gpus)
}

func utilization(jobs []Job, gpus int) (float64, error) {
	span := makespan(jobs)
	if span == 0 {
		return 0, nil
	}
	var busy float64
	for _, j := range jobs {
		busy += j.GPUSeconds
	}
	u := busy / (float64(gpus) * span)
	if u > 1+1e-9 {
		return 0, errors.Join(ErrInvalid, errors.New("metrics: busy GPU-seconds "+
			strconv.FormatFloat(busy, 'g', -1, 64)+" exceed GPUs × makespan"))
	}
	return u, nil
}

// MeanActive returns the mean of counts[start:end], the number of active
// jobs in each round a job lived through (upstream
// np.mean(num_jobs_in_curr_round[start_round:end_round])). For a job that
// starts and ends in the same round upstream gets NaN; this returns
// counts[start] instead.
func MeanActive(counts []int, start, end int) (float64, error) {
	if start < 0 || end < start || end > len(counts) || (start == end && start >= len(counts)) {
		return 0, errors.Join(ErrInvalid, errors.New("metrics: rounds ["+strconv.Itoa(start)+", "+
			strconv.Itoa(end)+") outside "+strconv.Itoa(len(counts))+" counts"))
	}
	if start == end {
		return float64(counts[start]), nil
	}
	var s float64
	for _, c := range counts[start:end] {
		if c < 0 {
			return 0, errors.Join(ErrInvalid, errors.New("metrics: negative active-job count"))
		}
		s += float64(c)
	}
	return s / float64(end-start), nil
}

// Summary is the per-run figure set of the paper's tables.
type Summary struct {
	Jobs      int
	Makespan  float64
	AvgJCT    float64
	WorstFTF  float64 // max ρ (static contention factor)
	Unfair105 float64 // fraction of jobs with ρ > 1.05
	Unfair110 float64 // fraction of jobs with ρ > 1.1
	// WorstFTFThemis is max ρ^Themis; valid only when HasThemis (every job
	// has MeanActive > 0).
	WorstFTFThemis float64
	HasThemis      bool
	Utilization    float64
}

// Summarize computes every metric for one run.
func Summarize(jobs []Job, c Cluster) (Summary, error) {
	var s Summary
	if err := checkAll(jobs); err != nil {
		return s, err
	}
	if err := checkGPUs(c.GPUs); err != nil {
		return s, err
	}
	n := c.TraceJobs
	if n == 0 {
		n = len(jobs)
	}
	if n < 0 {
		return s, errors.Join(ErrInvalid, errors.New("metrics: TraceJobs = "+strconv.Itoa(n)))
	}
	f := float64(n) / float64(c.GPUs)
	s.Jobs = len(jobs)
	s.Makespan = makespan(jobs)
	s.HasThemis = true
	var sum float64
	var over105, over110 int
	for _, j := range jobs {
		sum += j.Completion - j.Arrival
		r := rho(j, f)
		s.WorstFTF = max(s.WorstFTF, r)
		if r > UnfairThreshold {
			over105++
		}
		if r > UnfairThresholdAlt {
			over110++
		}
		if j.MeanActive > 0 {
			s.WorstFTFThemis = max(s.WorstFTFThemis, rho(j, j.MeanActive/float64(c.GPUs)))
		} else {
			s.HasThemis = false
		}
	}
	if !s.HasThemis {
		s.WorstFTFThemis = 0
	}
	s.AvgJCT = sum / float64(len(jobs))
	s.Unfair105 = float64(over105) / float64(len(jobs))
	s.Unfair110 = float64(over110) / float64(len(jobs))
	var err error
	if s.Utilization, err = utilization(jobs, c.GPUs); err != nil {
		return Summary{}, err
	}
	return s, nil
}
