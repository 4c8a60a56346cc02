package message

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/language"

	"github.com/heraldhq/herald/heraldtype"
)

// The wanted strings below are built by hand from the CLDR 45 JSON
// (cldr-dates-modern's ca-gregorian.json and cldr-numbers-modern's
// numbers.json of each locale): its patterns filled with its names, not
// copied from this package's output. The instant is Saturday 28 November
// 2026, 06:04 UTC.
var dateInstant = time.Date(2026, 11, 28, 6, 4, 0, 0, time.UTC)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func TestDateStylesByLocale(t *testing.T) {
	type styles struct{ short, medium, long, full, time, datetime string }
	for _, tc := range []struct {
		locale, zone string
		want         styles
	}{
		// ko: y년 MMMM d일 EEEE | y년 MMMM d일 | y. M. d. | yy. M. d.; a h:mm; {1} {0}; the
		// format-wide day periods 오전/오후.
		{"ko", "Asia/Seoul", styles{"26. 11. 28.", "2026. 11. 28.", "2026년 11월 28일", "2026년 11월 28일 토요일", "오후 3:04", "2026년 11월 28일 오후 3:04"}},
		// en: M/d/yy | MMM d, y | MMMM d, y | EEEE, MMMM d, y; h:mm\u202fa; {1} 'at' {0}.
		{"en", "America/New_York", styles{"11/28/26", "Nov 28, 2026", "November 28, 2026", "Saturday, November 28, 2026", "1:04\u202fAM", "November 28, 2026 at 1:04\u202fAM"}},
		// ar: d\u200f/M\u200f/y | dd\u200f/MM\u200f/y | d MMMM y | EEEE، d MMMM y; h:mm a;
		// {1} في {0}; numbering system arab (٠١٢٣٤٥٦٧٨٩); ص/م.
		{"ar", "Africa/Cairo", styles{"٢٨\u200f/١١\u200f/٢٠٢٦", "٢٨\u200f/١١\u200f/٢٠٢٦", "٢٨ نوفمبر ٢٠٢٦", "السبت، ٢٨ نوفمبر ٢٠٢٦", "٨:٠٤ ص", "٢٨ نوفمبر ٢٠٢٦ في ٨:٠٤ ص"}},
		// he: d.M.y | d בMMM y | d בMMMM y | EEEE, d בMMMM y; H:mm; {1} בשעה {0}.
		{"he", "Asia/Jerusalem", styles{"28.11.2026", "28 בנוב\u05f3 2026", "28 בנובמבר 2026", "יום שבת, 28 בנובמבר 2026", "8:04", "28 בנובמבר 2026 בשעה 8:04"}},
		// ja: y/MM/dd | y/MM/dd | y年M月d日 | y年M月d日EEEE; H:mm; {1} {0}.
		{"ja", "Asia/Tokyo", styles{"2026/11/28", "2026/11/28", "2026年11月28日", "2026年11月28日土曜日", "15:04", "2026年11月28日 15:04"}},
		// de: dd.MM.yy | dd.MM.y | d. MMMM y | EEEE, d. MMMM y; HH:mm; {1} 'um' {0}.
		{"de", "Europe/Berlin", styles{"28.11.26", "28.11.2026", "28. November 2026", "Samstag, 28. November 2026", "07:04", "28. November 2026 um 07:04"}},
		// fr: dd/MM/y | d MMM y | d MMMM y | EEEE d MMMM y; HH:mm; {1} 'à' {0}.
		{"fr", "Europe/Paris", styles{"28/11/2026", "28 nov. 2026", "28 novembre 2026", "samedi 28 novembre 2026", "07:04", "28 novembre 2026 à 07:04"}},
		// en-GB: dd/MM/y | d MMM y | d MMMM y | EEEE d MMMM y; HH:mm (its own row over en).
		{"en-GB", "Europe/London", styles{"28/11/2026", "28 Nov 2026", "28 November 2026", "Saturday 28 November 2026", "06:04", "28 November 2026 at 06:04"}},
		// zh-Hant: Bh:mm, B from CLDR's day-period rules for zh (13:00-19:00 is 下午).
		{"zh-Hant", "Asia/Taipei", styles{"2026/11/28", "2026年11月28日", "2026年11月28日", "2026年11月28日 星期六", "下午2:04", "2026年11月28日 下午2:04"}},
		// fi: cccc d. MMMM y, the stand-alone weekday (lauantai, not lauantaina); H.mm.
		{"fi", "Europe/Helsinki", styles{"28.11.2026", "28.11.2026", "28. marraskuuta 2026", "lauantai 28. marraskuuta 2026", "8.04", "28. marraskuuta 2026 klo 8.04"}},
	} {
		got := styles{}
		for _, s := range []struct {
			style string
			out   *string
		}{{"short", &got.short}, {"medium", &got.medium}, {"long", &got.long}, {"full", &got.full}, {"time", &got.time}, {"datetime", &got.datetime}} {
			out, err := formatDate(language.MustParse(tc.locale), s.style, dateInstant.In(zone(t, tc.zone)))
			if err != nil {
				t.Fatalf("%s %s: %v", tc.locale, s.style, err)
			}
			*s.out = out
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.locale, got, tc.want)
		}
	}
}

