package workload

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A model of the file's written as VGG19's own profile (its compute and
// its all-reduce at the rate its gradient and reference length imply) is
// VGG19 at its reference batch on every server count: the file's models
// follow the built-in models' rule.
func TestReadJobsModelIsBuiltinRule(t *testing.T) {
	vgg, _ := Lookup("VGG19")
	gbps := vgg.GradientBits() / vgg.Phases[1].Duration.Seconds() / 1e9
	file := `{"models": [{"name": "my-vgg", "servers": 2, "phases": [{"ms": 150}, {"ms": 118, "gbps": ` +
		strconv.FormatFloat(gbps, 'g', -1, 64) + `}]}],
	 "jobs": [{"model": "my-vgg", "gpus": 3, "iterations": 10, "arrival_s": 1.5},
	          {"model": "VGG19", "gpus": 2, "iterations": 20}]}`
	jobs, models, err := ReadJobs(strings.NewReader(file), FileOptions{MaxGbps: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 || len(jobs) != 2 || jobs[0].ID != 0 || jobs[1].ID != 1 || jobs[0].Arrival != 1500*time.Millisecond ||
		jobs[1].Batch != vgg.RefBatch || jobs[0].Model != "my-vgg" || jobs[0].GPUs != 3 || jobs[1].Iterations != 20 {
		t.Fatalf("jobs %+v, models %+v", jobs, models)
	}
	for servers := 1; servers <= 8; servers++ {
		want, err1 := vgg.Iteration(vgg.RefBatch, servers)
		got, err2 := models[0].Iteration(1, servers)
		if err1 != nil || err2 != nil || len(got) != len(want) {
			t.Fatalf("%d servers: %v %v", servers, err1, err2)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Pattern != w.Pattern || g.Compute != w.Compute || !near(g.Bits, w.Bits) || !near(g.Peak, w.Peak) || !near(g.Bandwidth, w.Bandwidth) {
				t.Fatalf("%d servers, step %d: %+v, VGG19's %+v", servers, i, g, w)
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Every mistake names its field; numbers in the wrong unit say so.
func TestReadJobsErrors(t *testing.T) {
	const model = `{"name": "m", "phases": [{"ms": 100}, {"ms": 50, "gbps": 40}]}`
	for _, c := range []struct{ file, want string }{
		{`{"jobs": []}`, "jobs: none"},
		{`{"jobs": [{"model": "VGG19", "gpus": 1, "iterations": 1, "extra": 1}]}`, `unknown field "extra"`},
		{`{"jobs": [{"model": "VGG-19", "gpus": 1, "iterations": 1}]}`, `jobs[0].model: "VGG-19" is neither`},
		{`{"jobs": [{"model": "VGG19", "gpus": 0, "iterations": 1}]}`, "jobs[0].gpus: 0"},
		{`{"jobs": [{"model": "VGG19", "gpus": 1, "iterations": 0}]}`, "jobs[0].iterations: 0"},
		{`{"jobs": [{"model": "VGG19", "gpus": 1, "iterations": 1, "arrival_s": -1}]}`, "jobs[0].arrival_s: -1 s"},
		{`{"jobs": [{"model": "VGG19", "gpus": 1, "batch": 7, "iterations": 1}]}`, "jobs[0].batch: 7 outside VGG19's range"},
		{`{"models": [` + model + `], "jobs": [{"model": "m", "gpus": 1, "batch": 7, "iterations": 1}]}`, "jobs[0].batch: 7: a model of the file's"},
		{`{"models": [{"name": "VGG19", "phases": [{"ms": 100}]}], "jobs": []}`, "models[0].name: \"VGG19\" is a built-in model"},
		{`{"models": [` + model + `, ` + model + `], "jobs": []}`, `models[1].name: "m" twice`},
		{`{"models": [{"name": "m", "phases": []}], "jobs": []}`, "models[0].phases: none"},
		{`{"models": [{"name": "m", "phases": [{"ms": 0}]}], "jobs": []}`, "models[0].phases[0].ms: 0"},
		{`{"models": [{"name": "m", "phases": [{"ms": 100, "gbps": -1}]}], "jobs": []}`, "models[0].phases[0].gbps: -1"},
		{`{"models": [{"name": "m", "phases": [{"ms": 100, "gbps": 4, "pattern": "star"}]}], "jobs": []}`, `models[0].phases[0].pattern: "star"`},
		{`{"models": [{"name": "m", "phases": [{"ms": 100, "pattern": "ring"}]}], "jobs": []}`, "on a compute phase"},
		{`{"models": [{"name": "m", "servers": 1, "phases": [{"ms": 100, "gbps": 4}]}], "jobs": []}`, "models[0].servers: 1"},
		// seconds typed as milliseconds, Mbps typed as Gbps
		{`{"models": [{"name": "m", "phases": [{"ms": 0.1}, {"ms": 0.05, "gbps": 40}]}], "jobs": []}`,
			"models[0].phases: an iteration of 0.15 ms is under 10 ticks of 1ms — ms are milliseconds; did you mean 150 (seconds typed as ms)?"},
		{`{"models": [{"name": "m", "phases": [{"ms": 100}, {"ms": 50, "gbps": 40000}]}], "jobs": []}`,
			"models[0].phases[1].gbps: 40000 Gbps is above every link of the fabric (the fastest: 50 Gbps) — gbps are gigabits per second; did you mean 40 (Mbps typed as Gbps)?"},
	} {
		_, _, err := ReadJobs(strings.NewReader(c.file), FileOptions{MaxGbps: 50})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %q", c.file, err, c.want)
		}
	}
	// A shorter tick admits a shorter iteration.
	short := `{"models": [{"name": "m", "phases": [{"ms": 0.1}, {"ms": 0.05, "gbps": 40}]}], "jobs": [{"model": "m", "gpus": 2, "iterations": 1}]}`
	if _, _, err := ReadJobs(strings.NewReader(short), FileOptions{Tick: 10 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
}
