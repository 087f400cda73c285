//go:build linux

package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// ErrUnavailable is wrapped by the error of a testbed that cannot run on
// this host (not root, no ip or tc, no network namespaces): the tests and
// make testbed skip on it.
var ErrUnavailable = errors.New("testbed: unavailable here")

// Kernel is what the host's kernel offers the testbed, detected, never
// assumed.
type Kernel struct {
	Release string
	// Congestion lists the congestion controls a socket may ask for
	// (TCP_CONGESTION): tcp_available_congestion_control.
	Congestion []string
	// Allowed lists those a namespace may make its default (a non-root
	// namespace may set only these): tcp_allowed_congestion_control.
	Allowed []string
	// Qdiscs says which queueing disciplines a veth accepts (htb, tbf,
	// bfifo, red, fq, fq_codel, netem), each tried on a throwaway veth in
	// a throwaway namespace.
	Qdiscs map[string]bool
}

// Has reports whether a socket may use the congestion control cc.
func (k Kernel) Has(cc string) bool { return slices.Contains(k.Congestion, cc) }

// ECN reports whether the kernel can run DCTCP over RED marking: both
// must be there.
func (k Kernel) ECN() bool { return k.Has("dctcp") && k.Qdiscs["red"] }

// Check returns an error wrapping ErrUnavailable when the testbed cannot
// run here: it needs root (namespaces, veths, qdiscs), ip and tc
// (iproute2), and chrt for real-time priority.
func Check() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: not root (namespaces, veths and qdiscs need CAP_NET_ADMIN)", ErrUnavailable)
	}
	for _, tool := range []string{"ip", "tc", "chrt"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s not found (iproute2 and util-linux)", ErrUnavailable, tool)
		}
	}
	if _, err := os.Stat("/proc/sys/net/ipv4/tcp_available_congestion_control"); err != nil {
		return fmt.Errorf("%w: no /proc/sys/net/ipv4 (%v)", ErrUnavailable, err)
	}
	return nil
}

// Detect probes the kernel: its congestion controls from /proc, its
// qdiscs by adding each to a veth in a namespace of its own (named with
// prefix, removed before it returns).
func Detect(ctx context.Context, prefix string) (Kernel, error) {
	if err := Check(); err != nil {
		return Kernel{}, err
	}
	var k Kernel
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		k.Release = strings.TrimSpace(string(b))
	}
	read := func(name string) []string {
		b, _ := os.ReadFile("/proc/sys/net/ipv4/" + name)
		return strings.Fields(string(b))
	}
	k.Congestion, k.Allowed = read("tcp_available_congestion_control"), read("tcp_allowed_congestion_control")
	ns := prefix + "-probe"
	if err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return k, fmt.Errorf("%w: ip netns add: %v", ErrUnavailable, err)
	}
	defer run(context.Background(), "ip", "netns", "del", ns)
	if err := run(ctx, "ip", "-n", ns, "link", "add", "p0", "type", "veth", "peer", "name", "p1"); err != nil {
		return k, fmt.Errorf("%w: veth: %v", ErrUnavailable, err)
	}
	k.Qdiscs = map[string]bool{}
	for _, q := range []struct {
		name string
		args []string
	}{
		{"htb", []string{"htb", "default", "1"}},
		{"tbf", []string{"tbf", "rate", "1mbit", "burst", "10k", "latency", "10ms"}},
		{"bfifo", []string{"bfifo", "limit", "100000"}},
		{"red", []string{"red", "limit", "400000", "min", "30000", "max", "31000", "avpkt", "9000", "burst", "4", "bandwidth", "200mbit", "probability", "1", "ecn"}},
		{"fq", []string{"fq"}},
		{"fq_codel", []string{"fq_codel"}},
		{"netem", []string{"netem", "delay", "1ms"}},
	} {
		err := run(ctx, "tc", append([]string{"-n", ns, "qdisc", "add", "dev", "p0", "root"}, q.args...)...)
		k.Qdiscs[q.name] = err == nil
		if err == nil {
			_ = run(ctx, "tc", "-n", ns, "qdisc", "del", "dev", "p0", "root")
		}
	}
	if !k.Qdiscs["htb"] || !k.Qdiscs["bfifo"] {
		return k, fmt.Errorf("%w: the kernel has no HTB or bfifo qdisc to shape links with", ErrUnavailable)
	}
	return k, nil
}

// run runs a command, its error carrying its output.
func run(ctx context.Context, name string, args ...string) error {
	_, err := output(ctx, name, args...)
	return err
}

// output runs a command (at most a minute) and returns its standard output.
func output(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}
