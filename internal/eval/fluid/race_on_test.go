//go:build race

package fluid_test

// raceEnabled: under the race detector the simulation tests run only on the
// paper fabric (they check arithmetic, which races do not touch).
const raceEnabled = true
