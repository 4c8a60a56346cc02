package message

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/currency"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	xmessage "golang.org/x/text/message"
	"golang.org/x/text/number"

	"github.com/heraldhq/herald/internal/tmpl"
)

// env is what one render's functions read: the locale picked for the user
// and their time zone.
type env struct {
	tag     language.Tag
	zone    *time.Location
	printer *xmessage.Printer
}

func newEnv(tag language.Tag, zone *time.Location) *env {
	if zone == nil {
		zone = time.UTC
	}
	return &env{tag: tag, zone: zone, printer: xmessage.NewPrinter(tag)}
}

// Funcs is the allow-list a template may call besides text/template's
// builtins (documented in docs/templates.md): number, currency, plural and
// date, each formatting for the render's locale (and date for the user's
// zone), each building its string under the render's budget.
var Funcs = []string{"number", "currency", "plural", "date"}

// funcs binds the allow-list to the render in progress.
func funcs(cur func() tmpl.Call) map[string]any {
	get := func() (*tmpl.Budget, *env) {
		c := cur()
		e, _ := c.Env.(*env)
		if e == nil {
			e = newEnv(language.English, time.UTC)
		}
		return c.Budget, e
	}
	return map[string]any{
		"number": func(v any) (string, error) {
			b, e := get()
			x, err := toDecimal(v)
			if err != nil {
				return "", fmt.Errorf("number: %w", err)
			}
			return b.Build(64, func() string { return e.printer.Sprint(number.Decimal(x.f)) })
		},
		"currency": func(code string, v any) (string, error) {
			b, e := get()
			unit, err := currency.ParseISO(code)
			if err != nil {
				return "", fmt.Errorf("currency: %q is not an ISO 4217 code", code)
			}
			x, err := toDecimal(v)
			if err != nil {
				return "", fmt.Errorf("currency: %w", err)
			}
			return b.Build(64, func() string { return e.printer.Sprint(currency.Symbol(unit.Amount(x.f))) })
		},
		"plural": func(v any, forms ...string) (string, error) {
			b, e := get()
			x, err := toDecimal(v)
			if err != nil {
				return "", fmt.Errorf("plural: %w", err)
			}
			text, err := pickPlural(e.tag, x, forms)
			if err != nil {
				return "", err
			}
			// The number is formatted first so the reservation is the
			// result's exact size: a text of many #s (from the data) times
			// a long number is refused before it is built.
			num, err := b.Build(64, func() string { return e.printer.Sprint(number.Decimal(x.f)) })
			if err != nil {
				return "", err
			}
			return b.Build(len(text)+strings.Count(text, "#")*len(num), func() string {
				return strings.ReplaceAll(text, "#", num)
			})
		},
		"date": func(style string, v any) (string, error) {
			b, e := get()
			t, err := toTime(v)
			if err != nil {
				return "", fmt.Errorf("date: %w", err)
			}
			// A style's output is bounded by the table (a few names and
			// numbers), so 256 bytes covers every locale's longest.
			var ferr error
			out, err := b.Build(256, func() string {
				var s string
				s, ferr = formatDate(e.tag, style, t.In(e.zone))
				return s
			})
			if ferr != nil {
				return "", ferr
			}
			return out, err
		},
	}
}

// decimal is a number as a template was given it: its value, and the
// plural operands CLDR's rules read (the integer digits, and the visible
// fraction digits with and without trailing zeros: "1.50" is not "1.5"
// in every language).
type decimal struct {
	f       float64
	i       int
	v, w    int
	fr, tfr int
}

// maxPluralInt keeps the integer operand in an int: CLDR's rules read at
// most its last six digits (i % 1000000).
const maxPluralInt = 1_000_000_000

func toDecimal(v any) (decimal, error) {
	var s string
	switch n := v.(type) {
	case int:
		s = strconv.Itoa(n)
	case int64:
		s = strconv.FormatInt(n, 10)
	case float64:
		s = strconv.FormatFloat(n, 'f', -1, 64)
	case json.Number:
		s = n.String()
	case string:
		s = strings.TrimSpace(n)
	default:
		return decimal{}, fmt.Errorf("%v (%T) is not a number", v, v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(s, "eExXpP_") {
		return decimal{}, fmt.Errorf("%q is not a number", s)
	}
	d := decimal{f: f}
	s = strings.TrimLeft(s, "+-")
	intPart, frac, _ := strings.Cut(s, ".")
	if len(intPart) > 9 {
		intPart = intPart[len(intPart)-9:]
	}
	d.i, _ = strconv.Atoi(intPart)
	d.i %= maxPluralInt
	if len(frac) > 9 {
		frac = frac[:9]
	}
	d.v = len(frac)
	d.fr, _ = strconv.Atoi("0" + frac)
	trimmed := strings.TrimRight(frac, "0")
	d.w = len(trimmed)
	d.tfr, _ = strconv.Atoi("0" + trimmed)
	return d, nil
}

// pluralForms are the CLDR plural categories a template may name.
var pluralForms = map[string]plural.Form{
	"zero": plural.Zero, "one": plural.One, "two": plural.Two,
	"few": plural.Few, "many": plural.Many, "other": plural.Other,
}

// pickPlural picks the text for x from forms, pairs of a category (zero,
// one, two, few, many, other) or an exact value ("=0") and its text: an
// exact match first, then the locale's category (CLDR's rules, from
// x/text), then "other", which is required.
func pickPlural(tag language.Tag, x decimal, forms []string) (string, error) {
	if len(forms) == 0 || len(forms)%2 != 0 {
		return "", fmt.Errorf("plural: wants pairs of a form and its text, e.g. \"one\" \"# item\" \"other\" \"# items\"")
	}
	byForm := make(map[string]string, len(forms)/2)
	for i := 0; i < len(forms); i += 2 {
		k := forms[i]
		if _, ok := pluralForms[k]; !ok && !strings.HasPrefix(k, "=") {
			return "", fmt.Errorf("plural: %q is not a plural form (zero, one, two, few, many, other or =N)", k)
		}
		byForm[k] = forms[i+1]
	}
	other, ok := byForm["other"]
	if !ok {
		return "", fmt.Errorf("plural: the \"other\" form is required")
	}
	for k, text := range byForm {
		if strings.HasPrefix(k, "=") {
			if exact, err := strconv.ParseFloat(k[1:], 64); err == nil && exact == x.f {
				return text, nil
			}
		}
	}
	form := plural.Cardinal.MatchPlural(tag, x.i, x.v, x.w, x.fr, x.tfr)
	for name, f := range pluralForms {
		if f == form {
			if text, ok := byForm[name]; ok {
				return text, nil
			}
		}
	}
	return other, nil
}

// toTime reads a time a template was given: a time.Time, an RFC 3339
// string (what a trigger's data carries), a date alone (2006-01-02), or
// Unix seconds.
func toTime(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t, nil
	case string:
		s := strings.TrimSpace(t)
		if tt, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return tt, nil
		}
		if tt, err := time.Parse(time.DateOnly, s); err == nil {
			return tt, nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0), nil
		}
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time, a date or Unix seconds", s)
	case int:
		return time.Unix(int64(t), 0), nil
	case int64:
		return time.Unix(t, 0), nil
	case float64:
		return time.Unix(int64(t), 0), nil
	}
	return time.Time{}, fmt.Errorf("%v (%T) is not a time", v, v)
}
