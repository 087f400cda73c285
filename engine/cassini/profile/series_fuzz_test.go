package profile_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// FuzzFromSeries: any series either fits or fails with a sentinel, never
// panics; a fit's period lies in the searched range, its quality is a
// correlation, and its profile is valid.
func FuzzFromSeries(f *testing.F) {
	f.Add([]byte{0, 0, 10, 10, 0, 0, 10, 10, 0, 0, 10, 10}, uint16(1000), uint8(0), uint8(0))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint16(1), uint8(3), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, ivUs uint16, minS, maxS uint8) {
		var s []float64
		for i := 0; i+1 < len(data) && len(s) < 4096; i += 2 {
			s = append(s, float64(binary.LittleEndian.Uint16(data[i:]))*profile.Mbps)
		}
		iv := time.Duration(ivUs) * time.Microsecond
		opt := profile.SeriesOptions{MinPeriod: time.Duration(minS) * iv, MaxPeriod: time.Duration(maxS) * iv}
		p, fit, err := profile.FromSeries(s, iv, profile.Quantum{}, opt)
		if err != nil {
			return
		}
		samples := float64(fit.Period) / float64(iv)
		if samples < 1.5 || samples > float64(len(s))/2+1 {
			t.Fatalf("period %v is %.2f samples of %d", fit.Period, samples, len(s))
		}
		if !(fit.Quality >= profile.DefaultMinQuality-1e-9 && fit.Quality <= 1+1e-9) || math.IsNaN(fit.Explained) {
			t.Fatalf("fit %+v", fit)
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}
