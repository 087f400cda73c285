// Package ns3 cross-checks the fluid network model of CASSINI's cluster
// simulation (package netsim) at the packet level, with ns-3.37 from
// Debian's libns3-dev: it exports a fluid run (fabric, placements, first
// starts, agent plans, the jobs' steps) to a C++ program of its own
// (cc/orrery-ns3.cc), runs it under DCTCP, Cubic or NewReno with ECN, or
// under DCQCN or MLTCP (see Transports below), and sets the packet level's
// iteration times and ECN marks beside the fluid model's.
//
// # The packet-level model
//
// Every rate and byte count is scaled so that the fabric's fastest link
// runs at 1 Gbps (ExportOptions.Gbps); durations are kept, so the fluid
// model's iteration times do not change. The paper's fabric has hosts at
// the links' rate (50 Gbps NICs and links, 2:1 oversubscribed at the ToRs),
// and so does the export. A job's connections are persistent TCP
// connections, one per ordered pair of its servers that communicate (as
// NCCL keeps them), routed on the fluid model's ECMP paths, ACKs on the
// reverse route (host routes per connection address). A communication step
// gives each connection its bytes at its peak rate: the sender releases
// them into the socket at that pace and the step ends when every receiver
// has all of them. By default a connection never sends faster than its
// peak for longer than its send buffer lasts (the release clock waits while
// the socket is full), as the fluid model's flows send at min(peak, share);
// Net.CatchUp lets a delayed connection send its backlog at line rate. A
// ring's hops are gated: a hop sends at most one ring chunk more than it
// has received, as a ring all-reduce forwards what it receives (the fluid
// model moves the hops in lock step).
//
// Switch ports run RED as DCTCP's step marking: queue weight 1, thresholds
// K and K+1 bytes (K = 20 packets of 1500 bytes at 1 Gbps, the DCTCP
// paper's), a 4 MB buffer, marking instead of dropping (ECN-incapable
// packets above K are dropped: Cubic's and NewReno's ACKs under classic
// ECN). The same fabric serves every congestion control. TCP runs with a
// 1448-byte MSS, a 5 ms minimum RTO, an ACK every second segment with a
// 1 ms timer (below the RTO: ns-3's 200 ms default makes every transfer end
// in a spurious timeout), no SACK or timestamps (15-25% of the CPU, nothing
// without losses). Marks are counted at the switch ports per job (its data
// packets; DCTCP's ACKs are ECN-capable too and counted apart).
//
// # Transports
//
// DCQCN (CC "dcqcn"), the CASSINI testbed's RoCE congestion control, has no
// model in ns-3.37, so the program has its own: each connection is a UDP
// sender paced at min(Rc, peak) with ECN-capable packets of Net.DCQCN.MTU
// bytes; switch ports run RED between Kmin and Kmax (probability rising to
// Pmax, every packet above Kmax, the queue itself with weight 1); the
// receiver sends a CNP at the first marked packet once the CNP interval has
// passed since its last one; the sender runs DCQCN's reaction point (the
// cut, alpha, the rate timer and byte counter's fast recovery, additive and
// hyper increase) exactly as package fluid's DCQCN does. Each
// communication step's senders start afresh at line rate, as the fluid
// model's flows. The law's rates and byte counts are scaled with the
// fabric (Scale), its times kept, and Pmax divided by the scale so a CNP
// interval holds as many expected marks as at full rate with the same
// packets. ns-3.37 has no PFC either: buffers are deep, and a packet
// dropped anyway is sent again at once (counted among the drops). MLTCP's
// variants scale the increase by F(bytes ratio) (Net.MLTCP): "mltcp-dcqcn"
// DCQCN's RAI and RHAI, "mltcp-reno" NewReno's congestion-avoidance step
// (a TcpNewReno subclass of the program's), the ratio being the bytes the
// connection sent (for TCP, had acknowledged) in the iteration over its
// bytes per iteration. [CrossCheck] runs the fluid model under each
// congestion control's counterpart ([CC.Transport]: DCQCN's law for
// DCQCN, its MLTCP variant for MLTCP's DCQCN, max-min sharing otherwise).
//
// A job with a CASSINI agent in the fluid run gets one here (Pad, or
// Elastic with its plan's slack and free communication time, the jobs of
// one group sharing a group clock made afresh for each run): the Go side
// runs the agents of package engine/cassini/agent, feeds each the communication
// time of its job's last iteration, and answers the program's requests
// ("R job t" on its stdout, "S t" on its stdin) when each iteration after
// the first may start. [Fluid] replays an exported scenario
// in the fluid model (fair shares give netsim's iteration times exactly;
// FluidOptions.Incumbent weighs shares by who came first, with
// fluid.Solver.WeightedRates).
//
// # Formats
//
// The scenario ([Scenario.WriteTo], [ReadScenario]) is line based: the
// header "orrery-ns3 1"; settings ("cc dctcp", "red_k_bytes 30000",
// "queue_bytes", "mss", "min_rto_ns", "del_ack", "del_ack_timeout_ns",
// "sack", "timestamps", "catch_up", "snd_buf", "chunk", "stop_ns",
// "seed"; for DCQCN and MLTCP "dcqcn KMIN KMAX PMAX MTU CNP_NS G ALPHA_NS
// RATE_NS BYTE_COUNTER F RAI RHAI MIN_RATE INITIAL_ALPHA", scaled, and
// "mltcp SLOPE INTERCEPT"); "nodes N SERVERS"; "link A B BPS DELAY_NS" per full-duplex
// link; per job "job ID START_NS ITERATIONS AGENT", its "conn SRC DST
// NPATH nodes... NBACK nodes...", its steps ("compute NS", or "comm"
// followed by "flow CONN BYTES PEAK_BPS PREV SLACK" per connection) and an
// optional "noise F0 F1 ..."; then "end".
//
// The output ([Parse]) starts with "orrery-ns3-out 1", then "I job iter
// start comm end marks drops" per completed iteration (ns), "R job t" per
// agent request, and at the end "L from to packets marks ack_marks drops
// ack_drops max_queue_bytes" per link direction, "J job iterations marks
// drops ack_drops" per job and "E end_ns events wall_s".
//
// # Running it
//
// install.sh installs libns3-dev and g++; [Build] compiles the program with
// g++ (Debian's pkg-config files for ns-3 are broken) into the user's cache,
// once per source. [CrossCheck] runs cases ([Snapshot]: Fig. 2 and Table 2's
// snapshots as the CLI runs them; [Cluster]: a Poisson trace on the paper's
// fabric) in variants (scheduler alone, CASSINI with agents, CASSINI's
// shifts without agents, half the shifts) under each congestion control.
// The packet-level tests run only with ORRERY_NS3=1 (make ns3-check, CI) or
// ORRERY_NS3=optional; the rest of the package is tested without ns-3,
// against a stand-in program and recorded runs in testdata. ns-3 costs
// about 15 us of CPU per packet and hop, data and ACKs (its Debian build
// has logging compiled in): an iteration of Fig. 2's two jobs about 2.7 s.
package ns3
