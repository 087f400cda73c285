package predictor

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestFinishEstimate(t *testing.T) {
	// M ≥ N: full share.
	if v, err := FinishEstimate(100, 50, 25, 32, 10); err != nil || v != 175 {
		t.Errorf("full share: %v %v", v, err)
	}
	// M < N: share M/N = 0.25, time stretched 4x.
	if v, err := FinishEstimate(100, 50, 25, 8, 32); err != nil || v != 400 {
		t.Errorf("quarter share: %v %v", v, err)
	}
	e := Estimate{Remaining: 30, Elapsed: 10}
	if v, err := e.Finish(5, 2, 4); err != nil || v != 85 {
		t.Errorf("Estimate.Finish: %v %v", v, err)
	}
	for _, c := range []struct {
		submit, elapsed, rem float64
		gpus, jobs           int
		field                string
	}{
		{math.NaN(), 0, 0, 1, 1, "submit"},
		{0, -1, 0, 1, 1, "elapsed"},
		{0, 0, math.Inf(1), 1, 1, "remaining"},
		{0, 0, 0, 0, 1, "gpus"},
		{0, 0, 0, 1, 0, "jobs"},
	} {
		_, err := FinishEstimate(c.submit, c.elapsed, c.rem, c.gpus, c.jobs)
		var fe *FieldError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v", c.field, err)
		}
	}
}

// Hand-computed FT*: estimates 1000 (round 2), 1400 (round 6), 1300
// (round 8), now = 12. Windows 4, 2, 4 of 10: mean = 0.4·1000 + 0.2·1400 +
// 0.4·1300 = 1200; FT* = 0.9·1200 + 0.1·1300 = 1210.
func TestFinishSeries(t *testing.T) {
	var s FinishSeries
	if _, err := s.Target(0); !errors.Is(err, ErrEmptySeries) {
		t.Errorf("empty: %v", err)
	}
	for _, p := range [][2]float64{{2, 1000}, {6, 1400}, {8, 1300}} {
		if err := s.Add(int(p[0]), p[1]); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := s.Target(12); err != nil || math.Abs(v-1210) > 1e-9 {
		t.Errorf("FT* = %v %v, want 1210", v, err)
	}
	// At now = last round the last estimate gets no time weight: windows
	// 4, 2, 0 of 6: mean = (4000 + 2800)/6 = 1133.33; FT* = 1020 + 130.
	if v, _ := s.Target(8); math.Abs(v-(0.9*6800/6+130)) > 1e-9 {
		t.Errorf("FT* at the last round = %v", v)
	}
	// Momentum 0.5.
	s.Momentum = 0.5
	if v, _ := s.Target(12); math.Abs(v-(0.5*1200+0.5*1300)) > 1e-9 {
		t.Errorf("momentum 0.5: %v", v)
	}
	s.Momentum = 1
	if v, _ := s.Target(12); math.Abs(v-1200) > 1e-9 {
		t.Errorf("momentum 1: %v", v)
	}
	s.Momentum = 1.5
	if _, err := s.Target(12); !errors.Is(err, ErrInvalid) {
		t.Errorf("momentum 1.5: %v", err)
	}
	s.Momentum = 0
	if _, err := s.Target(7); !errors.Is(err, ErrRound) {
		t.Errorf("now before the last round: %v", err)
	}
	if err := s.Add(7, 1); !errors.Is(err, ErrRound) {
		t.Errorf("decreasing round: %v", err)
	}
	if err := s.Add(9, math.NaN()); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN estimate: %v", err)
	}
	if err := s.Add(-1, 0); !errors.Is(err, ErrRound) {
		t.Errorf("negative round: %v", err)
	}
	if s.Len() != 3 {
		t.Errorf("failed adds changed the series: %d", s.Len())
	}
	if r, v := s.At(1); r != 6 || v != 1400 {
		t.Errorf("At(1) = %d, %v", r, v)
	}
	// Several estimates in the same round as now: the weights are
	// undefined; the last estimate is returned (upstream asserts).
	s.Reset()
	_ = s.Add(4, 10)
	_ = s.Add(4, 20)
	if v, err := s.Target(4); err != nil || v != 20 {
		t.Errorf("same round: %v %v", v, err)
	}
	// A repeated round earlier than now gets zero weight.
	if v, _ := s.Target(6); math.Abs(v-(0.9*20+0.1*20)) > 1e-12 {
		t.Errorf("repeated round: %v", v)
	}
}

