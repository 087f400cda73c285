package netsim

import (
	"fmt"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// Connection is one connection of a communication step: Src sends to Dst
// (servers) over Links (directed link indices, in order).
type Connection struct {
	Src, Dst int
	Links    []int
}

// Layout is a job on concrete servers as [Run] routes it, for exporting a
// simulation to another network model (package ns3).
type Layout struct {
	Steps []workload.Step
	// Conns[i] are step i's connections, each carrying Steps[i].Bits at
	// most at Steps[i].Peak; nil for compute steps and steps without
	// traffic. A ring's are its hops in ring order (server k to k+1, the
	// last to the first); Run moves them in lock step, as one flow over
	// all of their links.
	Conns [][]Connection
}

// JobLayout returns the layout of job on servers (in the order Run uses:
// increasing, as [JobResult.Servers]) in topology t: the steps of its model
// at its batch size and the connections of each, routed as Run routes them.
func JobLayout(t *topology.Topology, job workload.Job, servers []int) (Layout, error) {
	m, err := workload.Lookup(job.Model)
	if err != nil {
		return Layout{}, err
	}
	steps, err := m.Iteration(job.Batch, len(servers))
	if err != nil {
		return Layout{}, err
	}
	n := len(servers)
	conn := func(a, b int) (Connection, error) {
		p, err := t.Route(servers[a], servers[b])
		if err != nil {
			return Connection{}, fmt.Errorf("%w: topology: %w", ErrInvalid, err)
		}
		return Connection{Src: servers[a], Dst: servers[b], Links: p}, nil
	}
	l := Layout{Steps: steps, Conns: make([][]Connection, len(steps))}
	for i, st := range steps {
		if st.Pattern == workload.Compute || st.Bits == 0 {
			continue
		}
		var pairs [][2]int
		switch st.Pattern {
		case workload.Ring:
			for a := range n {
				pairs = append(pairs, [2]int{a, (a + 1) % n})
			}
		case workload.Chain:
			for a := 0; a+1 < n; a++ {
				pairs = append(pairs, [2]int{a, a + 1})
			}
		case workload.AllToAll:
			for a := range n {
				for b := range n {
					if a != b {
						pairs = append(pairs, [2]int{a, b})
					}
				}
			}
		}
		for _, p := range pairs {
			c, err := conn(p[0], p[1])
			if err != nil {
				return Layout{}, err
			}
			l.Conns[i] = append(l.Conns[i], c)
		}
	}
	return l, nil
}