// TestDateFallback: a regional tag reads its own row, else its parents',
// else English — the chain the templates' locales take.
func TestDateFallback(t *testing.T) {
	seoul := zone(t, "Asia/Seoul")
	for locale, want := range map[string]string{
		"ko-KR":   "오후 3:04",        // no ko-KR row: ko
		"ko-KP":   "오후 3:04",        // ko-KP differs from ko in none of these fields
		"ar-EG":   "٣:٠٤ م",         // arab digits, as ar
		"ar-AE":   "3:04 م",         // latn: CLDR's ar-AE numbers
		"en-US":   "3:04\u202fPM",   // en's default content
		"tlh":     "3:04\u202fPM",   // no such locale: en
		"und":     "3:04\u202fPM",   // root: en
		"zh-TW":   "下午3:04",         // zh-Hant
		"pt-PT":   "15:04",          // its own row
		"es-MX":   "3:04\u202fp.m.", // es-MX's row (CLDR 45: h:mm a, p.m.)
		"sr-Latn": "15:04",
	} {
		got, err := formatDate(language.MustParse(locale), "time", dateInstant.In(seoul))
		if err != nil {
			t.Fatalf("%s: %v", locale, err)
		}
		if got != want {
			t.Errorf("%s: %q, want %q", locale, got, want)
		}
	}
}

// TestEveryLocaleFormats: every row of the table formats every style with
// no field left unwritten and none of the table's markers in the output.
func TestEveryLocaleFormats(t *testing.T) {
	for id := range cldrDates {
		for _, style := range DateStyles {
			for _, hour := range []int{0, 6, 12, 13, 23} {
				at := time.Date(2026, time.Month(1+hour%12), 1+hour, hour, 5, 0, 0, time.UTC)
				got, err := formatDate(language.MustParse(id), style, at)
				if err != nil {
					t.Fatalf("%s %s: %v", id, style, err)
				}
				for _, bad := range []string{"\x00", "\x01", "\x02", "{0}", "{1}"} {
					if got == "" || strings.Contains(got, bad) {
						t.Fatalf("%s %s: %q", id, style, got)
					}
				}
			}
		}
	}
}

func TestDateQuotes(t *testing.T) {
	l := dateLocale(language.English)
	for pattern, want := range map[string]string{
		"h 'o''clock' a": "3 o'clock PM",
		"''h''":          "'3'",
		"'at' HH:mm":     "at 15:04",
		"EEE, d MMM":     "Sat, 28 Nov",
		"hh:mm:ss yyyy":  "03:04:00 2026",
	} {
		got, err := l.format(pattern, time.Date(2026, 11, 28, 15, 4, 0, 0, time.UTC))
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", pattern, got, err, want)
		}
	}
	if _, err := l.format("QQQ", dateInstant); err == nil {
		t.Error("Q: a field Herald does not write is an error")
	}
}

// TestDatesInTemplates: the date function in a template, through the
// locale a user's picks (ko-KR takes ko's templates, and ko's dates) and
// their zone.
func TestDatesInTemplates(t *testing.T) {
	mt := heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{}}
	for _, l := range []string{"en", "ko", "ar"} {
		mt.Locales[l] = heraldtype.ChannelTemplates{SMS: &heraldtype.SMSTemplate{Text: `{{date "long" .at}}|{{date "time" .at}}`}}
	}
	c := compile(t, mt)
	for _, tc := range []struct{ locale, zone, want string }{
		{"ko-KR", "Asia/Seoul", "2026년 11월 28일|오후 3:04"},
		{"en", "UTC", "November 28, 2026|6:04 AM"}, // an SMS sends the narrow space as a space
		{"ar-EG", "Africa/Cairo", "٢٨ نوفمبر ٢٠٢٦|٨:٠٤ ص"},
		{"fr", "Europe/Paris", "November 28, 2026|7:04 AM"}, // no fr templates: en's
	} {
		r, err := c.Render(context.Background(), Recipient{Locale: tc.locale, Zone: zone(t, tc.zone)}, map[string]any{"at": dateInstant.Format(time.RFC3339)})
		if err != nil {
			t.Fatalf("%s: %v", tc.locale, err)
		}
		if r.SMS.Text != tc.want {
			t.Errorf("%s: %q, want %q", tc.locale, r.SMS.Text, tc.want)
		}
	}
}
