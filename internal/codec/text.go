package codec

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// textLen returns the length in bytes of the text of raw, a whole valid
// JSON string (see validString), once its escapes are decoded, without
// decoding it.
func textLen(raw []byte) int {
	body := raw[1 : len(raw)-1]
	n := len(body)
	if bytes.IndexByte(body, '\\') < 0 {
		return n
	}
	n = 0
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			n++
			continue
		}
		i++
		if body[i] != 'u' {
			n++ // \n, \", ...: one byte
			continue
		}
		r, _ := hex4(body[i+1:])
		i += 4
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			n += 4 // a surrogate pair (validString checked it): one rune past U+FFFF
			i += 6
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// validString reports whether raw, a whole JSON string, is valid text:
// valid UTF-8, and every \u escape of a surrogate half paired with the
// other half.
func validString(raw []byte) bool {
	if Plain(raw) {
		return true
	}
	if !utf8.Valid(raw) {
		return false
	}
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		i++
		if i >= len(body) || body[i] != 'u' {
			continue
		}
		r, ok := hex4(body[i+1:])
		if !ok {
			return false
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low half with no high half before it
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(body) || body[i+1] != '\\' || body[i+2] != 'u' {
				return false
			}
			lo, ok := hex4(body[i+3:])
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 reads four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(v), err == nil
}

// Plain reports whether raw is a whole JSON string of ASCII without
// escapes: its text is the bytes between the quotes.
func Plain(raw []byte) bool {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}
