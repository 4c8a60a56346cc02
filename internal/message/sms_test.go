package message

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

func TestCountSMS(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       SMSCount
	}{
		{"empty", "", SMSCount{EncodingGSM7, 0, 0}},
		{"gsm7 one", strings.Repeat("a", 160), SMSCount{EncodingGSM7, 160, 1}},
		{"gsm7 two", strings.Repeat("a", 161), SMSCount{EncodingGSM7, 161, 2}},
		{"gsm7 exactly two parts", strings.Repeat("a", 306), SMSCount{EncodingGSM7, 306, 2}},
		{"gsm7 three", strings.Repeat("a", 307), SMSCount{EncodingGSM7, 307, 3}},
		{"extension counts two", strings.Repeat("€", 80), SMSCount{EncodingGSM7, 160, 1}},
		{"extension over", strings.Repeat("€", 80) + "a", SMSCount{EncodingGSM7, 161, 2}},
		// 152 septets then an escape pair: the pair does not split, the
		// first part holds 152.
		{"escape pair not split", strings.Repeat("a", 152) + "{" + strings.Repeat("a", 10), SMSCount{EncodingGSM7, 164, 2}},
		{"escape pair pushes a part", strings.Repeat("a", 152) + "{" + strings.Repeat("a", 152), SMSCount{EncodingGSM7, 306, 3}},
		{"korean one", strings.Repeat("가", 70), SMSCount{EncodingUCS2, 70, 1}},
		{"korean two", strings.Repeat("가", 71), SMSCount{EncodingUCS2, 71, 2}},
		{"korean three", strings.Repeat("가", 135), SMSCount{EncodingUCS2, 135, 3}},
		{"one korean char turns ucs2", strings.Repeat("a", 70) + "가", SMSCount{EncodingUCS2, 71, 2}},
		{"arabic", "مرحبا", SMSCount{EncodingUCS2, 5, 1}},
		{"hebrew", "שלום", SMSCount{EncodingUCS2, 4, 1}},
		{"emoji is a surrogate pair", strings.Repeat("😀", 35), SMSCount{EncodingUCS2, 70, 1}},
		{"surrogate pair not split", strings.Repeat("a", 66) + "😀" + "가", SMSCount{EncodingUCS2, 69, 1}},
		{"surrogate pair pushes a part", strings.Repeat("가", 66) + "😀" + strings.Repeat("가", 5), SMSCount{EncodingUCS2, 73, 2}},
	} {
		if got := CountSMS(tc.text); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestSMSPlainSpaces: an English time's narrow no-break space (CLDR's
// "h:mm\u202fa") is sent as a space, so the SMS stays GSM-7.
func TestSMSPlainSpaces(t *testing.T) {
	mt := heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{
		"en": {SMS: &heraldtype.SMSTemplate{Text: "At {{date \"time\" .at}}\u00a0today"}},
	}}
	c := compile(t, mt)
	r, err := c.Render(context.Background(), Recipient{Locale: "en"}, map[string]any{"at": "2026-11-28T15:04:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if r.SMS.Text != "At 3:04 PM today" || r.SMS.Encoding != EncodingGSM7 {
		t.Errorf("%q in %s, want %q in GSM-7", r.SMS.Text, r.SMS.Encoding, "At 3:04 PM today")
	}
}
