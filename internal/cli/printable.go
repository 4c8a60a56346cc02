package cli

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// printable renders a value stored by API callers (ids, types, key names,
// error codes) for an operator's terminal: as is when every character is
// printable, Go-quoted ("dev\u202e1") otherwise, so a C1 control, a bidi
// override or a zero-width character can neither drive the terminal nor
// hide in plain sight. The API refuses them in identifiers; rows written
// before that rule, or by another path, still print safely.
func printable(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// count renders n with the noun in the number it takes in English:
// "1 delivery", "0 deliveries", "2 deliveries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// escapeJSON rewrites every non-printable character of encoded JSON as a
// \u escape. Outside strings, JSON from encoding/json holds only printable
// ASCII, spaces and newlines, so the result is the same JSON value.
func escapeJSON(w io.Writer, b []byte) error {
	var out bytes.Buffer
	out.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == '\n' || r == ' ' || (r != utf8.RuneError || n > 1) && strconv.IsPrint(r):
			out.Write(b[:n])
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
		b = b[n:]
	}
	_, err := w.Write(out.Bytes())
	return err
}
