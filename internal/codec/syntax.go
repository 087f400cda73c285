package codec

import (
	"fmt"
	"strconv"
)

// CheckSyntax returns nil when data is one JSON value and otherwise why
// not, in the words encoding/json's Decoder uses: trailing data after a
// complete value, an unexpected end, or the first byte its scanner
// refuses, with the scanner's message and the byte's offset (counting
// it), line and column. The tests hold it to encoding/json's answers.
func CheckSyntax(data []byte) *Error {
	s := syntaxScanner{data: data}
	return s.check()
}

// Member is a member of a JSON object as its bytes: its key, quotes
// included, and its value, with the spaces around it.
type Member struct{ Key, Value []byte }

// CheckObject is [CheckSyntax], and when data is an object it also returns
// the number of its members and the first two of them, which a caller
// reading a small object (an envelope) then has without a second scan. n is
// 0 for any other value.
func CheckObject(data []byte) (n int, first [2]Member, err *Error) {
	s := syntaxScanner{data: data, record: true}
	if err := s.check(); err != nil {
		return 0, first, err
	}
	if s.shallow[0] != '{' {
		return 0, first, nil
	}
	for i := range min(s.nmembers, len(first)) {
		m := s.members[i]
		first[i] = Member{Key: data[m.keyA:m.keyB], Value: data[m.valA:m.valB]}
	}
	return s.nmembers, first, nil
}

// check is CheckSyntax of s.data.
func (s *syntaxScanner) check() *Error {
	data := s.data
	msg, at := s.scan()
	if at < 0 {
		return nil
	}
	e := &Error{Code: Malformed}
	switch {
	case at == len(data):
		line, col := Position(data, int64(len(data)))
		e.Message = fmt.Sprintf("unexpected end of the request (byte %d, line %d, column %d)", len(data), line, col)
	case msg == "":
		e.Message = "trailing data after the request object"
	default:
		line, col := Position(data, int64(at+1))
		e.Message = fmt.Sprintf("invalid character %s %s (byte %d, line %d, column %d)", quoteChar(data[at]), msg, at+1, line, col)
	}
	return e
}

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

// syntaxScanner checks JSON syntax with encoding/json's scanner's rules
// and messages, without its package.
type syntaxScanner struct {
	data []byte
	i    int
	// '{' or '[' of each open container, a stack: the first ones in
	// shallow, which needs no allocation, the rest in deep.
	depth   int
	shallow [64]byte
	deep    []byte

	// record asks for the root object's members: the first ones in
	// members, the count of all in nmembers.
	record   bool
	nmembers int
	members  [2]member
}

// member is a member of the root object as the syntax scan passed it:
// its raw key is data[keyA:keyB], its raw value data[valA:valB] (from
// after the colon, spaces included).
type member struct {
	keyA, keyB, valA, valB int
}

func (s *syntaxScanner) push(c byte) {
	if s.depth < len(s.shallow) {
		s.shallow[s.depth] = c
	} else {
		s.deep = append(s.deep[:s.depth-len(s.shallow)], c)
	}
	s.depth++
}

func (s *syntaxScanner) top() byte {
	if s.depth <= len(s.shallow) {
		return s.shallow[s.depth-1]
	}
	return s.deep[s.depth-1-len(s.shallow)]
}

