//go:build !race

package affinity

const raceScale = 1
