package herald

import (
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/heraldhq/herald/heraldtype"
)

// Limits on what callers may send. They bound the work and the storage one
// request can cause; the title and body limit comes from S2.1.
const (
	MaxRecipients   = 1000
	MaxIDLength     = 128
	MaxTypeLength   = 64
	MaxTitleLength  = 2000 // characters, S2.1
	MaxBodyLength   = 2000 // characters, S2.1
	MaxDataEntries  = 100
	MaxDataKeyLen   = 256
	MaxTokenLength  = 4096
	MaxKeyLength    = 255 // Idempotency-Key
	MaxSendAhead    = 366 * 24 * time.Hour
	maxAppVersion   = 64
	maxLocaleLength = 35
)

var (
	typePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	// eventNamePattern is an event's name (POST /v1/events, a rule's
	// when.event, a reminder's stop.on_event).
	eventNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	phonePattern     = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`) // E.164
	localePattern    = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$`)
)

// validID checks an id chosen by the caller (user, device): printable
// (no control, format or bidi character: heraldtype.Unprintable), no slash
// or whitespace (ids appear in URL paths), bounded length.
func validID(field, id string) error {
	if id == "" {
		return heraldtype.FieldErrorf(field, "is required")
	}
	if len(id) > MaxIDLength {
		return heraldtype.FieldErrorf(field, "must be at most %d bytes", MaxIDLength)
	}
	if !utf8.ValidString(id) {
		return heraldtype.FieldErrorf(field, "must be valid UTF-8")
	}
	for _, r := range id {
		if r <= ' ' || r == '/' || r == '\\' || r == '?' || r == '#' || r == '%' || heraldtype.Unprintable(r) || unicode.IsSpace(r) {
			return heraldtype.FieldErrorf(field, "must not contain whitespace, control, format or bidi characters or any of / \\ ? # %%")
		}
	}
	if id == "." || id == ".." {
		return heraldtype.FieldErrorf(field, "must not be . or ..")
	}
	return nil
}

// validIdentifierText checks a free identifier that may hold spaces (a
// suppressed address): validText, and no control, format or bidi
// character (heraldtype.Unprintable).
func validIdentifierText(field, s string, max int) error {
	if err := validText(field, s, max); err != nil {
		return err
	}
	if strings.IndexFunc(s, heraldtype.Unprintable) >= 0 {
		return heraldtype.FieldErrorf(field, "must not contain control, format or bidi characters")
	}
	return nil
}

// validText checks a free-text field: valid UTF-8, no NUL, at most max
// characters.
func validText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return heraldtype.FieldErrorf(field, "must be valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return heraldtype.FieldErrorf(field, "must not contain NUL characters")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return heraldtype.FieldErrorf(field, "is %d characters; the limit is %d", n, max)
	}
	return nil
}

// loadTimezone validates an IANA time zone name. "Local" and "" are refused
// because they depend on the server's machine, not the user.
func loadTimezone(field, tz string) (*time.Location, error) {
	if tz == "" || tz == "Local" || strings.ContainsAny(tz, `\`) || strings.Contains(tz, "..") || len(tz) > 64 {
		return nil, heraldtype.FieldErrorf(field, "%q is not an IANA time zone (e.g. Asia/Seoul)", tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, heraldtype.FieldErrorf(field, "%q is not an IANA time zone (e.g. Asia/Seoul)", tz)
	}
	return loc, nil
}

func validEmail(field, s string) error {
	if len(s) > 254 {
		return heraldtype.FieldErrorf(field, "must be at most 254 bytes")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return heraldtype.FieldErrorf(field, "%q is not a plain e-mail address", s)
	}
	return nil
}

// MaxDedupeKeyLength bounds a trigger's dedupe_key.
const MaxDedupeKeyLength = 255

// validDedupeKey checks a trigger's dedupe key: printable UTF-8 (no
// control characters, so it cannot collide with the policy's key
// separator), at most MaxDedupeKeyLength bytes.
func validDedupeKey(k string) error { return validKey("dedupe_key", k, MaxDedupeKeyLength) }

// MaxCancellationKeyLength bounds a trigger's cancellation_key.
const MaxCancellationKeyLength = 255

// validCancellationKey checks a cancellation key as a dedupe key is
// checked: printable UTF-8, at most MaxCancellationKeyLength bytes.
func validCancellationKey(k string) error {
	return validKey("cancellation_key", k, MaxCancellationKeyLength)
}

// validKey checks a caller's key named field: printable UTF-8 of at most
// max bytes.
func validKey(field, k string, max int) error {
	if len(k) > max {
		return heraldtype.FieldErrorf(field, "must be at most %d bytes", max)
	}
	if !utf8.ValidString(k) {
		return heraldtype.FieldErrorf(field, "must be valid UTF-8")
	}
	for _, r := range k {
		if heraldtype.Unprintable(r) {
			return heraldtype.FieldErrorf(field, "must not contain control, format or bidi characters")
		}
	}
	return nil
}
