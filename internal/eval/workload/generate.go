package workload

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Job is one training job of a trace.
type Job struct {
	ID         int           // index in the trace, in arrival order
	Model      string        // a name from Models
	GPUs       int           // GPUs it is granted
	Batch      int           // batch size per GPU
	Iterations int           // iterations it trains for
	Arrival    time.Duration // since the start of the trace
}

// Servers returns how many servers a job of gpus GPUs spans on servers of
// gpusPerServer GPUs each, packed.
func Servers(gpus, gpusPerServer int) int { return (gpus + gpusPerServer - 1) / gpusPerServer }

// Defaults of the zero Config.
const (
	DefaultJobs          = 40
	DefaultMinIterations = 200
	DefaultMaxIterations = 1000
)

// DefaultGPUChoices are the GPU counts a job is granted, equally likely: 1
// to 12 as in the paper, in the sizes a scheduler commonly grants.
var DefaultGPUChoices = []int{1, 2, 3, 4, 6, 8, 12}

// Config configures [Generate]. The zero value is not usable: ClusterGPUs
// is required.
type Config struct {
	Models []string // models to draw from, equally likely (list one twice to double its odds); nil means all 13
	Jobs   int      // number of jobs; 0 means DefaultJobs

	// Load is the average fraction of the cluster's GPUs the trace keeps
	// busy if every job ran at its uncontended speed (the paper: 0.8-1);
	// arrivals are Poisson at the rate that gives it. 0 means a snapshot:
	// every job arrives at time 0.
	Load          float64
	ClusterGPUs   int // GPUs in the cluster (> 0)
	GPUsPerServer int // 0 means 1
	GPUChoices    []int

	MinIterations, MaxIterations int // each job's iterations, uniform; 0 means the defaults (200, 1000)
	Seed                         uint64

	// Sweep makes the jobs arrive in sweeps of this many copies of one
	// configuration (model, batch size, GPUs, iterations), all at once, as
	// a hyperparameter search launches them; the sweeps arrive as a Poisson
	// process at the rate that keeps Load. 0 or 1 means one job per arrival
	// (the paper's trace, and the same trace as before Sweep existed).
	Sweep int
}

// BatchChoices are the batch sizes a generated job of m may get, equally
// likely: four evenly spaced over Table 3's range.
func (m Model) BatchChoices() []int {
	lo, hi := m.Batch[0], m.Batch[1]
	out := make([]int, 0, 4)
	for k := range 4 {
		b := lo + int(math.Round(float64(k*(hi-lo))/3))
		if len(out) == 0 || out[len(out)-1] != b {
			out = append(out, b)
		}
	}
	return out
}

type choice struct {
	model Model
	gpus  []int // granted GPU counts this model can run with
}

// Generate returns a trace of jobs sorted by arrival, deterministic in cfg.
func Generate(cfg Config) ([]Job, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	choices := make([]choice, len(c.Models))
	// Expected GPU-time of one job, to set the arrival rate: the mean over
	// models, batch sizes and GPU counts (each equally likely) of GPUs x
	// uncontended iteration time x mean iterations.
	var work float64
	for i, name := range c.Models {
		m, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		ch := choice{model: m}
		for _, g := range c.GPUChoices {
			if Servers(g, c.GPUsPerServer) >= m.MinServers && g <= c.ClusterGPUs {
				ch.gpus = append(ch.gpus, g)
			}
		}
		if len(ch.gpus) == 0 {
			return nil, fmt.Errorf("%w: no GPU count in %v fits %s (at least %d servers of %d GPUs) on %d GPUs", ErrInvalid, c.GPUChoices, name, m.MinServers, c.GPUsPerServer, c.ClusterGPUs)
		}
		var w float64
		batches := m.BatchChoices()
		for _, g := range ch.gpus {
			for _, b := range batches {
				steps, err := m.Iteration(b, Servers(g, c.GPUsPerServer))
				if err != nil {
					return nil, err
				}
				w += float64(float64(g) * Period(steps).Seconds())
			}
		}
		work += w / float64(len(ch.gpus)*len(batches))
		choices[i] = ch
	}
	work = work / float64(len(choices)) * float64(c.MinIterations+c.MaxIterations) / 2

	rng := rand.New(rand.NewPCG(c.Seed, 0x5ca1ab1e))
	var rate float64 // arrivals per second
	sweep := max(c.Sweep, 1)
	if c.Load > 0 {
		rate = c.Load * float64(c.ClusterGPUs) / work / float64(sweep)
	}
	jobs := make([]Job, c.Jobs)
	var t float64
	for i := range jobs {
		if i%sweep != 0 { // a copy of its sweep's first job
			jobs[i] = jobs[i-1]
			jobs[i].ID = i
			continue
		}
		ch := choices[rng.IntN(len(choices))]
		batches := ch.model.BatchChoices()
		jobs[i] = Job{
			ID:         i,
			Model:      ch.model.Name,
			GPUs:       ch.gpus[rng.IntN(len(ch.gpus))],
			Batch:      batches[rng.IntN(len(batches))],
			Iterations: c.MinIterations + rng.IntN(c.MaxIterations-c.MinIterations+1),
		}
		if rate > 0 {
			if i > 0 {
				t += rng.ExpFloat64() / rate
			}
			// A tiny load spaces arrivals past what a Duration holds (the
			// conversion would then differ between architectures).
			if !(t <= maxArrival.Seconds()) {
				return nil, fmt.Errorf("%w: load %v puts job %d's arrival past %v", ErrInvalid, c.Load, i, maxArrival)
			}
			jobs[i].Arrival = time.Duration(math.Round(t * 1e9))
		}
	}
	return jobs, nil
}

