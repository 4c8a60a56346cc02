package message

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
	xmessage "golang.org/x/text/message"
	"golang.org/x/text/number"
)

// Dates: golang.org/x/text formats numbers, currencies and plurals by
// CLDR but has no date formatting, and the Go libraries that do (a CLDR
// port, or month-name tables such as goodsign/monday) are either
// unmaintained or give names without the patterns that order them. So
// Herald documents a small set: the date styles below for English, Korean,
// Arabic and Hebrew, written from CLDR's patterns for those languages
// (digits as the locale's numbers write them), and ISO 8601 (2006-01-02,
// 15:04, 24-hour) for every other language. A template asks for a style
// by name; the time is shown in the user's zone.

// DateStyles are the styles date takes.
var DateStyles = []string{"short", "long", "time", "datetime"}

// dateLayout formats a time in one language: a pattern of fields, each
// {y} {M} {MM} {MMMM} {d} {h} {H} {mm} {a}.
type dateLayout struct {
	pattern string
	months  []string // MMMM
	am, pm  string
}

type dateLanguage struct {
	months []string
	am, pm string
	styles map[string]string
}

var dateLanguages = map[string]dateLanguage{
	"en": {
		months: []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
		am:     "AM", pm: "PM",
		styles: map[string]string{"short": "{M}/{d}/{yy}", "long": "{MMMM} {d}, {y}", "time": "{h}:{mm} {a}", "datetime": "{MMMM} {d}, {y} at {h}:{mm} {a}"},
	},
	"ko": {
		am: "오전", pm: "오후",
		styles: map[string]string{"short": "{yy}. {M}. {d}.", "long": "{y}년 {M}월 {d}일", "time": "{a} {h}:{mm}", "datetime": "{y}년 {M}월 {d}일 {a} {h}:{mm}"},
	},
	"ar": {
		months: []string{"يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر", "نوفمبر", "ديسمبر"},
		am:     "ص", pm: "م",
		styles: map[string]string{"short": "{d}\u200f/{M}\u200f/{y}", "long": "{d} {MMMM} {y}", "time": "{h}:{mm} {a}", "datetime": "{d} {MMMM} {y} {h}:{mm} {a}"},
	},
	"he": {
		months: []string{"ינואר", "פברואר", "מרץ", "אפריל", "מאי", "יוני", "יולי", "אוגוסט", "ספטמבר", "אוקטובר", "נובמבר", "דצמבר"},
		styles: map[string]string{"short": "{d}.{M}.{y}", "long": "{d} ב{MMMM} {y}", "time": "{H}:{mm}", "datetime": "{d} ב{MMMM} {y}, {H}:{mm}"},
	},
}

var isoStyles = map[string]string{"short": "{y}-{MM}-{dd}", "long": "{y}-{MM}-{dd}", "time": "{H}:{mm}", "datetime": "{y}-{MM}-{dd} {H}:{mm}"}

func layoutFor(tag language.Tag, style string) (dateLayout, error) {
	base, _ := tag.Base()
	dl, ok := dateLanguages[base.String()]
	styles := dl.styles
	if !ok {
		styles = isoStyles
	}
	p, ok := styles[style]
	if !ok {
		return dateLayout{}, fmt.Errorf("date: %q is not a style (%s)", style, strings.Join(DateStyles, ", "))
	}
	return dateLayout{pattern: p, months: dl.months, am: dl.am, pm: dl.pm}, nil
}

// format writes t by the layout, its numbers in the digits the locale's
// numbers use (Arabic-Indic for ar).
func (l dateLayout) format(t time.Time, p *xmessage.Printer) string {
	num := func(n, width int) string {
		s := p.Sprint(number.Decimal(n, number.NoSeparator()))
		if width == 2 && n < 10 {
			s = p.Sprint(number.Decimal(0)) + s // the locale's zero
		}
		return s
	}
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	ampm := l.am
	if t.Hour() >= 12 {
		ampm = l.pm
	}
	month := strconv.Itoa(int(t.Month()))
	if len(l.months) == 12 {
		month = l.months[t.Month()-1]
	}
	r := strings.NewReplacer(
		"{yy}", num(t.Year()%100, 2), "{y}", num(t.Year(), 1),
		"{MMMM}", month, "{MM}", num(int(t.Month()), 2), "{M}", num(int(t.Month()), 1),
		"{dd}", num(t.Day(), 2), "{d}", num(t.Day(), 1),
		"{h}", num(hour12, 1), "{H}", num(t.Hour(), 2), "{mm}", num(t.Minute(), 2), "{a}", ampm,
	)
	return r.Replace(l.pattern)
}
