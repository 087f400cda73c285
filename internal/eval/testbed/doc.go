// Package testbed runs CASSINI's mechanism on real kernel TCP: the
// simulator's fixed experiments (Fig. 2 and Table 2's snapshots) as real
// processes in network namespaces, their shifts planned through the
// engine's public API from profiles measured on the testbed itself, and
// held by the agents of package engine/cassini/agent running in the jobs'
// processes.
//
// # The fabric
//
// [Build] makes a topology of package topology (the scenario's Clos
// fabric) out of namespaces it creates: one per server, whose NIC is a
// veth end, and one holding every switch as a Linux bridge. Every directed
// link is the egress of a veth end, shaped by HTB to the link's rate
// divided by [FabricOptions.Scale] (1/250: 50 Gbps becomes 200 Mbit/s;
// the jobs' bytes are divided alike, so durations stay), in payload bytes
// (HTB counts whole frames: the rate is raised by the framing of a full
// segment at MTU 9000) over a drop-tail queue (bfifo; 32 ms of the link by
// default, the ns-3 cross-check's 4 MB at 1 Gbps). Veths run MTU 9000 with
// segmentation and receive offloads capped at one frame (gso_max_size),
// so the queues see packets, not 64 KB bursts. Bridges forward on the one
// path a tree has, which is then the topology's route: the fabric must be
// a tree (one aggregation switch per pod, at most one core); the paper's
// 2:1 fabric, with redundant paths, is refused.
//
// Namespaces are named [Prefix]+PID+random: parallel runs never collide,
// and [Leftovers] removes those of runs whose process is gone (killed
// before it could clean up). [Run] removes its own when it returns, also
// on an error or an interrupt (its context ending).
//
// # The jobs
//
// Every rank of every job is a process of the worker binary (package
// internal/eval/testbed/worker, built by [BuildWorker]) started in its
// server's namespace (ip netns exec, under chrt -f: real-time priority, or
// a loaded host's stalls dominate the timing). A data-parallel job's
// iteration is its model's (package workload: compute as a sleep, then a
// ring all-reduce of the gradient over long-lived TCP connections, one per
// ring hop, each socket paced at the model's peak rate by
// SO_MAX_PACING_RATE and running the arm's congestion control through
// TCP_CONGESTION; a namespace may only default to the kernel's allowed
// ones). A worker records, per iteration, its start, its communication's
// start and end, the agent's wait, and how late its sleeps woke (a stall
// of the host: counted, reported, and the reason a CI run may be in
// doubt).
//
// # The arms
//
// Alone runs each job by itself: its communication events become its
// profile through cassini.profile (the engine's typed API, [orrery.Profile]),
// and the scenario's placement is ranked through cassini.rank with those
// profiles ([orrery.Rank]): the period, the centred shift, its room
// (slack) and the edge shift of every job. Overlapped starts every job at
// the same instant with no agent (the scheduler without CASSINI); its
// communication times are what the agents' give-up weighs a shift's
// saving against. Shifted starts each job at its shift and lets it run
// free (what real TCP does to an offset nobody holds); Agents runs every
// rank with an agent holding the plan: Elastic on the plan's clock
// (agent.NewPlanGroup: every rank of every job builds the same clock from
// the plan's reference, so they agree without sharing memory) or Pad.
//
// Kernels differ: [Detect] reads the congestion controls a socket may ask
// for and tries each queueing discipline on a throwaway veth. DCTCP with
// RED marking runs only where both are there ([Kernel.ECN]); where they
// are not (this project's hosts: no RED, CoDel, FQ, netem nor DCTCP), the
// queues are drop-tail and the report counts drops and retransmissions.
package testbed
