//go:build linux

package testbed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/orrery/orrery/internal/eval/topology"
)

// Prefix starts the name of every network namespace a testbed creates:
// "orrery-tb-PID-RAND-...", so that parallel runs never collide and a run
// can tell the leftovers of a killed one (its PID no longer a testbed) from
// those of a live one.
const Prefix = "orrery-tb-"

// Frame sizes at MTU 9000: a full TCP segment carries 9000 bytes less the
// IP and TCP headers and the timestamp option (52), and leaves a veth as a
// frame of 9000 plus the 14-byte Ethernet header, which is what HTB counts.
const (
	frameBytes   = 9000 + 14
	payloadBytes = 9000 - 52
)

// FabricOptions configure a fabric.
type FabricOptions struct {
	// Scale divides every link's rate (the jobs' bytes are divided alike,
	// so durations stay); 0 means DefaultScale.
	Scale float64
	// QueueBytes is each port's drop-tail buffer; 0 means 32 ms at the
	// port's rate, the packet-level cross-check's 4 MB at 1 Gbps.
	QueueBytes int
	// ECN marks instead of dropping: a RED queue marking every ECN-capable
	// packet above QueueBytes/4 (DCTCP's step marking). It needs the
	// kernel's RED (Kernel.ECN); false is drop-tail.
	ECN bool
}

// DefaultScale divides the paper's 50 Gbps links down to 200 Mbit/s: two
// jobs of Fig. 2 cost the host about a tenth of a core at MTU 9000.
const DefaultScale = 250

// Fabric is a topology built in network namespaces: one per server (its
// NIC a veth, eth0 in effect), one holding every switch as a Linux bridge;
// every directed link is the egress of a veth end, shaped by HTB to the
// link's scaled rate (in payload bytes: HTB counts frames) over a
// drop-tail (or RED) queue. The topology must be a tree (one aggregation
// switch per pod, at most one core): bridges forward on the one path there
// is, which is then the topology's route.
type Fabric struct {
	Name   string // the namespaces' common prefix
	Topo   *topology.Topology
	Server []string     // per server, its namespace
	Addr   []netip.Addr // per server, its address
	Switch string       // the switches' namespace
	opt    FabricOptions
	rate   []float64 // per directed link, payload bits per second
	closed bool
}

// port is the device whose egress carries directed link li, and its
// namespace.
func (f *Fabric) port(li int) (ns, dev string) {
	from := f.Topo.Links[li].From
	if from < f.Topo.Servers {
		return f.Server[from], "l" + strconv.Itoa(li)
	}
	return f.Switch, "l" + strconv.Itoa(li)
}

// Rate returns directed link li's shaped rate in payload bits per second.
func (f *Fabric) Rate(li int) float64 { return f.rate[li] }

