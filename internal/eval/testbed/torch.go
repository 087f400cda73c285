//go:build linux

package testbed

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// torchLeg is what the PyTorch leg needs: the worker script, the engine's C
// library the Python agent loads, and the bindings' directory.
type torchLeg struct {
	python, script, lib, bindings string
}

// TorchPython returns a Python 3 that imports torch (python3 on the path,
// or the system's /usr/bin/python3, where Debian's python3-torch goes;
// not in CI, where the leg is skipped), or an error wrapping
// ErrUnavailable.
func TorchPython(ctx context.Context) (string, error) {
	var errs []string
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		_, err := output(ctx, py, "-c", "import torch, torch.distributed")
		if err == nil {
			return py, nil
		}
		errs = append(errs, err.Error())
	}
	return "", fmt.Errorf("%w: no Python 3 with PyTorch (%s)", ErrUnavailable, strings.Join(errs, "; "))
}

// torchSetup checks the leg can run, builds the engine's C library,
// sets every server namespace's congestion control and shapes each
// server's NIC to its job's peak.
func (r *runner) torchSetup(ctx context.Context, k Kernel) error {
	py, err := TorchPython(ctx)
	if err != nil {
		return err
	}
	r.torch.python = py
	if !slices.Contains(k.Allowed, r.opt.Congestion) {
		return fmt.Errorf("%w: gloo's sockets take the namespace's congestion control, and a namespace may default only to %v, not %q",
			ErrUnavailable, k.Allowed, r.opt.Congestion)
	}
	b, err := output(ctx, "go", "env", "GOMOD")
	if err != nil {
		return err
	}
	root := filepath.Dir(strings.TrimSpace(string(b)))
	r.torch.script = filepath.Join(root, "internal", "eval", "testbed", "python", "ddp_worker.py")
	r.torch.bindings = filepath.Join(root, "bindings", "python")
	if _, err := os.Stat(r.torch.script); err != nil {
		return fmt.Errorf("testbed: the PyTorch worker: %w (run from inside the repository)", err)
	}
	r.torch.lib = filepath.Join(r.dir, "liborrery.so")
	cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", r.torch.lib, "github.com/orrery/orrery/bindings/c")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testbed: go build the C library: %v: %s", err, out)
	}
	for _, ns := range r.f.Server {
		if err := run(ctx, "ip", "netns", "exec", ns, "sh", "-c", "echo "+r.opt.Congestion+" > /proc/sys/net/ipv4/tcp_congestion_control"); err != nil {
			return err
		}
	}
	for _, j := range r.jobs {
		var peak float64
		for _, s := range j.steps {
			peak = max(peak, s.PeakBps)
		}
		for _, s := range j.servers {
			if err := r.f.reshape(ctx, r.f.uplink(s), math.Min(peak, r.f.Rate(r.f.uplink(s)))); err != nil {
				return err
			}
		}
	}
	r.logf("PyTorch leg: gloo over %s, NICs at the jobs' peaks, engine %s", r.opt.Congestion, r.torch.lib)
	return nil
}

// uplink is server s's directed link to its ToR.
func (f *Fabric) uplink(s int) int {
	for li, l := range f.Topo.Links {
		if l.From == s {
			return li
		}
	}
	return -1
}

// reshape sets directed link li's shaped rate (payload bits per second).
func (f *Fabric) reshape(ctx context.Context, li int, payload float64) error {
	ns, dev := f.port(li)
	rate := strconv.FormatInt(int64(math.Round(payload*frameBytes/payloadBytes)), 10) + "bit"
	burst := strconv.Itoa(2 * frameBytes)
	return run(ctx, "tc", "-n", ns, "class", "change", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
		"rate", rate, "ceil", rate, "burst", burst, "cburst", burst, "quantum", strconv.Itoa(2*frameBytes))
}
