// Package orrery is the front door of orrery, an optimization engine for
// ML-cluster schedulers: network-aware placement (CASSINI) and fair round
// scheduling for jobs that change batch size (Shockwave).
package orrery
