// Package candidate ranks a scheduler's placement candidates by network
// compatibility: CASSINI's Algorithm 2.
//
// The scheduler proposes N placements of the same jobs (N = 10 in the paper);
// each says which links every job's traffic crosses. For each candidate, the
// links that carry more than one job are optimized (package link), the
// per-link shifts are turned into one shift per job (package affinity), and
// the candidate scores the mean of its shared links' scores (the paper's
// metric; the minimum is an option). Candidates whose affinity graph cannot
// be resolved are discarded with the reason. The best candidate comes back
// with every job's time shift.
//
// Links carrying the same jobs with the same capacity give the same answer in
// every candidate, so each distinct link problem is solved once per call;
// one whose jobs' summed peaks fit the link never exceeds it at any shift
// and is answered without a search (every job at shift 0, what the search
// returns for it: Ranking.Fit counts them; a candidate all of whose shared
// links fit scores 1 with every job at 0, without Algorithm 1's walk);
// distinct problems and candidates are evaluated in parallel by a bounded
// pool of workers. The result does not depend on the number of workers.
package candidate
