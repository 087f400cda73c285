// Package plan is the time-shift plan the orrery scheduler plugin (package
// cassini beside it) writes on a training job's pods, and the training
// container's side of it: reading the plan from a downward API file and
// handing it to the time-shift agent (engine/cassini/agent).
//
// The plan is JSON in the pod annotation orrery.io/plan:
//
//	{"job":"default/bert","reference":"2025-01-01T00:00:00Z","shift":"150ms",
//	 "period":"255ms","commOffset":"141ms","score":1,"generation":3}
//
// Its iteration n should start at reference + shift + n*period, on clocks
// synchronized across the nodes; period is the iteration time as the
// scheduler quantized it, and commOffset where the communication phase starts
// within an iteration. The plugin rewrites the annotation when a later
// placement changes the job's shift (generation grows), and the kubelet
// refreshes the downward API file, so [Follow] re-plans the agent.
//
// This package depends on nothing from Kubernetes: a training container can
// import it without the scheduler's dependencies.
package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
	"github.com/orrery/orrery/internal/codec"
)

// Annotation is the default annotation the plugin writes the plan to.
const Annotation = "orrery.io/plan"

// ErrInvalid is wrapped by every error about a malformed plan.
var ErrInvalid = errors.New("plan: invalid")

// Plan is one job's time shift.
type Plan struct {
	Job        string        // namespace/name of the job
	Reference  time.Time     // the instant every job's shift counts from
	Shift      time.Duration // delay of the job's iterations, in [0, Period)
	Period     time.Duration // iteration time as quantized (and padded) by the scheduler, > 0
	CommOffset time.Duration // start of the communication phase within an iteration, in [0, Period)
	Score      float64       // compatibility score of the placement the plan belongs to (1: its shared links never exceed capacity)
	Generation int64         // grows each time the plugin changes the job's plan
}

// wire is the annotation's JSON: the reference in RFC 3339 (as time.Time
// encodes it), durations as Go duration strings, which round-trip exactly.
type wire struct {
	Job        string  `json:"job"`
	Reference  string  `json:"reference"`
	Shift      string  `json:"shift"`
	Period     string  `json:"period"`
	CommOffset string  `json:"commOffset"`
	Score      float64 `json:"score"`
	Generation int64   `json:"generation"`
}

// MarshalJSON encodes p as the annotation's JSON.
func (p Plan) MarshalJSON() ([]byte, error) {
	return codec.Marshal(wire{p.Job, p.Reference.UTC().Format(time.RFC3339Nano), p.Shift.String(), p.Period.String(), p.CommOffset.String(), p.Score, p.Generation})
}

// UnmarshalJSON decodes the annotation's JSON strictly and validates it
// (see [Parse]).
func (p *Plan) UnmarshalJSON(data []byte) error {
	q, err := Parse(data)
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Parse decodes and validates a plan, with orrery's strict JSON decoder:
// an unknown, repeated or case-folded key, null, text that is not valid
// UTF-8 (or holds an unpaired surrogate), a value of the wrong type and
// data after the plan are errors naming the field, as in orrery's
// requests.
func Parse(data []byte) (Plan, error) {
	var w wire
	if err := codec.Decode(data, &w); err != nil {
		return Plan{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	p := Plan{Job: w.Job, Score: w.Score, Generation: w.Generation}
	ref, err := time.Parse(time.RFC3339Nano, w.Reference)
	if err != nil && w.Reference != "" {
		return Plan{}, fmt.Errorf("%w: reference: %w", ErrInvalid, err)
	}
	p.Reference = ref
	for _, f := range []struct {
		name string
		s    string
		d    *time.Duration
	}{{"shift", w.Shift, &p.Shift}, {"period", w.Period, &p.Period}, {"commOffset", w.CommOffset, &p.CommOffset}} {
		v, err := time.ParseDuration(f.s)
		if err != nil {
			return Plan{}, fmt.Errorf("%w: %s: %w", ErrInvalid, f.name, err)
		}
		*f.d = v
	}
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// Validate checks what the agent needs: a reference instant, a positive
// period, and a shift and communication offset within it.
func (p Plan) Validate() error {
	switch {
	case p.Reference.IsZero():
		return fmt.Errorf("%w: reference: missing", ErrInvalid)
	case p.Period <= 0 || p.Period > agent.MaxPeriod:
		return fmt.Errorf("%w: period: %v is outside (0, %v]", ErrInvalid, p.Period, agent.MaxPeriod)
	case p.Shift < 0 || p.Shift >= p.Period:
		return fmt.Errorf("%w: shift: %v is outside [0, period %v)", ErrInvalid, p.Shift, p.Period)
	case p.CommOffset < 0 || p.CommOffset >= p.Period:
		return fmt.Errorf("%w: commOffset: %v is outside [0, period %v)", ErrInvalid, p.CommOffset, p.Period)
	}
	return nil
}

// Agent returns the agent's plan.
func (p Plan) Agent() agent.Plan {
	return agent.Plan{Reference: p.Reference, Shift: p.Shift, Period: p.Period, CommOffset: p.CommOffset}
}

// Read reads a plan from a file: the downward API volume file of the
// annotation (fieldRef metadata.annotations['orrery.io/plan']). A file that
// exists but is empty means the scheduler has not written a plan (the pod
// was placed without one): the error wraps os.ErrNotExist, like a missing
// file.
func Read(path string) (Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Plan{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Plan{}, fmt.Errorf("plan: %s is empty: %w", path, os.ErrNotExist)
	}
	p, err := Parse(data)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Await polls the plan file at path every interval until it holds a plan,
// and returns it; or ctx's error when ctx ends first (run unshifted then,
// and Follow later). The scheduler writes a pod's plan just after placing
// it, beside the binding rather than before it, so a container may start
// before its plan: the kubelet fills a downward API file when it mounts it
// and refreshes it on its own sync period (about a minute), so a plan that
// lands after the mount shows up that much later. A malformed plan is
// returned as an error at once.
func Await(ctx context.Context, path string, interval time.Duration) (Plan, error) {
	if interval <= 0 {
		return Plan{}, fmt.Errorf("%w: await interval %v", ErrInvalid, interval)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p, err := Read(path)
		if !errors.Is(err, os.ErrNotExist) {
			return p, err
		}
		select {
		case <-ctx.Done():
			return Plan{}, ctx.Err()
		case <-t.C:
		}
	}
}

// Follow polls the plan file at path every interval until ctx ends and
// installs it in a (agent.SetPlan) whenever it differs from a's plan: the
// scheduler re-plans a running job when a later placement changes its shift.
// It returns ctx's error; a file that is missing or malformed for a while is skipped (the
// agent keeps its plan) and reported to onError when it is not nil.
func Follow(ctx context.Context, path string, a *agent.Agent, interval time.Duration, onError func(error)) error {
	if interval <= 0 {
		return fmt.Errorf("%w: follow interval %v", ErrInvalid, interval)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p, err := Read(path)
		switch {
		case err != nil:
			if onError != nil {
				onError(err)
			}
		case !same(p.Agent(), a.Plan()):
			if err := a.SetPlan(p.Agent()); err != nil && onError != nil {
				onError(err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func same(a, b agent.Plan) bool {
	return a.Reference.Equal(b.Reference) && a.Shift == b.Shift && a.Period == b.Period && a.CommOffset == b.CommOffset
}
