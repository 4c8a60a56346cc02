package message

import (
	"strings"
	"unicode/utf16"
)

// SMS encodings: GSM-7 (the GSM 03.38 default alphabet) when every
// character of the text is in it, else UCS-2 (every Korean, Arabic or
// Hebrew SMS).
const (
	EncodingGSM7 = "GSM-7"
	EncodingUCS2 = "UCS-2"
)

// The sizes of a segment (3GPP TS 23.038/23.040): a single message holds
// 160 GSM-7 septets or 70 UCS-2 units; a concatenated one gives 7 septets
// (6 UCS-2 bytes) of each part to the user data header, leaving 153 and
// 67.
const (
	gsm7Single = 160
	gsm7Part   = 153
	ucs2Single = 70
	ucs2Part   = 67
)

// smsSpaces are the Unicode spaces an SMS sends as a plain space: the
// no-break, narrow and fixed-width ones (CLDR writes a narrow no-break
// space before an English "AM"), none of them in GSM-7, so one would make
// an English SMS UCS-2 and cut its segments from 160 characters to 70.
var smsSpaces = strings.NewReplacer(
	"\u00a0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ",
	"\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200a", " ",
	"\u202f", " ", "\u205f", " ",
)

// plainSpaces is an SMS's text with smsSpaces made plain.
func plainSpaces(text string) string { return smsSpaces.Replace(text) }

// gsm7Basic is the GSM 03.38 default alphabet (without the escape, 0x1B).
const gsm7Basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsm7Extension are the characters of the extension table: each is sent
// as the escape and itself, two septets.
const gsm7Extension = "\f^{}\\[~]|€"

// SMSCount is how an SMS is sent: its encoding, its length in that
// encoding's units (septets, or UTF-16 code units) and its segments.
type SMSCount struct {
	Encoding string `json:"encoding"`
	Units    int    `json:"units"`
	Segments int    `json:"segments"`
}

// CountSMS counts text's segments as a carrier splits it: GSM-7 when every
// character is in the default alphabet or its extension (which count two
// septets each), else UCS-2; 160/70 units fit one message, longer ones go
// in parts of 153/67 — and a part never splits an escape pair or a
// surrogate pair, so a part may hold one unit fewer.
func CountSMS(text string) SMSCount {
	if text == "" {
		return SMSCount{Encoding: EncodingGSM7}
	}
	if widths, ok := gsm7Widths(text); ok {
		return pack(EncodingGSM7, widths, gsm7Single, gsm7Part)
	}
	var widths []int
	for _, r := range text {
		widths = append(widths, len(utf16.Encode([]rune{r})))
	}
	return pack(EncodingUCS2, widths, ucs2Single, ucs2Part)
}

// gsm7Widths are the septets of each character of text, or false when a
// character is outside GSM-7.
func gsm7Widths(text string) ([]int, bool) {
	widths := make([]int, 0, len(text))
	for _, r := range text {
		switch {
		case strings.ContainsRune(gsm7Basic, r):
			widths = append(widths, 1)
		case strings.ContainsRune(gsm7Extension, r):
			widths = append(widths, 2)
		default:
			return nil, false
		}
	}
	return widths, true
}

// pack counts the segments of characters of the given widths.
func pack(enc string, widths []int, single, part int) SMSCount {
	c := SMSCount{Encoding: enc}
	for _, w := range widths {
		c.Units += w
	}
	if c.Units <= single {
		c.Segments = 1
		return c
	}
	used := 0
	c.Segments = 1
	for _, w := range widths {
		if used+w > part {
			c.Segments++
			used = 0
		}
		used += w
	}
	return c
}
