// Package cassini holds the CASSINI side of orrery's benchmark suite: the
// baselines a user would write instead of orrery's link search, and the
// placement instances the ranking is measured on.
//
// [Naive] is the search a user would write from the paper's Table 1:
// materialize every job's demand over the whole unified circle (LCM of the
// periods) and try every shift of every job but the first, keeping the
// lexicographically smallest best shift vector. It is exact, so it also
// checks orrery's gcd-reduced search (engine/link), which tries only shifts
// modulo gcd(T_j, L_j). With [NaiveOptions.Plain] it scores shifts with a
// plain Go loop instead of orrery's vector kernels.
//
// [PaperInstance] and [ClosInstance] build ranking instances: the CASSINI
// testbed's 24-server fabric (as engine/candidate's benchmark), and a Clos
// fabric of any size with a locality-aware candidate generator (each
// candidate a best-fit placement of the jobs, in a random order, into
// ToRs, then pods).
package cassini
