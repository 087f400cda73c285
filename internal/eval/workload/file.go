package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// JobFile is a trace of the user's own: models given by their measured
// iteration (profiles) and the jobs that run them (arrivals). [ReadJobs]
// reads it as JSON:
//
//	{"models": [{"name": "my-net", "servers": 2,
//	             "phases": [{"ms": 150}, {"ms": 118, "gbps": 40}]}],
//	 "jobs": [{"model": "my-net", "gpus": 2, "iterations": 500},
//	          {"model": "VGG19", "gpus": 4, "batch": 1400, "iterations": 300, "arrival_s": 60}]}
type JobFile struct {
	Models []ModelSpec `json:"models,omitempty"`
	Jobs   []JobSpec   `json:"jobs"`
}

// ModelSpec is a model of the user's: one iteration measured on Servers
// servers, alone on the network, as compute phases (no gbps) and
// communication phases (gbps sent by each server at its NIC, in a ring
// all-reduce unless Pattern says otherwise). On another server count a
// communication phase carries the payload its pattern carries there (a
// ring's hops 2(n-1)/n of the gradient), as the built-in models do;
// compute phases do not change. Its jobs take no batch size.
type ModelSpec struct {
	Name       string      `json:"name"`
	Servers    int         `json:"servers,omitempty"`     // the server count the phases were measured on; 0 means 2
	MinServers int         `json:"min_servers,omitempty"` // fewest servers a job of it spans; 0 means 1
	Phases     []PhaseSpec `json:"phases"`
}

// PhaseSpec is one phase of a [ModelSpec]'s iteration.
type PhaseSpec struct {
	Ms      float64 `json:"ms"`                // milliseconds
	Gbps    float64 `json:"gbps,omitempty"`    // gigabits per second per server; 0 is a compute phase
	Pattern string  `json:"pattern,omitempty"` // ring (the default), chain or all-to-all
}

// JobSpec is one job of a [JobFile].
type JobSpec struct {
	Model      string  `json:"model"`               // a built-in model (Models) or one of the file's
	GPUs       int     `json:"gpus"`                // GPUs it is granted
	Batch      int     `json:"batch,omitempty"`     // built-in models: per GPU, in Table 3's range; 0 means the model's reference batch
	Iterations int     `json:"iterations"`          // iterations it trains for
	ArrivalS   float64 `json:"arrival_s,omitempty"` // seconds since the start of the trace
}

// FileOptions are the limits [ReadJobs] checks a file's numbers against,
// so that a number in the wrong unit is refused with a hint, not
// simulated.
type FileOptions struct {
	// Tick is the profiles' tick: an iteration under MinIterationTicks of
	// it is refused (0 means 1 ms).
	Tick time.Duration
	// MaxGbps is the fastest link of the fabric: a phase sending faster is
	// refused (0 means no check).
	MaxGbps float64
}

// MinIterationTicks is the shortest iteration a file's model may have, in
// profile ticks: shorter, its circle has too few points to mean anything,
// and it is far more often seconds typed where milliseconds are meant.
const MinIterationTicks = 10

// maxFileBytes bounds a job file (a trace of 100 000 jobs is ~10 MB).
const maxFileBytes = 64 << 20

// ReadJobs reads a [JobFile] and returns its jobs, in the file's order
// (IDs 0, 1, ...), and its models. Unknown keys are refused; every error
// names the field by its JSON path.
func ReadJobs(r io.Reader, o FileOptions) ([]Job, []Model, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(b) > maxFileBytes {
		return nil, nil, fmt.Errorf("%w: more than %d MB", ErrInvalid, maxFileBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f JobFile
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("%w: more than one JSON value", ErrInvalid)
	}
	return f.Parse(o)
}

// Parse checks f and returns its jobs and models.
func (f JobFile) Parse(o FileOptions) ([]Job, []Model, error) {
	if o.Tick <= 0 {
		o.Tick = time.Millisecond
	}
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalid, field}, a...)...)
	}
	var own []Model
	for i, ms := range f.Models {
		m, err := ms.model(fmt.Sprintf("models[%d]", i), o, bad)
		if err != nil {
			return nil, nil, err
		}
		if slices.ContainsFunc(own, func(x Model) bool { return x.Name == m.Name }) {
			return nil, nil, bad(fmt.Sprintf("models[%d].name", i), "%q twice", m.Name)
		}
		own = append(own, m)
	}
	if len(f.Jobs) == 0 {
		return nil, nil, bad("jobs", "none")
	}
	jobs := make([]Job, len(f.Jobs))
	for i, js := range f.Jobs {
		p := fmt.Sprintf("jobs[%d]", i)
		k := slices.IndexFunc(own, func(x Model) bool { return x.Name == js.Model })
		var m Model
		if k >= 0 {
			m = own[k]
		} else {
			var err error
			if m, err = Lookup(js.Model); err != nil {
				return nil, nil, bad(p+".model", "%q is neither a built-in model (%s) nor one of the file's models", js.Model, strings.Join(ModelNames(), ", "))
			}
		}
		switch {
		case js.GPUs < 1:
			return nil, nil, bad(p+".gpus", "%d (want 1 or more)", js.GPUs)
		case js.Iterations < 1:
			return nil, nil, bad(p+".iterations", "%d (want 1 or more)", js.Iterations)
		case !(js.ArrivalS >= 0) || js.ArrivalS > 1e7:
			return nil, nil, bad(p+".arrival_s", "%v s (want 0 to 1e7 seconds)", js.ArrivalS)
		case k >= 0 && js.Batch != 0:
			return nil, nil, bad(p+".batch", "%d: a model of the file's has no batch size (its phases are one iteration)", js.Batch)
		}
		batch := js.Batch
		if batch == 0 {
			batch = m.RefBatch
		}
		if batch < m.Batch[0] || batch > m.Batch[1] {
			return nil, nil, bad(p+".batch", "%d outside %s's range [%d, %d] (per GPU, Table 3)", batch, m.Name, m.Batch[0], m.Batch[1])
		}
		jobs[i] = Job{ID: i, Model: m.Name, GPUs: js.GPUs, Batch: batch, Iterations: js.Iterations,
			Arrival: time.Duration(math.Round(js.ArrivalS * 1e9))}
	}
	return jobs, own, nil
}

