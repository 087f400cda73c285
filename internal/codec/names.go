package codec

import (
	"bytes"
	"reflect"
	"strings"
)

// FieldByKey returns the type and declared key of the field of struct t
// that the JSON key decodes into when case is ignored (encoding/json
// matches names case-insensitively, which [CheckKeys] refuses), and
// whether there is one.
func FieldByKey(t reflect.Type, key string) (reflect.Type, string, bool) {
	var fold reflect.Type
	var foldName string
	for _, f := range reflect.VisibleFields(t) {
		name, ok := JSONName(f)
		if !ok {
			continue
		}
		if name == key {
			return f.Type, name, true
		}
		if fold == nil && strings.EqualFold(name, key) {
			fold, foldName = f.Type, name
		}
	}
	return fold, foldName, fold != nil
}

// JSONName returns the key encoding/json gives struct field f, and false
// when f has none (unexported, "-", or an untagged embedded struct whose
// fields are promoted).
func JSONName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || (f.Anonymous && f.Tag.Get("json") == "") {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}

// Position returns the 1-based line and column (in bytes) of offset in
// data, as syntax errors give them.
func Position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	prefix := data[:offset]
	line = 1 + bytes.Count(prefix, []byte{'\n'})
	return line, int(offset) - (bytes.LastIndexByte(prefix, '\n') + 1)
}

// ValidString reports whether b is one whole JSON string whose text is
// valid: valid UTF-8, no control character, every surrogate escape
// paired.
func ValidString(b []byte) bool { return wholeString(b) && validString(b) }
