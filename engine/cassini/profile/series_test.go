package profile_test

import (
	"bufio"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// pulses is a series at 1 sample/ms of iterations lasting periods[k] ms:
// idle, then comm·period ms at gbps Gbps, then idle.
func pulses(periods []float64, comm, gbps float64) []float64 {
	var out []float64
	t := 0.0
	for _, p := range periods {
		start, end := t+0.4*p, t+(0.4+comm)*p
		for float64(len(out)) < t+p {
			ms := float64(len(out))
			// The share of this millisecond inside the burst.
			in := math.Max(0, math.Min(ms+1, end)-math.Max(ms, start))
			out = append(out, in*gbps*profile.Gbps)
		}
		t += p
	}
	return out
}

func constant(n int, p float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = p
	}
	return out
}

// A series of identical iterations gives its period exactly (whole or
// fractional number of samples) and quality 1; the folded iteration has
// the burst's mass.
func TestFromSeriesKnownPeriods(t *testing.T) {
	for _, period := range []float64{72, 255, 37.5, 180.25} {
		s := pulses(constant(int(60000/period), period), 0.3, 40)
		p, fit, err := profile.FromSeries(s, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{})
		if err != nil {
			t.Fatalf("period %v: %v", period, err)
		}
		got := float64(fit.Period) / float64(time.Millisecond)
		if math.Abs(got-period) > 0.01*period || fit.Quality < 0.9 {
			t.Errorf("period %v ms: found %v ms, quality %.3f", period, got, fit.Quality)
		}
		if fit.Iterations < int(60000/period)-1 {
			t.Errorf("period %v: %d iterations", period, fit.Iterations)
		}
		// One iteration carries 0.3·period ms at 40 Gbps: 12·period Mbit.
		mass := float64(p.Mass()) / float64(p.Period) * got // units·ms per iteration... as Mbps·ms
		if want := 0.3 * period * 40000; math.Abs(mass-want) > 0.03*want {
			t.Errorf("period %v: folded burst %v Mbit·ms, want %v", period, mass, want)
		}
	}
}

// Noise lowers the quality but not the period; a search range excludes
// the wrong multiples.
func TestFromSeriesNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	clean := pulses(constant(500, 100), 0.3, 40)
	last := 1.0
	for _, sigma := range []float64{1, 5, 15} {
		s := make([]float64, len(clean))
		for i, v := range clean {
			s[i] = math.Max(0, v+r.NormFloat64()*sigma*profile.Gbps)
		}
		_, fit, err := profile.FromSeries(s, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{MinQuality: 0.05})
		if err != nil {
			t.Fatalf("σ %v Gbps: %v", sigma, err)
		}
		if got := fit.Period.Seconds() * 1000; math.Abs(got-100) > 1 {
			t.Errorf("σ %v Gbps: period %v ms", sigma, got)
		}
		if fit.Quality >= last {
			t.Errorf("σ %v Gbps: quality %.3f did not drop (was %.3f)", sigma, fit.Quality, last)
		}
		last = fit.Quality
	}
	_, fit, err := profile.FromSeries(clean, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{MinPeriod: 150 * time.Millisecond, MaxPeriod: 250 * time.Millisecond})
	if err != nil || math.Abs(fit.Period.Seconds()*1000-200) > 1 {
		t.Errorf("range 150-250 ms: %v, %v (want the multiple, 200 ms)", fit.Period, err)
	}
}

// White noise, a constant, a ramp and a series too short for two periods
// are not periodic, and say so.
func TestFromSeriesNotPeriodic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	noise := make([]float64, 20000)
	for i := range noise {
		noise[i] = r.Float64() * 40 * profile.Gbps
	}
	ramp := make([]float64, 5000)
	for i := range ramp {
		ramp[i] = float64(i) * profile.Mbps
	}
	for name, s := range map[string][]float64{"noise": noise, "constant": constant(1000, 5e9), "ramp": ramp, "short": pulses([]float64{100}, 0.3, 40)} {
		_, fit, err := profile.FromSeries(s, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{})
		if !errors.Is(err, profile.ErrNotPeriodic) {
			t.Errorf("%s: %v (fit %+v), want ErrNotPeriodic", name, err, fit)
		}
	}
	if _, _, err := profile.FromSeries([]float64{1, -1, 1, 1}, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{}); !errors.Is(err, profile.ErrInvalidBandwidth) {
		t.Errorf("negative sample: %v", err)
	}
}

