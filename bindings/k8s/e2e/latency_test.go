//go:build linux

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Latency targets: orrery-scheduler's pod latency (creation to binding)
// over the default scheduler's, both against the same API server in the
// same run.
const (
	medianTarget = 1.3
	p99Target    = 1.5
)

// latencyRounds is how many jobs each scheduler places (sizes 2-4: about
// 120 pods each); ORRERY_E2E_LATENCY_ROUNDS overrides it.
const latencyRounds = 40

// latency: the default kube-scheduler starts beside orrery-scheduler, each
// with a pool of 16 nodes in 4 racks. Jobs of 2-4 pods (periods 255, 300
// and 400 ms) arrive in rounds, one for each scheduler, their pods
// created alternately; the oldest jobs complete to make room, so later
// jobs are placed in fragments of racks, across racks, beside other jobs.
// Pod latency is the time from just before the pod's Create to the test's
// informer seeing it bound, for both alike.
func (e *env) latency() {
	kube := e.p.startDefault()
	defer kube.kill(syscall.SIGTERM)
	rounds := latencyRounds
	if s := os.Getenv("ORRERY_E2E_LATENCY_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			e.t.Fatalf("ORRERY_E2E_LATENCY_ROUNDS=%q", s)
		}
		rounds = n
	}
	type pool struct {
		ns, sched, pool string
		jobs            [][]*v1.Pod
		free            int
	}
	pools := []*pool{{ns: "lat-o", sched: orreryName, pool: "orrery", free: 16}, {ns: "lat-d", sched: defaultName, pool: "default", free: 16}}
	sizes := []int{3, 4, 2, 3, 4, 3, 2, 4, 3}
	profs := []string{p255, p300, p400}
	for _, pl := range pools {
		e.namespace(pl.ns)
	}
	pods := 0
	for r := range rounds {
		size, prof := sizes[r%len(sizes)], profs[r%len(profs)]
		deleted := false
		for _, pl := range pools {
			for pl.free < size {
				old := pl.jobs[0]
				pl.jobs = pl.jobs[1:]
				e.deleteAll(pl.ns, jobLabel+"="+old[0].Labels[jobLabel])
				pl.free += len(old)
				deleted = true
			}
		}
		if deleted {
			time.Sleep(500 * time.Millisecond) // both schedulers see the nodes free
		}
		var batch [][]*v1.Pod
		for _, pl := range pools {
			j := jobSpec{ns: pl.ns, name: fmt.Sprintf("j%03d", r), size: size, prof: prof, scheduler: pl.sched, pool: pl.pool}
			batch = append(batch, j.pods())
		}
		var all []*v1.Pod
		for i := range size {
			for _, b := range batch {
				e.createOne(b[i])
				all = append(all, b[i])
			}
		}
		e.waitBound(all...)
		for i, pl := range pools {
			pl.jobs = append(pl.jobs, batch[i])
			pl.free -= size
		}
		pods += size
	}
	o, d := e.mon.latencies("lat-o/"), e.mon.latencies("lat-d/")
	ms := func(x time.Duration) float64 { return float64(x) / 1e6 }
	for _, s := range []struct {
		name string
		l    []time.Duration
	}{{orreryName, o}, {defaultName, d}} {
		e.t.Logf("latency %s: %d pods, median %.1f ms, p90 %.1f, p99 %.1f, max %.1f", s.name, len(s.l),
			ms(quantile(s.l, 0.5)), ms(quantile(s.l, 0.9)), ms(quantile(s.l, 0.99)), ms(quantile(s.l, 1)))
	}
	med := ms(quantile(o, 0.5)) / ms(quantile(d, 0.5))
	p99 := ms(quantile(o, 0.99)) / ms(quantile(d, 0.99))
	e.t.Logf("latency ratio orrery-scheduler / default-scheduler: median %.2fx (target %.1fx), p99 %.2fx (target %.1fx)", med, medianTarget, p99, p99Target)
	if med > medianTarget || p99 > p99Target {
		e.t.Errorf("orrery-scheduler's pod latency is past its targets: median %.2fx, p99 %.2fx the default scheduler's", med, p99)
	}
	if len(o) != pods || len(d) != pods {
		e.t.Errorf("latencies of %d and %d pods, want %d each", len(o), len(d), pods)
	}
	e.checkScheduled("lat-o")
	e.deleteAll("lat-o", "")
	e.deleteAll("lat-d", "")
}
