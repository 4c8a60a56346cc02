package fcm

import (
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/jsonenc"
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
	dst = jsonenc.AppendString(dst, m.Device.Token)

	dst = append(dst, `,"data":{`...)
	first := true
	for k, v := range n.Data {
		if k == keyMessageID || (dataMode && (k == keyTitle || k == keyBody)) {
			continue
		}
		dst = jsonenc.AppendPair(dst, first, k, v)
		first = false
	}
	if dataMode {
		if n.Title != "" {
			dst = jsonenc.AppendPair(dst, first, keyTitle, n.Title)
			first = false
		}
		if n.Body != "" {
			dst = jsonenc.AppendPair(dst, first, keyBody, n.Body)
			first = false
		}
	}
	dst = jsonenc.AppendPair(dst, first, keyMessageID, m.Key)
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
		dst = jsonenc.AppendPair(dst, first, keyTitle, title)
		first = false
	}
	if body != "" {
		dst = jsonenc.AppendPair(dst, first, keyBody, body)
	}
	return append(dst, '}')
}
