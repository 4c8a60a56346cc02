package message

//go:generate go run ./internal/cldrgen -out cldr_dates.go

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
)

// Dates: golang.org/x/text formats numbers, currencies and plurals by
// CLDR but has no date formatting, and the Go libraries that do are either
// unmaintained or read CLDR's data differently from how people read their
// own language (a Korean "PM 3:04"). So cldr_dates.go is generated from
// CLDR's JSON (internal/cldrgen, go generate) for the modern locales, and
// this file interprets its patterns: a template names a style, the time is
// shown in the user's zone, its digits as the locale writes numbers.
//
// One deliberate reading: the day period field a (a, aa, aaa) takes the
// locale's format-wide name where UTS #35 says abbreviated. For most
// locales the two are the same; where they differ, the abbreviated form is
// often the Latin "AM"/"PM" stand-in (Korean, Thai, Welsh, Bosnian) while
// the wide one is the language's own word (오후, หลังเที่ยง), which is what a
// message read in full sentences wants.

// DateStyles are the styles date takes: four CLDR date lengths, the short
// time, and a long date with the short time as the locale joins them.
var DateStyles = []string{"short", "medium", "long", "full", "time", "datetime"}

// cldrLocale is one locale's row of cldr_dates.go, its fields indexed by
// the constants below. Lists are NUL-separated; daysStandalone, era and
// flexible are set only for a locale whose patterns use c, G or B, digits
// only when the locale does not write 0-9; a field the locale takes from
// its parent chain is inherit.
type cldrLocale [16]string

const (
	dateFull = iota
	dateLong
	dateMedium
	dateShort
	timeShort
	joinLong // a long date {1} and a short time {0}
	months
	monthsAbbr
	days
	daysAbbr
	daysStandalone
	am
	pm
	era      // the abbreviated name of the common era (G)
	flexible // B's day periods: "HHMM-HHMM name"
	digits
)

const inherit = "\x01"

// dateLocale finds a locale's row: the tag, then each parent (the chain the
// templates' locales take: ko-KR, then ko), then English; a field marked
// inherit comes from the next row of the chain that has it.
func dateLocale(tag language.Tag) *cldrLocale {
	var l cldrLocale
	found, open := false, false
	fill := func(row cldrLocale) {
		if !found {
			l, found = row, true
		}
		open = false
		for f := range l {
			if l[f] == inherit {
				if l[f] = row[f]; row[f] == inherit {
					open = true
				}
			}
		}
	}
	for t := tag; !t.IsRoot(); t = t.Parent() {
		if row, ok := cldrDates[t.String()]; ok {
			fill(row)
			if !open {
				return &l
			}
		}
	}
	fill(cldrDates["en"])
	return &l
}

// formatDate writes t in a style of the locale.
func formatDate(tag language.Tag, style string, t time.Time) (string, error) {
	l := dateLocale(tag)
	switch style {
	case "short":
		return l.format(l[dateShort], t)
	case "medium":
		return l.format(l[dateMedium], t)
	case "long":
		return l.format(l[dateLong], t)
	case "full":
		return l.format(l[dateFull], t)
	case "time":
		return l.format(l[timeShort], t)
	case "datetime":
		// The join is a pattern itself ("{1} 'at' {0}"): the date and the
		// time are formatted apart, so each pattern's quotes stay its own.
		d, err := l.format(l[dateLong], t)
		if err != nil {
			return "", err
		}
		tm, err := l.format(l[timeShort], t)
		if err != nil {
			return "", err
		}
		j, err := l.format(strings.NewReplacer("{1}", "\x01", "{0}", "\x02").Replace(l[joinLong]), t)
		if err != nil {
			return "", err
		}
		return strings.NewReplacer("\x01", d, "\x02", tm).Replace(j), nil
	}
	return "", fmt.Errorf("date: %q is not a style (%s)", style, strings.Join(DateStyles, ", "))
}

// format interprets a CLDR date pattern (UTS #35): runs of a field letter,
// 'quoted literals' (” is a quote), everything else as it is.
func (l *cldrLocale) format(p string, t time.Time) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' { // '' is a quote
				b.WriteByte('\'')
				i += 2
				continue
			}
			j := i + 1
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(p[j])
				j++
			}
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			if err := l.field(&b, c, n, t); err != nil {
				return "", err
			}
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// field writes one pattern field: width n of letter c.
func (l *cldrLocale) field(b *strings.Builder, c byte, n int, t time.Time) error {
	switch c {
	case 'y':
		if n == 2 {
			l.num(b, t.Year()%100, 2)
		} else {
			l.num(b, t.Year(), n)
		}
	case 'M', 'L':
		switch {
		case n >= 4:
			b.WriteString(nth(l[months], int(t.Month())-1))
		case n == 3:
			b.WriteString(nth(l[monthsAbbr], int(t.Month())-1))
		default:
			l.num(b, int(t.Month()), n)
		}
	case 'd':
		l.num(b, t.Day(), n)
	case 'E', 'c':
		days := l[days]
		if c == 'c' && l[daysStandalone] != "" {
			days = l[daysStandalone]
		}
		if n < 4 {
			days = l[daysAbbr]
		}
		b.WriteString(nth(days, int(t.Weekday())))
	case 'h':
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		l.num(b, h, n)
	case 'H':
		l.num(b, t.Hour(), n)
	case 'm':
		l.num(b, t.Minute(), n)
	case 's':
		l.num(b, t.Second(), n)
	case 'a':
		if t.Hour() < 12 {
			b.WriteString(l[am])
		} else {
			b.WriteString(l[pm])
		}
	case 'B':
		b.WriteString(l.period(t))
	case 'G':
		b.WriteString(l[era])
	default:
		return fmt.Errorf("date: the locale's pattern has a field %q Herald does not write", strings.Repeat(string(c), n))
	}
	return nil
}

// num writes v with at least width digits in the locale's digits.
func (l *cldrLocale) num(b *strings.Builder, v, width int) {
	s := strconv.Itoa(v)
	for range width - len(s) {
		b.WriteString(l.digit(0))
	}
	for _, d := range s {
		b.WriteString(l.digit(int(d - '0')))
	}
}

func (l *cldrLocale) digit(d int) string {
	if l[digits] == "" {
		return string(rune('0' + d))
	}
	for i, r := range l[digits] {
		if d == 0 {
			return l[digits][i : i+len(string(r))]
		}
		d--
	}
	return ""
}

// period is B's flexible day period of t: the range holding its minute.
func (l *cldrLocale) period(t time.Time) string {
	hm := t.Hour()*100 + t.Minute()
	for s := l[flexible]; s != ""; {
		var item string
		item, s, _ = strings.Cut(s, "\x00")
		span, name, _ := strings.Cut(item, " ")
		from, before, _ := strings.Cut(span, "-")
		f, _ := strconv.Atoi(from)
		e, _ := strconv.Atoi(before)
		if f <= e && hm >= f && hm < e || f > e && (hm >= f || hm < e) {
			return name
		}
	}
	if t.Hour() < 12 {
		return l[am]
	}
	return l[pm]
}

// nth is the i-th of a NUL-separated list.
func nth(list string, i int) string {
	for ; i > 0; i-- {
		_, list, _ = strings.Cut(list, "\x00")
	}
	item, _, _ := strings.Cut(list, "\x00")
	return item
}
