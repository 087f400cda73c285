//go:build race

package candidate_test

// underRace: the race detector runs the scale instances about ten times
// slower, so TestScaleAsSearched takes the small ones only.
const underRace = true
