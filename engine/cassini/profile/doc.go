// Package profile turns a training job's per-iteration bandwidth demand into
// CASSINI's circle: an integer demand per tick over one iteration.
//
// A job's network demand repeats every iteration, so it is described once, as
// phases [(duration, bandwidth)] or as bandwidth samples at a fixed interval,
// and quantized onto an integer grid: time into ticks (default 1 ms) and
// bandwidth into units (default 1 Mbps). Every later score is then an exact
// integer sum, identical on every platform and kernel path.
//
// Quantization is area-preserving: a tick's demand is the time-weighted mean
// bandwidth over the tick, rounded to the nearest unit. A period that is not a
// whole number of ticks is rounded up, and the extra time carries no demand
// (the time-shift agent pads each iteration to the quantized period).
//
// What a user can measure is rarely one iteration: [FromSeries] takes a long
// bandwidth record (a NIC counter read every few milliseconds), finds the
// period at which it repeats by autocorrelation, folds the record onto one
// iteration and reports in a [Fit] how alike consecutive iterations are;
// [FromEvents] bins (timestamp, bytes) communication events into such a
// record first. A record that does not repeat is [ErrNotPeriodic].
package profile
