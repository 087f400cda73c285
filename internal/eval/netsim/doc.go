// Package netsim simulates training jobs sharing a data-center fabric under
// a round scheduler, to measure what CASSINI's placement and time shifts buy:
// iteration times and congestion per arm of an ablation (the scheduler
// alone, with CASSINI's placement, with its placement and shifts, and every
// job alone on the network), same trace and seed for every arm.
//
// # Model
//
// The network is a fluid model (package fluid): at every instant each link
// shares its capacity max-min fairly among the flows crossing it, and a
// flow never sends faster than its peak. A job is a cycle of steps (package
// workload): compute for a duration (scaled, iteration by iteration, by
// replayed noise), or communicate a number of bits per connection over its
// servers (a ring all-reduce is one lock-step flow over all of its hops; a
// pipeline chain and an all-to-all are one flow per connection, and the
// step ends when the last one does; a hybrid-parallel step runs within
// groups of the job's servers). Contention stretches communication steps
// and so iterations. The simulation is event driven: between two events
// (a step ending, a flow finishing, a job arriving, a lease or round
// ending, an agent's slot) every rate is constant, so it is exact up to the
// nanosecond grid of event times, and deterministic: ties are processed in
// job order. The rates are kept incrementally (fluid.Network): an event
// fills again only the congested components its flows touch, with the
// rates a solve of the whole network gives, bit for bit (Ideal, each job
// alone, solves each job's flows afresh). A flow's finish moves only by
// rounding while its rate stays, so an event computes it again only for
// the flows whose rate changed or whose bound on that rounding reaches the
// earliest finish: the finishes every later event reads are the ones that
// computing every flow's at every event gives. Three more shortcuts keep
// the same bits, each tested against the plain rule it replaces (the
// package's reference flags): the network does not see the links of a
// server a job holds whole that its step leaves below capacity and cold,
// nor consecutive flows of a step on the same links as more than one flow
// crossing them n times; time passing is logged, and a job takes the
// logged intervals, in the order advancing every flow would add them, only
// when its flows or sums are read or changed; and the step and slot timers
// are a heap, keyed when placed, rather than a scan of the running jobs.
//
// # Transports
//
// Max-min sharing ([MaxMin], the zero Config.Transport) is a congestion
// control that converges at once to fair shares. [DCQCN] runs DCQCN's
// control law instead (package fluid's DCQCN: fluid switch queues with ECN
// marking, CNPs, the reaction point's cuts and increases), stepped every
// Config.DCQCN.Step (5 us) while any flow is below its line rate or any
// queue is not empty, and not at all while the network is quiet; its
// rates are constant between steps, so the flows' bits are exact in the
// same way. A flow's line rate is its first link's capacity (its NIC);
// each communication step's flows start at it, as new flows (alpha at the
// first CNP, NVIDIA's initial_alpha_value). [MLTCP] is MLTCP's DCQCN
// variant: each flow's rate increase steps scaled by F(bytes ratio), the
// bits its connection has sent in the iteration over an iteration's
// (Config.MLTCP). Under Ideal each job has its own queues. MarkedGbit
// under DCQCN and MLTCP is the traffic delivered while a link on the
// flow's path held more than Kmin (its packets were being marked).
// docs/transports.md has the laws, parameters and measurements.
//
// A slowdown is an iteration's time over the job's uncontended one on the
// placement the iteration ran on (Result.AloneMs).
//
// Congestion is measured twice. ExcessGbit is the traffic offered above
// capacity: on every link, the sum of the peak rates of the flows crossing
// it minus its capacity, when positive, integrated over time. Per job,
// MarkedGbit is the traffic it delivered while some link on the flow's path
// was offered more than its capacity: where a switch queue would grow past
// any ECN marking threshold, so the stand-in for the paper's ECN marks.
//
// # Scheduling
//
// A [Scheduler] decides which jobs hold GPUs: [Themis] (the default, the
// paper's baseline) runs finish-time-fairness auctions whenever GPUs are
// free and hands out leases (10 minutes); [Gavel] and [Shockwave] (package
// policy's) decide in rounds (2 minutes); [FIFO] places in arrival order
// and never preempts. Themis's [Auction] is greedy by default (the worst
// off first, worker counts fixed, renewals in place) or its paper's
// ([AuctionPaper], themis.go: a partial allocation auction among the 1-f
// worst off, the leftover at random, worker counts re-tuned, GPUs given
// up at lease ends). A preempted job loses its iteration in progress and
// keeps its completed ones; the schedulers see every job's measured speed,
// so congestion slows what they plan with. Each decision places its jobs
// together on one of N joint candidates (N = 10, as the paper's modified
// Themis arbiter), by the [Placement] rule: the first is the rule's own
// choice (the scheduler's), the others its other choices. [Contiguous]
// (the default) is first fit over the servers in order, job after job,
// then from random servers; [ThemisGPUs] is Themis's rule, the fewest
// machines and a uniform draw among the ties (on one-GPU servers, any
// free servers: it sees GPUs, not links); [Scattered] spreads a job one
// GPU per server round robin over the racks. The [Policy] picks the
// candidate:
//
//   - [Baseline]: the scheduler's own.
//   - [Random]: a random one.
//   - [CassiniPlacement]: CASSINI's ranking (candidate.Rank over the new
//     jobs and the running jobs whose shifts a candidate can touch), no
//     shifts.
//   - [Cassini]: the ranking, and agents holding the chosen candidate's
//     time shifts.
//   - [Ideal]: the scheduler's own, every job seeing the network as if it
//     were alone (its own flows still share links with each other).
//
// Jobs are profiled alone on their servers, link by link (a job's own
// flows may contend: an all-to-all across racks does; and it puts more on
// an uplink than on a server's link), as the paper profiles before
// placing; the ranking sees each job's demand on each link. Beyond the
// paper, the default ranking ([RankDelay]) minimizes the delay the
// candidate predicts (links' excess, per job on them, plus each job's own
// contention) rather than maximizing the mean link score ([RankScore], the
// paper's), which cannot tell one shared link from three. [Config.Pinned]
// fixes placements for snapshot experiments (the paper's Fig. 2 and
// Table 2).
//
// # Which jobs hold their shifts
//
// The paper holds every job of the affinity graph to its shift ([HoldAll]).
// Measured here, a shift pays only where the interleaving it buys exceeds
// the idle time it costs, and that depends on more than the score: jobs
// whose periods stand in a ratio like 27:28 (the common grid of a capped
// unified circle) sweep through every relative phase held or not; a link
// whose peaks fit its capacity never needs one. So by default ([HoldGain])
// a link holds its jobs' shifts when their peaks exceed its capacity and a
// replay of the link (a fluid model of it alone, from the jobs' profiles:
// held by Elastic agents versus free from evenly spread phases) predicts
// that every job on it gains at least MinGain of its period. A link that
// fails on the plan's grid, and whose jobs share no other binding link, is
// tried again with its jobs locked to harmonic periods (B/k of the longest)
// and re-optimized. The jobs of the links that hold get agents (package
// agent), one group clock per connected component; the agents of a group
// also give their shifts up together when holding costs the group more
// waiting than it saves in communication (measured against the replay's
// free estimate; agent.GiveUpGroup), or one job more than the threshold,
// and the scheduler leaves those jobs free on that placement
// (CassiniOptions.NoGiveUp and agent.GiveUpOwn are the ablations). The
// agents correct drifts within agent.Options.Budget (2 a minute by default;
// negative in Config.Agent is the ablation). [HoldScore] is the
// previous rule (links scoring at least MinScore), kept for the ablation.
//
// Every run also describes its placements ([PlacementStats]): the fraction
// spanning racks, of ring hops crossing uplinks, and over time the
// uplinks' mean offered load, the fraction of their time they bind (their
// jobs' peak demands above capacity) and the jobs on a binding one.
//
// For CASSINI the simulator also measures the score lost to drift: at
// regular instants, each held link's score is recomputed from the jobs'
// actual phase positions (planned shift plus the phase error of their last
// communication start) and compared with the planned score.
package netsim
