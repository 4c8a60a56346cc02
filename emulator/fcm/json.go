package fcm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The emulator validates every request field by field, which used to mean
// one json.Unmarshal into map[string]json.RawMessage per nested object:
// each re-scanned and copied its part of the body, and validating a push
// took 9 % of a herald bench run's CPU. parseSend now checks the whole
// body once with json.Valid and then splits objects with splitObject, which
// relies on that: it only finds where keys and values begin and end. The
// slow paths stay for anything unusual (escaped keys, non-string values
// where strings belong), so every error message is exactly what it was.

// splitObject splits raw, a JSON object inside a document json.Valid
// accepted, into its members, as json.Unmarshal into a
// map[string]json.RawMessage would (the last of duplicate keys wins; values
// are the members' exact bytes). ok is false if raw is not an object or
// anything about it is unexpected; the caller then decodes it the slow way.
func splitObject(raw []byte) (_ map[string]json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 8)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return m, skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		end, ok := stringEnd(raw, i)
		if !ok {
			return nil, false
		}
		key, ok := unquote(raw[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		vend, ok := valueEnd(raw, i)
		if !ok {
			return nil, false
		}
		m[key] = json.RawMessage(raw[i:vend])
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return m, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// jsonString decodes raw, a JSON value inside a valid document, if it is a
// string; ok is false otherwise.
func jsonString(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if end, ok := stringEnd(raw, 0); !ok || end != len(raw) {
		return "", false
	}
	return unquote(raw)
}

// unquote decodes a JSON string literal (quotes included). Without escapes
// and in valid UTF-8 it is the bytes between the quotes; otherwise
// encoding/json decodes it, so escapes and invalid UTF-8 come out as they
// always did.
func unquote(lit []byte) (string, bool) {
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", false
	}
	return s, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string literal starting at
// b[i] == '"'.
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++ // the escaped byte (for \uXXXX the hex digits are plain)
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// valueEnd returns the index just past the JSON value starting at b[i].
func valueEnd(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := stringEnd(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	default: // a number, true, false or null
		j := i
		for j < len(b) && !endsScalar(b[j]) {
			j++
		}
		return j, j > i
	}
}

// endsScalar reports whether c ends a number, true, false or null.
func endsScalar(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