// aliWorker reads one worker's normalized mini-batch times from the
// Alibaba PAI release (internal/eval/data/alibaba).
func aliWorker(t *testing.T, file string, worker int) []float64 {
	f, err := os.Open("../../../internal/eval/data/alibaba/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), ",")
		if len(c) < 5 || c[1] != strconv.Itoa(worker) {
			continue
		}
		v, err := strconv.ParseFloat(c[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Iterations whose times vary as the workers of Alibaba's PAI jobs vary
// (their measured mini-batch times, scaled to a mean of 120 ms): the
// period found is the mean iteration time within max(2%, CoV/2) (a
// straggler's bimodal times pull the first repeat toward the common
// mode), and a worker whose times vary more gives a lower quality.
func TestFromSeriesAlibabaJitter(t *testing.T) {
	type run struct {
		name    string
		cov     float64
		quality float64
	}
	var runs []run
	for _, w := range []struct {
		file   string
		worker int
	}{{"job_2_norm.csv", 0}, {"job_1_norm.csv", 6}, {"job_3_norm.csv", 2}} {
		times := aliWorker(t, w.file, w.worker)
		if len(times) < 100 {
			t.Fatalf("%s worker %d: %d samples", w.file, w.worker, len(times))
		}
		var sum, sq float64
		for _, v := range times {
			sum += v
		}
		mean := sum / float64(len(times))
		periods := make([]float64, len(times))
		for i, v := range times {
			periods[i] = 120 * v / mean
			sq += (v - mean) * (v - mean)
		}
		cov := math.Sqrt(sq/float64(len(times))) / mean
		s := pulses(periods, 0.3, 40)
		_, fit, err := profile.FromSeries(s, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{MinQuality: 0.01})
		name := w.file + " worker " + strconv.Itoa(w.worker)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, tol := fit.Period.Seconds()*1000, math.Max(0.02, cov/2); math.Abs(got-120) > tol*120 {
			t.Errorf("%s (CoV %.3f): period %.2f ms, want 120 ± %.0f%%", name, cov, got, 100*tol)
		}
		t.Logf("%s: CoV %.3f, period %v, quality %.3f", name, cov, fit.Period, fit.Quality)
		runs = append(runs, run{name, cov, fit.Quality})
	}
	for _, a := range runs {
		for _, b := range runs {
			if a.cov < b.cov/1.5 && a.quality <= b.quality {
				t.Errorf("%s (CoV %.3f) has quality %.3f, not above %s's (CoV %.3f) %.3f", a.name, a.cov, a.quality, b.name, b.cov, b.quality)
			}
		}
	}
}

// Events at each iteration's collective (timestamp and size), with or
// without durations, give the iteration time and its traffic.
func TestFromEvents(t *testing.T) {
	var ev, timed []profile.Event
	for k := range 400 {
		at := time.Duration(k)*150*time.Millisecond + 3*time.Millisecond
		// Two all-reduce calls per iteration: 2.5 MB and 5 MB.
		ev = append(ev, profile.Event{At: at, Bytes: 2.5e6}, profile.Event{At: at + 60*time.Millisecond, Bytes: 5e6})
		timed = append(timed, profile.Event{At: at, Bytes: 2.5e6, Duration: 10 * time.Millisecond},
			profile.Event{At: at + 60*time.Millisecond, Bytes: 5e6, Duration: 20 * time.Millisecond})
	}
	for name, e := range map[string][]profile.Event{"instant": ev, "timed": timed} {
		p, fit, err := profile.FromEvents(e, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := fit.Period - 150*time.Millisecond; d < -time.Microsecond || d > time.Microsecond || p.Period != 150 || fit.Quality < 0.99 {
			t.Errorf("%s: period %v, quality %.3f", name, fit.Period, fit.Quality)
		}
		// 7.5 MB per iteration is 60 Mbit: Σ units(Mbps)·ticks(ms)/1000.
		if mbit := float64(p.Mass()) / 1000; math.Abs(mbit-60) > 0.5 {
			t.Errorf("%s: %v Mbit per iteration, want 60", name, mbit)
		}
	}
	if _, _, err := profile.FromEvents([]profile.Event{{At: 0, Bytes: -1}}, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{}); !errors.Is(err, profile.ErrInvalidBandwidth) {
		t.Errorf("negative bytes: %v", err)
	}
	if _, _, err := profile.FromEvents([]profile.Event{{At: 0}, {At: time.Hour * 2}}, time.Millisecond, profile.Quantum{}, profile.SeriesOptions{}); !errors.Is(err, profile.ErrSeriesTooLong) {
		t.Errorf("two hours of 1 ms bins: %v", err)
	}
}
