//go:build !race

package candidate_test

const underRace = false