// Calibration, hand-computed: 4 epochs of 10 s, 100 samples each, Δ = 15 s.
// One lease ended in round 1 at 0.5 it/s with batch size 5: measured
// 5·0.5·15 = 37.5 samples over 15 s. The profile covers epoch 0 (100
// samples) plus 5 s of epoch 1 (100·5/10 = 50): 150. |37.5−150|/150 = 0.75
// > 0.4, so every duration is scaled by 150/37.5 = 4.
func TestCalibrate(t *testing.T) {
	pre := []float64{10, 10, 10, 10}
	cur := slices.Clone(pre)
	tl := []Sample{{Round: 1, ItPerSec: 0.5, BatchSize: 5}}
	opts := CalibrateOptions{RoundSec: 15}
	f, ok, err := Calibrate(cur, pre, 100, tl, opts)
	if err != nil || !ok || f != 4 || !slices.Equal(cur, []float64{40, 40, 40, 40}) {
		t.Fatalf("first call: %v %v %v %v", f, ok, err, cur)
	}
	// Upstream quirk: the partial epoch is converted with the *current*
	// duration (now 40): profiled = 100 + 100·5/40 = 112.5, factor 3.
	f, ok, _ = Calibrate(cur, pre, 100, tl, opts)
	if !ok || f != 3 || cur[0] != 30 {
		t.Errorf("second call: %v %v %v", f, ok, cur)
	}
	// With ProfiledDeficit the result is idempotent.
	opts.ProfiledDeficit = true
	for range 3 {
		f, ok, _ = Calibrate(cur, pre, 100, tl, opts)
		if !ok || f != 4 || cur[0] != 40 {
			t.Errorf("fixed deficit: %v %v %v", f, ok, cur)
		}
	}
	// Within tolerance: 1 it/s gives 75 vs 150 (0.5 > 0.4, calibrates);
	// 1.6 it/s gives 120 vs 150 (0.2): durations stay as they are, even
	// if an earlier call changed them.
	tl[0].ItPerSec = 1.6
	f, ok, _ = Calibrate(cur, pre, 100, tl, opts)
	if ok || f != 1 || cur[0] != 40 {
		t.Errorf("within tolerance: %v %v %v", f, ok, cur)
	}
	// Tolerance option.
	f, ok, _ = Calibrate(cur, pre, 100, tl, CalibrateOptions{RoundSec: 15, Tolerance: 0.1, ProfiledDeficit: true})
	if !ok || f != 150.0/120 {
		t.Errorf("tolerance 0.1: %v %v", f, ok)
	}
	// Several leases: rounds 2 and 5 at Δ = 120 (defaults): measured
	// 8·1·240 + 8·2·360 = 7680; span 600 s of 100-s epochs: 6 epochs
	// (600 samples each) = 3600; factor 3600/7680.
	pre = []float64{100, 100, 100, 100, 100, 100, 100, 100}
	cur = slices.Clone(pre)
	f, ok, _ = Calibrate(cur, pre, 600, []Sample{{2, 1, 8}, {5, 2, 8}}, CalibrateOptions{})
	if !ok || f != 3600.0/7680 {
		t.Errorf("two leases: %v %v", f, ok)
	}
	// A span past the profile extrapolates with the last epoch: 2 epochs
	// of 10 s, span 100 s: 200 + 100·80/10 = 1000 samples.
	pre = []float64{10, 10}
	cur = slices.Clone(pre)
	f, ok, _ = Calibrate(cur, pre, 100, []Sample{{Round: 10, ItPerSec: 1, BatchSize: 1}}, CalibrateOptions{RoundSec: 10})
	if !ok || f != 10 {
		t.Errorf("extrapolation: %v %v", f, ok)
	}
	// Nothing to compare: no samples, only round 0, zero throughput.
	for _, tl := range [][]Sample{nil, {{Round: 0, ItPerSec: 3, BatchSize: 4}}, {{Round: 3, ItPerSec: 0, BatchSize: 4}}} {
		cur = slices.Clone(pre)
		if f, ok, err := Calibrate(cur, pre, 100, tl, CalibrateOptions{}); err != nil || ok || f != 1 || !slices.Equal(cur, pre) {
			t.Errorf("timeline %v: %v %v %v", tl, f, ok, err)
		}
	}
}

func TestCalibrateErrors(t *testing.T) {
	pre := []float64{10, 10}
	ok := []Sample{{Round: 1, ItPerSec: 1, BatchSize: 1}}
	for _, c := range []struct {
		name     string
		cur, pre []float64
		spe      float64
		tl       []Sample
		opts     CalibrateOptions
		want     error
	}{
		{"empty", nil, nil, 100, ok, CalibrateOptions{}, ErrNoEpochs},
		{"length", []float64{1}, pre, 100, ok, CalibrateOptions{}, ErrLength},
		{"NaN pre", []float64{1, 1}, []float64{1, math.NaN()}, 100, ok, CalibrateOptions{}, ErrInvalid},
		{"negative cur", []float64{1, -1}, pre, 100, ok, CalibrateOptions{}, ErrInvalid},
		{"samples", []float64{1, 1}, pre, 0, ok, CalibrateOptions{}, ErrInvalid},
		{"round order", []float64{1, 1}, pre, 100, []Sample{{2, 1, 1}, {2, 1, 1}}, CalibrateOptions{}, ErrRound},
		{"negative round", []float64{1, 1}, pre, 100, []Sample{{-1, 1, 1}}, CalibrateOptions{}, ErrRound},
		{"throughput", []float64{1, 1}, pre, 100, []Sample{{1, math.NaN(), 1}}, CalibrateOptions{}, ErrInvalid},
		{"batch size", []float64{1, 1}, pre, 100, []Sample{{1, 1, 0}}, CalibrateOptions{}, ErrInvalid},
		{"round length", []float64{1, 1}, pre, 100, ok, CalibrateOptions{RoundSec: -1}, ErrInvalid},
		{"tolerance", []float64{1, 1}, pre, 100, ok, CalibrateOptions{Tolerance: math.Inf(1)}, ErrInvalid},
		{"zero partial epoch", []float64{0, 0}, []float64{0, 1000}, 100, ok, CalibrateOptions{}, ErrInvalid},
		{"measured overflow", []float64{1, 1}, pre, 100, []Sample{{1, 1e308, 1 << 20}}, CalibrateOptions{}, ErrOverflow},
		{"span overflow", []float64{1, 1}, pre, 100, ok, CalibrateOptions{RoundSec: 1e308}, ErrOverflow},
		{"durations overflow", []float64{1, 1}, []float64{1e300, 1e300}, 1e300, []Sample{{1, 1e-300, 1}}, CalibrateOptions{RoundSec: 1e300}, ErrOverflow},
	} {
		cur := slices.Clone(c.cur)
		if _, _, err := Calibrate(cur, c.pre, c.spe, c.tl, c.opts); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if !slices.Equal(cur, c.cur) {
			t.Errorf("%s: the failed call changed cur to %v", c.name, cur)
		}
	}
}
