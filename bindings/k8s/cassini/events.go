package cassini

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons of the Warning events the plugin records.
const (
	// ReasonBadAnnotation is on a pod whose job size or traffic profile
	// cannot be used: its note names the annotation and the field.
	ReasonBadAnnotation = "OrreryBadAnnotation"
	// ReasonBadLabel is on a node whose NIC label is not a speed.
	ReasonBadLabel = "OrreryBadLabel"
)

// warnings records each Warning event once per object and note: the
// scheduler retries a pod many times, and the fabric is rebuilt whenever a
// node changes.
type warnings struct {
	mu   sync.Mutex
	seen map[warningKey]bool
}

type warningKey struct {
	uid  types.UID
	note string
}

const maxWarnings = 4096

// warn records a Warning event on obj (a pod or a node) unless the same
// note was recorded on it before.
func (p *Plugin) warn(obj runtime.Object, uid types.UID, reason, note string) {
	if p.h == nil || p.h.EventRecorder() == nil {
		return
	}
	k := warningKey{uid, note}
	p.warned.mu.Lock()
	if p.warned.seen == nil || len(p.warned.seen) >= maxWarnings {
		p.warned.seen = map[warningKey]bool{}
	}
	seen := p.warned.seen[k]
	p.warned.seen[k] = true
	p.warned.mu.Unlock()
	if !seen {
		p.h.EventRecorder().Eventf(obj, nil, v1.EventTypeWarning, reason, "Scheduling", "%s", note)
	}
}
