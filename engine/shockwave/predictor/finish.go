package predictor

import (
	"math"
	"strconv"
)

// DefaultMomentum is the weight of the time-weighted mean in FT*
// (the authors' finish_time_momentumed_average).
const DefaultMomentum = 0.9

// FinishEstimate returns a job's finish time if, from submission on, it ran
// at a uniform 1/N share of M GPUs:
//
//	est = submit + (elapsed + remaining) / min(1, M/N)
//
// with elapsed = Σ_{e<F} d_e and remaining = R_j ([Estimate.Finish] fills
// both in). Like the authors' finish_time_uniform_share it ignores the job's
// own GPU count.
func FinishEstimate(submit, elapsed, remaining float64, gpus, jobs int) (float64, error) {
	switch {
	case math.IsNaN(submit) || math.IsInf(submit, 0):
		return 0, fieldErr("submit", -1, ftoa(submit), ErrInvalid)
	case !(elapsed >= 0) || math.IsInf(elapsed, 1):
		return 0, fieldErr("elapsed", -1, ftoa(elapsed), ErrInvalid)
	case !(remaining >= 0) || math.IsInf(remaining, 1):
		return 0, fieldErr("remaining", -1, ftoa(remaining), ErrInvalid)
	case gpus <= 0:
		return 0, fieldErr("gpus", -1, strconv.Itoa(gpus), ErrInvalid)
	case jobs <= 0:
		return 0, fieldErr("jobs", -1, strconv.Itoa(jobs), ErrInvalid)
	}
	share := min(1.0, float64(gpus)/float64(jobs))
	est := submit + (elapsed+remaining)/share
	if math.IsInf(est, 0) {
		return 0, fieldErr("remaining", -1, "", ErrOverflow)
	}
	return est, nil
}

// FinishSeries accumulates one job's finish-time estimates and turns them
// into its fair finish-time target FT*_j.
//
// The authors append (round, estimate) for every active job whenever the
// scheduler re-plans after an arrival or a completion; [FinishSeries.Target]
// then weights each estimate by how long it stood:
//
//	π_i = (r_{i+1} − r_i) / (r_now − r_1),   r_{m+1} = r_now
//	FT* = μ·Σ_i π_i·est_i + (1 − μ)·est_m,    μ = Momentum
//
// The zero value is an empty series with the authors' momentum 0.9.
type FinishSeries struct {
	// Momentum μ is the weight of the time-weighted mean; 0 means
	// DefaultMomentum. It must lie in [0, 1].
	Momentum float64

	rounds []int
	ests   []float64
}

// Add appends the estimate est made in round. Rounds must not decrease.
func (s *FinishSeries) Add(round int, est float64) error {
	if round < 0 {
		return fieldErr("round", -1, strconv.Itoa(round), ErrRound)
	}
	if n := len(s.rounds); n > 0 && round < s.rounds[n-1] {
		return fieldErr("round", -1, strconv.Itoa(round)+" after "+strconv.Itoa(s.rounds[n-1]), ErrRound)
	}
	if math.IsNaN(est) || math.IsInf(est, 0) {
		return fieldErr("est", -1, ftoa(est), ErrInvalid)
	}
	s.rounds = append(s.rounds, round)
	s.ests = append(s.ests, est)
	return nil
}

// Target returns FT* as of round now (now ≥ the last round added).
//
// When now equals the first round the weights are undefined; Target then
// returns the last estimate (the authors' code does the same for a single
// estimate and fails an assertion for several made in that round).
func (s *FinishSeries) Target(now int) (float64, error) {
	n := len(s.rounds)
	if n == 0 {
		return 0, fieldErr("FinishSeries", -1, "", ErrEmptySeries)
	}
	if now < s.rounds[n-1] {
		return 0, fieldErr("now", -1, strconv.Itoa(now)+" before "+strconv.Itoa(s.rounds[n-1]), ErrRound)
	}
	mu := s.Momentum
	if mu == 0 {
		mu = DefaultMomentum
	}
	if !(mu >= 0 && mu <= 1) {
		return 0, fieldErr("FinishSeries.Momentum", -1, ftoa(mu), ErrInvalid)
	}
	last := s.ests[n-1]
	total := now - s.rounds[0]
	if total == 0 {
		return last, nil
	}
	var avg float64
	for i := range n {
		next := now
		if i+1 < n {
			next = s.rounds[i+1]
		}
		avg += float64(float64(next-s.rounds[i]) / float64(total) * s.ests[i])
	}
	return float64(mu*avg) + float64((1.0-mu)*last), nil
}

// Len returns the number of estimates.
func (s *FinishSeries) Len() int { return len(s.rounds) }

// At returns the i-th (round, estimate), 0 ≤ i < Len().
func (s *FinishSeries) At(i int) (round int, est float64) { return s.rounds[i], s.ests[i] }

// Reset empties the series, keeping its storage and Momentum.
func (s *FinishSeries) Reset() { s.rounds, s.ests = s.rounds[:0], s.ests[:0] }