// scan returns (_, -1) for one valid value; ("", i) for a complete value
// followed at i by more than space; (_, len(data)) for an unexpected end;
// and otherwise the context of the scanner's message for the byte at i.
func (s *syntaxScanner) scan() (string, int) {
	if msg, ok := s.value(); !ok {
		return msg, s.i
	}
	for ; s.i < len(s.data); s.i++ {
		if !isSpace(s.data[s.i]) {
			return "", s.i
		}
	}
	return "", -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (s *syntaxScanner) skipSpace() bool {
	for s.i < len(s.data) && isSpace(s.data[s.i]) {
		s.i++
	}
	return s.i < len(s.data)
}

// value scans one value and what follows it inside its containers; it
// returns at the end of the top-level value, or false at the first error
// (s.i its byte, or len(data) at the end).
func (s *syntaxScanner) value() (string, bool) {
	const begin = "looking for beginning of value"
	for {
		if !s.skipSpace() {
			return "", false
		}
		c := s.data[s.i]
		switch {
		case c == '{' || c == '[':
			if s.depth >= maxNesting {
				return "exceeded max depth", false
			}
			s.push(c)
			s.i++
			if !s.skipSpace() {
				return "", false
			}
			if closer := s.data[s.i]; (c == '{' && closer == '}') || (c == '[' && closer == ']') {
				s.depth--
				s.i++
				break
			}
			if c == '{' {
				if msg, ok := s.key(); !ok {
					return msg, false
				}
			}
			continue
		case c == '"':
			if msg, ok := s.str(); !ok {
				return msg, false
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if msg, ok := s.number(); !ok {
				return msg, false
			}
		case c == 't':
			if msg, ok := s.literal("true"); !ok {
				return msg, false
			}
		case c == 'f':
			if msg, ok := s.literal("false"); !ok {
				return msg, false
			}
		case c == 'n':
			if msg, ok := s.literal("null"); !ok {
				return msg, false
			}
		default:
			return begin, false
		}
		// A value ended: close containers or go on to the next one.
		for {
			if s.depth == 0 {
				return "", true
			}
			if s.record && s.depth == 1 && s.shallow[0] == '{' {
				s.memberEnd()
			}
			if !s.skipSpace() {
				return "", false
			}
			c := s.data[s.i]
			top := s.top()
			switch {
			case c == ',' && top == '{':
				s.i++
				if msg, ok := s.key(); !ok {
					return msg, false
				}
			case c == ',':
				s.i++
			case (c == '}' && top == '{') || (c == ']' && top == '['):
				s.depth--
				s.i++
				continue
			case top == '{':
				return "after object key:value pair", false
			default:
				return "after array element", false
			}
			break
		}
	}
}

// key scans an object's key and its colon.
func (s *syntaxScanner) key() (string, bool) {
	if !s.skipSpace() {
		return "", false
	}
	if s.data[s.i] != '"' {
		return "looking for beginning of object key string", false
	}
	a := s.i
	if msg, ok := s.str(); !ok {
		return msg, false
	}
	b := s.i
	if !s.skipSpace() {
		return "", false
	}
	if s.data[s.i] != ':' {
		return "after object key", false
	}
	s.i++
	if s.record && s.depth == 1 && s.nmembers < len(s.members) {
		s.members[s.nmembers] = member{keyA: a, keyB: b, valA: s.i}
	}
	return "", true
}

// memberEnd notes that the value of the root object's member being
// scanned ends at s.i.
func (s *syntaxScanner) memberEnd() {
	if s.nmembers < len(s.members) {
		s.members[s.nmembers].valB = s.i
	}
	s.nmembers++
}

// str scans a string from its opening quote.
func (s *syntaxScanner) str() (string, bool) {
	s.i++
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return "", true
		case c == '\\':
			s.i++
			if s.i >= len(s.data) {
				return "", false
			}
			switch s.data[s.i] {
			case 'b', 'f', 'n', 'r', 't', '\\', '/', '"':
			case 'u':
				for range 4 {
					s.i++
					if s.i >= len(s.data) {
						return "", false
					}
					if !isHex(s.data[s.i]) {
						return `in \u hexadecimal character escape`, false
					}
				}
			default:
				return "in string escape code", false
			}
		case c < 0x20:
			return "in string literal", false
		}
		s.i++
	}
	return "", false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number scans a number; it ends at the first byte that cannot continue
// it, which the caller judges.
func (s *syntaxScanner) number() (string, bool) {
	const in = "in numeric literal"
	if s.data[s.i] == '-' {
		s.i++
		if s.i >= len(s.data) {
			return "", false
		}
		if !isDigit(s.data[s.i]) {
			return in, false
		}
	}
	if s.data[s.i] == '0' {
		s.i++
	} else {
		s.digits()
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if s.i >= len(s.data) {
			return "", false
		}
		if !isDigit(s.data[s.i]) {
			return "after decimal point in numeric literal", false
		}
		s.digits()
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if s.i >= len(s.data) {
			return "", false
		}
		if !isDigit(s.data[s.i]) {
			return "in exponent of numeric literal", false
		}
		s.digits()
	}
	return "", true
}

func (s *syntaxScanner) digits() {
	for s.i < len(s.data) && isDigit(s.data[s.i]) {
		s.i++
	}
}

// literal scans true, false or null.
func (s *syntaxScanner) literal(word string) (string, bool) {
	for j := 1; j < len(word); j++ {
		s.i++
		if s.i >= len(s.data) {
			return "", false
		}
		if s.data[s.i] != word[j] {
			return "in literal " + word + " (expecting " + quoteChar(word[j]) + ")", false
		}
	}
	s.i++
	return "", true
}

// quoteChar formats c as encoding/json's scanner does in its messages.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}
