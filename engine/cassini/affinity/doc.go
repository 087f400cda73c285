// Package affinity turns per-link time shifts into one time shift per job:
// CASSINI's affinity graph and its Algorithm 1.
//
// The affinity graph is bipartite: jobs on one side, the links that carry more
// than one job on the other, an edge where a job crosses a link, weighted by
// the job's shift on that link. Algorithm 1 walks it breadth first from a
// reference job (shift 0): reaching job k from job j over link l sets
//
//	t_k = (t_j - w(j,l) + w(l,k)) mod T_k
//
// so every job moves by whole periods of its own relative to the link's
// optimum and the link keeps its score. Theorem 1 needs the graph to be
// loop-free, and the paper discards every placement with a loop. But two jobs
// crossing the same uplink and downlink already make one, and a link's
// optimum is rarely unique: the walk takes one of its tied optima, and on a
// cycle another tie may be the one that fits. So this package goes further
// (the default policy, [Resolve]):
//
//   - Links that carry the same set of jobs are merged into one vertex,
//     optimized once for the smallest capacity among them; the 4-cycles they
//     would form disappear.
//   - Links whose jobs' summed peak demands fit the capacity never exceed it,
//     whatever the shifts: they constrain nothing.
//   - A cycle is accepted when it is consistent: when some shift per job puts
//     every link at its own optimum. If the walk's shifts do not, an exact
//     search over every job's shifts, each link's tied optima filtering the
//     rest, finds the first consistent assignment in a documented order, or
//     proves there is none (see [Assign]).
//   - Otherwise the placement is rejected with the reason
//     ([ErrInconsistent]), or, under [Reoptimize], kept with the links that
//     close its cycles re-optimized around the shifts already set, at a lower
//     score.
//
// [Paper] is the faithful policy: any loop in the unmerged graph rejects the
// placement ([ErrLoop]), and the walk's shifts are the answer.
//
// Whatever the policy, every link's reported score is the score its jobs'
// final shifts give, recomputed on the link's own unified circle, or on its
// 72 sample points in Paper mode (where a common shift of a link's jobs moves
// the samples, so the final score may differ from the link's optimum).
package affinity
