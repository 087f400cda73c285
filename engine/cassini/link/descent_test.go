package link

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// descentFamilies draw the links TestDescentRule searches: three to five
// jobs of on/off profiles (periods 40-199 ticks, 20-59% on), of one
// period, of harmonic periods, of noise, and identical.
var descentFamilies = []struct {
	name string
	draw func(rng *rand.Rand, k int) []profile.Profile
}{
	{"onoff", func(rng *rand.Rand, k int) []profile.Profile {
		return drawMany(k, func(int) profile.Profile { return onOff(rng, 40+rng.IntN(160)) })
	}},
	{"equal", func(rng *rand.Rand, k int) []profile.Profile {
		t := 40 + rng.IntN(160)
		return drawMany(k, func(int) profile.Profile { return onOff(rng, t) })
	}},
	{"harmonic", func(rng *rand.Rand, k int) []profile.Profile {
		return drawMany(k, func(int) profile.Profile { return onOff(rng, 24*(1+rng.IntN(4))) })
	}},
	{"noise", func(rng *rand.Rand, k int) []profile.Profile {
		return drawMany(k, func(int) profile.Profile {
			d := make([]int32, 4+rng.IntN(40))
			for i := range d {
				if rng.IntN(3) == 0 {
					d[i] = rng.Int32N(30000)
				}
			}
			return profile.Profile{Period: len(d), Demand: d}
		})
	}},
	{"identical", func(rng *rand.Rand, k int) []profile.Profile {
		p := onOff(rng, 40+rng.IntN(160))
		return drawMany(k, func(int) profile.Profile { return p })
	}},
}

func drawMany(k int, f func(int) profile.Profile) []profile.Profile {
	jobs := make([]profile.Profile, k)
	for j := range jobs {
		jobs[j] = f(j)
	}
	return jobs
}

// onOff is a job of period t at one demand (10-40 Gbps in 1 Mbps units)
// for 20-59% of it, from a random tick.
func onOff(rng *rand.Rand, t int) profile.Profile {
	d := make([]int32, t)
	on, v, at := t*(20+rng.IntN(40))/100, int32(10000+5000*rng.IntN(7)), rng.IntN(t)
	for i := range on {
		d[(at+i)%t] = v
	}
	return profile.Profile{Period: t, Demand: d}
}

// TestDescentRule is the ablation of descends: every link searched with
// the rule and with the descent forced before every proof, as before the
// rule. Where the rule proves directly the answer must be the same
// (shifts, excess, status), and on these families it must never spend more
// evaluations; it must spend fewer somewhere, and in all (the rule would
// be pointless otherwise). It fails if descends skips the descent on
// searches past proofRounds (x1000 spends up to 2.2x more on some) or
// never skips it.
func TestDescentRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var w, forced Workspace
	forced.descent = true
	var rule, always int64
	var ratios []float64 // with the descent over without, where they differ
	for _, fam := range descentFamilies {
		for it := range 24 {
			pr := Problem{Jobs: fam.draw(rng, 3+it%3), Capacity: int32(40000 + 10000*rng.IntN(7))}
			opt := Options{}
			if it%4 == 3 {
				opt.Mode = Paper
			}
			got, err := w.Search(context.Background(), pr, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := forced.Search(context.Background(), pr, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want.Status == Optimal && (got.Status != Optimal || got.Excess != want.Excess || !slices.Equal(got.Shifts, want.Shifts)) {
				t.Fatalf("%s %d: %v excess %d shifts %v, with the descent %v %d %v", fam.name, it, got.Status, got.Excess, got.Shifts, want.Status, want.Excess, want.Shifts)
			}
			if got.Evaluated > want.Evaluated {
				t.Errorf("%s %d: %d evaluations, %d with the descent", fam.name, it, got.Evaluated, want.Evaluated)
			}
			if got.Evaluated != want.Evaluated {
				ratios = append(ratios, float64(want.Evaluated)/float64(got.Evaluated))
			}
			rule, always = rule+got.Evaluated, always+want.Evaluated
		}
	}
	slices.Sort(ratios)
	if len(ratios) == 0 || rule >= always {
		t.Fatalf("the rule saved nothing: %d evaluations against %d", rule, always)
	}
	t.Logf("%d of %d searches differ: the descent spends %.2fx to %.2fx (median %.2fx) the evaluations; %d in all against %d",
		len(ratios), 24*len(descentFamilies), ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2], rule, always)
}
