package cassini

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// writerWorkers is how many jobs' plans are written at once.
const writerWorkers = 2

// Retry backoff of a job whose plan could not be written: doubling from
// the first to the last.
const (
	firstRetry = 10 * time.Millisecond
	lastRetry  = 5 * time.Minute
)

// writer writes plans on pods off the binding's critical path. Reserve and
// Unreserve queue the jobs whose plans may differ from what some of their
// pods carry, and PostBind the job of a pod just bound; workers write
// them, on every pod of the job but those whose binding is in flight (a
// patch would contend with the binding for the same object: the pod's
// PostBind queues the job again). A job is never written by two workers at
// once (one queued again while it is written waits for the write to end),
// so the writes on a pod follow its job's generations in order; a failed
// write is retried with exponential backoff while the pod exists.
type writer struct {
	client kubernetes.Interface

	mu      sync.Mutex
	wake    *sync.Cond
	queue   []string
	dirty   map[string]bool // queued, or to queue again when written
	active  map[string]bool // being written
	fails   map[string]int  // failed writes in a row
	waiting int             // retries scheduled
	closed  bool
}

// startWriter starts the writer's workers; they stop when ctx ends.
func (p *Plugin) startWriter(ctx context.Context, client kubernetes.Interface) {
	w := &writer{client: client, dirty: map[string]bool{}, active: map[string]bool{}, fails: map[string]int{}}
	w.wake = sync.NewCond(&w.mu)
	p.wr = w
	go func() {
		<-ctx.Done()
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		w.wake.Broadcast()
	}()
	for range writerWorkers {
		go func() {
			for {
				job, ok := w.next()
				if !ok {
					return
				}
				err := p.writeJob(ctx, job)
				if err != nil && ctx.Err() == nil {
					klog.FromContext(ctx).Error(err, "Cassini could not write a plan; retrying", "job", job)
				}
				w.done(job, err)
			}
		}()
	}
}

// write queues jobs for the writer.
func (p *Plugin) write(jobs ...string) {
	if p.wr == nil {
		return
	}
	for _, j := range jobs {
		p.wr.add(j)
	}
}

func (w *writer) add(job string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirty[job] || w.closed {
		return
	}
	w.dirty[job] = true
	if !w.active[job] {
		w.queue = append(w.queue, job)
		w.wake.Signal()
	}
}

// next waits for a job to write; false when the writer stopped.
func (w *writer) next() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) == 0 && !w.closed {
		w.wake.Wait()
	}
	if w.closed {
		return "", false
	}
	job := w.queue[0]
	w.queue = w.queue[1:]
	delete(w.dirty, job)
	w.active[job] = true
	return job, true
}

// done ends a job's write: queued again if it was marked meanwhile, or
// after a backoff if the write failed.
func (w *writer) done(job string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.active, job)
	if w.dirty[job] {
		w.queue = append(w.queue, job)
		w.wake.Signal()
	}
	if err == nil {
		delete(w.fails, job)
		return
	}
	n := w.fails[job]
	w.fails[job] = n + 1
	d := min(firstRetry<<min(n, 30), lastRetry)
	w.waiting++
	time.AfterFunc(d, func() {
		w.mu.Lock()
		w.waiting--
		w.mu.Unlock()
		w.add(job)
	})
}

// settled reports whether the writer has nothing queued, in hand or to
// retry.
func (p *Plugin) settled() bool {
	if p.wr == nil {
		return true
	}
	p.wr.mu.Lock()
	defer p.wr.mu.Unlock()
	return len(p.wr.queue) == 0 && len(p.wr.active) == 0 && p.wr.waiting == 0
}

// writeJob writes job's plan on every member pod that does not carry its
// generation yet, and on the job's pods the informer shows bound that do
// not carry its text (bound before a restart, or by another profile).
func (p *Plugin) writeJob(ctx context.Context, job string) error {
	pl, gen, members, ok := p.led.task(job)
	if !ok {
		return nil
	}
	text := p.planText(job, pl, gen)
	known := map[types.UID]bool{}
	for _, m := range members {
		known[m.uid] = true
	}
	if pods, err := p.jobPods(job); err == nil {
		for _, q := range pods {
			if known[q.UID] || q.Spec.NodeName == "" {
				continue
			}
			t := target{uid: q.UID, namespace: q.Namespace, name: q.Name}
			if q.Annotations[p.cfg.planAnno] == text {
				p.led.wrote(job, t, gen) // there already: not rewritten
				continue
			}
			members = append(members, t)
		}
	}
	var errs []error
	for _, t := range members {
		if t.written == gen || t.inFlight {
			continue
		}
		switch err := p.annotate(ctx, t, text); {
		case err == nil:
			p.led.wrote(job, t, gen)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err):
			p.led.forget(job, t.uid) // gone, or another pod of the same name now
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// annotate sets the plan annotation on the pod t, if it is still the pod
// of that uid.
func (p *Plugin) annotate(ctx context.Context, t target, text string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": t.uid, "annotations": map[string]string{p.cfg.planAnno: text}}})
	if err != nil {
		return err
	}
	_, err = p.wr.client.CoreV1().Pods(t.namespace).Patch(ctx, t.name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
