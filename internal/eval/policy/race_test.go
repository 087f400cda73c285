//go:build race

package policy

// raceEnabled shortens the trace replays under the race detector, which
// slows the planner about twentyfold.
const raceEnabled = true
