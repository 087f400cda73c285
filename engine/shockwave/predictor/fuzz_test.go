package predictor

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// FuzzPredict decodes a job from bytes (epochs as (batch-size index,
// duration) pairs, optional declared modes) and checks that Predict either
// fails with a sentinel or returns finite, consistent figures.
func FuzzPredict(f *testing.F) {
	f.Add([]byte{9, 0, 1, 0, 36, 0, 0, 1, 0, 36, 0, 1, 2, 0, 31, 0})
	f.Add([]byte{0, 3, 0, 0, 1, 0, 0, 0})
	f.Add([]byte{2, 1, 0xff, 1, 0, 0, 0xf8, 0x7f, 2, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		progress, flags := int(data[0]), data[1]
		data = data[2:]
		sizes := []int{0, 8, 16, 32, 64, 128}
		var j Job
		for len(data) >= 3 && len(j.EpochBS) < 512 {
			j.EpochBS = append(j.EpochBS, sizes[int(data[0])%len(sizes)])
			// Durations from 16-bit half-ish floats: mostly ordinary,
			// sometimes NaN/negative via the flag bits.
			v := float64(binary.LittleEndian.Uint16(data[1:3])) / 8
			switch data[0] >> 5 {
			case 6:
				v = -v
			case 7:
				v = math.NaN()
			}
			j.EpochDur = append(j.EpochDur, v)
			data = data[3:]
		}
		j.Progress = progress
		if flags&1 != 0 {
			j.Epochs = len(j.EpochBS) + int(flags>>4)
		}
		if flags&2 != 0 {
			j.Modes = []int{8, 16, 32, 64, 128}
			if flags&4 != 0 {
				j.ModeDur = []float64{5, 4, 3, 2, 1}
			}
		}
		p := Predictor{Options: Options{Estimator: Estimator(flags>>3) & 1, PriorStrength: float64(flags >> 6)}}
		est, err := p.Predict(&j)
		if err != nil {
			for _, s := range []error{ErrInvalid, ErrNoEpochs, ErrLength, ErrProgress, ErrUnknownBatchSize, ErrMissingDuration} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		for _, v := range []float64{est.Remaining, est.Mean, est.Var, est.MeanEpoch, est.Elapsed} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("bad estimate %+v for %+v", est, j)
			}
		}
		// D̄ is a mean of observed durations.
		lo, hi := math.Inf(1), math.Inf(-1)
		E := j.Epochs
		if E == 0 {
			E = len(j.EpochBS)
		}
		for _, d := range j.EpochDur[:min(j.Progress+1, E)] {
			lo, hi = min(lo, d), max(hi, d)
		}
		if est.MeanEpoch < lo*(1-1e-12) || est.MeanEpoch > hi*(1+1e-12) {
			t.Fatalf("D̄ %v outside [%v, %v]", est.MeanEpoch, lo, hi)
		}
		if _, err := est.Finish(0, 1, 1); err != nil {
			t.Fatalf("Finish: %v", err)
		}
	})
}
