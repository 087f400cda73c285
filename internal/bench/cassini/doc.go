// Package cassini holds the CASSINI side of orrery's benchmark suite: the
// baselines a user would write instead of orrery's link search, and the
// placement instances the ranking is measured on.
//
// [Naive] is the search a user would write from the paper's Table 1:
// materialize every job's demand over the whole unified circle (LCM of the
// periods) and try every shift of every job but the first, keeping the
// lexicographically smallest best shift vector. It is exact, so it also
// checks orrery's gcd-reduced search (engine/cassini/link), which tries only shifts
// modulo gcd(T_j, L_j). With [NaiveOptions.Plain] it scores shifts with a
// plain Go loop instead of orrery's vector kernels.
//
// [PaperInstance], [ClosInstance] and [Clos] build ranking instances: the
// CASSINI testbed's 24-server fabric (as engine/cassini/candidate's benchmark), and
// Clos fabrics of any size, of single- or multi-GPU servers, with a
// locality-aware candidate generator (each candidate the jobs, in a random
// order, taking the next free GPUs in ToR order, so most stay under one ToR
// or on one server). [ScaleSpec] is the fabric family of the growth
// benchmark, 100 to 12,500 servers (100,000 GPUs at 8 per server).
package cassini
