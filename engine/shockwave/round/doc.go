// Package round turns Shockwave's market planner into a round scheduler:
// a pure function, [Plan], from a cluster state to a plan for the next T
// rounds, and an incremental [Scheduler] that mirrors the authors'
// ShockwaveScheduler (github.com/uw-mad-dash/shockwave,
// scheduler/shockwave.py) and caches plans between re-plans.
//
// # What a plan is made of
//
// For every active job, Plan
//
//  1. calibrates the profiled epoch durations against the measured
//     throughput timeline, when there is one (predictor.Calibrate);
//  2. predicts the remaining runtime R_j, its posterior spread, the mean
//     epoch duration D̄_j and the elapsed isolated time (predictor.Predict),
//     unless the caller supplies them ([Known]);
//  3. computes the fair finish-time target FT*_j: on re-estimation (after an
//     arrival or a completion, [State.Reestimate]) it records the
//     uniform-share estimate submit + (elapsed + R_j)/min(1, M/N) for the
//     round, and FT*_j is the momentum average of the job's history
//     (predictor.FinishSeries);
//  4. solves the round program and packs, ranks and backfills the rounds
//     (package market).
//
// [Predict] runs steps 1 to 3 alone, for a caller that wants the
// predictions without a plan.
//
// Plan is pure: the state carries the history (each job's finish-time
// estimates and throughput samples), the result carries what to append to
// it. The [Scheduler] does that bookkeeping itself.
//
// # Errors
//
// Invalid input is a *[FieldError] naming the Go field of the [State] the
// value came from, whichever package found it (this one, predictor or
// market): "Config.Market.Rounds: ...", or for a job its index, its ID and
// its field: "job 7: EpochDur[2]: ...".
//
// # When the Scheduler re-plans
//
// As in the authors' simulator: on an arrival ([Scheduler.Add]) or a
// completion ([Scheduler.Remove]), both of which also re-estimate FT*;
// every ReoptRounds rounds (8, counted by [Scheduler.EndRound]; -1 for
// never); when the caller asks ([Scheduler.Resolve], the authors'
// set_resolve); and when the current round is past the cached window. Between re-plans
// [Scheduler.Schedule] returns the cached round, so only the first rounds of
// a T-round plan are ever executed.
//
// # What a re-plan recomputes
//
// The Scheduler keeps, per job, a predictor.Tracker (the profile's modes,
// runs and prefix sums) and a predictor.Calibrator (the pre-profiled
// durations' prefix sums and the running measured count), so a re-plan
// does not redo the predictor's O(E) work for every job: the posterior is
// recomputed (in O(modes + runs)) only for a job whose progress moved, the
// calibration (in O(log E)) only for a job whose timeline grew or whose
// last check rescaled its durations, and the durations are reloaded only
// when a rescale applies. Observe checks a sample the same way. Its plans
// are Plan's on the same State bit for bit (TestSchedulerMatchesPlan).
package round
