//go:build race

package affinity

// raceScale divides the random property tests' sizes under the race
// detector, which runs them about ten times slower.
const raceScale = 5
