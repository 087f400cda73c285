package codec

// The codes of an [Error]: the schema's error codes for what the codec
// refuses.
const (
	Malformed = "malformed_json"   // not the JSON the type expects: syntax, unknown or repeated keys, wrong types
	Invalid   = "invalid_argument" // well-formed, but a number no quantity of the schema can be (1e-320)
	Limit     = "limit_exceeded"   // a string or key past MaxStringBytes
)

// Error is why the codec refused a request: a code, the JSON path of the
// value at fault ("jobs[1].phases[0].gbps"; empty for the whole request)
// and a message in the request's own words.
type Error struct {
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}
