//go:build !race

package fluid_test

const raceEnabled = false
