// Package agent is CASSINI's time-shift agent: the piece beside each training
// job that applies the job's time shift and keeps it in place despite noise.
//
// CASSINI interleaves the communication phases of jobs that share a link by
// delaying each job by a time shift t_j on a shared reference clock: the
// job's iteration n should start at
//
//	R + t_j + n*T
//
// where R is the reference instant every job's shift counts from (the
// clocks are assumed synchronized) and T the job's period as the unified
// circle assumes it (its iteration time, quantized, and possibly rounded up
// to a common grid). These instants are the job's slots. A training loop
// calls [Agent.Wait] (or [Agent.Next] with its own clock) before every
// iteration, [Agent.Communicating] when its communication phase starts and
// [Agent.Communicated] with the iteration's communication time.
//
// # Drift and re-alignment
//
// Stragglers and noise move the communication phase off its planned angle.
// The paper re-aligns "when the start of the communication phase deviates
// by more than five percent of the ideal iteration time" (the
// [Options.Threshold]) and delays the next iteration to do so; how drift is
// measured and how the delay is chosen it does not say. This package offers
// three modes:
//
//   - [Elastic] (the default): what the overlay needs is the jobs' phases
//     relative to one another, not an absolute period, so the agents of
//     interleaved jobs share a [Group] clock. Its slots stretch to the
//     slowest member's measured pace (a job slowed by noise or by a partly
//     compatible link does not fall behind a fixed period; a change of
//     pace, two iterations in a row past the threshold on one side, is
//     followed at once rather than averaged in), a late start within the
//     plan's Slack (how far the job may drift before its communication
//     overlaps a partner's: the interleaving's slack on the unified
//     circle) stands and drains when the job runs faster, a later one
//     moves the clock later by the lateness past the slack (the others
//     wait that little: small corrections instead of a whole period now
//     and then; past the threshold it counts as an adjustment), and a job
//     more than half a period behind takes its next slot.
//     The agents also weigh what holding costs (the time it makes a job
//     wait) against what it saves (the plan's FreeComm, the communication
//     time expected without the shift, minus the measured one), each as a
//     fraction of the job's period and summed over the group, and give the
//     group's shifts up when the cost is higher, or when one member's own
//     cost exceeds its own saving by more than the threshold
//     ([Decision.Released]): shifts then never cost the group more than
//     they gain it, nor one job more than the threshold, beyond the
//     averaging window. The job that waits for a slower partner is often
//     not the one the interleaving helps most, so weighing each job alone
//     ([GiveUpOwn], the rule before) gives up shifts that pay: under the
//     Alibaba replay it cost Fig. 2 of the CASSINI paper a sixth of its
//     gain. The group clock lives where the agents can share it (one
//     process, or the scheduler behind an RPC); an Elastic agent without a
//     group holds its slots on the reference as Pad does.
//     Adjustments are rationed ([Options.Budget], by default the paper's
//     2 a minute): a drift past the threshold that finds the budget spent
//     stands, as a lateness within the slack does, and drains when the job
//     runs faster than the group's pace or is corrected when the budget
//     allows. Under the Alibaba replay most drifts past the threshold are a
//     step of one job's pace, which the pace estimate follows within two
//     iterations; correcting each of them at once adjusted 2-5 times a
//     minute in the noisiest dealings for under a thousandth of the gain
//     (see docs/cassini.md).
//   - [Pad]: every iteration starts on its slot of a fixed period, waiting
//     for it when the previous iteration ended early; the iteration time is
//     thereby locked to T, which the unified circle assumes. An iteration
//     ready after its slot starts at once if it is late by at most the
//     threshold (the slack of later iterations catches up), and otherwise
//     is re-aligned: it waits for the first slot after it is ready. That
//     wait is an adjustment.
//   - [Free] (the paper's rule as stated): iterations run back to back; when
//     the last communication phase started more than the threshold away from
//     its planned position (early or late), the next iteration waits for the
//     first slot after it is ready, a delay of (expected - actual) mod T.
//
// Shifts only delay: an agent never starts an iteration before the loop is
// ready. The phase error of a communication start is measured on the
// circle, wrapped into [-T/2, T/2). [Stats] counts adjustments (and their
// rate per minute), padding, re-plans and the drift distribution.
//
// An Agent is safe for concurrent use: the training loop drives it while a
// monitor reads its Stats. Its clock is injectable ([Options.Clock]), so
// tests and simulators drive it in virtual time; [Agent.Next] and
// [Agent.Communicating] take the instants explicitly and never read the
// clock.
package agent
