package cassini

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/orrery/orrery"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/codec"
)

// Why a pod gets neutral scores; wrapped in the Skip status's message.
var (
	ErrNoJob     = errors.New("cassini: pod is not part of a training job")
	ErrNoProfile = errors.New("cassini: training job has no traffic profile")
	ErrProfile   = errors.New("cassini: bad traffic profile")
)

// jobKey names the job a pod belongs to, "" for none: namespace/value of the
// job label, or namespace/podgroup:name of its PodGroup.
func (c *config) jobKey(pod *v1.Pod) string {
	if v := pod.Labels[c.jobLabel]; v != "" {
		return pod.Namespace + "/" + v
	}
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return pod.Namespace + "/podgroup:" + *g.PodGroupName
	}
	return ""
}

// MaxJobSize is the largest job size the size annotation may give.
const MaxJobSize = 1 << 20

// ErrJobSize says a pod's size annotation is not a pod count; the job is
// then placed pod by pod, as without one.
var ErrJobSize = errors.New("cassini: bad job size")

// jobSize is the job's pod count from the size annotation, 0 if unknown:
// absent, or bad (the error says why).
func (c *config) jobSize(pod *v1.Pod) (int, error) {
	v, ok := pod.Annotations[c.sizeAnno]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxJobSize {
		return 0, fmt.Errorf("%w: annotation %s: %q is not a pod count in [1, %d]", ErrJobSize, c.sizeAnno, v, MaxJobSize)
	}
	return n, nil
}

// jobProfile is a job's traffic, quantized.
type jobProfile struct {
	p    profile.Profile
	comm int // tick the communication phase starts
}

// profiles parses traffic profiles, remembering them by their source text:
// the running jobs' profiles are read every cycle.
type profiles struct {
	mu    sync.Mutex
	cache map[string]profileEntry
}

type profileEntry struct {
	p   *jobProfile
	err error
}

const profileCacheSize = 8192

// ConfigMapGetter returns a ConfigMap's data by namespace and name.
type configMapGetter func(namespace, name string) (*v1.ConfigMap, error)

// of returns pod's profile: the inline annotation, else the ConfigMap the
// other annotation names.
func (ps *profiles) of(pod *v1.Pod, c *config, cms configMapGetter) (*jobProfile, error) {
	src, ok := pod.Annotations[c.profileAnno]
	where := "annotation " + c.profileAnno
	if !ok {
		ref, ok := pod.Annotations[c.profileCMAnno]
		if !ok {
			return nil, ErrNoProfile
		}
		where = "annotation " + c.profileCMAnno
		name, key, _ := strings.Cut(ref, "/")
		if key == "" {
			key = DefaultProfileKey
		}
		if cms == nil {
			return nil, fmt.Errorf("%w: %s: configmap %s/%s: ConfigMap profiles are disabled", ErrProfile, where, pod.Namespace, name)
		}
		cm, err := cms(pod.Namespace, name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: configmap %s/%s: %w", ErrProfile, where, pod.Namespace, name, err)
		}
		s, ok := cm.Data[key]
		if !ok {
			return nil, fmt.Errorf("%w: %s: configmap %s/%s has no key %q", ErrProfile, where, pod.Namespace, name, key)
		}
		src = s
		where += ": configmap " + pod.Namespace + "/" + name + " key " + key
	}
	ps.mu.Lock()
	e, ok := ps.cache[src]
	ps.mu.Unlock()
	if !ok {
		e.p, e.err = parseProfile(src, c)
		ps.mu.Lock()
		if ps.cache == nil || len(ps.cache) >= profileCacheSize {
			ps.cache = make(map[string]profileEntry)
		}
		ps.cache[src] = e
		ps.mu.Unlock()
	}
	if e.err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrProfile, where, e.err)
	}
	return e.p, nil
}

// parseProfile reads a profile in the JSON of a cassini.rank job (id
// optional) and quantizes it on the plugin's grid, with the root package's
// strict decoder and validation: the same errors, named by the same paths
// (relative to the job: "phases[0].gbps"), and the same limits as a job of
// a cassini.rank request.
func parseProfile(src string, c *config) (*jobProfile, error) {
	var js orrery.JobSpec
	if err := codec.Decode([]byte(src), &js); err != nil {
		return nil, err
	}
	if js.ID == "" {
		js.ID = "job"
	}
	req := orrery.LinkRequest{CapacityGbps: 1, Jobs: []orrery.JobSpec{js},
		SearchSpec: orrery.SearchSpec{TickMs: c.tickMs, UnitMbps: c.unitMbps}}
	pr, _, err := req.Problem()
	if err != nil {
		var oe *orrery.Error
		if errors.As(err, &oe) && strings.HasPrefix(oe.Field, "jobs[0].") {
			return nil, fmt.Errorf("%s: %s", strings.TrimPrefix(oe.Field, "jobs[0]."), oe.Message) // the field within the profile
		}
		return nil, err
	}
	p := pr.Jobs[0]
	return &jobProfile{p: p, comm: commOffset(p.Demand)}, nil
}

// commOffset is the tick the first communication phase starts: the first
// tick with demand whose predecessor (cyclically) has none; 0 when the
// demand never stops or never starts.
func commOffset(d []int32) int {
	for i, v := range d {
		prev := d[(i+len(d)-1)%len(d)]
		if v > 0 && prev == 0 {
			return i
		}
	}
	return 0
}
