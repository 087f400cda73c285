package codec

import (
	"bytes"
	"strconv"
	"sync"
)

// Measures names values of a request (a top-level key, "jobs", or a key of
// a top-level object, "config.rounds") and receives what the scan saw of
// them: the raw bytes of each, and the element count of an array.
type Measures struct {
	paths []string
	raw   [maxMeasures][]byte
	count [maxMeasures]int
}

// maxMeasures bounds the values a request type measures (RankRequest
// measures three), so that Measures needs no allocation of its own.
const maxMeasures = 4

// measuresKept keeps Measures between calls: a caller's limits check, an
// interface method, would make each call's escape to the heap.
var measuresKept = sync.Pool{New: func() any { return new(Measures) }}

// GetMeasures returns Measures of paths (at most four), kept until
// [PutMeasures].
func GetMeasures(paths []string) *Measures {
	if len(paths) > maxMeasures {
		panic("codec: a request measures more than maxMeasures values")
	}
	m := measuresKept.Get().(*Measures)
	m.paths = paths
	return m
}

// PutMeasures forgets what m saw (slices of a request) and keeps it.
func PutMeasures(m *Measures) {
	*m = Measures{}
	measuresKept.Put(m)
}

// Get returns the raw value at path and, for an array, its element count;
// nil when the request has no such value.
func (m *Measures) Get(path string) ([]byte, int) {
	for i, p := range m.paths {
		if p == path {
			return m.raw[i], m.count[i]
		}
	}
	return nil, 0
}

// Int returns the integer at path, and false when it is absent or not an
// integer literal that fits (decoding then fails, or the default applies).
func (m *Measures) Int(path string) (int, bool) {
	raw, _ := m.Get(path)
	n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	return n, err == nil
}