// model checks a model of the file (at path p).
func (s ModelSpec) model(p string, o FileOptions, bad func(string, string, ...any) error) (Model, error) {
	switch {
	case s.Name == "":
		return Model{}, bad(p+".name", "empty")
	case slices.Contains(ModelNames(), s.Name):
		return Model{}, bad(p+".name", "%q is a built-in model (name yours differently)", s.Name)
	case s.Servers < 0 || s.Servers > 1<<12:
		return Model{}, bad(p+".servers", "%d (want 1 to 4096, or 0 for 2)", s.Servers)
	case s.MinServers < 0 || s.MinServers > 1<<12:
		return Model{}, bad(p+".min_servers", "%d (want 1 to 4096, or 0 for 1)", s.MinServers)
	case len(s.Phases) == 0:
		return Model{}, bad(p+".phases", "none")
	}
	m := Model{Name: s.Name, Parallelism: DataParallel, Batch: [2]int{1, 1}, RefBatch: 1, RefServers: s.Servers,
		MinServers: max(s.MinServers, 1), Note: "the user's profile"}
	if m.RefServers == 0 {
		m.RefServers = 2
	}
	var total time.Duration
	for k, ph := range s.Phases {
		f := fmt.Sprintf("%s.phases[%d]", p, k)
		if !(ph.Ms > 0) || ph.Ms > 1e7 {
			return Model{}, bad(f+".ms", "%v (want milliseconds, above 0 and at most 1e7)", ph.Ms)
		}
		if !(ph.Gbps >= 0) || math.IsInf(ph.Gbps, 0) {
			return Model{}, bad(f+".gbps", "%v (want gigabits per second, 0 or more)", ph.Gbps)
		}
		if o.MaxGbps > 0 && ph.Gbps > o.MaxGbps {
			return Model{}, bad(f+".gbps", "%v Gbps is above every link of the fabric (the fastest: %v Gbps) — gbps are gigabits per second%s",
				ph.Gbps, o.MaxGbps, didYouMean(ph.Gbps/1000, ph.Gbps/1000 <= o.MaxGbps, "Mbps typed as Gbps"))
		}
		pat := Compute
		if ph.Gbps > 0 {
			var err error
			if pat, err = parsePattern(ph.Pattern); err != nil {
				return Model{}, bad(f+".pattern", "%v", err)
			}
		} else if ph.Pattern != "" {
			return Model{}, bad(f+".pattern", "%q on a compute phase (no gbps)", ph.Pattern)
		}
		d := time.Duration(math.Round(ph.Ms * 1e6))
		total += d
		m.Phases = append(m.Phases, Phase{Scope: All, Pattern: pat, Duration: d, Gbps: ph.Gbps})
	}
	if least := MinIterationTicks * o.Tick; total < least {
		ms := float64(total) / 1e6
		return Model{}, bad(p+".phases", "an iteration of %v ms is under %d ticks of %v — ms are milliseconds%s (for iterations this short, lower -tick)",
			ms, MinIterationTicks, o.Tick, didYouMean(ms*1000, ms*1000 >= float64(least)/1e6, "seconds typed as ms"))
	}
	if m.RefServers < 2 && slices.ContainsFunc(m.Phases, func(ph Phase) bool { return ph.Pattern != Compute }) {
		return Model{}, bad(p+".servers", "%d: a model with communication phases is measured on 2 servers or more", m.RefServers)
	}
	return m, nil
}

// didYouMean is a hint for a number in the wrong unit, if v is plausible.
func didYouMean(v float64, plausible bool, why string) string {
	if !plausible {
		return ""
	}
	return fmt.Sprintf("; did you mean %v (%s)?", v, why)
}

// parsePattern parses a communication phase's pattern; "" is a ring.
func parsePattern(s string) (Pattern, error) {
	switch s {
	case "", "ring":
		return Ring, nil
	case "chain":
		return Chain, nil
	case "all-to-all":
		return AllToAll, nil
	}
	return 0, fmt.Errorf("%q (want ring, chain or all-to-all)", s)
}

// ModelNames lists the built-in models' names, in Table 3's order.
func ModelNames() []string {
	out := make([]string, len(models))
	for i, m := range models {
		out[i] = m.Name
	}
	return out
}
