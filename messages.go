package orrery

import (
	"strconv"
	"strings"

	"github.com/orrery/orrery/kernels"
)

// internalPackages prefix the text of the engine's sentinels ("round:
// invalid state"): names of packages a user of the schema never imports.
var internalPackages = []string{"round", "market", "predictor", "profile", "link", "circle", "candidate", "affinity", "wire"}

// message returns err's text in the schema's words: no internal package
// names ("round: invalid state: ..." is "invalid state: ...") and limits as
// numbers ("kernels.MaxValue units" is "16777215 units"). Every *Error
// built from an engine error takes its message from here; the wrapped
// cause keeps its own text, for errors.Is and for logs.
func message(err error) string {
	msg := strings.ReplaceAll(err.Error(), "kernels.MaxValue", strconv.Itoa(kernels.MaxValue))
	var b strings.Builder
	// A prefix counts at the start of the message or of a wrapped part,
	// after ": ".
	for start := true; msg != ""; {
		if start {
			for _, p := range internalPackages {
				if rest, ok := strings.CutPrefix(msg, p+": "); ok {
					msg = rest
					break
				}
			}
		}
		i := strings.Index(msg, ": ")
		if i < 0 {
			b.WriteString(msg)
			break
		}
		b.WriteString(msg[:i+2])
		msg = msg[i+2:]
		start = true
	}
	return b.String()
}
