package codec

import (
	"strings"
)

// Suggest returns the key of fields an unknown key most likely meant, or
// "": one that extends it or that it extends ("capacity" for
// "capacity_gbps", "gpus" for "gpu"), else the nearest by edit distance
// when the distance is at most a third of the key (at least 1). Ties go
// to the shorter key, then the first in byte order, so the answer never
// depends on map order.
func Suggest[T any](fields map[string]T, key string) string {
	best, bestD := "", -1
	limit := max(1, len(key)/3)
	for name := range fields {
		d := editDistance(key, name)
		if len(key) >= 3 && (strings.HasPrefix(name, key) || strings.HasPrefix(key, name)) && len(name) >= 3 {
			d = 0 // a unit suffix or a plural: the clearest slip
		}
		if d > limit && d != 0 {
			continue
		}
		if bestD < 0 || d < bestD || (d == bestD && (len(name) < len(best) || (len(name) == len(best) && name < best))) {
			best, bestD = name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
