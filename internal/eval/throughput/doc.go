// Package throughput reads the measured-throughput tables that Gavel and
// Shockwave (github.com/uw-mad-dash/shockwave, scheduler/tacc_throughputs.json
// and wisr_throughputs.json) use as their oracle:
//
//	worker type -> "('<Model> (batch size B)', GPUs)" -> {
//	    "null": iterations/s running alone,
//	    "('<Other> (batch size B')', GPUs)": [self, other] iterations/s co-located,
//	}
//
// A job type without a batch size ("('A3C', 1)") is a [Key] with BatchSize 0.
// A throughput of 0 marks a configuration that was not measured or does not
// fit (for example Transformer at batch size 256 on a V100).
//
// [Load] is strict: every key must have exactly that form, every value must be
// a finite non-negative number (a pair of them when co-located), "null" must
// be present and no key may repeat. Errors are *[KeyError]s that name the
// worker type and the key, wrapping [ErrSyntax], [ErrKey], [ErrValue] or
// [ErrDuplicate]. Lookups on a loaded [Table] are map reads and do not
// allocate.
package throughput
