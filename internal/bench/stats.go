package bench

import (
	"encoding/json"
	"math"
	"slices"
)

// Stats summarizes repeated measurements of one quantity.
type Stats struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"` // first quartile
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"` // third quartile
	Max    float64 `json:"max"`
}

// Summarize returns the order statistics of xs (quartiles by linear
// interpolation between order statistics). NaNs are dropped; with no
// values left every field but N is NaN.
func Summarize(xs []float64) Stats {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	slices.Sort(v)
	if len(v) == 0 {
		nan := math.NaN()
		return Stats{Min: nan, Q1: nan, Median: nan, Q3: nan, Max: nan}
	}
	return Stats{N: len(v), Min: v[0], Q1: quantile(v, 0.25), Median: quantile(v, 0.5), Q3: quantile(v, 0.75), Max: v[len(v)-1]}
}

// quantile of sorted v at q in [0, 1], interpolating linearly.
func quantile(v []float64, q float64) float64 {
	pos := q * float64(len(v)-1)
	i := int(pos)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	f := pos - float64(i)
	return v[i] + f*(v[i+1]-v[i])
}

// Scale returns s with every statistic multiplied by c (c > 0), for unit
// conversions.
func (s Stats) Scale(c float64) Stats {
	s.Min, s.Q1, s.Median, s.Q3, s.Max = s.Min*c, s.Q1*c, s.Median*c, s.Q3*c, s.Max*c
	return s
}

// MarshalJSON writes s as an object, or null when it has no values (its
// statistics are NaN, which JSON cannot hold).
func (s Stats) MarshalJSON() ([]byte, error) {
	if s.N == 0 {
		return []byte("null"), nil
	}
	type plain Stats
	return json.Marshal(plain(s))
}

// Float is a float64 that encodes as JSON null when it is NaN or infinite
// (a figure that does not exist, such as a solver's objective when it found
// no solution).
type Float float64

// MarshalJSON writes f, or null when f is not finite.
func (f Float) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}
