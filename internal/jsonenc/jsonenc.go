// Package jsonenc appends JSON strings to a byte slice without reflection
// or allocation: the providers build their request bodies with it on the
// hot path (one request per delivery).
package jsonenc

import "unicode/utf8"

// AppendPair appends "k":"v", preceded by a comma unless first.
func AppendPair(dst []byte, first bool, k, v string) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = AppendString(dst, k)
	dst = append(dst, ':')
	return AppendString(dst, v)
}

// HexDigits are the lower-case hexadecimal digits.
const HexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does, so the output is always valid JSON.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' && b < utf8.RuneSelf {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', HexDigits[b>>4], HexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
