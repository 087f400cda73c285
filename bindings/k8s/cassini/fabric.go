package cassini

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// fabric is the network the nodes' labels describe: every node's NIC, and
// above it one switch per domain of each tier, linked to the next tier by an
// uplink bundle. Every link is two directed links, up and down, since a ring
// all-reduce loads each direction separately. A bundle (all of a rack's
// uplinks to the spines, say) is modelled as one link of its total
// capacity: ECMP spreads a ring's flows over its members.
//
// Link layout: node i's NIC is links 2i (up) and 2i+1 (down); domain d of
// tier t has base[t]+2d (up) and base[t]+2d+1 (down).
type fabric struct {
	index map[string]int // node name -> node
	names []string
	dom   [][]int32 // tier -> node -> domain
	base  []int     // tier -> its first link
	links []candidate.Link
	bad   []badLabel // nodes whose NIC label is not a speed: they use NodeGbps
}

// badLabel is a node whose NIC label could not be used.
type badLabel struct {
	node *v1.Node
	note string
}

// newFabric derives the fabric of nodes from their labels.
func newFabric(nodes []*v1.Node, c *config) *fabric {
	f := &fabric{index: make(map[string]int, len(nodes)), names: make([]string, len(nodes))}
	nic := make([]float64, len(nodes))
	for i, n := range nodes {
		f.index[n.Name] = i
		f.names[i] = n.Name
		nic[i] = c.nodeGbps
		if v, ok := n.Labels[c.nicLabel]; ok {
			if g, err := strconv.ParseFloat(v, 64); err == nil && g > 0 && g <= maxGbps {
				nic[i] = g
			} else {
				f.bad = append(f.bad, badLabel{n, fmt.Sprintf("label %s: %q is not a NIC speed in Gbps in (0, %g]; using nodeGbps %g", c.nicLabel, v, float64(maxGbps), c.nodeGbps)})
			}
		}
	}
	f.links = make([]candidate.Link, 2*len(nodes))
	for i := range nodes {
		u := capUnits(nic[i], c)
		f.links[2*i], f.links[2*i+1] = candidate.Link{Capacity: u}, candidate.Link{Capacity: u}
	}
	// A domain's key names it and every domain above it, so rack "r1" of
	// block A and rack "r1" of block B are different racks; a node without
	// the label is a domain of its own.
	keys := make([]string, len(nodes))
	f.dom = make([][]int32, len(c.tiers))
	f.base = make([]int, len(c.tiers))
	over := 1.0
	for t := len(c.tiers) - 1; t >= 0; t-- {
		label := c.tiers[t].Label
		for i, n := range nodes {
			v, ok := n.Labels[label]
			if !ok {
				v = "\x00node\x00" + n.Name
			}
			keys[i] += "\x00" + v
		}
		f.dom[t] = domains(keys)
	}
	for t, tier := range c.tiers {
		over *= tier.Oversubscription
		f.base[t] = len(f.links)
		n := 0
		for _, d := range f.dom[t] {
			n = max(n, int(d)+1)
		}
		sum := make([]float64, n)
		for i, d := range f.dom[t] {
			sum[d] += nic[i]
		}
		for _, s := range sum {
			g := s / over
			if tier.UplinkGbps > 0 {
				g = tier.UplinkGbps
			}
			u := capUnits(g, c)
			f.links = append(f.links, candidate.Link{Capacity: u}, candidate.Link{Capacity: u})
		}
	}
	return f
}

// domains numbers the distinct keys in sorted order.
func domains(keys []string) []int32 {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	d := make([]int32, len(keys))
	for i, k := range keys {
		j, _ := slices.BinarySearch(sorted, k)
		d[i] = int32(j)
	}
	return d
}

// capUnits converts Gbps to whole demand units, within what a link search
// can represent.
func capUnits(gbps float64, c *config) int32 {
	u := math.Round(gbps * profile.Gbps / c.quantum.Unit)
	return int32(min(max(u, 1), profile.MaxUnits))
}

// tiers returns the number of tiers.
func (f *fabric) tiers() int { return len(f.dom) }

// less orders nodes by locality: top tier's domain first, down to the node.
func (f *fabric) less(a, b int) int {
	for t := len(f.dom) - 1; t >= 0; t-- {
		if c := cmp.Compare(f.dom[t][a], f.dom[t][b]); c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}

// ring returns the links a ring all-reduce over nodes crosses, sorted and
// without repeats. The ring visits the nodes in locality order (as NCCL
// builds rings: each rack's nodes in a row), so it leaves a domain once and
// enters it once; pods on the same node talk locally. dst is reused.
func (f *fabric) ring(nodes []int, dst []int) []int {
	dst = dst[:0]
	ns := slices.Clone(nodes)
	slices.SortFunc(ns, f.less)
	ns = slices.Compact(ns)
	if len(ns) < 2 {
		return dst
	}
	for i, u := range ns {
		v := ns[(i+1)%len(ns)]
		dst = append(dst, 2*u, 2*v+1)
		for t := range f.dom {
			du, dv := int(f.dom[t][u]), int(f.dom[t][v])
			if du == dv {
				break
			}
			dst = append(dst, f.base[t]+2*du, f.base[t]+2*dv+1)
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

// span counts the distinct domains of nodes at each tier, bottom up: how
// far a placement reaches.
func (f *fabric) span(nodes []int) []int {
	s := make([]int, len(f.dom))
	seen := make([]int32, 0, len(nodes))
	for t := range f.dom {
		seen = seen[:0]
		for _, n := range nodes {
			seen = append(seen, f.dom[t][n])
		}
		slices.Sort(seen)
		s[t] = len(slices.Compact(seen))
	}
	return s
}

// linkName names link li for logs and errors: "node-3>", ">node-3",
// "tier0/2>", ">tier0/2".
func (f *fabric) linkName(li int) string {
	if li < 2*len(f.names) {
		if li%2 == 0 {
			return f.names[li/2] + ">"
		}
		return ">" + f.names[li/2]
	}
	t := len(f.base) - 1
	for t > 0 && li < f.base[t] {
		t--
	}
	d := (li - f.base[t]) / 2
	var b strings.Builder
	if (li-f.base[t])%2 == 1 {
		b.WriteByte('>')
	}
	b.WriteString("tier")
	b.WriteString(strconv.Itoa(t))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(d))
	if (li-f.base[t])%2 == 0 {
		b.WriteByte('>')
	}
	return b.String()
}
