// Package trace reads the Shockwave authors' workload files
// (github.com/uw-mad-dash/shockwave, MIT; copies in internal/eval/data/shockwave) and
// derives from them what the predictor, the planner and a trace-driven
// simulator consume.
//
//   - Traces ([Parse]): one job per line, 12 tab-separated fields
//     (job_type, command, working_dir, num_steps_arg, needs_data_dir,
//     total_steps, scale_factor, mode, priority_weight, SLO, duration_s,
//     arrival_s). The job type names the model and its initial batch size,
//     "ResNet-18 (batch size 32)"; scale_factor is the job's GPU count; mode
//     is static, accordion or gns.
//   - Profiles ([Derive]): per-epoch batch sizes and isolated durations,
//     exactly as upstream generate_pickle_file computes them:
//     E = ⌈total_steps / ⌈D/bs0⌉⌉ epochs (D the dataset size), the batch
//     size schedule of the job's adaptation mode ([Schedule], with the
//     upstream quirks), and d_e = (D/b_e)/throughput(v100, b_e, GPUs)
//     without rounding D/b_e up. [Profile.Isolated] is T_iso for finish-time
//     fairness; [Profile.MetadataDurations] are the whole-second durations
//     the authors' scheduler and predictor work with.
//   - Declared modes ([DeclaredModes]): the batch sizes a job may reach,
//     from its model and mode alone, for a predictor without hindsight.
//   - Configurations ([LoadConfig]): the planner's hyper-parameters per
//     cluster size (T, k, λ, ρ_max, log breakpoints, solver settings).
//
// Throughput tables are read by package throughput.
//
// All errors wrap this package's sentinels (or, for throughput lookups,
// also package throughput's); trace errors are *[ParseError]s with the line
// number and the field name. Bad input never panics.
package trace
