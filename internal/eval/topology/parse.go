package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// Syntax is the text [Parse] reads, for usage messages.
const Syntax = "paper or clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]]"

// Parse builds the fabric a command line names: "paper" ([Paper]) or
// "clos:PODS,TORS,SERVERS,AGGS,CORES[,GBPS[,UPLINK_GBPS]]", a Clos fabric
// of PODS pods, each of TORS ToRs of SERVERS servers and AGGS aggregation
// switches, under CORES core switches (0: a two-tier pod). Server links run
// at GBPS (default 50) and the links above the ToRs at UPLINK_GBPS (default
// GBPS). The result's Name is s.
func Parse(s string) (*Topology, error) {
	if s == "paper" {
		return Paper(), nil
	}
	spec, ok := strings.CutPrefix(s, "clos:")
	if !ok {
		return nil, fmt.Errorf("%w: %q: want %s", ErrInvalid, s, Syntax)
	}
	parts := strings.Split(spec, ",")
	if len(parts) < 5 || len(parts) > 7 {
		return nil, fmt.Errorf("%w: %q: want 5 to 7 numbers after \"clos:\"", ErrInvalid, s)
	}
	var n [5]int
	for i := range n {
		v, err := strconv.Atoi(parts[i])
		if err != nil || v < 0 || v > 1<<16 {
			return nil, fmt.Errorf("%w: %q: %q is not a count", ErrInvalid, s, parts[i])
		}
		n[i] = v
	}
	gbps, up := 50.0, 0.0
	for i, p := range parts[5:] {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0) || v > 1e6 {
			return nil, fmt.Errorf("%w: %q: %q is not a link speed in Gbps", ErrInvalid, s, p)
		}
		if i == 0 {
			gbps = v
		} else {
			up = v
		}
	}
	if up == 0 {
		up = gbps
	}
	t, err := New(Spec{Pods: n[0], ToRsPerPod: n[1], ServersPerToR: n[2], AggsPerPod: n[3], Cores: n[4],
		ServerGbps: gbps, ToRGbps: up, AggGbps: up})
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	t.Name = s
	return t, nil
}
