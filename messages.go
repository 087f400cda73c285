package orrery

import (
	"regexp"
	"strconv"

	"github.com/orrery/orrery/internal/kernels"
)

// internalPrefix matches the package prefix of an engine sentinel's text
// ("round: invalid state"), at the start of a message or of a wrapped
// part of it: the names of packages a user of the schema never imports.
var internalPrefix = regexp.MustCompile(`(^|: )(?:round|market|predictor|profile|link|circle|candidate|affinity|wire): `)

// maxValue is how the messages spell kernels.MaxValue.
var maxValue = strconv.Itoa(kernels.MaxValue)

var internalConst = regexp.MustCompile(`kernels\.MaxValue`)

// message returns err's text in the schema's words: no internal package
// names ("round: invalid state: ..." is "invalid state: ...") and limits as
// numbers ("kernels.MaxValue units" is "16777215 units"). Every *Error
// built from an engine error takes its message from here; the wrapped
// cause keeps its own text, for errors.Is and for logs.
func message(err error) string {
	msg := internalConst.ReplaceAllLiteralString(err.Error(), maxValue)
	return internalPrefix.ReplaceAllString(msg, "$1")
}