// NewName returns a fresh namespace prefix for this process.
func NewName() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return Prefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// Build creates the fabric of topo in namespaces named from name (see
// NewName). On an error it removes what it created.
func Build(ctx context.Context, name string, topo *topology.Topology, opt FabricOptions) (f *Fabric, err error) {
	if opt.Scale == 0 {
		opt.Scale = DefaultScale
	}
	if !(opt.Scale >= 1) || opt.QueueBytes < 0 {
		return nil, fmt.Errorf("testbed: scale %v (want >= 1), queue %d bytes", opt.Scale, opt.QueueBytes)
	}
	if len(topo.Links)/2 != len(topo.Nodes)-1 {
		return nil, fmt.Errorf("testbed: the fabric %q has %d physical links for %d nodes: not a tree (bridges need one aggregation switch per pod and at most one core)",
			topo.Name, len(topo.Links)/2, len(topo.Nodes))
	}
	if topo.Servers > 250*250 {
		return nil, fmt.Errorf("testbed: %d servers", topo.Servers)
	}
	f = &Fabric{Name: name, Topo: topo, Switch: name + "-sw", opt: opt, rate: make([]float64, len(topo.Links))}
	defer func() {
		if err != nil {
			_ = f.Close()
			f = nil
		}
	}()
	ip := func(args ...string) error { return run(ctx, "ip", args...) }
	for s := range topo.Servers {
		f.Server = append(f.Server, fmt.Sprintf("%s-s%d", name, s))
		f.Addr = append(f.Addr, netip.AddrFrom4([4]byte{10, 27, byte(s / 250), byte(s%250 + 1)}))
	}
	for _, ns := range append([]string{f.Switch}, f.Server...) {
		if err := ip("netns", "add", ns); err != nil {
			return nil, err
		}
		if err := ip("-n", ns, "link", "set", "lo", "up"); err != nil {
			return nil, err
		}
		// No IPv6 (its neighbour discovery would cross the shaped links).
		if err := run(ctx, "ip", "netns", "exec", ns, "sh", "-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"); err != nil {
			return nil, err
		}
	}
	for n := topo.Servers; n < len(topo.Nodes); n++ {
		br := "n" + strconv.Itoa(n)
		if err := ip("-n", f.Switch, "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0"); err != nil {
			return nil, err
		}
		if err := ip("-n", f.Switch, "link", "set", br, "mtu", "9000", "up"); err != nil {
			return nil, err
		}
	}
	for li := 0; li < len(topo.Links); li += 2 {
		l := topo.Links[li]
		nsA, devA := f.port(li)
		nsB, devB := f.port(li + 1)
		if err := ip("link", "add", devA, "netns", nsA, "type", "veth", "peer", "name", devB, "netns", nsB); err != nil {
			return nil, err
		}
		for _, end := range []struct {
			ns, dev string
			node    int
		}{{nsA, devA, l.From}, {nsB, devB, l.To}} {
			if err := ip("-n", end.ns, "link", "set", end.dev, "mtu", "9000", "gso_max_size", "9000", "gro_max_size", "9000"); err != nil {
				return nil, err
			}
			if end.node >= topo.Servers {
				if err := ip("-n", end.ns, "link", "set", end.dev, "master", "n"+strconv.Itoa(end.node)); err != nil {
					return nil, err
				}
			} else if err := ip("-n", end.ns, "addr", "add", f.Addr[end.node].String()+"/16", "dev", end.dev); err != nil {
				return nil, err
			}
			if err := ip("-n", end.ns, "link", "set", end.dev, "up"); err != nil {
				return nil, err
			}
		}
		for _, d := range []int{li, li + 1} {
			if err := f.shape(ctx, d); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// shape puts HTB at the link's scaled rate on the egress of directed link
// li, over a drop-tail (or RED) queue.
func (f *Fabric) shape(ctx context.Context, li int) error {
	ns, dev := f.port(li)
	payload := f.Topo.Links[li].Gbps * 1e9 / f.opt.Scale
	f.rate[li] = payload
	frame := payload * frameBytes / payloadBytes
	queue := f.opt.QueueBytes
	if queue == 0 {
		queue = int(math.Round(payload / 8 * 0.032))
	}
	queue = max(queue, 2*frameBytes)
	rate := strconv.FormatInt(int64(math.Round(frame)), 10) + "bit"
	burst := strconv.Itoa(2 * frameBytes)
	tc := func(args ...string) error { return run(ctx, "tc", append([]string{"-n", ns}, args...)...) }
	if err := tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1"); err != nil {
		return err
	}
	if err := tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate,
		"burst", burst, "cburst", burst, "quantum", strconv.Itoa(2*frameBytes)); err != nil {
		return err
	}
	leaf := []string{"bfifo", "limit", strconv.Itoa(queue)}
	if f.opt.ECN {
		k := max(queue/4, 2*frameBytes)
		leaf = []string{"red", "limit", strconv.Itoa(queue), "min", strconv.Itoa(k), "max", strconv.Itoa(k + 1),
			"avpkt", strconv.Itoa(frameBytes), "burst", "1", "bandwidth", rate, "probability", "1", "ecn"}
	}
	return tc(append([]string{"qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:"}, leaf...)...)
}

// PortStats are one directed link's counters, from its queue.
type PortStats struct {
	Link    string `json:"link"`
	Bytes   int64  `json:"bytes"`
	Packets int64  `json:"packets"`
	Drops   int64  `json:"drops"`
	Marks   int64  `json:"marks,omitempty"` // RED's ECN marks
	Backlog int64  `json:"max_backlog_bytes,omitempty"`
}

// Stats reads every directed link's queue counters (since the fabric was
// built).
func (f *Fabric) Stats(ctx context.Context) ([]PortStats, error) {
	out := make([]PortStats, len(f.Topo.Links))
	for li := range f.Topo.Links {
		ns, dev := f.port(li)
		b, err := output(ctx, "tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", dev)
		if err != nil {
			return nil, err
		}
		var qs []struct {
			Kind    string `json:"kind"`
			Handle  string `json:"handle"`
			Bytes   int64  `json:"bytes"`
			Packets int64  `json:"packets"`
			Drops   int64  `json:"drops"`
			Marked  int64  `json:"marked"`
		}
		if err := json.Unmarshal(b, &qs); err != nil {
			return nil, fmt.Errorf("testbed: tc -j qdisc show dev %s: %v", dev, err)
		}
		st := PortStats{Link: f.Topo.Links[li].ID}
		for _, q := range qs {
			if q.Handle == "10:" {
				st.Bytes, st.Packets, st.Drops, st.Marks = q.Bytes, q.Packets, q.Drops, q.Marked
			}
		}
		out[li] = st
	}
	return out, nil
}

// Close removes the fabric's namespaces (their veths and bridges go with
// them). Processes still inside keep a namespace alive until they exit:
// stop them first.
func (f *Fabric) Close() error {
	if f == nil || f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	for _, ns := range append([]string{f.Switch}, f.Server...) {
		if err := run(context.Background(), "ip", "netns", "del", ns); err != nil && !strings.Contains(err.Error(), "No such file") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Leftovers removes the namespaces of testbed runs whose process is gone
// (killed before it could clean up) and returns their names; those of live
// runs (another test in parallel) are left alone.
func Leftovers(ctx context.Context) ([]string, error) {
	b, err := output(ctx, "ip", "netns", "list")
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, line := range strings.Split(string(b), "\n") {
		ns, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(ns, Prefix)
		if !ok {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		if live(pid) {
			continue
		}
		if err := run(ctx, "ip", "netns", "del", ns); err == nil {
			removed = append(removed, ns)
		}
	}
	return removed, nil
}

// live reports whether pid is a running testbed process: a process of that
// PID whose command line names the testbed (a reused PID does not keep a
// dead run's namespaces).
func live(pid string) bool {
	if _, err := strconv.Atoi(pid); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + pid + "/cmdline")
	return err == nil && strings.Contains(string(b), "testbed")
}
