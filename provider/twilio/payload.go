package twilio

import (
	"unicode/utf16"

	"github.com/heraldhq/herald/heraldtype"
)

// MaxBodyChars is Twilio's limit on a message body: longer bodies are
// refused with error 21617.
const MaxBodyChars = 1600

// ValidE164 reports whether s is an E.164 phone number ("+14155552671"):
// "+", a country code that does not start with 0, and at most 15 digits in
// all.
func ValidE164(s string) bool {
	if len(s) < 3 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ComposeBody is the SMS text Herald sends for n: the title and the body on
// separate lines, or whichever of the two is set. SMS has no subject line,
// so the title becomes the first line instead of being dropped. Data is not
// sent: an SMS has nowhere to carry it.
func ComposeBody(n *heraldtype.Notification) string {
	switch {
	case n.Title == "":
		return n.Body
	case n.Body == "":
		return n.Title
	}
	return n.Title + "\n" + n.Body
}

// bodyLen counts s as Twilio's 1600-character limit does, in UTF-16 code
// units. Twilio documents the limit in "characters" without saying how a
// character outside the Basic Multilingual Plane (most emoji) counts; an
// emoji takes two UCS-2 units on the air, so counting units is the reading
// that never lets through a body Twilio might refuse.
func bodyLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// CheckPayload reports whether n can be sent as an SMS: it has a title or a
// body, and the composed text (ComposeBody) is at most MaxBodyChars long.
// It is meant for the moment a notification is accepted, so that a body
// Twilio would refuse is rejected at trigger time instead of dying in the
// queue (issue 5: "Bodies over 1600 characters are rejected at trigger
// time"). Errors are *heraldtype.Error with code EINVALID.
func CheckPayload(n *heraldtype.Notification) error {
	if n == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "notification is missing")
	}
	text := ComposeBody(n)
	if text == "" {
		return heraldtype.FieldErrorf("body", "an SMS needs a title or a body")
	}
	if l := bodyLen(text); l > MaxBodyChars {
		return heraldtype.FieldErrorf("body", "the SMS text (title and body) is %d characters, over Twilio's limit of %d", l, MaxBodyChars)
	}
	return nil
}
