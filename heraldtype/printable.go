package heraldtype

import "unicode"

// Unprintable reports whether r may never appear in an identifier (a user,
// device, key or notification type, a dedupe key, a suppressed address):
// a control character (Unicode Cc, C0 and C1: U+009B is a terminal's CSI),
// a format character (Cf: the bidi overrides such as U+202E, zero-width
// characters, the BOM) or a line or paragraph separator. Each can rewrite
// an operator's terminal or make two different identifiers look the same.
func Unprintable(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}
