package workload

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func TestGenerateDeterministic(t *testing.T) {
	cfg := Config{Jobs: 200, Load: 0.9, ClusterGPUs: 24, Seed: 7}
	a, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(cfg)
	if !slices.Equal(a, b) {
		t.Fatal("the same config gave two traces")
	}
	cfg.Seed = 8
	c, _ := Generate(cfg)
	if slices.Equal(a, c) {
		t.Fatal("another seed gave the same trace")
	}
	for i, j := range a {
		m, err := Lookup(j.Model)
		if err != nil {
			t.Fatal(err)
		}
		if j.ID != i || (i > 0 && j.Arrival < a[i-1].Arrival) || i == 0 && j.Arrival != 0 {
			t.Fatalf("job %d: %+v", i, j)
		}
		if j.Iterations < 200 || j.Iterations > 1000 || !slices.Contains(DefaultGPUChoices, j.GPUs) ||
			!slices.Contains(m.BatchChoices(), j.Batch) || j.GPUs < m.MinServers {
			t.Fatalf("job %d: %+v", i, j)
		}
	}
}

// The arrival rate keeps the requested fraction of GPUs busy: over a long
// trace, offered GPU-time / (GPUs x span) is close to the load.
func TestGenerateLoad(t *testing.T) {
	for _, load := range []float64{0.8, 1} {
		jobs, err := Generate(Config{Jobs: 20000, Load: load, ClusterGPUs: 24, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var work float64
		for _, j := range jobs {
			m, _ := Lookup(j.Model)
			st, _ := m.Iteration(j.Batch, j.GPUs)
			work += float64(j.GPUs) * float64(j.Iterations) * Period(st).Seconds()
		}
		span := jobs[len(jobs)-1].Arrival.Seconds()
		if got := work / (24 * span); math.Abs(got-load) > 0.05*load {
			t.Errorf("load %v: offered %v", load, got)
		}
	}
}

// A sweep is Sweep copies of one job arriving together; the sweeps keep the
// load; Sweep 0 and 1 are the trace without sweeps.
func TestGenerateSweep(t *testing.T) {
	base := Config{Jobs: 20000, Load: 0.9, ClusterGPUs: 24, Seed: 3}
	plain, err := Generate(base)
	if err != nil {
		t.Fatal(err)
	}
	one := base
	one.Sweep = 1
	if got, _ := Generate(one); !slices.Equal(got, plain) {
		t.Fatal("Sweep 1 changed the trace")
	}
	const k = 4
	sw := base
	sw.Sweep = k
	jobs, err := Generate(sw)
	if err != nil {
		t.Fatal(err)
	}
	var work float64
	for i, j := range jobs {
		lead := jobs[i-i%k]
		if j.ID != i || j.Model != lead.Model || j.Batch != lead.Batch || j.GPUs != lead.GPUs ||
			j.Iterations != lead.Iterations || j.Arrival != lead.Arrival {
			t.Fatalf("job %d %+v is not a copy of its sweep's first %+v", i, j, lead)
		}
		if i%k == 0 && i > 0 && j.Arrival < jobs[i-1].Arrival {
			t.Fatalf("sweep at job %d arrives before the previous one", i)
		}
		m, _ := Lookup(j.Model)
		st, _ := m.Iteration(j.Batch, j.GPUs)
		work += float64(j.GPUs) * float64(j.Iterations) * Period(st).Seconds()
	}
	span := jobs[len(jobs)-1].Arrival.Seconds()
	if got := work / (24 * span); math.Abs(got-0.9) > 0.05*0.9 {
		t.Errorf("sweeps of %d: offered load %v, want 0.9", k, got)
	}
	for _, bad := range []int{-1, base.Jobs + 1} {
		c := base
		c.Sweep = bad
		if _, err := Generate(c); !errors.Is(err, ErrInvalid) {
			t.Errorf("sweep %d: %v", bad, err)
		}
	}
}

func TestGenerateSnapshotAndOptions(t *testing.T) {
	jobs, err := Generate(Config{Jobs: 5, ClusterGPUs: 12, GPUsPerServer: 2, Models: []string{"GPT3", "VGG16"},
		MinIterations: 10, MaxIterations: 10, GPUChoices: []int{2, 4}})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Arrival != 0 || j.Iterations != 10 {
			t.Fatalf("%+v", j)
		}
		// GPT3 needs 2 servers: 4 GPUs on 2-GPU servers.
		if j.Model == "GPT3" && j.GPUs != 4 {
			t.Fatalf("%+v", j)
		}
	}
	if Servers(5, 2) != 3 || Servers(4, 2) != 2 || Servers(1, 1) != 1 {
		t.Fatal("Servers")
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{ClusterGPUs: 24, Models: []string{"AlexNet"}},
		{ClusterGPUs: 24, Models: []string{}},
		{ClusterGPUs: 24, Load: -1},
		{ClusterGPUs: 24, Load: math.NaN()},
		{ClusterGPUs: 24, Load: 1e-300}, // arrivals past what a Duration holds
		{ClusterGPUs: 24, Jobs: -1},
		{ClusterGPUs: 24, MinIterations: 10, MaxIterations: 5},
		{ClusterGPUs: 24, GPUChoices: []int{0}},
		{ClusterGPUs: 24, GPUChoices: []int{}},
		{ClusterGPUs: 24, GPUsPerServer: -1},
		{ClusterGPUs: 24, Models: []string{"GPT3"}, GPUChoices: []int{1}}, // GPT3 needs 2 servers
		{ClusterGPUs: 1, Models: []string{"GPT3"}},
	} {
		if _, err := Generate(cfg); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnknownModel) {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

func TestBatchChoices(t *testing.T) {
	m, _ := Lookup("VGG16")
	if got := m.BatchChoices(); !slices.Equal(got, []int{512, 941, 1371, 1800}) {
		t.Fatalf("%v", got)
	}
	x, _ := Lookup("XLM")
	if got := x.BatchChoices(); !slices.Equal(got, []int{4, 13, 23, 32}) {
		t.Fatalf("%v", got)
	}
}

// The dynamic trace: a Poisson background, and the arriving jobs from its
// middle job's arrival on, in order, every 30 s; deterministic in the seed.
func TestGenerateDynamic(t *testing.T) {
	d := Dynamic{Base: Config{Jobs: 20, ClusterGPUs: 24, Seed: 3}}
	jobs, err := GenerateDynamic(d)
	if err != nil {
		t.Fatal(err)
	}
	bg, _ := Generate(Config{Jobs: 20, Load: 0.9, ClusterGPUs: 24, Seed: 3})
	if len(jobs) != 24 {
		t.Fatalf("%d jobs", len(jobs))
	}
	var arrived []Job
	for i, j := range jobs {
		if j.ID != i || (i > 0 && j.Arrival < jobs[i-1].Arrival) {
			t.Fatalf("job %d: %+v", i, j)
		}
		if j.GPUs == 3 && (j.Model == "DLRM" || j.Model == "ResNet50") && j.Batch == lookupModel(t, j.Model).BatchChoices()[2] {
			arrived = append(arrived, j)
		}
	}
	start := bg[10].Arrival
	if len(arrived) < 4 || arrived[len(arrived)-4].Arrival != start || arrived[len(arrived)-1].Arrival != start+90*time.Second {
		t.Fatalf("arrivals %+v (the background's middle job at %v)", arrived, start)
	}
	again, _ := GenerateDynamic(d)
	if !slices.Equal(jobs, again) {
		t.Fatal("not deterministic")
	}
	for _, bad := range []Dynamic{
		{Base: Config{ClusterGPUs: 24}, GPUs: 30},
		{Base: Config{ClusterGPUs: 24}, Arrive: []string{"AlexNet"}},
		{Base: Config{ClusterGPUs: 24}, Arrive: []string{"DLRM"}, GPUs: 1},
		{Base: Config{ClusterGPUs: 24}, Every: -1},
		{Base: Config{}},
	} {
		if _, err := GenerateDynamic(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func lookupModel(t *testing.T, name string) Model {
	m, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
