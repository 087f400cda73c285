// Package metrics computes the cluster-scheduling metrics the Shockwave
// paper reports, from one record per finished job: makespan, job completion
// time (JCT), finish-time fairness ρ (static and Themis contention factors),
// worst ρ, the fraction of unfair jobs, and cluster utilization. The planner
// and the trace-driven simulators share it.
//
// Definitions follow the authors' simulator (github.com/uw-mad-dash/shockwave,
// scheduler/scheduler.py: get_average_jct, get_finish_time_fairness,
// get_cluster_utilization; reproduce/aggregate_result.py):
//
//	JCT_j      = completion_j − arrival_j        (trace arrival, not admission)
//	ρ_j        = JCT_j / (T_iso,j · max(1, N_trace/M))
//	ρ_j^Themis = JCT_j / (T_iso,j · max(1, mean active jobs during j's life / M))
//	makespan   = max_j completion_j − min_j arrival_j
//	utilization = Σ_j busy GPU-seconds_j / (M · makespan)
//
// T_iso,j is the job's runtime alone on its own GPUs with its adaptation
// schedule (trace.Profile.Isolated). Upstream rounds ρ to 5 decimals; these
// functions do not. Upstream's makespan is the absolute time of the last
// completion with the first arrival at 0, which is the same for its traces.
//
// All functions are pure; they validate their input and return errors
// wrapping [ErrInvalid] or [ErrEmpty] that name the job and field.
package metrics
