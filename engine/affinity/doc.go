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
// crossing the same uplink and downlink already make one, so this package
// goes further (the default policy, [Resolve]):
//
//   - Links that carry the same set of jobs are merged into one vertex,
//     optimized once for the smallest capacity among them; the 4-cycles they
//     would form disappear.
//   - A cycle that remains is accepted when it is consistent: when the walk
//     reaches a link some of whose jobs already have shifts, the link is
//     re-optimized with those jobs held where they are; if that constrained
//     optimum is as good as the link's own optimum, the cycle costs nothing.
//   - Otherwise the placement is rejected with the reason ([ErrInconsistent]),
//     or, under [Reoptimize], kept with the constrained (lower) link score.
//
// [Paper] is the faithful policy: any loop in the unmerged graph rejects the
// placement ([ErrLoop]).
//
// Whatever the policy, every link's reported score is the score its jobs'
// final shifts give, recomputed on the link's own unified circle.
package affinity
