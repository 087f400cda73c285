package predictor

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A Tracker reset once answers every progress, in any order, exactly as a
// fresh Predict of the job at that progress: the same bits and the same
// errors, over hindsight and declared modes, partial profiles and every
// estimator.
func TestTrackerMatchesPredict(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 78))
	var tr Tracker
	for i := range 3000 {
		j := randomJob(rng)
		if i%2 == 1 {
			for e := range j.EpochDur {
				j.EpochDur[e] += rng.Float64() / 3
			}
		}
		if i%5 == 0 {
			j.Modes, j.ModeDur = []int{16, 32, 64, 128, 256}, []float64{0, 0, 7.5, 0, 0}
			if rng.IntN(2) == 0 {
				j.Epochs = len(j.EpochBS) + rng.IntN(50)
			}
		}
		opts := Options{Estimator: Estimator(rng.IntN(3)), PriorStrength: float64(rng.IntN(3)) * 7.5}
		p := Predictor{Options: opts}
		terr := tr.Reset(&j, opts)
		for range 6 {
			F := rng.IntN(len(j.EpochBS)+3) - 1
			jj := j
			jj.Progress = F
			want, werr := p.Predict(&jj)
			if terr != nil {
				if werr == nil {
					t.Fatalf("job %d: Reset failed (%v) where Predict at %d succeeds", i, terr, F)
				}
				continue
			}
			got, gerr := tr.Estimate(F)
			if got != want || (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
				t.Fatalf("job %d F=%d %v: Predict %+v %v, Tracker %+v %v", i, F, opts.Estimator, want, werr, got, gerr)
			}
		}
	}
	var empty Tracker
	if _, err := empty.Estimate(0); err == nil {
		t.Fatal("an empty Tracker estimates")
	}
}

// A Calibrator fed one sample at a time answers as Calibrate on the
// timeline so far, bit for bit, also as the current durations are rescaled
// between calls (the authors' partial-epoch quirk) and with fractional
// dataset sizes; rejected samples change nothing.
func TestCalibratorMatchesCalibrate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	var c Calibrator
	applied := 0
	for i := range 2000 {
		E := 1 + rng.IntN(300)
		pre := make([]float64, E)
		for e := range pre {
			pre[e] = float64(1+rng.IntN(60)) + float64(i%2)*rng.Float64()
		}
		spe := float64(1000 + rng.IntN(100000))
		if i%3 == 0 {
			spe += 0.3
		}
		opts := CalibrateOptions{RoundSec: []float64{0, 60, 120}[rng.IntN(3)], ProfiledDeficit: i%4 == 0}
		if err := c.Reset(pre, spe, opts); err != nil {
			t.Fatal(err)
		}
		cur := slices.Clone(pre)
		var timeline []Sample
		round := 0
		for range 1 + rng.IntN(30) {
			round += 1 + rng.IntN(4)
			s := Sample{Round: round, ItPerSec: rng.Float64() * 40, BatchSize: 32 << rng.IntN(3)}
			if n := len(timeline); n > 0 && rng.IntN(20) == 0 {
				s.Round = timeline[n-1].Round - rng.IntN(2) // out of order: rejected
				if err := c.Observe(s); err == nil {
					t.Fatalf("case %d: out-of-order sample %+v accepted", i, s)
				}
				continue
			}
			if err := c.Observe(s); err != nil {
				t.Fatal(err)
			}
			timeline = append(timeline, s)
			ref := slices.Clone(cur)
			wf, wa, werr := Calibrate(ref, pre, spe, timeline, opts)
			gf, ga, gerr := c.Factor(cur)
			if wf != gf || wa != ga || (werr == nil) != (gerr == nil) {
				t.Fatalf("case %d, %d samples: Calibrate %v %v %v, Calibrator %v %v %v", i, len(timeline), wf, wa, werr, gf, ga, gerr)
			}
			if ga {
				applied++
				for e := range cur {
					cur[e] = pre[e] * gf
				}
				if !slices.Equal(cur, ref) {
					t.Fatalf("case %d: rescaled durations differ", i)
				}
			}
		}
		if c.Len() != len(timeline) {
			t.Fatalf("case %d: Len %d, %d samples", i, c.Len(), len(timeline))
		}
	}
	if applied < 100 {
		t.Fatalf("only %d calibrations applied: the test does not exercise rescaling", applied)
	}
}
