package profile_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/profile"
)

const us = time.Microsecond

// TestVGG16 is the paper's Fig. 3 circle: T = 255 ms, the Down phase
// [0, 141) carries no traffic, the Up phase takes the remaining 114 ms. The
// Up arc therefore starts 141/255*360 = 199.06 degrees into the circle.
func TestVGG16(t *testing.T) {
	p, err := profile.FromPhases(255*time.Millisecond, []profile.Phase{
		{Duration: 141 * time.Millisecond, Bandwidth: 0},
		{Duration: 114 * time.Millisecond, Bandwidth: 25 * profile.Gbps},
	}, profile.Quantum{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Period != 255 || len(p.Demand) != 255 {
		t.Fatalf("period %d, %d demands; want 255 ticks of 1 ms", p.Period, len(p.Demand))
	}
	first := slices.IndexFunc(p.Demand, func(d int32) bool { return d != 0 })
	if first != 141 {
		t.Fatalf("first non-zero tick %d, want 141", first)
	}
	for i, d := range p.Demand[141:] {
		if d != 25000 {
			t.Fatalf("tick %d: demand %d, want 25000 (25 Gbps in 1 Mbps units)", 141+i, d)
		}
	}
	if got, want := p.Mass(), int64(114*25000); got != want {
		t.Errorf("mass %d, want %d", got, want)
	}
	if p.Peak() != 25000 {
		t.Errorf("peak %d, want 25000", p.Peak())
	}
	deg := circle.Rotation(first, p.Period) * 180 / math.Pi
	if math.Abs(deg-199.0588) > 1e-4 {
		t.Errorf("Up phase starts at %.4f degrees, want 199.06", deg)
	}
}

// TestAreaPreserving checks hand-computed ticks: each tick holds the
// time-weighted mean bandwidth over it, rounded to the nearest unit.
func TestAreaPreserving(t *testing.T) {
	for _, tc := range []struct {
		name   string
		period time.Duration
		phases []profile.Phase
		q      profile.Quantum
		want   []int32
	}{
		{
			// 100 µs ticks; the A/B boundary (250 µs) and the B/C boundary
			// (370 µs) fall inside ticks 2 and 3:
			// tick 2 = (50*8000 + 50*2000)/100, tick 3 = 70*2000/100.
			name: "100us ticks",
			phases: []profile.Phase{
				{Duration: 250 * us, Bandwidth: 8 * profile.Gbps},
				{Duration: 120 * us, Bandwidth: 2 * profile.Gbps},
				{Duration: 30 * us, Bandwidth: 0},
			},
			q:    profile.Quantum{Tick: 100 * us},
			want: []int32{8000, 8000, 5000, 1400},
		},
		{
			// Three phases inside one 1 ms tick: 0.3*10 + 0.3*20 + 0.4*5.
			name: "three phases in one tick",
			phases: []profile.Phase{
				{Duration: 300 * us, Bandwidth: 10 * profile.Mbps},
				{Duration: 300 * us, Bandwidth: 20 * profile.Mbps},
				{Duration: 400 * us, Bandwidth: 5 * profile.Mbps},
				{Duration: time.Millisecond, Bandwidth: 7 * profile.Mbps},
			},
			want: []int32{11, 7},
		},
		{
			// A 1 µs burst of 1 Gbps inside a 100 µs tick is 10 Mbps on average.
			name: "burst",
			phases: []profile.Phase{
				{Duration: 40 * us, Bandwidth: 0},
				{Duration: 1 * us, Bandwidth: profile.Gbps},
				{Duration: 59 * us, Bandwidth: 0},
			},
			q:    profile.Quantum{Tick: 100 * us},
			want: []int32{10},
		},
		{
			// 150 µs on 100 µs ticks: the period rounds up to 2 ticks, the
			// second half-idle (1.5 units, rounded half away from zero).
			name:   "period rounded up",
			phases: []profile.Phase{{Duration: 150 * us, Bandwidth: 3 * profile.Mbps}},
			q:      profile.Quantum{Tick: 100 * us},
			want:   []int32{3, 2},
		},
		{
			// 1 Gbps units: 2.4 Gbps rounds to 2, 2.6 Gbps to 3.
			name: "coarse units",
			phases: []profile.Phase{
				{Duration: time.Millisecond, Bandwidth: 2.4 * profile.Gbps},
				{Duration: time.Millisecond, Bandwidth: 2.6 * profile.Gbps},
			},
			q:    profile.Quantum{Unit: profile.Gbps},
			want: []int32{2, 3},
		},
		{
			// Phases may miss the period by up to a microsecond.
			name:   "within a microsecond",
			period: 2 * time.Millisecond,
			phases: []profile.Phase{
				{Duration: time.Millisecond, Bandwidth: 4 * profile.Mbps},
				{Duration: time.Millisecond - us, Bandwidth: 4 * profile.Mbps},
			},
			want: []int32{4, 4},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := profile.FromPhases(tc.period, tc.phases, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if p.Period != len(tc.want) || !slices.Equal(p.Demand, tc.want) {
				t.Fatalf("period %d demand %v, want %d %v", p.Period, p.Demand, len(tc.want), tc.want)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

func TestFromSamples(t *testing.T) {
	p, err := profile.FromSamples([]float64{profile.Gbps, 0, 0.5 * profile.Gbps}, time.Millisecond, profile.Quantum{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{1000, 0, 500}; p.Period != 3 || !slices.Equal(p.Demand, want) {
		t.Fatalf("got %d %v, want 3 %v", p.Period, p.Demand, want)
	}
	// Half-millisecond samples on 1 ms ticks: 1.5 ms round up to 2 ticks,
	// (10+20)/2 and 30/2.
	p, err = profile.FromSamples([]float64{10 * profile.Mbps, 20 * profile.Mbps, 30 * profile.Mbps}, 500*us, profile.Quantum{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{15, 15}; p.Period != 2 || !slices.Equal(p.Demand, want) {
		t.Fatalf("got %d %v, want 2 %v", p.Period, p.Demand, want)
	}
}

// TestPeriodRoundsUp: a period that is not a whole number of ticks rounds
// up, and the padding carries no demand.
func TestPeriodRoundsUp(t *testing.T) {
	for _, tc := range []struct {
		period time.Duration
		tick   time.Duration
		ticks  int
	}{
		{2500 * us, time.Millisecond, 3},
		{2001 * us, time.Millisecond, 3},
		{3 * time.Millisecond, time.Millisecond, 3},
		{time.Nanosecond, time.Millisecond, 1},
		{255 * time.Millisecond, 10 * time.Millisecond, 26},
	} {
		p, err := profile.FromPhases(tc.period, []profile.Phase{{Duration: tc.period, Bandwidth: 9 * profile.Mbps}}, profile.Quantum{Tick: tc.tick})
		if err != nil {
			t.Fatal(err)
		}
		if p.Period != tc.ticks || len(p.Demand) != tc.ticks {
			t.Errorf("%v on %v ticks: period %d, %d demands; want %d", tc.period, tc.tick, p.Period, len(p.Demand), tc.ticks)
			continue
		}
		// Area preserved up to the rounding of each tick: the last tick is
		// the fraction of it the period covers.
		frac := float64(tc.period-time.Duration(tc.ticks-1)*tc.tick) / float64(tc.tick)
		if got, want := p.Demand[tc.ticks-1], int32(math.Round(9*frac)); got != want {
			t.Errorf("%v on %v ticks: last tick %d, want %d", tc.period, tc.tick, got, want)
		}
	}
}

func TestBadInput(t *testing.T) {
	ms := time.Millisecond
	ok := profile.Phase{Duration: ms, Bandwidth: profile.Gbps}
	for _, tc := range []struct {
		name   string
		period time.Duration
		phases []profile.Phase
		q      profile.Quantum
		want   error
		index  int // the *PhaseError's index, or -1 if the error is not about one phase
	}{
		{"NaN bandwidth", 0, []profile.Phase{ok, {ms, math.NaN()}}, profile.Quantum{}, profile.ErrInvalidBandwidth, 1},
		{"+Inf bandwidth", 0, []profile.Phase{{ms, math.Inf(1)}}, profile.Quantum{}, profile.ErrInvalidBandwidth, 0},
		{"-Inf bandwidth", 0, []profile.Phase{ok, ok, {ms, math.Inf(-1)}}, profile.Quantum{}, profile.ErrInvalidBandwidth, 2},
		{"negative bandwidth", 0, []profile.Phase{ok, {ms, -1}}, profile.Quantum{}, profile.ErrInvalidBandwidth, 1},
		{"negative duration", 0, []profile.Phase{ok, {-ms, 0}}, profile.Quantum{}, profile.ErrInvalidDuration, 1},
		{"negative period", -ms, []profile.Phase{ok}, profile.Quantum{}, profile.ErrInvalidDuration, -1},
		{"no phases", 0, nil, profile.Quantum{}, profile.ErrNoPhases, -1},
		{"empty phases", ms, []profile.Phase{}, profile.Quantum{}, profile.ErrNoPhases, -1},
		{"zero period", 0, []profile.Phase{{0, profile.Gbps}, {0, 0}}, profile.Quantum{}, profile.ErrZeroPeriod, -1},
		{"mismatch short", 3 * ms, []profile.Phase{ok, ok}, profile.Quantum{}, profile.ErrPeriodMismatch, -1},
		{"mismatch long", ms, []profile.Phase{ok, ok}, profile.Quantum{}, profile.ErrPeriodMismatch, -1},
		{"mismatch by 2 us", 2 * ms, []profile.Phase{ok, {ms - 2*us, 0}}, profile.Quantum{}, profile.ErrPeriodMismatch, -1},
		{"bandwidth too large", 0, []profile.Phase{ok, {ms, (profile.MaxUnits + 1) * profile.Mbps}}, profile.Quantum{}, profile.ErrDemandTooLarge, 1},
		{"bandwidth too large for the unit", 0, []profile.Phase{{ms, 1}}, profile.Quantum{Unit: 1e-9}, profile.ErrDemandTooLarge, 0},
		{"period too long", 0, []profile.Phase{{(profile.MaxPeriodTicks + 1) * ms, 0}}, profile.Quantum{}, profile.ErrPeriodTooLong, -1},
		{"period too long for the tick", 0, []profile.Phase{{time.Second, 0}}, profile.Quantum{Tick: 10}, profile.ErrPeriodTooLong, -1},
		{"durations overflow", 0, []profile.Phase{{math.MaxInt64 - 5, 0}, {10, 0}}, profile.Quantum{}, profile.ErrPeriodTooLong, 1},
		{"negative tick", 0, []profile.Phase{ok}, profile.Quantum{Tick: -ms}, profile.ErrInvalidQuantum, -1},
		{"negative unit", 0, []profile.Phase{ok}, profile.Quantum{Unit: -1}, profile.ErrInvalidQuantum, -1},
		{"NaN unit", 0, []profile.Phase{ok}, profile.Quantum{Unit: math.NaN()}, profile.ErrInvalidQuantum, -1},
		{"infinite unit", 0, []profile.Phase{ok}, profile.Quantum{Unit: math.Inf(1)}, profile.ErrInvalidQuantum, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := profile.FromPhases(tc.period, tc.phases, tc.q)
			checkErr(t, p, err, tc.want, tc.index)
		})
	}
}

func TestFromSamplesBadInput(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		samples  []float64
		interval time.Duration
		want     error
		index    int
	}{
		{"zero interval", []float64{1}, 0, profile.ErrInvalidDuration, -1},
		{"negative interval", []float64{1}, -ms, profile.ErrInvalidDuration, -1},
		{"no samples", nil, ms, profile.ErrNoPhases, -1},
		{"NaN sample", []float64{1, 2, math.NaN()}, ms, profile.ErrInvalidBandwidth, 2},
		{"negative sample", []float64{-1}, ms, profile.ErrInvalidBandwidth, 0},
		{"infinite sample", []float64{0, math.Inf(1)}, ms, profile.ErrInvalidBandwidth, 1},
		{"huge sample", []float64{0, 0, 0, 1e30}, ms, profile.ErrDemandTooLarge, 3},
		{"too many ticks", make([]float64, 2), (profile.MaxPeriodTicks/2 + 1) * ms, profile.ErrPeriodTooLong, -1},
		{"overflowing period", make([]float64, 4), math.MaxInt64 / 3, profile.ErrPeriodTooLong, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := profile.FromSamples(tc.samples, tc.interval, profile.Quantum{})
			checkErr(t, p, err, tc.want, tc.index)
		})
	}
}

func checkErr(t *testing.T, p profile.Profile, err, want error, index int) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	if p.Period != 0 || p.Demand != nil {
		t.Errorf("a failed call returned %+v", p)
	}
	var pe *profile.PhaseError
	switch {
	case index < 0 && errors.As(err, &pe):
		t.Errorf("err = %v is a *PhaseError, want none", err)
	case index >= 0 && !errors.As(err, &pe):
		t.Errorf("err = %v is not a *PhaseError", err)
	case index >= 0 && pe.Index != index:
		t.Errorf("PhaseError.Index = %d, want %d", pe.Index, index)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		p     profile.Profile
		want  error
		index int
	}{
		{profile.Profile{Period: 2, Demand: []int32{0, profile.MaxUnits}}, nil, -1},
		{profile.Profile{}, profile.ErrZeroPeriod, -1},
		{profile.Profile{Period: -1}, profile.ErrZeroPeriod, -1},
		{profile.Profile{Period: profile.MaxPeriodTicks + 1}, profile.ErrPeriodTooLong, -1},
		{profile.Profile{Period: 3, Demand: []int32{1, 2}}, profile.ErrPeriodMismatch, -1},
		{profile.Profile{Period: 2, Demand: []int32{1, -2}}, profile.ErrInvalidBandwidth, 1},
		{profile.Profile{Period: 2, Demand: []int32{profile.MaxUnits + 1, 0}}, profile.ErrDemandTooLarge, 0},
	} {
		err := tc.p.Validate()
		if tc.want == nil {
			if err != nil {
				t.Errorf("%+v: %v", tc.p, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("period %d: err = %v, want %v", tc.p.Period, err, tc.want)
		}
		var pe *profile.PhaseError
		if tc.index >= 0 && (!errors.As(err, &pe) || pe.Index != tc.index) {
			t.Errorf("period %d: err = %v, want a *PhaseError at %d", tc.p.Period, err, tc.index)
		}
	}
}

func TestQuantumNormalize(t *testing.T) {
	q, err := profile.Quantum{}.Normalize()
	if err != nil || q.Tick != profile.DefaultTick || q.Unit != profile.DefaultUnit {
		t.Fatalf("zero Quantum normalizes to %+v, %v", q, err)
	}
	q, err = profile.Quantum{Tick: 5 * us, Unit: profile.Gbps}.Normalize()
	if err != nil || q.Tick != 5*us || q.Unit != profile.Gbps {
		t.Fatalf("got %+v, %v", q, err)
	}
	if got := q.Units(2.5 * profile.Gbps); got != 3 {
		t.Errorf("Units(2.5 Gbps) = %v in Gbps units, want 3 (half away from zero)", got)
	}
}

// TestPhaseErrorMessage: the message names the phase and the cause.
func TestPhaseErrorMessage(t *testing.T) {
	_, err := profile.FromPhases(0, []profile.Phase{{time.Millisecond, 0}, {time.Millisecond, -5}}, profile.Quantum{})
	if got, want := err.Error(), "phase 1: "+profile.ErrInvalidBandwidth.Error(); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestMassProperty: on random phases, every tick is within [0, MaxUnits]
// and within half a unit of the tick's true mean, so the quantized mass is
// within half a unit per tick of the true mass.
func TestMassProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := range 2000 {
		tick := time.Duration(1 + rng.IntN(2000))
		var phases []profile.Phase
		var mass float64 // unit-ticks
		for range 1 + rng.IntN(12) {
			d := time.Duration(rng.IntN(5000))
			bw := float64(rng.IntN(1 << 20))
			if rng.IntN(3) == 0 {
				bw = rng.Float64() * 3e6
			}
			phases = append(phases, profile.Phase{Duration: d, Bandwidth: bw})
			mass += float64(d) * bw / profile.Mbps / float64(tick)
		}
		p, err := profile.FromPhases(0, phases, profile.Quantum{Tick: tick})
		if errors.Is(err, profile.ErrZeroPeriod) {
			continue
		}
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		if len(p.Demand) != p.Period {
			t.Fatalf("case %d: %d demands for %d ticks", it, len(p.Demand), p.Period)
		}
		for i, d := range p.Demand {
			if d < 0 || d > profile.MaxUnits {
				t.Fatalf("case %d: tick %d demand %d", it, i, d)
			}
		}
		if diff := math.Abs(float64(p.Mass()) - mass); diff > 0.5*float64(p.Period)+1e-9*mass {
			t.Fatalf("case %d: mass %d, true %.3f, off by more than half a unit on each of %d ticks", it, p.Mass(), mass, p.Period)
		}
	}
}

// quantizeTicks is the per-tick quantization FromPhases used before it
// emitted runs: the reference the runs must match bit for bit.
func quantizeTicks(n int, phases []profile.Phase, q profile.Quantum) []int32 {
	acc := make([]float64, n)
	tick := int64(q.Tick)
	var t int64
	for _, ph := range phases {
		units := ph.Bandwidth / q.Unit
		end := t + int64(ph.Duration)
		for t < end {
			i := t / tick
			if i >= int64(n) {
				break
			}
			stop := min(end, (i+1)*tick)
			acc[i] += float64(float64(stop-t) * units)
			t = stop
		}
		t = end
	}
	demand := make([]int32, n)
	for i, a := range acc {
		demand[i] = int32(min(math.Round(a/float64(tick)), profile.MaxUnits))
	}
	return demand
}

// TestRunsMatchTicks: FromPhases and Summarize, which work by runs of
// ticks, give exactly what quantizing tick by tick gives, on random phases
// that start and end inside ticks, on tick boundaries, last zero time, or
// fall short of the period by up to a microsecond.
func TestRunsMatchTicks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 20000 {
		q := profile.Quantum{Tick: time.Duration(1 + rng.IntN(5000)), Unit: []float64{1, 3, 1e6, 7.5e5}[rng.IntN(4)]}
		phases := make([]profile.Phase, 1+rng.IntN(8))
		var sum time.Duration
		for i := range phases {
			d := time.Duration(rng.IntN(4)) * q.Tick
			switch rng.IntN(3) {
			case 0:
				d += time.Duration(rng.IntN(int(q.Tick)))
			case 1:
				d = time.Duration(rng.IntN(3 * int(q.Tick)))
			}
			phases[i] = profile.Phase{Duration: d, Bandwidth: float64(rng.IntN(4)) * rng.Float64() * 1e7}
			sum += d
		}
		period := time.Duration(0)
		if rng.IntN(3) == 0 {
			period = sum + time.Duration(rng.IntN(2001)-1000) // within a microsecond
			if period <= 0 {
				period = 0
			}
		}
		p, err := profile.FromPhases(period, phases, q)
		s, serr := profile.Summarize(period, phases, q)
		if (err == nil) != (serr == nil) {
			t.Fatalf("#%d: FromPhases %v, Summarize %v", iter, err, serr)
		}
		if err != nil {
			continue
		}
		want := quantizeTicks(p.Period, phases, q)
		if !slices.Equal(p.Demand, want) {
			t.Fatalf("#%d: %v on %+v (period %v): runs %v, ticks %v", iter, phases, q, period, p.Demand, want)
		}
		if s != (profile.Summary{Period: p.Period, Peak: p.Peak(), Mass: p.Mass()}) {
			t.Fatalf("#%d: summary %+v of %v", iter, s, p.Demand)
		}
	}
}

func TestCommOffset(t *testing.T) {
	for _, c := range []struct {
		demand []int32
		want   int
	}{
		{[]int32{0, 0, 5, 5, 0}, 2},
		{[]int32{5, 5, 0, 0, 0}, 0},
		{[]int32{5, 0, 0, 5, 5}, 3}, // wraps: the run starts at 3
		{[]int32{0, 0, 0}, 0},
		{[]int32{4, 4, 4}, 0},
		{[]int32{0, 3, 0, 7, 0}, 1},
	} {
		if got := (profile.Profile{Period: len(c.demand), Demand: c.demand}).CommOffset(); got != c.want {
			t.Errorf("%v: %d, want %d", c.demand, got, c.want)
		}
	}
}
