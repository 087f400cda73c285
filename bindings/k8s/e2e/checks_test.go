//go:build linux

package e2e

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/orrery/orrery/bindings/k8s/plan"
)

type eventsv1Event = eventsv1.Event

// jobsNow returns the training jobs of the cluster (pods with the job
// label and a profile, not of the bad-annotations scenario), by
// namespace/job, with what is wrong with them: a pod not bound, pods of a
// job with different plans, a plan that does not parse. It also returns
// the jobs scheduled by orrery-scheduler without a plan.
func (e *env) jobsNow() (jobs map[string]*running, problems []string, unplanned []string) {
	l, err := e.p.cs.CoreV1().Pods("").List(e.ctx, metav1.ListOptions{LabelSelector: jobLabel + "," + badLabel + " notin (1)"})
	if err != nil {
		e.t.Fatal(err)
	}
	jobs = map[string]*running{}
	texts := map[string]sets.Set[string]{}
	orreryJob := map[string]bool{}
	for _, pod := range l.Items {
		if pod.DeletionTimestamp != nil {
			continue
		}
		key := pod.Namespace + "/" + pod.Labels[jobLabel]
		prof := pod.Annotations[profAnno]
		if prof == "" {
			prof = e.configMapProfile(&pod)
		}
		if prof == "" {
			continue
		}
		if pod.Spec.NodeName == "" {
			problems = append(problems, fmt.Sprintf("pod %s/%s is not bound", pod.Namespace, pod.Name))
			continue
		}
		j := jobs[key]
		if j == nil {
			j = &running{key: key, prof: prof}
			jobs[key] = j
			texts[key] = sets.New[string]()
		}
		j.nodes = append(j.nodes, pod.Spec.NodeName)
		texts[key].Insert(pod.Annotations[planAnno])
		orreryJob[key] = orreryJob[key] || pod.Spec.SchedulerName == orreryName
	}
	for key, j := range jobs {
		for _, n := range j.nodes {
			j.racks = append(j.racks, rackOfNode(n))
		}
		slices.Sort(j.racks)
		j.racks = slices.Compact(j.racks)
		if texts[key].Len() > 1 {
			problems = append(problems, fmt.Sprintf("the pods of job %s carry %d different plans: %v", key, texts[key].Len(), sets.List(texts[key])))
			continue
		}
		j.text = sets.List(texts[key])[0]
		if j.text == "" {
			if orreryJob[key] {
				unplanned = append(unplanned, key)
			}
			continue
		}
		q, err := plan.Parse([]byte(j.text))
		if err != nil {
			problems = append(problems, fmt.Sprintf("job %s: %v", key, err))
			continue
		}
		j.plan = q
	}
	sort.Strings(problems)
	sort.Strings(unplanned)
	return jobs, problems, unplanned
}

// configMapProfile is the profile a pod names in a ConfigMap, "" if none.
func (e *env) configMapProfile(pod *v1.Pod) string {
	ref, ok := pod.Annotations[profCMAnno]
	if !ok {
		return ""
	}
	name, key := ref, "profile.json"
	for i := range ref {
		if ref[i] == '/' {
			name, key = ref[:i], ref[i+1:]
		}
	}
	cm, err := e.p.cs.CoreV1().ConfigMaps(pod.Namespace).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return cm.Data[key]
}

// settle waits until every job's pods are bound and carry one plan, every
// job scheduled by orrery-scheduler has one, and the plans stayed the
// same for a second: the plugin's writer is done.
func (e *env) settle(string) map[string]*running {
	e.t.Helper()
	var last map[string]string
	var jobs map[string]*running
	var problems, unplanned []string
	stable := time.Time{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		jobs, problems, unplanned = e.jobsNow()
		now := map[string]string{}
		for k, j := range jobs {
			now[k] = j.text
		}
		switch {
		case len(problems) > 0 || len(unplanned) > 0 || !maps.Equal(now, last):
			stable = time.Time{}
		case stable.IsZero():
			stable = time.Now()
		case time.Since(stable) > time.Second:
			return jobs
		}
		last = now
		if time.Now().After(deadline) {
			e.t.Fatalf("the plans did not settle in 60 s: %v; without a plan: %v", problems, unplanned)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// plans returns the plan annotation of every job of namespace ns.
func (e *env) plans(ns string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for k, j := range e.settle(ns) {
		if len(k) > len(ns) && k[:len(ns)+1] == ns+"/" {
			out[k] = j.text
		}
	}
	return out
}

// checkJobs waits for the plans to settle, then checks every job: its
// pods were bound by orrery-scheduler (when they name it), and every plan
// written since the last check (a generation not in seen) has the score
// recomputed from the annotations by the root package's Link.
func (e *env) checkJobs(seen map[string]int64) {
	e.t.Helper()
	jobs := e.settle("")
	namespaces := sets.New[string]()
	for _, k := range sortedKeys(jobs) {
		j := jobs[k]
		namespaces.Insert(k[:slices.Index([]byte(k), '/')])
		if j.text == "" {
			continue
		}
		if g, ok := seen[k]; ok && g == j.plan.Generation {
			continue
		}
		seen[k] = j.plan.Generation
		got, err := groupScore(e.ctx, jobs, k)
		if err != nil {
			e.t.Errorf("recomputing job %s's score: %v", k, err)
			continue
		}
		if got != j.plan.Score {
			e.t.Errorf("job %s on %v: plan score %v (generation %d), recomputed from the annotations %v", k, j.racks, j.plan.Score, j.plan.Generation, got)
		} else {
			e.t.Logf("job %s on %v: plan %s, recomputed score %v", k, j.racks, brief(j.text), got)
		}
	}
	for _, ns := range sets.List(namespaces) {
		e.checkScheduled(ns)
	}
}

// checkScheduled checks that every pod of namespace ns that names
// orrery-scheduler is bound and has its Scheduled event from
// orrery-scheduler.
func (e *env) checkScheduled(ns string) {
	e.t.Helper()
	l, err := e.p.cs.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var missing []string
	e.p.waitFor("the Scheduled events of namespace "+ns, 30*time.Second, func() bool {
		evs, err := e.p.cs.EventsV1().Events(ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		by := map[string]bool{}
		for _, ev := range evs.Items {
			if ev.Reason == "Scheduled" && ev.ReportingController == orreryName {
				by[string(ev.Regarding.UID)] = true
			}
		}
		missing = missing[:0]
		for _, pod := range l.Items {
			if pod.Spec.SchedulerName == orreryName && (pod.Spec.NodeName == "" || !by[string(pod.UID)]) {
				missing = append(missing, pod.Name)
			}
		}
		return len(missing) == 0
	})
}
