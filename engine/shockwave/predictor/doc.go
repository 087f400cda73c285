// Package predictor is Shockwave's Bayesian runtime predictor: for one job it
// estimates the remaining runtime R_j (seconds, with a posterior variance),
// the mean epoch duration D̄_j and the job's fair finish-time target FT*_j,
// the three numbers the market planner needs per job and per re-plan.
//
// # Model
//
// A job trains for E epochs; epoch e runs at batch size b_e and takes d_e
// seconds on the job's GPUs (its profile). F epochs are done. The batch sizes
// still to come are unknown: they depend on how the job adapts (Accordion,
// gradient noise scale). The authors (github.com/uw-mad-dash/shockwave,
// scheduler/JobMetaData.py, dirichlet_posterior_remaining_runtime) put a
// Dirichlet prior over the job's batch-size modes B (m of them), with
// concentration α_b = E/m, and update it with the batch sizes of the o = F+1
// epochs 0..F (the current epoch counts as observed):
//
//	α'_b = E/m + c_b                     c_b = #{e ≤ F : b_e = b}
//	r_b  = E·α'_b / Σα'                   (Σα' = E + o)
//	r_b -= 1 once per observed epoch at b while r_b ≥ 1
//	Ĩ    = max(int(Σ r_b + 1), E − F)
//	R    = (Σ_b r_b·d̄_b) · (E − F)/Ĩ      d̄_b = mean of d_e over epochs at b
//
// and R = 1.0 when no epoch remains. E = 100, B = {32, 256}, ten epochs
// observed at 32: α' = (60, 50), r = (100·60/110 − 10, 100·50/110) ≈
// (44.5, 45.5), Ĩ = 91, R = r_32·d̄_32 + r_256·d̄_256. The prior has the
// strength of a whole job, so the posterior moves slowly.
//
// [Predictor.Predict] reproduces this bit for bit (the default [Faithful]
// estimator) when durations are whole seconds, as the authors' JobMetaData
// rounds them: all its sums are then exact. With fractional (for example
// calibrated) durations they may differ from upstream in the last bits, as
// upstream's own numpy means (pairwise summation) differ from plain sums.
//
// # Beyond the authors
//
// Declared modes. The authors take B from the job's full profiled schedule,
// i.e. from hindsight. [Job.Modes] lets the caller declare the candidate
// batch sizes up front (for example bs0·2^i up to the model's cap) and
// [Job.ModeDur] their epoch durations, so the profile need only cover the
// epochs seen so far.
//
// Uncertainty. [Estimate.Mean] and [Estimate.Var] are the posterior mean and
// variance of the remaining runtime under the Dirichlet-multinomial model the
// prior implies: the current epoch at its observed batch size, then
// U = E−F−1 future epochs whose batch sizes are drawn from p ~ Dirichlet(α'):
//
//	Mean = d̄_{b_F} + U·μ                  μ = Σ p̄_b d̄_b,  p̄ = α'/A,  A = Σα'
//	Var  = U·(A+U)/(A+1) · Σ p̄_b (d̄_b − μ)²
//
// [Posterior] makes Mean the point estimate; [Oracle] uses the true
// remaining profile (Σ_{e≥F} d_e), for measuring the others.
//
// # Accuracy on the authors' traces
//
// Against the true remaining runtime of the authors' profiles (every job of
// the 120- and 900-job traces at 0, 10, 25, 50, 75 and 90% progress;
// TestAccuracyOnTraces), the mean relative error is:
//
//	                         120 jobs   900 jobs
//	Faithful, hindsight       11.1%      14.6%     (the authors)
//	Posterior, hindsight       5.0%       9.7%
//	Faithful, declared        11.4%      15.2%
//	Posterior, declared        5.9%      10.4%
//
// The authors' error grows with progress (22-30% at 90%): r_b =
// (E²/m − o·c_b)/(E + o) shrinks as mode b is observed, so late in a job R
// expects the remaining epochs at the modes seen least (a job that has run
// at 256 since 30% is predicted to return to 32), and R leaves out the
// current epoch. The posterior mean expects more of what was seen. Without
// hindsight the modes cost under one point. The truth lies within
// Mean ± 2σ for about 70% of the cases, not 95%: batch sizes change in
// phases, not independently per epoch as the model assumes, so treat σ as a
// lower bound on the spread.
//
// Against what the authors' simulator actually runs (its runtime batch-size
// rules differ from the profile's: internal/eval/policy,
// TestPredictorAgainstSimulator, every job run alone), the ranking
// reverses: mean relative error 23.0% for the authors' formula, 126% for
// the posterior mean on the 120-job trace (26.8% and 86.7% on the 900-job
// one), 13.0% and 14.0% of the total remaining time. Near the end of a job
// the simulated remainder is a fraction of the current epoch, which the
// authors' formula leaves out and the posterior counts whole; and the
// profile's own remaining time is off by 7-9% at the start.
//
// # Calibration and finish-time targets
//
// [Calibrate] is the authors' throughput check (tolerance 0.4): when the
// measured samples over the job's lifetime differ from what the profile
// predicts for the same time by more than 40%, every profiled duration is
// rescaled. [FinishEstimate] and [FinishSeries] turn predictions into the
// fair finish-time target FT*_j: est = t_submit + (Σ_{e<F} d_e + R)/min(1, M/N),
// one estimate per re-estimation round, FT* = 0.9·(time-weighted mean) +
// 0.1·(last estimate).
//
// # Cost
//
// Predict is O(E) in the job's epochs, with a small constant: it works on
// runs of equal batch size (schedules are piecewise constant) and sums with
// four accumulators. It does not allocate once its [Predictor] has seen a
// job with as many modes and runs.
//
// A planner that predicts the same jobs at every re-plan keeps a [Tracker]
// per job: [Tracker.Reset] does Predict's O(E) work once (modes, runs,
// per-mode means, and the four accumulators after every block of four
// epochs), and [Tracker.Estimate] at any progress costs O(modes + runs),
// bit for bit Predict's answer (BenchmarkPredict/900/tracker: about 100x
// less than /900/faithful). Likewise a [Calibrator] keeps the prefix sums
// of the pre-profiled durations and the running measured count, so that
// checking a timeline that grew by one sample costs O(log E) instead of
// Calibrate's O(E + samples), with the same factors.
//
// A Predictor, Tracker or Calibrator is not safe for concurrent use; use
// one per goroutine.
package predictor
