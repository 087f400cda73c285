package netsim

import (
	"context"
	"errors"
	"testing"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// A Topology built by hand (its fields are exported) has no routing index:
// topology.Route indexed a nil table and panicked instead of returning an
// error. The simulator must report such a topology, not crash.
func TestHandBuiltTopology(t *testing.T) {
	tp := &topology.Topology{
		Servers: 2,
		Nodes:   []topology.Node{{Name: "s0"}, {Name: "s1"}},
		Links:   []topology.Link{{ID: "s0>s1", From: 0, To: 1, Gbps: 50}, {ID: "s1>s0", From: 1, To: 0, Gbps: 50}},
	}
	_, err := Run(context.Background(), Config{Topology: tp, Jobs: []workload.Job{{ID: 0, Model: "VGG16", GPUs: 2, Batch: 1400, Iterations: 3}}})
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, topology.ErrInvalid) {
		t.Fatalf("err %v, want ErrInvalid wrapping topology.ErrInvalid", err)
	}
}
