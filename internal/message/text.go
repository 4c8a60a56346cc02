package message

import (
	"time"

	"golang.org/x/text/language"

	"github.com/heraldhq/herald/internal/tmpl"
)

// ParseText parses one template that is not part of a type's templates —
// a rule's title, a campaign's body, a digest's key — with the same
// function allow-list (number, currency, plural, date) under the same
// budget as a type's, so every message Herald renders goes through this
// package (issue 37 item 1). Rendered with Execute, its functions format
// in English and UTC; with ExecuteEnv and Env, for a recipient.
func ParseText(name, text string, lim tmpl.Limits) (*tmpl.Template, error) {
	return tmpl.ParseWith(name, text, lim, tmpl.Options{Funcs: funcs})
}

// Env is what a text parsed by ParseText renders its functions with for r
// (tmpl.Template.ExecuteEnv): r's locale as written — an empty or
// unreadable one is English — and r's zone (nil: UTC).
func Env(r Recipient) any {
	tag, err := language.Parse(r.Locale)
	if r.Locale == "" || err != nil {
		tag = language.English
	}
	zone := r.Zone
	if zone == nil {
		zone = time.UTC
	}
	return newEnv(tag, zone)
}