// maxArrival bounds a generated arrival time (about 31.7 years).
const maxArrival = time.Duration(1e18)

func (cfg Config) normalize() (Config, error) {
	if cfg.Models == nil {
		for _, m := range models {
			cfg.Models = append(cfg.Models, m.Name)
		}
	}
	if len(cfg.Models) == 0 {
		return cfg, fmt.Errorf("%w: no models", ErrInvalid)
	}
	if cfg.Jobs == 0 {
		cfg.Jobs = DefaultJobs
	}
	if cfg.GPUsPerServer == 0 {
		cfg.GPUsPerServer = 1
	}
	if cfg.GPUChoices == nil {
		cfg.GPUChoices = DefaultGPUChoices
	}
	if cfg.MinIterations == 0 {
		cfg.MinIterations = DefaultMinIterations
	}
	if cfg.MaxIterations == 0 {
		cfg.MaxIterations = max(DefaultMaxIterations, cfg.MinIterations)
	}
	switch {
	case cfg.Jobs < 0 || cfg.Jobs > 1<<20:
		return cfg, fmt.Errorf("%w: jobs %d outside [1, 2^20]", ErrInvalid, cfg.Jobs)
	case !(cfg.Load >= 0) || cfg.Load > 100:
		return cfg, fmt.Errorf("%w: load %v outside [0, 100]", ErrInvalid, cfg.Load)
	case cfg.ClusterGPUs <= 0:
		return cfg, fmt.Errorf("%w: cluster GPUs %d", ErrInvalid, cfg.ClusterGPUs)
	case cfg.GPUsPerServer < 0:
		return cfg, fmt.Errorf("%w: GPUs per server %d", ErrInvalid, cfg.GPUsPerServer)
	case cfg.MinIterations < 1 || cfg.MaxIterations < cfg.MinIterations || cfg.MaxIterations > 1<<30:
		return cfg, fmt.Errorf("%w: iterations [%d, %d]", ErrInvalid, cfg.MinIterations, cfg.MaxIterations)
	case cfg.Sweep < 0 || cfg.Sweep > cfg.Jobs:
		return cfg, fmt.Errorf("%w: sweep %d outside [0, jobs %d]", ErrInvalid, cfg.Sweep, cfg.Jobs)
	case len(cfg.GPUChoices) == 0:
		return cfg, fmt.Errorf("%w: no GPU choices", ErrInvalid)
	}
	for _, g := range cfg.GPUChoices {
		if g < 1 || g > 1<<16 {
			return cfg, fmt.Errorf("%w: GPU choice %d", ErrInvalid, g)
		}
	}
	return cfg, nil
}

// Dynamic configures [GenerateDynamic]: the paper's dynamic trace, a new
// set of jobs arriving into a busy cluster.
type Dynamic struct {
	// Base is the background, a Poisson trace as [Generate] draws it (its
	// Load 0 means 0.9): it keeps the cluster busy, and its arrivals and
	// departures fragment the free servers as a scheduler's history does.
	Base Config
	// Arrive lists the models that arrive, in order; nil means DLRM,
	// ResNet50, DLRM, ResNet50 (the paper's Fig. 13).
	Arrive []string
	// GPUs is each arriving job's GPU count; 0 means 3 (Fig. 16's).
	GPUs int
	// Every is the time between arrivals; 0 means 30 s. The first arrives
	// with the background's middle job, when the cluster is busy.
	Every time.Duration
}

// GenerateDynamic returns a dynamic trace, deterministic in d: the
// background, then the Arrive jobs (batch: the middle of their
// BatchChoices; iterations drawn like the others), sorted by arrival.
func GenerateDynamic(d Dynamic) ([]Job, error) {
	if d.Arrive == nil {
		d.Arrive = []string{"DLRM", "ResNet50", "DLRM", "ResNet50"}
	}
	if d.GPUs == 0 {
		d.GPUs = 3
	}
	if d.Every == 0 {
		d.Every = 30 * time.Second
	}
	if d.Base.Load == 0 {
		d.Base.Load = 0.9
	}
	switch {
	case d.GPUs < 1 || d.GPUs > d.Base.ClusterGPUs:
		return nil, fmt.Errorf("%w: arriving jobs of %d GPUs on %d", ErrInvalid, d.GPUs, d.Base.ClusterGPUs)
	case d.Every < 0 || d.Every > maxArrival/time.Duration(2*len(d.Arrive)+2):
		return nil, fmt.Errorf("%w: arrivals every %v", ErrInvalid, d.Every)
	}
	jobs, err := Generate(d.Base)
	if err != nil {
		return nil, err
	}
	c, _ := d.Base.normalize() // validated by Generate
	start := jobs[len(jobs)/2].Arrival
	if start > maxArrival/2 {
		return nil, fmt.Errorf("%w: the background runs past %v", ErrInvalid, maxArrival/2)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0xd1a))
	for k, name := range d.Arrive {
		m, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		if Servers(d.GPUs, c.GPUsPerServer) < m.MinServers {
			return nil, fmt.Errorf("%w: %s needs %d servers, %d GPUs take %d", ErrInvalid, name, m.MinServers, d.GPUs, Servers(d.GPUs, c.GPUsPerServer))
		}
		bs := m.BatchChoices()
		jobs = append(jobs, Job{Model: name, GPUs: d.GPUs, Batch: bs[len(bs)/2],
			Iterations: c.MinIterations + rng.IntN(c.MaxIterations-c.MinIterations+1), Arrival: start + time.Duration(k)*d.Every})
	}
	slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Arrival, b.Arrival) })
	for i := range jobs {
		jobs[i].ID = i
	}
	return jobs, nil
}
