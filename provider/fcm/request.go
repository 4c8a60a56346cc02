package fcm

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/heraldtype"
)

// Keys Herald itself puts into a message's data map. The notification's own
// data cannot override them: the app relies on messageId to drop duplicates
// (S0.5), and on title/body to render a data-only message (S1.4).
const (
	keyMessageID = "messageId"
	keyTitle     = "title"
	keyBody      = "body"
)

// appendRequest appends the FCM HTTP v1 send request for m to dst.
//
// The request is written by hand rather than through json.Marshal: this is
// the hot path of every push, and merging the notification's data with
// Herald's keys would otherwise cost a fresh map per send. Map order is
// irrelevant to FCM, so data keys are written in iteration order.
//
// Payload shapes (S1.4):
//   - alert: a notification block the OS displays; android.priority high
//     only for HIGH; apns-push-type alert with apns-priority 10 (5 for LOW);
//     aps.alert for iOS.
//   - data: no notification block, so the app renders (and personalises)
//     it; title and body travel in data; android.priority high;
//     apns-push-type background, which APNs requires at apns-priority 5,
//     with aps.content-available 1.
//
// Only the block of the device's platform is written.
func appendRequest(dst []byte, m *heraldtype.Message, ttl time.Duration, now time.Time) []byte {
	n := m.Notification
	dataMode := n.PayloadMode == heraldtype.PayloadData
	dst = append(dst, `{"message":{"token":`...)
	dst = appendString(dst, m.Device.Token)

	dst = append(dst, `,"data":{`...)
	first := true
	for k, v := range n.Data {
		if k == keyMessageID || (dataMode && (k == keyTitle || k == keyBody)) {
			continue
		}
		dst = appendPair(dst, first, k, v)
		first = false
	}
	if dataMode {
		if n.Title != "" {
			dst = appendPair(dst, first, keyTitle, n.Title)
			first = false
		}
		if n.Body != "" {
			dst = appendPair(dst, first, keyBody, n.Body)
			first = false
		}
	}
	dst = appendPair(dst, first, keyMessageID, m.Key)
	dst = append(dst, '}')

	hasAlert := !dataMode && (n.Title != "" || n.Body != "")
	if hasAlert {
		dst = append(dst, `,"notification":`...)
		dst = appendAlert(dst, n.Title, n.Body)
	}

	switch m.Device.Platform {
	case heraldtype.PlatformAndroid:
		priority := "normal"
		if dataMode || n.Priority == heraldtype.PriorityHigh {
			priority = "high"
		}
		dst = append(dst, `,"android":{"priority":"`...)
		dst = append(dst, priority...)
		dst = append(dst, `","ttl":"`...)
		dst = strconv.AppendInt(dst, int64(ttl/time.Second), 10)
		dst = append(dst, `s"}`...)
	case heraldtype.PlatformIOS:
		pushType, apnsPriority := "alert", "10"
		if dataMode {
			pushType, apnsPriority = "background", "5"
		} else if n.Priority == heraldtype.PriorityLow {
			apnsPriority = "5"
		}
		dst = append(dst, `,"apns":{"headers":{"apns-push-type":"`...)
		dst = append(dst, pushType...)
		dst = append(dst, `","apns-priority":"`...)
		dst = append(dst, apnsPriority...)
		dst = append(dst, `","apns-expiration":"`...)
		dst = strconv.AppendInt(dst, now.Add(ttl).Unix(), 10)
		dst = append(dst, `"},"payload":{"aps":`...)
		switch {
		case dataMode:
			dst = append(dst, `{"content-available":1}`...)
		case hasAlert:
			dst = append(dst, `{"alert":`...)
			dst = appendAlert(dst, n.Title, n.Body)
			dst = append(dst, '}')
		default:
			dst = append(dst, `{}`...)
		}
		dst = append(dst, `}}`...)
	case heraldtype.PlatformWeb:
		dst = append(dst, `,"webpush":{"headers":{"TTL":"`...)
		dst = strconv.AppendInt(dst, int64(ttl/time.Second), 10)
		dst = append(dst, `","Urgency":"`...)
		dst = append(dst, webUrgency(n.Priority)...)
		dst = append(dst, `"}}`...)
	}
	return append(dst, `}}`...)
}

// webUrgency maps a priority to an RFC 8030 Urgency.
func webUrgency(p heraldtype.Priority) string {
	switch p {
	case heraldtype.PriorityHigh:
		return "high"
	case heraldtype.PriorityLow:
		return "low"
	}
	return "normal"
}

// appendAlert appends {"title":…,"body":…}, leaving out empty fields.
func appendAlert(dst []byte, title, body string) []byte {
	dst = append(dst, '{')
	first := true
	if title != "" {
		dst = appendPair(dst, first, keyTitle, title)
		first = false
	}
	if body != "" {
		dst = appendPair(dst, first, keyBody, body)
	}
	return append(dst, '}')
}

// appendPair appends "k":"v", preceded by a comma unless first.
func appendPair(dst []byte, first bool, k, v string) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = appendString(dst, k)
	dst = append(dst, ':')
	return appendString(dst, v)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does, so the body is always valid JSON.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' && b < utf8.RuneSelf {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
