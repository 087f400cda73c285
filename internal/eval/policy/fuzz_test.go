package policy

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzAllocate feeds arbitrary demands to every allocator: invalid input
// is an error, valid input gives fractions in [0, 1] within the cluster,
// never a panic or a hang.
func FuzzAllocate(f *testing.F) {
	enc := func(gpus uint8, vals ...float64) []byte {
		b := []byte{gpus}
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(enc(4, 1, 15.6, 1e4, 0, 1, 4, 3.5, 100, 50, 1))
	f.Add(enc(1, 1, 1, 100, 0, 1, 1, 1, 100, 100, 1))
	f.Add(enc(32, 8, 0, 5, 1e9, 0, 2, 1e-300, 1e300, 0, 5))
	f.Add(enc(2, 1, math.NaN(), 1, 1, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		gpus := int(data[0]%64) + 1
		var jobs []Demand
		for b := data[1:]; len(b) >= 40 && len(jobs) < 64; b = b[40:] {
			v := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])) }
			g := v(0)
			w := 1
			if g >= 1 && g <= 64 {
				w = int(g)
			}
			jobs = append(jobs, Demand{ID: len(jobs), GPUs: w, Throughput: v(1), Remaining: v(2), Elapsed: v(3), Weight: v(4)})
		}
		x := make([]float64, len(jobs))
		for _, a := range []Allocator{&MaxMinFairness{}, &FinishTimeFairness{}, &MinTotalDuration{}, &MaxSumThroughput{}} {
			for range 2 { // the second call exercises the stateful policy
				if err := a.Allocate(x, jobs, gpus); err != nil {
					break
				}
				var used float64
				for i, v := range x {
					if !(v >= 0 && v <= 1) {
						t.Fatalf("%s: x[%d] = %v for %+v", a.Name(), i, v, jobs[i])
					}
					used += v * float64(jobs[i].GPUs)
				}
				if used > float64(gpus)*(1+1e-9) {
					t.Fatalf("%s: %v of %d GPUs", a.Name(), used, gpus)
				}
			}
		}
	})
}
