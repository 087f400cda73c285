// Package netsim simulates training jobs sharing a data-center fabric, to
// measure what CASSINI's placement and time shifts buy: iteration times and
// congestion under a placement policy, against the same jobs with no
// contention at all.
//
// # Model
//
// The network is a fluid model (package fluid): at every instant each link
// shares its capacity max-min fairly among the flows crossing it, and a
// flow never sends faster than its peak. A job is a cycle of steps
// (package workload): compute for a duration (scaled, iteration by
// iteration, by replayed noise), or communicate a number of bits per
// connection over its servers (a ring all-reduce is one lock-step flow over
// all of its hops; a pipeline chain and an all-to-all are one flow per
// connection, and the step ends when the last one does). Contention stretches
// communication steps and so iterations. The simulation is event driven:
// between two events (a step ending, a flow finishing, a job arriving, an
// agent's slot) every rate is constant, so it is exact up to the nanosecond
// grid of event times, and deterministic: ties are processed in job order.
//
// Congestion is measured as the traffic offered above capacity: on every
// link, the sum of the peak rates of the flows crossing it minus its
// capacity, when positive, integrated over time (in Gbit). The paper counts
// ECN marks instead; both grow with how long and how far links are
// oversubscribed.
//
// # Placement
//
// Jobs wait in arrival order until enough GPUs are free (any queued job
// that fits is placed, in order). For each job placed, a scheduler proposes
// N candidate placements with the same number of GPUs on different servers
// (N = 10, as the paper's modified Themis auction): the first is first fit
// over the servers in order, the others first fit from a random server, so
// all are as rack-local as the free GPUs allow. Policies:
//
//   - [Baseline]: the scheduler's first candidate, as without CASSINI.
//   - [Random]: a random candidate.
//   - [Cassini]: candidate.Rank over the new job's candidates and the
//     running jobs whose shifts they can touch (the connected components of
//     the running jobs' affinity graph that cross a link some candidate
//     uses; the others keep their shifts), periods rounded to a common grid
//     when a unified circle is past the cap. The best candidate is taken and
//     the jobs it binds get a time-shift agent (package agent) that holds
//     their shift, pads their iterations to the (rounded) period and
//     re-aligns after drift. A new plan keeps each connected component's
//     reference instant where it delays the running jobs least.
//   - [Ideal]: the first candidate, but every job sees the network as if it
//     were alone (its own flows still share links with each other).
//
// # Which jobs hold their shifts
//
// The paper holds every job of the affinity graph to its shift. Measured
// here, that is costly: a link with a score below 1 stretches its jobs'
// communication phases every iteration, so a job held to a fixed period is
// late past the 5% trigger again and again and waits almost a period each
// time. So, beyond the paper (and [CassiniOptions.MinScore] = -1 restores
// it):
//
//   - A link binds its jobs only when their peaks together exceed its
//     capacity; below that every phase fits and a shift would only cost
//     padding.
//   - A job holds its shift only if every link that binds it scores at least
//     MinScore (default 1: fully compatible); the others run free.
//   - Profiles can carry headroom ([CassiniOptions.Headroom]): idle time
//     added to each period, so that noise does not make every other
//     iteration late.
//
// Jobs are profiled alone on their servers (a job's own flows may contend,
// an all-to-all across racks does), as the paper profiles before placing.
// [Config.Pinned] fixes placements for snapshot experiments (the paper's
// Fig. 2 and Table 2).
//
// For CASSINI the simulator also measures the score lost to drift: at
// regular instants, each shared link's score is recomputed from the jobs'
// actual phase positions (planned shift plus the phase error of their last
// communication start) and compared with the planned score.
package netsim
